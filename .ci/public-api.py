#!/usr/bin/env python3
"""The public API of a crate, one item per line, from rustdoc's JSON.

    python3 .ci/public-api.py TARGET/doc/kemsphinx.json > api/kemsphinx.txt

Every public item reachable from the crate root (re-exports followed to
what they name), with its signature: modules, constants with their values,
functions, structs and their public fields, enums and their variants,
inherent methods, trait implementations (automatic ones such as `Send`
included, blanket ones such as `From<T> for T` left out, as they follow
from the others), `#[non_exhaustive]`. The listing is sorted, so a diff
shows what changed; CI regenerates it and fails when it differs from the
committed one (`.ci/release`).

Written here rather than installing `cargo public-api`: no build to pay
for in CI, and nothing to pin to one nightly's JSON format beyond the
handful of shapes read below.
"""

import json
import sys

# Marker traits the compiler implements that are unstable (nightly adds and
# renames them): not part of a stable API, and they would tie the listing
# to one nightly.
UNSTABLE = {"Freeze", "UnsafeUnpin", "StructuralPartialEq"}


class Api:
    def __init__(self, doc):
        self.doc = doc
        self.index = doc["index"]
        self.lines = set()
        self.seen = set()

    def item(self, id_):
        return self.index.get(str(id_))

    # ---- types -----------------------------------------------------------

    def ty(self, t):
        if t is None:
            return "()"
        if isinstance(t, str):
            return t
        (kind, v), = t.items()
        if kind == "resolved_path":
            return self.path(v)
        if kind in ("generic", "primitive"):
            return v
        if kind == "tuple":
            return "(" + ", ".join(self.ty(x) for x in v) + ")"
        if kind == "slice":
            return "[" + self.ty(v) + "]"
        if kind == "array":
            return f"[{self.ty(v['type'])}; {v['len']}]"
        if kind == "borrowed_ref":
            life = (v.get("lifetime") + " ") if v.get("lifetime") else ""
            mut = "mut " if v.get("is_mutable") or v.get("mutable") else ""
            return f"&{life}{mut}{self.ty(v['type'])}"
        if kind == "raw_pointer":
            mut = "*mut " if v.get("is_mutable") or v.get("mutable") else "*const "
            return mut + self.ty(v["type"])
        if kind == "impl_trait":
            return "impl " + self.bounds(v)
        if kind == "dyn_trait":
            traits = [self.poly(p) for p in v.get("traits", [])]
            if v.get("lifetime"):
                traits.append(v["lifetime"])
            return "dyn " + " + ".join(traits)
        if kind == "qualified_path":
            trait = self.path(v["trait"]) if v.get("trait") else "_"
            return f"<{self.ty(v['self_type'])} as {trait}>::{v['name']}"
        if kind == "function_pointer":
            sig = v.get("sig") or v.get("decl")
            return "fn" + self.signature(sig)
        if kind == "infer":
            return "_"
        return json.dumps(t, sort_keys=True)

    def path(self, v):
        name = (v.get("path") or v.get("name") or "").split("::")[-1]
        return name + self.args(v.get("args"))

    def args(self, a):
        if not a:
            return ""
        if "angle_bracketed" in a:
            ab = a["angle_bracketed"]
            out = []
            for x in ab.get("args", []):
                if isinstance(x, str):
                    out.append("_")
                elif "type" in x:
                    out.append(self.ty(x["type"]))
                elif "lifetime" in x:
                    out.append(x["lifetime"])
                elif "const" in x:
                    c = x["const"]
                    out.append(c.get("value") or c.get("expr") or "_")
            for c in ab.get("constraints", ab.get("bindings", [])):
                b = c.get("binding", {})
                if "equality" in b:
                    eq = b["equality"]
                    out.append(f"{c['name']} = {self.ty(eq.get('type', eq))}")
                else:
                    out.append(f"{c['name']}: {self.bounds(b.get('constraint', []))}")
            return "<" + ", ".join(out) + ">" if out else ""
        if "parenthesized" in a:
            p = a["parenthesized"]
            out = "(" + ", ".join(self.ty(x) for x in p.get("inputs", [])) + ")"
            if p.get("output"):
                out += " -> " + self.ty(p["output"])
            return out
        return ""

    def poly(self, p):
        return self.path(p["trait"])

    def bounds(self, bs):
        out = []
        for b in bs:
            if "trait_bound" in b:
                tb = b["trait_bound"]
                maybe = "?" if tb.get("modifier") == "maybe" else ""
                out.append(maybe + self.path(tb["trait"]))
            elif "outlives" in b:
                out.append(b["outlives"])
            else:
                out.append(json.dumps(b, sort_keys=True))
        return " + ".join(out)

    def generics(self, g):
        params = []
        for p in g.get("params", []):
            kind = p["kind"]
            if "lifetime" in kind:
                outl = kind["lifetime"].get("outlives", [])
                params.append(p["name"] + (": " + " + ".join(outl) if outl else ""))
            elif "type" in kind:
                t = kind["type"]
                if t.get("is_synthetic") or t.get("synthetic"):
                    continue
                b = self.bounds(t.get("bounds", []))
                params.append(p["name"] + (": " + b if b else ""))
            elif "const" in kind:
                params.append(f"const {p['name']}: {self.ty(kind['const']['type'])}")
        return "<" + ", ".join(params) + ">" if params else ""

    def where(self, g):
        preds = []
        for w in g.get("where_predicates", []):
            if "bound_predicate" in w:
                bp = w["bound_predicate"]
                preds.append(f"{self.ty(bp['type'])}: {self.bounds(bp['bounds'])}")
            elif "lifetime_predicate" in w:
                lp = w["lifetime_predicate"]
                preds.append(f"{lp['lifetime']}: {' + '.join(lp['outlives'])}")
            else:
                preds.append(json.dumps(w, sort_keys=True))
        return " where " + ", ".join(preds) if preds else ""

    def signature(self, sig):
        def arg(n, t):
            r = self.ty(t)
            if n == "self" and r in ("Self", "&Self", "&mut Self"):
                return r.replace("Self", "self")
            return f"{n}: {r}"

        ins = ", ".join(arg(n, t) for n, t in sig["inputs"])
        out = sig.get("output")
        return f"({ins})" + (f" -> {self.ty(out)}" if out else "")

    # ---- items -----------------------------------------------------------

    def attrs(self, it):
        return "#[non_exhaustive] " if "non_exhaustive" in json.dumps(it.get("attrs", [])) else ""

    def emit(self, line):
        self.lines.add(line)

    def function(self, path, f):
        h = f.get("header", {})
        q = "".join(
            w + " " for w, on in (("const", h.get("is_const")), ("async", h.get("is_async")),
                                  ("unsafe", h.get("is_unsafe"))) if on
        )
        sig = f.get("sig") or f.get("decl")
        g = f["generics"]
        return f"pub {q}fn {path}{self.generics(g)}{self.signature(sig)}{self.where(g)}"

    def walk(self, id_, path):
        it = self.item(id_)
        if it is None or (id_, path) in self.seen:
            return
        self.seen.add((id_, path))
        (kind, v), = it["inner"].items()
        if kind == "module":
            self.emit(f"pub mod {path}")
            for child in v["items"]:
                c = self.item(child)
                if c is None or c.get("visibility") != "public":
                    continue
                ((ck, cv),) = c["inner"].items()
                if ck == "use":
                    if cv.get("is_glob"):
                        target = self.item(cv["id"]) if cv.get("id") is not None else None
                        if target and "module" in target["inner"]:
                            for grand in target["inner"]["module"]["items"]:
                                g = self.item(grand)
                                if g and g.get("visibility") == "public" and g.get("name"):
                                    self.walk(grand, f"{path}::{g['name']}")
                        else:
                            self.emit(f"pub use {path}::{cv['source']}::*")
                    elif cv.get("id") is not None and self.item(cv["id"]) is not None:
                        self.walk(cv["id"], f"{path}::{cv['name']}")
                    else:
                        self.emit(f"pub use {path}::{cv['name']} = {cv['source']}")
                else:
                    self.walk(child, f"{path}::{c['name']}")
        elif kind == "constant":
            c = v.get("const", {})
            value = c.get("value") or c.get("expr")
            self.emit(f"pub const {path}: {self.ty(v['type'])} = {value}")
        elif kind == "static":
            self.emit(f"pub static {path}: {self.ty(v['type'])}")
        elif kind == "type_alias":
            self.emit(f"pub type {path}{self.generics(v['generics'])} = {self.ty(v['type'])}")
        elif kind == "function":
            self.emit(self.function(path, v))
        elif kind == "struct":
            self.struct(it, path, v)
        elif kind == "enum":
            g = v["generics"]
            self.emit(f"{self.attrs(it)}pub enum {path}{self.generics(g)}{self.where(g)}")
            for var in v["variants"]:
                self.variant(self.item(var), f"{path}::{self.item(var)['name']}")
            self.impls(path, v["impls"])
        elif kind == "trait":
            self.emit(f"pub trait {path}{self.generics(v['generics'])}")
            for m in v.get("items", []):
                mi = self.item(m)
                if mi and "function" in mi["inner"]:
                    self.emit(self.function(f"{path}::{mi['name']}", mi["inner"]["function"]))
        elif kind == "macro":
            self.emit(f"pub macro {path}!")
        else:
            self.emit(f"pub {kind} {path}")

    def struct(self, it, path, v):
        g = v["generics"]
        head = f"{self.attrs(it)}pub struct {path}{self.generics(g)}"
        k = v["kind"]
        if k == "unit":
            self.emit(head + self.where(g))
        elif "tuple" in k:
            fields = []
            for f in k["tuple"]:
                fi = self.item(f) if f is not None else None
                fields.append(f"pub {self.ty(fi['inner']['struct_field'])}" if fi else "_")
            self.emit(f"{head}({', '.join(fields)}){self.where(g)}")
        else:
            plain = k["plain"]
            self.emit(head + self.where(g) + (" { .. }" if plain.get("has_stripped_fields") else ""))
            for f in plain["fields"]:
                fi = self.item(f)
                self.emit(f"pub {path}::{fi['name']}: {self.ty(fi['inner']['struct_field'])}")
        self.impls(path, v["impls"])

    def variant(self, it, path):
        k = it["inner"]["variant"]["kind"]
        if k == "plain":
            self.emit(f"pub {path}")
        elif "tuple" in k:
            tys = [self.ty(self.item(f)["inner"]["struct_field"]) if f is not None else "_"
                   for f in k["tuple"]]
            self.emit(f"pub {path}({', '.join(tys)})")
        else:
            fs = k["struct"]["fields"]
            body = ", ".join(
                f"{self.item(f)['name']}: {self.ty(self.item(f)['inner']['struct_field'])}" for f in fs
            )
            self.emit(f"pub {path} {{ {body} }}")

    def impls(self, path, ids):
        for i in ids:
            imp = self.item(i)
            if imp is None:
                continue
            v = imp["inner"]["impl"]
            if v.get("blanket_impl") is not None:
                continue
            g = v["generics"]
            if v.get("trait") is None:
                for m in v["items"]:
                    mi = self.item(m)
                    if mi is None or mi.get("visibility") != "public":
                        continue
                    ((mk, mv),) = mi["inner"].items()
                    if mk == "function":
                        self.emit(self.function(f"{path}::{mi['name']}", mv))
                    elif mk in ("constant", "assoc_const"):
                        self.emit(f"pub const {path}::{mi['name']}: {self.ty(mv.get('type'))}")
                continue
            if self.path(v["trait"]).split("<")[0] in UNSTABLE:
                continue
            neg = "!" if v.get("is_negative") or v.get("negative") else ""
            assoc = []
            for m in v["items"]:
                mi = self.item(m)
                if mi and "assoc_type" in mi["inner"]:
                    at = mi["inner"]["assoc_type"]
                    assoc.append(f"type {mi['name']} = {self.ty(at.get('type') or at.get('default'))}")
            tail = " { " + "; ".join(assoc) + " }" if assoc else ""
            self.emit(
                f"impl{self.generics(g)} {neg}{self.path(v['trait'])} for {path}{self.where(g)}{tail}"
            )


def main():
    doc = json.load(open(sys.argv[1]))
    api = Api(doc)
    root = api.item(doc["root"])
    api.walk(doc["root"], root["name"])
    for line in sorted(api.lines):
        print(line)


if __name__ == "__main__":
    main()

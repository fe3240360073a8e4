#!/usr/bin/env python3
"""Check that every Rust block of a README compiles as pasted.

    python3 .ci/readme-rust.py [--target-dir DIR] [--fresh] [--offline] README.md [...]

A reader copies a README's example into `src/main.rs` of a new crate and
puts what it names into `Cargo.toml`. This does the same for every fenced
Rust block (```rust, ```rust,ignore, ```rust,no_run, and a fence with no
language, which rustdoc also takes for Rust): one fresh crate per block,
`cargo build` (compile only: a `no_run` block may serve forever), all of
them sharing one target directory so that the dependencies build once.

The convention, which the reader sees too: a block's first line is a
comment naming its dependencies, exactly as they go under `[dependencies]`
(TOML, entries separated by commas):

    // Cargo.toml: kemsphinx = "0.1", rand = "0.10"
    // Cargo.toml: aez5 = { version = "0.1", default-features = false }

A block fails when:
- its first line names no dependencies, or names one without a version;
- it has rustdoc's hidden lines (`# ...`), which a reader never sees;
- it has no `fn main` (a fragment) or is `compile_fail`;
- it does not compile, warnings included (`?` in a `main` that does not
  return a `Result` is one such error).

Dependencies that are packages of this workspace (kemsphinx, aez5,
kemsphinx-node, ...) become path dependencies on this checkout, keeping
the version the README states (so a stale version fails); every other
one keeps what the README states and comes from crates.io. Each crate
starts from the workspace's Cargo.lock (the versions CI tests; cargo
takes what matches and resolves the rest), or with `--fresh` from
nothing, as a reader's would.

Prints one line per block (README:line: ok | fail: why), the compiler's
errors under a failure, and exits non-zero if any block failed.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`]*?)\s*$")
DEPS = re.compile(r"^//\s*Cargo\.toml:\s*(.*)$")
HIDDEN = re.compile(r"^#(\s|$)")
MAIN = re.compile(r"\bfn\s+main\s*\(")
# Words rustdoc reads in a fence's info string as attributes of a Rust block.
RUSTDOC_ATTRS = re.compile(
    r"^(rust|ignore(-.*)?|no_run|should_panic|compile_fail|test_harness|"
    r"standalone_crate|edition\d{4}|E\d{4})$")


def rust_blocks(path):
    """(line of the opening fence, attributes, body lines) of every Rust block."""
    lines = open(path, encoding="utf-8").read().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3)
        close = re.compile(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
        body, j = [], i + 1
        while j < len(lines) and not close.match(lines[j]):
            line = lines[j]
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))):])
            j += 1
        attrs = [a for a in re.split(r"[,\s]+", info) if a]
        if all(RUSTDOC_ATTRS.match(a) for a in attrs):
            blocks.append((i + 1, attrs, body))
        i = j + 1
    return blocks


def workspace_packages():
    """Name -> directory of every package of this checkout's workspace."""
    out = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout
    meta = json.loads(out)
    packages = {p["name"]: os.path.dirname(p["manifest_path"]) for p in meta["packages"]}
    return packages, meta["target_directory"]


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise ValueError(f"no TOML for {v!r}")


def toml_key(k):
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)


def dependencies(body, packages):
    """The block's [dependencies] as TOML lines, or raise ValueError why not."""
    first = next((line.strip() for line in body if line.strip()), "")
    m = DEPS.match(first)
    if not m or not m.group(1).strip():
        raise ValueError("names no dependencies (first line: // Cargo.toml: NAME = \"VERSION\", ...)")
    try:
        deps = tomllib.loads("d = {" + m.group(1).strip() + "}")["d"]
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"dependencies line is not TOML ({e})") from None
    out = []
    for name, spec in deps.items():
        spec = {"version": spec} if isinstance(spec, str) else dict(spec)
        if "version" not in spec:
            raise ValueError(f"dependency {name} has no version")
        package = spec.get("package", name)
        if package in packages:
            spec["path"] = packages[package]
        out.append(f"{toml_key(name)} = {toml_value(spec)}")
    return out


def faults_in_text(line, attrs, body):
    faults = []
    if "compile_fail" in attrs:
        faults.append("compile_fail: not a program to paste")
    hidden = [str(line + n) for n, text in enumerate(body, 1) if HIDDEN.match(text.strip())]
    if hidden:
        faults.append(f"hidden lines (# ...) at lines {', '.join(hidden)}")
    if not MAIN.search("\n".join(body)):
        faults.append("no fn main: a fragment, not a program")
    return faults


def build(crate_dir, name, deps, body, args):
    os.makedirs(os.path.join(crate_dir, "src"))
    with open(os.path.join(crate_dir, "Cargo.toml"), "w", encoding="utf-8") as f:
        f.write(f'[package]\nname = "{name}"\nversion = "0.0.0"\nedition = "2024"\n'
                'publish = false\n\n[dependencies]\n' + "\n".join(deps) +
                '\n\n[lints.rust]\nwarnings = "deny"\n\n[workspace]\n')
    with open(os.path.join(crate_dir, "src", "main.rs"), "w", encoding="utf-8") as f:
        f.write("\n".join(body) + "\n")
    if not args.fresh:
        shutil.copy(os.path.join(ROOT, "Cargo.lock"), crate_dir)
    cmd = ["cargo", "build", "--quiet", "--target-dir", args.target_dir]
    if args.offline:
        cmd.append("--offline")
    return subprocess.run(cmd, cwd=crate_dir, capture_output=True, text=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("readmes", nargs="+")
    parser.add_argument("--target-dir", help="shared by every block's crate "
                        "(default: the workspace's target/readme-rust)")
    parser.add_argument("--fresh", action="store_true",
                        help="resolve every crate from nothing, not from Cargo.lock")
    parser.add_argument("--offline", action="store_true")
    args = parser.parse_args()
    packages, target = workspace_packages()
    args.target_dir = os.path.abspath(args.target_dir or os.path.join(target, "readme-rust"))
    failed = total = 0
    with tempfile.TemporaryDirectory(prefix="readme-rust-") as tmp:
        for readme in args.readmes:
            blocks = rust_blocks(os.path.join(ROOT, readme) if not os.path.isabs(readme) else readme)
            if not blocks:
                print(f"{readme}: no Rust blocks")
            for line, attrs, body in blocks:
                total += 1
                where = f"{readme}:{line}"
                faults = faults_in_text(line, attrs, body)
                try:
                    deps = dependencies(body, packages)
                except ValueError as e:
                    deps, faults = [], [str(e)] + faults
                if faults:
                    failed += 1
                    print(f"{where}: fail: {'; '.join(faults)}")
                    continue
                name = "readme-" + re.sub(r"[^a-z0-9]+", "-", readme.lower()).strip("-") + f"-{line}"
                result = build(os.path.join(tmp, name), name, deps, body, args)
                if result.returncode == 0:
                    print(f"{where}: ok")
                else:
                    failed += 1
                    print(f"{where}: fail: does not compile as pasted")
                    for err in result.stderr.strip().splitlines()[-60:]:
                        print(f"    {err}")
    print(f"{total} Rust blocks, {failed} failed")
    return 1 if failed or not total else 0


if __name__ == "__main__":
    sys.exit(main())

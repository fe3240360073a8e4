#!/usr/bin/env python3
"""Fail on links that crates.io or docs.rs cannot follow.

    python3 .ci/doc-links.py README.md aez5/README.md SPEC.md

READMEs are shown by crates.io (which resolves neither relative links nor
rustdoc's intra-doc links) and, as crate docs, by docs.rs; SPEC.md is
rendered on docs.rs as `kemsphinx::spec`. So every link must be absolute
(https://...) or an anchor in the same page, and in a README every
bracketed reference such as [`unwrap`] must have a definition with such a
target (SPEC.md is not shown on crates.io, and rustdoc resolves its
intra-doc links).
"""
import re
import sys

FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
INLINE = re.compile(r"\]\(([^)\s]+)")
DEFINITION = re.compile(r"^\[([^\]]+)\]:\s*(\S+)", re.M)
REFERENCE = re.compile(r"\[(`[^`\]]+`)\](?![(\[:])")


def absolute(target):
    return target.startswith(("https://", "http://", "mailto:", "#"))


def check(path):
    text = FENCE.sub("", open(path, encoding="utf-8").read())
    bad = [t for t in INLINE.findall(text) if not absolute(t)]
    defined = {}
    for name, target in DEFINITION.findall(text):
        defined[name] = target
        if not absolute(target):
            bad.append(target)
    for name in REFERENCE.findall(text) if path.endswith("README.md") else []:
        if name not in defined:
            bad.append(f"[{name}] (no link definition)")
    for b in bad:
        print(f"{path}: link crates.io/docs.rs cannot follow: {b}")
    return not bad


def main():
    ok = all([check(p) for p in sys.argv[1:]])
    if ok:
        print(f"links ok in {', '.join(sys.argv[1:])}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Every item at the crate root of the API listing is named in SPEC.md §8.1.

    python3 .ci/spec-api.py api/kemsphinx.txt SPEC.md
"""
import re
import sys

listing, spec = (open(p, encoding="utf-8").read() for p in sys.argv[1:3])
section = spec.split("### 8.1", 1)[1].split("\n## ", 1)[0]
root = set()
for line in listing.splitlines():
    m = re.search(r"\bkemsphinx::([A-Za-z_][A-Za-z0-9_]*)(?=[<(:{ ]|$)", line)
    if m and not line.startswith("impl"):
        root.add(m.group(1))
missing = sorted(n for n in root if not re.search(rf"`[^`]*\b{n}\b[^`]*`", section))
for n in missing:
    print(f"SPEC.md §8.1 does not name the root item `{n}`")
print(f"SPEC.md §8.1 names all {len(root)} root items" if not missing else "")
sys.exit(1 if missing else 0)

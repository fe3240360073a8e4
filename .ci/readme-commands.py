#!/usr/bin/env python3
"""Check that every command the README gives can run from the repository root.

    python3 .ci/readme-commands.py README.md [README.md ...]

A command is a line of a ```sh block, or an inline code span that starts
with `cargo ` or names a script (`.ci/`, `fuzz/`, `tools/`). For each:

- cargo: the manifest (`--manifest-path`, else the root's) exists, and
  every `-p` package, `--example`, `--bin`, `--test` and `--bench` names a
  package or target of that workspace (asked of `cargo metadata`);
- a script named by path exists and is executable; `fuzz/run.sh`'s
  target names are fuzz targets;
- every other argument that is a path (it has a `/`) exists, except
  build outputs (under a `target/`).

The Layout section must also name every top-level folder of the
repository (as `name/`). Exits non-zero with one line per fault.
"""
import json
import os
import re
import shlex
import subprocess
import sys

FENCE = re.compile(r"^```(?:sh|bash|shell)\n(.*?)^```", re.S | re.M)
ANY_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
INLINE = re.compile(r"`([^`\n]+)`")
SCRIPT = re.compile(r"^(\.ci|fuzz|tools)/")
TARGET_FLAGS = {"--example": "example", "--bin": "bin", "--test": "test", "--bench": "bench"}

_metadata = {}
ALL_OUTPUTS = set()  # what the file's commands write with `-o` (run by a later one)


def workspace(manifest):
    """The packages and their targets of the workspace MANIFEST belongs to."""
    if manifest not in _metadata:
        out = subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps",
             "--manifest-path", manifest],
            check=True, capture_output=True, text=True).stdout
        packages = {}
        for p in json.loads(out)["packages"]:
            packages[p["name"]] = {(k, t["name"]) for t in p["targets"] for k in t["kind"]}
        _metadata[manifest] = packages
    return _metadata[manifest]


def commands(text):
    """(line, command) for every command in TEXT: continuation lines joined,
    `&&`, `||`, `;` and `|` splitting one line into several commands."""
    found = []
    for m in FENCE.finditer(text):
        start = text.count("\n", 0, m.start(1)) + 1
        pending, first = "", 0
        for i, line in enumerate(m.group(1).splitlines()):
            line = line.split(" #", 1)[0].strip()
            if not pending:
                first = start + i
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            line, pending = pending + line, ""
            if line and not line.startswith("#"):
                found += [(first, c.strip()) for c in re.split(r"&&|\|\||;|\|", line) if c.strip()]
    prose = ANY_FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for m in INLINE.finditer(prose):
        code = m.group(1).strip()
        first = code.split()[0]
        script = SCRIPT.match(first) and os.path.splitext(first)[1] in ("", ".sh", ".py")
        if (code.startswith("cargo ") or script) and "<" not in code:
            found.append((prose.count("\n", 0, m.start()) + 1, code))
    return found


def is_path(arg):
    return "/" in arg and not arg.startswith(("-", "http")) and "target/" not in arg


def check_cargo(args):
    faults = []
    manifest = "Cargo.toml"
    if "--manifest-path" in args:
        manifest = args[args.index("--manifest-path") + 1]
        if not os.path.isfile(manifest):
            return [f"no manifest {manifest}"]
    packages = workspace(manifest)
    cargo_args = args[: args.index("--")] if "--" in args else args
    chosen = [cargo_args[i + 1] for i, a in enumerate(cargo_args) if a in ("-p", "--package")]
    for name in chosen:
        if name not in packages:
            faults.append(f"no package {name} in the workspace of {manifest}")
    pool = [packages[n] for n in chosen if n in packages] or list(packages.values())
    for i, a in enumerate(cargo_args[:-1]):
        kind = TARGET_FLAGS.get(a)
        if kind and not any((kind, cargo_args[i + 1]) in targets for targets in pool):
            faults.append(f"no {kind} {cargo_args[i + 1]} in {manifest}")
    for a in args:
        if is_path(a) and not os.path.exists(a):
            faults.append(f"no file {a}")
    return faults


def check(command):
    try:
        args = shlex.split(command)
    except ValueError as e:
        return [f"not a shell command ({e})"]
    while args and re.match(r"^[A-Z_]+=", args[0]):
        args = args[1:]
    if args[:1] == ["nice"]:
        args = args[3:] if args[1:2] == ["-n"] else args[1:]
    if not args:
        return ["empty command"]
    if args[0] == "cargo":
        return check_cargo(args)
    faults = []
    if len(args) == 1 and os.path.isfile(args[0]):
        return []  # a file named in prose (a sourced helper, say), not run
    if "/" in args[0] and args[0].lstrip("./") not in ALL_OUTPUTS:
        if not os.access(args[0], os.X_OK):
            faults.append(f"no executable {args[0]}")
        if args[0] == "fuzz/run.sh":
            fuzz = workspace("fuzz/Cargo.toml")
            names = {t for targets in fuzz.values() for k, t in targets if k == "bin"}
            faults += [f"no fuzz target {a}" for a in args[2:] if a not in names]
    for a in args[1:]:
        if is_path(a) and a not in ALL_OUTPUTS and not os.path.exists(a):
            faults.append(f"no file {a}")
    return faults


def layout_faults(text):
    m = re.search(r"^## Layout\n(.*?)(?=^## )", text, re.S | re.M)
    if not m:
        return ["no Layout section"]
    tops = subprocess.run(["git", "ls-tree", "-d", "--name-only", "HEAD"],
                          check=True, capture_output=True, text=True).stdout.split()
    return [f"Layout does not name {d}/" for d in tops if f"`{d}/" not in m.group(1)]


def main(paths):
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    faults = 0
    for path in paths:
        text = open(path, encoding="utf-8").read()
        found = commands(text)
        ALL_OUTPUTS.clear()
        for _, command in found:
            words = command.split()
            ALL_OUTPUTS.update(words[i + 1] for i, w in enumerate(words[:-1]) if w == "-o")
        for line, command in found:
            for fault in check(command):
                print(f"{path}:{line}: {fault}: {command}")
                faults += 1
        for fault in layout_faults(text) if path == "README.md" else []:
            print(f"{path}: {fault}")
            faults += 1
        print(f"{path}: {len(found)} commands checked")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

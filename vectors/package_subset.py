#!/usr/bin/env python3
"""Write tests/data/reference.json: two cases of the reference's vectors,
small enough to ship in the kemsphinx package (the full sets stay in the
repository). Large byte strings that the test only compares are replaced by
their SHA-256; everything the test feeds to the library is kept whole.

    python3 vectors/package_subset.py           # write the file
    python3 vectors/package_subset.py --check   # fail if it is stale
"""
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "reference.json"
FORWARD, SURB = "forward-04", "surb-00"


def sha256(hexstr):
    return hashlib.sha256(bytes.fromhex(hexstr)).hexdigest()


def case(kind, wanted):
    data = json.loads((ROOT / "vectors" / "reference" / f"{kind}.json").read_text())
    return data["provenance"], next(c for c in data["cases"] if c["id"] == wanted)


def hops(c):
    # The packet each hop receives is named by its hash (hop 0's is given
    # whole, or rebuilt from the SURB); what each hop's unwrap returns.
    return [
        {
            "packet_sha256": sha256(c["packets"][i]),
            "replay_tag": u["replay_tag"],
            "commands": u["commands"],
        }
        for i, u in enumerate(c["unwrap"])
    ]


def subset():
    provenance, fwd = case("forward", FORWARD)
    _, surb = case("surb", SURB)
    return {
        "schema": "kemsphinx-package-subset-1",
        "about": (
            f"Cases {FORWARD} of vectors/reference/forward.json and {SURB} of "
            "vectors/reference/surb.json (made by the Katzenpost reference, see "
            "provenance), cut to what the package's tests/reference.rs needs: "
            "written by vectors/package_subset.py; byte strings are lowercase hex."
        ),
        "provenance": provenance,
        "forward": {
            "id": fwd["id"],
            "note": fwd["note"],
            "private_keys": [n["private_key"] for n in fwd["nodes"]],
            "node_ids": [n["id"] for n in fwd["nodes"]],
            "packet": fwd["packets"][0],
            "hops": hops(fwd),
            "payload": fwd["unwrap"][3]["payload"] or fwd["payload"],
        },
        "surb": {
            "id": surb["id"],
            "note": surb["note"],
            "private_keys": [n["private_key"] for n in surb["nodes"]],
            "node_ids": [n["id"] for n in surb["nodes"]],
            "surb": surb["surb"],
            "surb_keys": surb["surb_keys"],
            "reply_payload": surb["reply_payload"],
            "hops": hops(surb),
            "encrypted_reply_sha256": sha256(surb["unwrap"][3]["payload"]),
            "decrypted_reply": surb["decrypted_reply"],
        },
    }


def main():
    text = json.dumps(subset(), indent=2) + "\n"
    if sys.argv[1:] == ["--check"]:
        if OUT.read_text() != text:
            sys.exit(f"{OUT} is stale: run python3 vectors/package_subset.py")
        print(f"{OUT.relative_to(ROOT)} matches vectors/reference")
    else:
        OUT.write_text(text)
        print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Applies every suggestion `clang-optiml transforms --json` offers for a
file, one at a time, and prints one line per suggestion: "ok KIND TARGET
PARAMS" or "REFUSED KIND TARGET PARAMS: the first error line". A suggestion
the tool's own checks refuse should never have been offered.

usage: apply_every_suggestion.py CLANG-OPTIML FILE.cu [-- clang args]
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    tool, src = sys.argv[1], sys.argv[2]
    extra = sys.argv[3:]
    listing = subprocess.run([tool, "transforms", "--json", src] + extra,
                             capture_output=True, text=True, check=True)
    data = json.loads(listing.stdout)
    refused = 0
    with tempfile.TemporaryDirectory() as tmp:
        for kernel in data["kernels"]:
            for t in kernel["applicable"]:
                for s in t.get("suggestions", []):
                    path = os.path.join(tmp, "edit.json")
                    with open(path, "w") as f:
                        json.dump(s, f)
                    r = subprocess.run([tool, "apply", src, "--edit", path,
                                        "-o", os.path.join(tmp, "out.cu")] +
                                       extra, capture_output=True, text=True)
                    params = json.dumps(s.get("params", {}), sort_keys=True)
                    if r.returncode == 0:
                        print("ok %s %s %s" % (s["kind"], s["target"], params))
                    else:
                        refused += 1
                        first = (r.stderr.strip().splitlines() or ["?"])[0]
                        print("REFUSED %s %s %s: %s" % (
                            s["kind"], s["target"], params, first))
    print("%d refused" % refused)


if __name__ == "__main__":
    main()

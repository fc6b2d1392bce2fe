#!/usr/bin/env python3
"""Writes the seeds of edit-check-fuzzer: the code of every hostile-corpus
case (test/edit/hostile/cases.jsonl), one file per case named by its id.

usage: fuzz/make-edit-check-seeds.py OUTDIR

The hostile corpus is the one source of the attacks; the seeds are made
from it when fuzzing starts, so they never fall behind it. A case whose
edit is a list gives one file per edit that has code (ID.1, ID.2, ...)."""
import json
import os
import sys


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    cases = os.path.join(here, os.pardir, "test", "edit", "hostile",
                         "cases.jsonl")
    os.makedirs(out, exist_ok=True)
    written = 0
    with open(cases, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            case = json.loads(line)
            edits = case["edit"]
            many = isinstance(edits, list)
            codes = [e.get("params", {}).get("code")
                     for e in (edits if many else [edits])]
            codes = [c for c in codes if isinstance(c, str)]
            for n, code in enumerate(codes, 1):
                name = f"{case['id']}.{n}" if many else case["id"]
                with open(os.path.join(out, name), "w",
                          encoding="utf-8") as s:
                    s.write(code)
                written += 1
    print(f"{written} seeds in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

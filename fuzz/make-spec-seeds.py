#!/usr/bin/env python3
"""Writes the seeds of spec-fuzzer: every example spec of examples/synthesize
as example-NAME, behind the byte that picks the reader (the fuzzer reads the
first byte: 0 JSON, 1 YAML), and the inputs kept in fuzz/spec-corpus/ (the
fuzzer's findings), unchanged.

usage: fuzz/make-spec-seeds.py OUTDIR

The examples are the one source of the valid specs; the seeds are made
from them when fuzzing starts, so they never fall behind them."""
import os
import shutil
import sys

SELECTOR = {".json": b"\x00", ".yaml": b"\x01", ".yml": b"\x01"}


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    examples = os.path.join(here, os.pardir, "examples", "synthesize")
    kept = os.path.join(here, "spec-corpus")
    os.makedirs(out, exist_ok=True)
    written = 0
    for name in sorted(os.listdir(examples)):
        ext = os.path.splitext(name)[1]
        if ext not in SELECTOR:
            print(f"make-spec-seeds: {name}: not .json or .yaml",
                  file=sys.stderr)
            return 1
        with open(os.path.join(examples, name), "rb") as f:
            text = f.read()
        with open(os.path.join(out, "example-" + name), "wb") as s:
            s.write(SELECTOR[ext] + text)
        written += 1
    for name in sorted(os.listdir(kept)):
        shutil.copyfile(os.path.join(kept, name), os.path.join(out, name))
        written += 1
    print(f"{written} seeds in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

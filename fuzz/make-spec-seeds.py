#!/usr/bin/env python3
"""Writes the seeds of spec-fuzzer: every example spec of examples/synthesize
as example-NAME, behind the byte that picks the reader (the fuzzer reads the
first byte: 0 JSON, 1 YAML), and the fuzzer's two findings (FINDINGS below,
the reader byte included), byte for byte.

usage: fuzz/make-spec-seeds.py OUTDIR

The examples are the one source of the valid specs; the seeds are made
from them when fuzzing starts, so they never fall behind them."""
import os
import sys

SELECTOR = {".json": b"\x00", ".yaml": b"\x01", ".yml": b"\x01"}

# Inputs that crashed the readers before their fixes: a JSON number out of
# range, a YAML key without a place.
FINDINGS = {
    "json-number-out-of-range": (
        b'\x00{\n  "class": "row-reduce",\n  "request":'
        b' "the mean of each row of a 12768 x 1024'
        b' matrix",\n  "inputs":[[11111111e1111r (i'
        b'nt j = 0; j <(n; ++j)1111111111111111111'
        b'1111111111111111111111111111111111111111'
        b'11111111[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['
        b'[[[[[[[[[[[[[[[[[[[[[[[[[[[[ [\n    {\n   '
        b'   "name": "x",\n      "tSype": "float",\n'
        b'      "shape": [\n        "rows",\n       '
        b' "cols"\n      ]  }\n  \n  ],\n  "outputs": '
        b'[\n    {\n      "name": "mean",\n      " {\n'
        b'    "      s += x[(qize_t)r * cols + c];'
        b'\\n    mean[r] =  each row of a 12768 x 1'
        b'024 matrix",\n  "inputs":[[[[[[[[[[[[[[[['
        b'[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['
        b'[[[[[[ [\n    {\n      "name": "x",\n      '
        b'"tSype": "float",\n      "shape": [\n     '
        b'   "rows",\n        "cols"\n      ]  }\n  \n'
        b'  ],\n  "outputs": [\n    {\n      "name": '
        b'"mean",\n      " {\n    "      s += x[(qiz'
        b'e_t)r * cols + c];\\n    m(float)(s / col'
        b's);\\n  }\\n}\\n"\n}\n'),
    "yaml-key-without-place": (
        b'\x01# One [\n    ?   "m\xb6,*(pe: float, shaxe '
        b' "\xff\tn:\'a'),
}


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    examples = os.path.join(here, os.pardir, "examples", "synthesize")
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
    for name, data in FINDINGS.items():
        with open(os.path.join(out, name), "wb") as s:
            s.write(data)
        written += 1
    print(f"{written} seeds in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

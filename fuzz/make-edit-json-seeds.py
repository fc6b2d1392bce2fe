#!/usr/bin/env python3
"""Writes the seeds of edit-json-fuzzer: an edit of each shape the reader
takes (parameters of each JSON type, a qualified target, a loop target,
replace-function's code, a list of edits), one file each, compact JSON
without a trailing newline.

usage: fuzz/make-edit-json-seeds.py OUTDIR

The seeds are kept here rather than as a corpus directory; the fuzzer reads
the directory this writes."""
import os
import sys

SEEDS = {
    "flags.json": (
        '{"kind":"compile-flags","target":"ns::scale",'
        '"params":{"use_fast_math":true,"maxrregcount":64}}'),
    "list.json": (
        '[{"kind":"launch-bounds","target":"saxpy",'
        '"params":{"max_threads":256,"min_blocks":2}},'
        '{"kind":"fast-math","target":"saxpy",'
        '"params":{"functions":["expf"]}}]'),
    "rc.json": (
        '{"kind":"restrict-const","target":"saxpy",'
        '"params":{"const":true,"restrict":false}}'),
    "replace.json": (
        '{"kind":"replace-function","target":"saxpy",'
        '"params":{"code":"__global__ void saxpy(int n) {}",'
        '"changes_precision":true}}'),
    "roc.json": (
        '{"kind":"read-only-cache","target":"saxpy",'
        '"params":{"params":["x","y"]}}'),
    "unroll.json": (
        '{"kind":"unroll","target":"saxpy/loop0","params":{"factor":4}}'),
}


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, text in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(text.encode("utf-8"))
    print(f"{len(SEEDS)} seeds in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

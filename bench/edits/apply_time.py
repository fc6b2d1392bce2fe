#!/usr/bin/env python3
"""Wall time of `clang-optiml apply` (one checked edit: the program parsed,
rewritten, and the result parsed again on the host and device sides) on
suite programs, for one tool or two side by side (interleaved runs, same
files, same edits), with medians and their ratio.

  python3 bench/edits/apply_time.py [--tool build/bin/clang-optiml]
                                    [--against OTHER/clang-optiml] [--runs 7]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# (program, edit): edits the catalog proposes for these programs.
CASES = [
    ("bench/kernels/spmv_csr/naive.cu",
     {"kind": "unroll", "target": "spmv/loop0", "params": {"factor": 2}}),
    ("bench/kernels/softmax/naive.cu",
     {"kind": "warp-per-row", "target": "softmax",
      "params": {"block_size": 256, "lanes": 32, "online": True, "per": "warp"}}),
    ("examples/transpose.cu",
     {"kind": "read-only-cache", "target": "transpose", "params": {}}),
]


def timed(cmd):
    start = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        raise SystemExit("failed: %s\n%s" % (" ".join(cmd), p.stderr[-600:]))
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", default=os.path.join(ROOT, "build/bin/clang-optiml"))
    ap.add_argument("--against", help="a second clang-optiml, timed alongside")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    tools = [("tool", args.tool)] + ([("against", args.against)] if args.against else [])
    tmp = tempfile.mkdtemp(prefix="optiml-apply-time-")
    rows = []
    for prog, edit in CASES:
        path = os.path.join(tmp, "edit.json")
        with open(path, "w") as f:
            json.dump(edit, f)
        times = {name: [] for name, _ in tools}
        for _ in range(args.runs):
            for name, tool in tools:
                times[name].append(timed([tool, "apply", os.path.join(ROOT, prog),
                                          "--edit", path]))
        med = {name: statistics.median(t) for name, t in times.items()}
        rows.append((prog, edit["kind"], med))
    head = "| program | edit | " + " | ".join("%s median s" % n for n, _ in tools)
    head += " | tool / against |" if args.against else " |"
    print(head)
    print("|---|---|" + "---|" * (len(tools) + (1 if args.against else 0)))
    for prog, kind, med in rows:
        cells = ["%.2f" % med[n] for n, _ in tools]
        if args.against:
            cells.append("%.2f" % (med["tool"] / med["against"]))
        print("| %s | %s | %s |" % (prog, kind, " | ".join(cells)))


if __name__ == "__main__":
    main()

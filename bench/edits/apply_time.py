#!/usr/bin/env python3
"""Wall time of `clang-optiml apply` (one checked edit: the program parsed,
rewritten, and the result parsed again on the host and device sides) on
suite programs, for one tool or two side by side (interleaved runs, same
files, same edits), with medians and their ratio; with --dry-run, also
`optimize FILE --dry-run --no-compile` (the first level of the search: every
suggested edit applied and checked) on the same programs.

  python3 bench/edits/apply_time.py [--tool build/bin/clang-optiml]
                                    [--against OTHER/clang-optiml] [--runs 7]
                                    [--dry-run]

Each tool first runs every command once untimed, so its precompiled
preambles are on disk (as after any earlier run); they are kept in a
directory of this run ($OPTIML_PREAMBLE_DIR), away from other processes'.
"""
import argparse
import json
import os
import platform
import shutil
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


def timed(cmd, env, cwd):
    start = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, env=env, cwd=cwd)
    if p.returncode != 0:
        raise SystemExit("failed: %s\n%s" % (" ".join(cmd), p.stderr[-600:]))
    return time.perf_counter() - start


def commands(tmp, dry_run):
    """(program, what, arguments after the tool) for every timed command."""
    out = []
    for i, (prog, edit) in enumerate(CASES):
        path = os.path.join(tmp, "edit%d.json" % i)
        with open(path, "w") as f:
            json.dump(edit, f)
        out.append((prog, "apply " + edit["kind"],
                    ["apply", os.path.join(ROOT, prog), "--edit", path]))
    if dry_run:
        for prog, _ in CASES:
            out.append((prog, "optimize --dry-run",
                        ["optimize", os.path.join(ROOT, prog), "--dry-run",
                         "--no-compile"]))
    return out


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", default=os.path.join(ROOT, "build/bin/clang-optiml"))
    ap.add_argument("--against", help="a second clang-optiml, timed alongside")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--dry-run", action="store_true",
                    help="also time optimize --dry-run --no-compile")
    args = ap.parse_args()
    tools = [("tool", args.tool)] + ([("against", args.against)] if args.against else [])
    tmp = tempfile.mkdtemp(prefix="optiml-apply-time-")
    env = dict(os.environ, OPTIML_PREAMBLE_DIR=os.path.join(tmp, "preambles"))
    rows = []
    try:
        for prog, what, argv in commands(tmp, args.dry_run):
            for _, tool in tools:
                timed([tool] + argv, env, tmp)  # warm-up: preambles on disk
            times = {name: [] for name, _ in tools}
            for _ in range(args.runs):
                for name, tool in tools:
                    times[name].append(timed([tool] + argv, env, tmp))
            rows.append((prog, what, {n: statistics.median(t)
                                      for n, t in times.items()}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%s, %d CPUs; medians of %d interleaved runs" %
          (platform.node(), os.cpu_count() or 0, args.runs))
    head = "| program | command | " + " | ".join("%s median s" % n for n, _ in tools)
    head += " | tool / against |" if args.against else " |"
    print(head)
    print("|---|---|" + "---|" * (len(tools) + (1 if args.against else 0)))
    for prog, what, med in rows:
        cells = ["%.2f" % med[n] for n, _ in tools]
        if args.against:
            cells.append("%.2f" % (med["tool"] / med["against"]))
        print("| %s | %s | %s |" % (prog, what, " | ".join(cells)))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Analysis time of `clang-optiml analyze` against `clang-22 -fsyntax-only`
parsing the same side (host, as analyze does) with the same arguments, on the
same generated file, interleaved in one run. Prints medians and the ratio.

  python3 bench/analyze/run.py [--tool build/bin/clang-optiml] [--kernels 60]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", default=os.path.join(root, "build/bin/clang-optiml"))
    ap.add_argument("--clang", default="clang-22")
    ap.add_argument("--kernels", type=int, default=60)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="optiml-bench-")
    src = os.path.join(tmp, "many_kernels.cu")
    with open(src, "w") as f:
        subprocess.run([sys.executable, os.path.join(here, "gen.py"),
                        str(args.kernels)], stdout=f, check=True)
    lines = sum(1 for _ in open(src))

    # The exact clang command analyze uses, from its -v output.
    v = subprocess.run([args.tool, "analyze", "-v", src], capture_output=True,
                       text=True, check=True)
    prefix = "note: parsing with:"
    parse_line = [l for l in v.stderr.splitlines() if l.startswith(prefix)][0]
    clang_args = parse_line[len(prefix):].split()[1:]  # drop "clang"
    clang_cmd = [args.clang] + clang_args
    tool_cmd = [args.tool, "analyze", "--json", src]

    timed(tool_cmd), timed(clang_cmd)  # warm the page cache
    tool_t, clang_t = [], []
    for _ in range(args.runs):
        tool_t.append(timed(tool_cmd))
        clang_t.append(timed(clang_cmd))
    tm, cm = statistics.median(tool_t), statistics.median(clang_t)
    print(f"file: {lines} lines, {args.kernels * 3} kernels, "
          f"{args.kernels * 4} launch sites")
    print(f"clang-optiml analyze --json: median {tm * 1000:.0f} ms "
          f"(min {min(tool_t) * 1000:.0f}, max {max(tool_t) * 1000:.0f})")
    print(f"{os.path.basename(args.clang)} -fsyntax-only (host side): median "
          f"{cm * 1000:.0f} ms (min {min(clang_t) * 1000:.0f}, "
          f"max {max(clang_t) * 1000:.0f})")
    print(f"ratio of medians: {tm / cm:.2f}x, of minimums: "
          f"{min(tool_t) / min(clang_t):.2f}x (target: at most 1.5x)")


if __name__ == "__main__":
    main()

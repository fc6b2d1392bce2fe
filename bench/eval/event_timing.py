#!/usr/bin/env python3
"""eval's kernel times against an independent CUDA-event measurement.

Run on a GPU node from the repository root (needs nvcc and the relocatable
bundle built by tools/bundle.sh):

    python3 bench/eval/event_timing.py \\
        [--bundle dist/clang-optiml-0.1.0-linux-x86_64.tar.xz] [--out DIR] \\
        [--rounds 3] [--replays 20] [--flush-l2] [PROGRAM.cu ...]

The independent measurement is the program itself, rewritten: for every
launch site of a kernel (found with `clang-optiml analyze --json`), the
launch statement becomes a block that makes the program's own launch and
then, the first time the site runs, launches the same statement `--replays`
more times back to back, each between two CUDA events, and prints the
times. It is built with the flags eval uses (`nvcc -O3 -arch=sm_90`) and
shares nothing with the probe (no CUPTI, no replays from a snapshot, no
restores). Only the printed times are read: the extra launches change what
a kernel that accumulates (saxpy, reduction) leaves behind, so the
program's own result check may fail. eval times the same launch by replaying it from a snapshot
with the inputs restored (`clang-optiml eval FILE --json --no-metrics
--no-sanitize --verify-first 1 --replays N`).

The two alternate, `--rounds` times per program, so that a drift of the
GPU's clock shows in both. A row passes when eval's median is within 2% of
the program's own median in the same round; for kernels of 1 ms or more
eval's spread (IQR over median) must also be under 1%. With `--flush-l2`,
the rewritten program reads a buffer of 4x the L2 size before each timed
launch and eval gets `--flush-l2`, so both start from a cold L2.

`--emit DIR` writes the rewritten sources and exits (no GPU needed; used by
the CPU test). Writes event_timing.md and event_timing.json under --out
(default $OUT, else ./event-timing) and prints the table.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ncu_compare import find_tool, log, require_gpu, run, unpack_bundle  # noqa: E402

PROGRAMS = [
    "examples/saxpy.cu",
    "examples/transpose.cu",
    "examples/reduction.cu",
    "examples/matmul.cu",
]
MARK = "optiml-event-timing"
TOLERANCE = 0.02
SPREAD_LIMIT_PCT = 1.0
LONG_KERNEL_MS = 1.0

# Prepended to the rewritten program; FLUSH too with --flush-l2. The flush
# reads (never writes) a buffer of 4x the L2 size, so it leaves no dirty
# lines behind it.
PRELUDE = r"""#include <cstdio>
#include <cuda_runtime.h>
"""
FLUSH = r"""__global__ void optiml_event_flush(const int4 *p, size_t n, int *sink) {
  int4 acc = make_int4(0, 0, 0, 0);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    int4 v = p[i];
    acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w;
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x7f3a5c1d)
    *sink = 1;
}
static void optiml_event_flush_l2() {
  static int4 *buf = nullptr;
  static int *sink = nullptr;
  static size_t n = 0;
  if (!buf) {
    int dev = 0, l2 = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
    n = 4 * (size_t)(l2 > 0 ? l2 : (64 << 20)) / sizeof(int4);
    if (cudaMalloc(&buf, n * sizeof(int4)) != cudaSuccess ||
        cudaMalloc(&sink, sizeof(int)) != cudaSuccess) {
      std::fprintf(stderr, "optiml-event-timing: no memory for the L2 flush\n");
      return;
    }
    cudaMemset(buf, 1, n * sizeof(int4));
    cudaDeviceSynchronize();
  }
  optiml_event_flush<<<1024, 256>>>(buf, n, sink);
}
"""

TIMED = """{{
    {stmt}
    static bool optiml_event_done_{i} = false;
    if (!optiml_event_done_{i}) {{
      optiml_event_done_{i} = true;
      cudaDeviceSynchronize();
      cudaEvent_t optiml_a, optiml_b;
      cudaEventCreate(&optiml_a);
      cudaEventCreate(&optiml_b);
      std::fprintf(stderr, "{mark} {kernel} {site}");
      for (int optiml_r = 0; optiml_r < {reps}; ++optiml_r) {{
        {flush}cudaEventRecord(optiml_a);
        {stmt}
        cudaEventRecord(optiml_b);
        cudaEventSynchronize(optiml_b);
        float optiml_ms = 0;
        cudaEventElapsedTime(&optiml_ms, optiml_a, optiml_b);
        std::fprintf(stderr, " %.6f", optiml_ms);
      }}
      std::fprintf(stderr, " status=%d\\n", (int)cudaGetLastError());
      cudaEventDestroy(optiml_a);
      cudaEventDestroy(optiml_b);
    }}
  }}"""


def line_offsets(text):
    offsets, pos = [0], 0
    for line in text.splitlines(keepends=True):
        pos += len(line)
        offsets.append(pos)
    return offsets


def statement_end(text, start):
    """Index just past the ';' that ends the statement starting at start
    (parentheses, brackets, braces, <<< >>> and literals skipped)."""
    depth, i, n = 0, start, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            q, i = c, i + 1
            while i < n and text[i] != q:
                i += 2 if text[i] == "\\" else 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            if i < 0:
                return None
        elif text.startswith("/*", i):
            i = text.find("*/", i)
            if i < 0:
                return None
            i += 1
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ";" and depth == 0:
            return i + 1
        i += 1
    return None


def launch_sites(model):
    """[(kernel, launch id, line, column)] from `analyze --json`."""
    sites = []
    for k in model.get("kernels", []):
        for l in k.get("launches", []):
            if l.get("in_macro"):
                continue
            sites.append((k["name"], l["id"], l["line"], l["column"]))
    return sites


def timing_variant(text, sites, reps, flush):
    """The program with every launch site in sites made into a timed block;
    raises ValueError when a site is not a launch statement."""
    offsets = line_offsets(text)
    edits = []
    for i, (kernel, site, line, column) in enumerate(sites):
        start = offsets[line - 1] + column - 1
        end = statement_end(text, start)
        stmt = text[start:end] if end else ""
        if "<<<" not in stmt or not stmt.lstrip().startswith(kernel.split("::")[-1]):
            raise ValueError(f"{site}: no launch statement at line {line}, "
                             f"column {column}")
        edits.append((start, end, TIMED.format(
            stmt=stmt, i=i, mark=MARK, kernel=kernel, site=site, reps=reps,
            flush="optiml_event_flush_l2();\n        " if flush else "")))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return PRELUDE + (FLUSH if flush else "") + text


def parse_timings(stderr):
    """{(kernel, site): [ms, ...]} from the rewritten program's stderr
    (None for a site whose launches reported a CUDA error)."""
    found = {}
    for line in stderr.splitlines():
        parts = line.split()
        if len(parts) < 5 or parts[0] != MARK or not parts[-1].startswith("status="):
            continue
        ok = parts[-1] == "status=0"
        found[(parts[1], parts[2])] = [float(v) for v in parts[3:-1]] if ok else None
    return found


def iqr_pct(values):
    q = statistics.quantiles(values, n=4, method="inclusive")
    return 100.0 * (q[2] - q[0]) / statistics.median(values)


def verdict(eval_ms, event_ms, spread_pct):
    ratio = eval_ms / event_ms
    ok = abs(ratio - 1) <= TOLERANCE
    if ok and event_ms >= LONG_KERNEL_MS and spread_pct >= SPREAD_LIMIT_PCT:
        ok = False
    return ratio, "pass" if ok else "FAIL"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", default="dist/clang-optiml-0.1.0-linux-x86_64.tar.xz")
    ap.add_argument("--tool", help="clang-optiml to use instead of the bundle's")
    ap.add_argument("--out", default=os.environ.get("OUT", "event-timing"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--replays", type=int, default=20)
    ap.add_argument("--flush-l2", action="store_true")
    ap.add_argument("--emit", metavar="DIR",
                    help="write the rewritten sources to DIR and stop")
    ap.add_argument("--deadline", type=float, default=400,
                    help="seconds; programs not started by then are skipped")
    ap.add_argument("programs", nargs="*", default=PROGRAMS)
    args = ap.parse_args()
    began = time.time()
    work = tempfile.mkdtemp(prefix="event-timing-")

    tool = args.tool
    if not tool:
        if not os.path.exists(args.bundle):
            sys.exit(f"event_timing: no bundle at {args.bundle} (tools/bundle.sh "
                     "builds it); or give --tool")
        tool, _ = unpack_bundle(args.bundle, work)
        if not tool:
            sys.exit(f"event_timing: {args.bundle} holds no bin/clang-optiml")

    variants = {}
    for src in args.programs:
        rc, out, err = run([tool, "analyze", src, "--json"], 120)
        if rc != 0:
            sys.exit(f"event_timing: analyze {src} failed ({rc}): {err.strip()[-400:]}")
        sites = launch_sites(json.loads(out))
        if not sites:
            sys.exit(f"event_timing: {src} launches no kernel")
        with open(src) as f:
            text = f.read()
        try:
            variants[src] = timing_variant(text, sites, args.replays, args.flush_l2)
        except ValueError as e:
            sys.exit(f"event_timing: {src}: {e}")

    if args.emit:
        os.makedirs(args.emit, exist_ok=True)
        for src, text in variants.items():
            with open(os.path.join(args.emit, os.path.basename(src)), "w") as f:
                f.write(text)
        log(f"wrote {len(variants)} rewritten program(s) to {args.emit}")
        return

    require_gpu("event_timing")
    nvcc = find_tool("nvcc", ["/usr/local/cuda/bin/nvcc"])
    if not nvcc:
        sys.exit("event_timing: needs nvcc")
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(nvcc) + os.pathsep + env.get("PATH", "")
    os.makedirs(args.out, exist_ok=True)
    gpu = run(["nvidia-smi", "--query-gpu=name,driver_version",
               "--format=csv,noheader"], 30)[1].strip()
    version = run([tool, "--version"], 30)[1].strip()
    log(f"GPU: {gpu}; {version}")

    rows, problems = [], []
    for src in args.programs:
        if time.time() - began > args.deadline:
            problems.append(f"{src}: skipped, past the {args.deadline:.0f} s deadline")
            continue
        name = os.path.splitext(os.path.basename(src))[0]
        vsrc = os.path.join(work, name + ".events.cu")
        with open(vsrc, "w") as f:
            f.write(variants[src])
        binary = os.path.join(work, name + ".events")
        rc, _, err = run([nvcc, "-O3", "-arch=sm_90", "-o", binary, vsrc,
                          "-I", os.path.dirname(os.path.abspath(src))], 240, env=env)
        if rc != 0:
            problems.append(f"{src}: the rewritten program did not build: "
                            f"{err.strip()[-400:]}")
            continue
        flags = ["--json", "--no-metrics", "--no-sanitize", "--verify-first", "1",
                 "--replays", str(args.replays), "--timeout", "120",
                 "--cache-dir", os.path.join(work, "cache")]
        if args.flush_l2:
            flags.append("--flush-l2")
        per_kernel = {}
        for r in range(args.rounds):
            rc, _, err = run([binary], 180, env=env)
            events = parse_timings(err)
            rc_eval, out, eval_err = run([tool, "eval", src] + flags, 600, env=env)
            with open(os.path.join(args.out, f"{name}.round{r + 1}.eval.json"), "w") as f:
                f.write(out)
            try:
                report = json.loads(out)
            except ValueError:
                problems.append(f"{src} round {r + 1}: eval exited {rc_eval} "
                                f"without JSON: {eval_err.strip()[-400:]}")
                continue
            for k in report.get("kernels", []):
                t = k.get("time") or {}
                ev = [v for (kern, _), v in events.items()
                      if kern == k.get("name") and v]
                if not t.get("available") or not ev:
                    problems.append(f"{src} round {r + 1} {k.get('name')}: "
                                    f"eval time {'ok' if t.get('available') else 'missing'}, "
                                    f"events {'ok' if ev else 'missing'}")
                    continue
                ev_ms = statistics.median(ev[0])
                ratio, status = verdict(t["median_ms"], ev_ms, t["spread_pct"])
                per_kernel.setdefault(k["name"], []).append({
                    "round": r + 1, "event_median_ms": ev_ms,
                    "event_iqr_pct": iqr_pct(ev[0]), "event_times_ms": ev[0],
                    "eval_median_ms": t["median_ms"], "eval_spread_pct": t["spread_pct"],
                    "eval_replays": t["replays"], "ratio": ratio, "status": status})
        for kernel, rounds in per_kernel.items():
            rows.append({"program": src, "kernel": kernel, "rounds": rounds})
        log(f"{src}: {sum(len(v) for v in per_kernel.values())} measurement(s), "
            f"{time.time() - began:.0f} s")

    md = [f"GPU: {gpu}; {version}; {args.replays} replays each, "
          f"L2 {'flushed before each timed launch' if args.flush_l2 else 'as left by the previous launch (events) / by the restores (eval)'}.",
          "",
          "| program | kernel | round | events median | events IQR | eval median | eval spread | eval/events | check |",
          "|---|---|---|---|---|---|---|---|---|"]
    passed = failed = 0
    for row in rows:
        for m in row["rounds"]:
            passed += m["status"] == "pass"
            failed += m["status"] != "pass"
            md.append(f"| {row['program']} | {row['kernel']} | {m['round']} | "
                      f"{m['event_median_ms']:.4f} ms | {m['event_iqr_pct']:.2f}% | "
                      f"{m['eval_median_ms']:.4f} ms | {m['eval_spread_pct']:.2f}% | "
                      f"{m['ratio']:.4f} | {m['status']} |")
    md += ["", f"{passed} passed, {failed} failed" +
           (f", {len(problems)} problem(s)" if problems else "")]
    md += [f"- {p}" for p in problems]
    text = "\n".join(md) + "\n"
    with open(os.path.join(args.out, "event_timing.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "event_timing.json"), "w") as f:
        json.dump({"gpu": gpu, "tool": version, "replays": args.replays,
                   "flush_l2": args.flush_l2, "tolerance": TOLERANCE,
                   "spread_limit_pct": SPREAD_LIMIT_PCT, "rows": rows,
                   "problems": problems}, f, indent=1)
    print(text, end="")
    sys.exit(0 if failed == 0 and not problems else 1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Benchmark-suite runner.

Builds and runs, for each kernel of bench/kernels/, side by side in one run:
the naive program, the reference (cuBLAS / CUB / cuSPARSE / PyTorch /
hand-optimized CUDA), and an optimized source if one is present in
--optimized-dir; measures the ceilings (DRAM bandwidth, FP32 rate) in the same
run, and reports each time as a fraction of the roofline bound from the
kernel's entry in bench/kernels/suite.json.

Resumable: each kernel's result is written to OUT/kernels/<name>.json as soon
as it is measured, and kernels already there are skipped unless --force, so
the suite can be spread over several short sessions on the GPU machine.

    python3 bench/run.py --out OUT [--kernels a,b]
                         [--optimized-dir DIR] [--force] [--jobs N]
"""

import argparse
import concurrent.futures
import datetime
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
KERNELS_DIR = os.path.join(BENCH_DIR, "kernels")
BUILD_DIR = os.path.join(BENCH_DIR, "build")
NVCC_FLAGS = ["-O3", "-arch=sm_90", "-std=c++17"]
LIBS = ["-lcublas", "-lcusparse"]
# Used only when the ceilings program cannot run; results then say so.
FALLBACK_CEILINGS = {"dram_GBps": 4300.0, "fp32_GFLOPs": 66900.0, "source": "fallback (DESIGN.md / datasheet)"}
VARIANTS = ("naive", "optimized", "reference")


def log(msg):
    print(msg, flush=True)


def find_nvcc(arg):
    for cand in (arg, os.environ.get("NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if cand and (os.path.isfile(cand) or shutil.which(cand)):
            return cand
    return "nvcc"


def run_env():
    env = dict(os.environ)
    env["NVIDIA_TF32_OVERRIDE"] = "0"  # keep FP32 GEMMs in FP32
    env["PYTHONUNBUFFERED"] = "1"
    lib = "/usr/local/cuda/lib64"
    env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


# ---------------------------------------------------------------- building

def stamp_of(src):
    h = hashlib.sha256()
    with open(src, "rb") as f:
        h.update(f.read())
    h.update(" ".join(NVCC_FLAGS + LIBS).encode())
    return h.hexdigest()


def build(nvcc, src, exe, force=False):
    """Compiles src into exe unless an up-to-date build (by content stamp) exists.
    Returns (ok, log)."""
    stamp = exe + ".stamp"
    want = stamp_of(src)
    if not force and os.path.exists(exe) and os.path.exists(stamp):
        with open(stamp) as f:
            if f.read().strip() == want:
                return True, "up to date"
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    cmd = [nvcc] + NVCC_FLAGS + ["-o", exe, src] + LIBS
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return False, "nvcc timed out"
    out = (p.stdout + p.stderr)[-4000:]
    if p.returncode != 0:
        return False, out
    with open(stamp, "w") as f:
        f.write(want + "\n")
    return True, out


def exe_path(name, variant, src=None):
    if variant == "optimized":
        return os.path.join(BUILD_DIR, name, "optimized-" + stamp_of(src)[:12])
    return os.path.join(BUILD_DIR, name, variant)


# ---------------------------------------------------------------- running

def parse_output(text):
    res = {}
    for line in text.splitlines():
        if line.startswith("BENCH "):
            for tok in line.split()[1:]:
                k, _, v = tok.partition("=")
                res[k] = v
        elif line.startswith("CHECK "):
            parts = line.split()
            res["check"] = parts[1]
            for tok in parts[2:]:
                k, _, v = tok.partition("=")
                res["check_" + k] = v
    return res


def run_program(cmd, timeout):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=run_env(), cwd=BENCH_DIR)
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        rc = "timeout"
        out = ((e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or ""))
    return rc, out, time.time() - t0


def measure(name, variant, src, meta, nvcc, timeout):
    """Builds (if needed) and runs one variant; returns its result dict."""
    r = {"source": os.path.relpath(src, os.path.dirname(BENCH_DIR))}
    if src.endswith(".py"):
        cmd = [sys.executable, src]
    else:
        exe = exe_path(name, variant, src)
        ok, blog = build(nvcc, src, exe)
        if not ok:
            r.update(status="build_failed", log_tail=blog[-2000:])
            return r
        cmd = [exe]
    rc, out, wall = run_program(cmd, timeout)
    if not src.endswith(".py") and (rc == 127 or "error while loading shared libraries" in out):
        # A binary carried from another machine that does not load here: rebuild once.
        ok, blog = build(nvcc, src, cmd[0], force=True)
        if not ok:
            r.update(status="build_failed", log_tail=blog[-2000:])
            return r
        rc, out, wall = run_program(cmd, timeout)
    parsed = parse_output(out)
    r["rc"] = rc
    r["wall_s"] = round(wall, 2)
    r["log_tail"] = out[-1500:]
    if "kernel_ms" in parsed:
        r["kernel_ms"] = float(parsed["kernel_ms"])
        r["min_ms"] = float(parsed.get("min_ms", "nan"))
        r["runs"] = int(parsed.get("runs", "0"))
        r["size"] = parsed.get("size")
    r["check"] = parsed.get("check", "none")
    if "check_max_err" in parsed:
        r["check_max_err"] = parsed["check_max_err"]
    if rc == "timeout":
        r["status"] = "timeout"
    elif "kernel_ms" not in parsed:
        r["status"] = "run_failed"
    elif r.get("size") != meta["size"]:
        r["status"] = "size_mismatch"
    elif rc != 0 or r["check"] != "PASS":
        r["status"] = "check_failed"
    else:
        r["status"] = "ok"
    return r


def measure_ceilings(nvcc, timeout):
    src = os.path.join(BENCH_DIR, "ceilings.cu")
    exe = os.path.join(BUILD_DIR, "ceilings")
    ok, blog = build(nvcc, src, exe)
    if not ok:
        log("ceilings: build failed, using fallback ceilings\n" + blog[-1500:])
        return dict(FALLBACK_CEILINGS)
    rc, out, _ = run_program([exe], timeout)
    if rc == 127 or "error while loading shared libraries" in out:
        ok, blog = build(nvcc, src, exe, force=True)
        rc, out, _ = run_program([exe], timeout) if ok else (1, blog, 0)
    c = {}
    for line in out.splitlines():
        if line.startswith("GPU "):
            c["gpu"] = line[4:].strip()
        if line.startswith("CEILING "):
            for tok in line.split()[1:]:
                k, _, v = tok.partition("=")
                c[k] = float(v)
    if "dram_GBps" not in c or "fp32_GFLOPs" not in c:
        log("ceilings: run failed, using fallback ceilings\n" + out[-1500:])
        return dict(FALLBACK_CEILINGS)
    c["source"] = "measured"
    c["measured_at"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    return c


def roofline_ms(meta, ceil):
    t_mem = meta["bytes"] / (ceil["dram_GBps"] * 1e9) * 1e3
    t_fp = meta["flops"] / (ceil["fp32_GFLOPs"] * 1e9) * 1e3
    return max(t_mem, t_fp), ("dram" if t_mem >= t_fp else "fp32")


def suite_meta():
    """bench/kernels/suite.json: each program's size and roofline, by name."""
    with open(os.path.join(KERNELS_DIR, "suite.json")) as f:
        return json.load(f)


def load_meta(name):
    meta = suite_meta()[name]
    for key in ("bytes", "flops"):
        val = eval(meta[key + "_formula"], {"__builtins__": {}}, dict(meta["params"]))
        if val != meta[key]:
            raise SystemExit(f"suite.json: {name}: {key}={meta[key]} but its formula gives {val}")
    return meta


def bench_kernel(name, meta, ceil, args, nvcc):
    kdir = os.path.join(KERNELS_DIR, name)
    res = {"name": name, "size": meta["size"], "bytes": meta["bytes"], "flops": meta["flops"],
           "bytes_formula": meta["bytes_formula"], "flops_formula": meta["flops_formula"],
           "reference_what": meta["reference"]["what"], "reference_kind": meta["reference"]["kind"],
           "ceilings": ceil, "gpu": ceil.get("gpu", "unknown"),
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "command": " ".join([os.path.basename(sys.executable)] + sys.argv)}
    rms, limiter = roofline_ms(meta, ceil)
    res["roofline_ms"] = rms
    res["roofline_limiter"] = limiter
    sources = {"naive": os.path.join(kdir, "naive.cu"),
               "reference": os.path.join(kdir, meta["reference"]["file"])}
    search = None
    if args.optimized_dir:
        opt = os.path.join(args.optimized_dir, name, "optimized.cu")
        if os.path.exists(opt):
            sources["optimized"] = opt
            sj = os.path.join(args.optimized_dir, name, "search.json")
            if os.path.exists(sj):
                with open(sj) as f:
                    search = json.load(f)
    res["variants"] = {}
    for v in VARIANTS:
        if v not in sources:
            continue
        r = measure(name, v, sources[v], meta, nvcc, args.timeout)
        if r.get("kernel_ms"):
            r["fraction_of_roofline"] = rms / r["kernel_ms"]
            r["achieved_GBps"] = meta["bytes"] / (r["kernel_ms"] * 1e-3) / 1e9
            r["achieved_GFLOPs"] = meta["flops"] / (r["kernel_ms"] * 1e-3) / 1e9
        res["variants"][v] = r
        log(f"  {name:20s} {v:10s} {r['status']:13s} "
            + (f"{r['kernel_ms']:10.4f} ms  {100 * r['fraction_of_roofline']:6.1f}% of roofline"
               if r.get("kernel_ms") else ""))
    if "optimized" in res["variants"]:
        o = res["variants"]["optimized"]
        o["search"] = search
        o["verified"] = o["status"] == "ok" and not (search and search.get("verified") is False)
    res["speedups"] = speedups(res["variants"])
    return res


def speedups(variants):
    def t(v):
        r = variants.get(v)
        return r["kernel_ms"] if r and r.get("status") == "ok" else None

    out = {}
    for a, b, key in (("optimized", "naive", "optimized_over_naive"),
                      ("optimized", "reference", "optimized_over_reference"),
                      ("reference", "naive", "reference_over_naive")):
        ta, tb = t(a), t(b)
        out[key] = tb / ta if ta and tb else None
    return out


# ---------------------------------------------------------------- reporting

def fmt_pct(r):
    if not r:
        return "—"
    if r.get("status") != "ok":
        return r.get("status", "?")
    return f"{100 * r['fraction_of_roofline']:.1f}%"


def fmt_ms(r):
    return f"{r['kernel_ms']:.3f}" if r and r.get("kernel_ms") else "—"


def fmt_x(x):
    return f"{x:.2f}x" if x else "—"


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


MEMORY_TARGET = 0.85


def targets(results):
    """Evaluates the issue's targets on the best available non-reference variant."""
    lines = []
    opt_naive = [r["speedups"]["optimized_over_naive"] for r in results if r["speedups"]["optimized_over_naive"]]
    g = geomean(opt_naive)
    lines.append(f"- Geomean speedup of optimized over naive >= 4x: "
                 + (f"{g:.2f}x over {len(opt_naive)} kernel(s) with an optimized source" if g else "no optimized sources yet"))
    for r in results:
        n, o, ref = r["variants"].get("naive"), r["variants"].get("optimized"), r["variants"].get("reference")
        if r["roofline_limiter"] == "dram" and r["name"] not in ("sgemm",):
            best = o if o and o.get("status") == "ok" else None
            ref_f = ref.get("fraction_of_roofline") if ref and ref.get("status") == "ok" else None
            lines.append(f"- {r['name']}: memory-bound target 85% of DRAM roofline; optimized "
                         + (f"{100 * best['fraction_of_roofline']:.1f}%" if best else "none")
                         + f", naive {fmt_pct(n)}, reference " + (f"{100 * ref_f:.1f}%" if ref_f else fmt_pct(ref)))
    for r in results:
        if r["name"] == "sgemm":
            s = r["speedups"]["optimized_over_reference"]
            nr = 1 / r["speedups"]["reference_over_naive"] if r["speedups"]["reference_over_naive"] else None
            lines.append("- sgemm: target 70% of cuBLAS; optimized "
                         + (f"{100 * s:.1f}%" if s else "none") + ", naive "
                         + (f"{100 * nr:.1f}%" if nr else "—"))
        if r["name"] in ("dot", "scan", "histogram"):
            s = r["speedups"]["optimized_over_reference"]
            nr = r["speedups"]["reference_over_naive"]
            lines.append(f"- {r['name']}: target within 1.2x of CUB; optimized "
                         + (f"{1 / s:.2f}x CUB's time" if s else "none") + ", naive "
                         + (f"{nr:.2f}x CUB's time" if nr else "—"))
    return lines


def write_report(out_dir, results, write=True):
    results = sorted(results, key=lambda r: r["name"])
    ceil = results[0]["ceilings"] if results else {}
    gpus = sorted({r["gpu"] for r in results})
    hdr = ("| kernel | naive % roof | optimized % roof | reference % roof | roofline ms (limit) | naive ms | "
           "optimized ms | reference ms (kind) | opt/naive | opt/ref | ref/naive | search evals | search wall s | verified |")
    sep = "|" + "---|" * 14
    rows = [hdr, sep]
    for r in results:
        v = r["variants"]
        n, o, ref = v.get("naive"), v.get("optimized"), v.get("reference")
        s = r["speedups"]
        search = (o or {}).get("search") or {}
        evals = search.get("evaluations", "—") if o else "—"
        wall = search.get("wall_s", "—") if o else "—"
        if o and search.get("hand_placed"):
            evals, wall = "hand-placed", "—"
        verified = ("yes" if o.get("verified") else "no") if o else "—"
        rows.append(f"| {r['name']} | {fmt_pct(n)} | {fmt_pct(o)} | {fmt_pct(ref)} | "
                    f"{r['roofline_ms']:.3f} ({r['roofline_limiter']}) | {fmt_ms(n)} | {fmt_ms(o)} | "
                    f"{fmt_ms(ref)} ({r['reference_kind']}) | {fmt_x(s['optimized_over_naive'])} | "
                    f"{fmt_x(s['optimized_over_reference'])} | {fmt_x(s['reference_over_naive'])} | "
                    f"{evals} | {wall} | {verified} |")
    g_ref = geomean([r["speedups"]["reference_over_naive"] for r in results])
    g_opt = geomean([r["speedups"]["optimized_over_naive"] for r in results])
    lines = [f"# Benchmark results", "",
             f"- GPU: {', '.join(gpus)}",
             f"- Ceilings ({ceil.get('source', '?')}): DRAM {ceil.get('dram_GBps', 0):.0f} GB/s "
             f"(copy, read+write), FP32 {ceil.get('fp32_GFLOPs', 0) / 1e3:.1f} TFLOP/s"
             + (f", bf16 tensor core {ceil['bf16_tc_GFLOPs'] / 1e3:.0f} TFLOP/s (informational)"
                if ceil.get("bf16_tc_GFLOPs") else ""),
             f"- Kernels measured: {len(results)}; dates {min(r['date'] for r in results)} .. "
             f"{max(r['date'] for r in results)}" if results else "- no kernels",
             "- % roof = roofline time (max of bytes/DRAM bandwidth, flops/FP32 rate) / measured time; "
             "speedups are ratios of median times and are shown only when both programs verified.",
             "", *rows, "",
             f"Geomean reference/naive: {fmt_x(g_ref)}; geomean optimized/naive: {fmt_x(g_opt)}.", "",
             "## Targets", "", *targets(results), ""]
    md = "\n".join(lines)
    if not write:
        return md
    # The names of bench/README.md's results layout.
    with open(os.path.join(out_dir, "summary.md"), "w") as f:
        f.write(md)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump({"gpu": gpus, "ceilings": ceil, "geomean_reference_over_naive": g_ref,
                   "geomean_optimized_over_naive": g_opt, "kernels": results}, f, indent=2)
    plot(out_dir, results)
    return md


def plot(out_dir, results):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib not available: no plot")
        return
    names = [r["name"] for r in results]
    colors = {"naive": "#c44e52", "optimized": "#55a868", "reference": "#4c72b0"}
    fig, ax = plt.subplots(figsize=(max(8, 0.75 * len(names) + 2), 5))
    w = 0.27
    for k, v in enumerate(VARIANTS):
        xs, ys = [], []
        for i, r in enumerate(results):
            x = r["variants"].get(v)
            if x and x.get("status") == "ok":
                xs.append(i + (k - 1) * w)
                ys.append(x["fraction_of_roofline"])
        ax.bar(xs, ys, w, label=v, color=colors[v])
    ax.set_yscale("log")
    fr = [x["fraction_of_roofline"] for r in results for x in r["variants"].values()
          if x.get("status") == "ok" and x.get("fraction_of_roofline")]
    ax.set_ylim(min([1e-2] + fr) / 2, 2)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.axhline(MEMORY_TARGET, color="gray", lw=0.8, ls="--")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=45, ha="right")
    ax.set_ylabel("fraction of roofline (log)")
    gpu = results[0]["gpu"] if results else ""
    ax.set_title(f"Fraction of roofline per kernel ({gpu})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "roofline.png"), dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="results folder (per-kernel JSON, summary.md/.json, roofline.png)")
    ap.add_argument("--kernels", help="comma-separated subset (default: all in bench/kernels)")
    ap.add_argument("--optimized-dir", help="folder with <kernel>/optimized.cu (+ optional search.json)")
    ap.add_argument("--force", action="store_true", help="re-measure kernels already in --out")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel compilations")
    ap.add_argument("--timeout", type=int, default=240, help="seconds per program")
    ap.add_argument("--deadline", type=float, default=0, help="start no new kernel after this many seconds")
    ap.add_argument("--build-only", action="store_true", help="compile everything, run nothing")
    ap.add_argument("--report-only", action="store_true",
                    help="rebuild the table from OUT/kernels/*.json (or, for a recorded run "
                         "without them, from the kernels in OUT/summary.json)")
    ap.add_argument("--nvcc", help="nvcc to use (default: $NVCC, PATH, /usr/local/cuda/bin/nvcc)")
    args = ap.parse_args()
    t_start = time.time()
    nvcc = find_nvcc(args.nvcc)
    names = sorted(d for d in suite_meta() if os.path.exists(os.path.join(KERNELS_DIR, d, "naive.cu")))
    if args.kernels:
        want = args.kernels.split(",")
        unknown = [k for k in want if k not in names]
        if unknown:
            raise SystemExit(f"unknown kernels: {unknown}")
        names = want
    kout = os.path.join(args.out, "kernels")
    if not args.report_only:
        os.makedirs(kout, exist_ok=True)
    metas = {n: load_meta(n) for n in names}

    if not args.report_only:
        todo = [n for n in names if args.force or not os.path.exists(os.path.join(kout, n + ".json"))]
        # Compile everything first, in parallel.
        jobs = [(os.path.join(BENCH_DIR, "ceilings.cu"), os.path.join(BUILD_DIR, "ceilings"))]
        for n in todo:
            kdir = os.path.join(KERNELS_DIR, n)
            jobs.append((os.path.join(kdir, "naive.cu"), exe_path(n, "naive")))
            ref = os.path.join(kdir, metas[n]["reference"]["file"])
            if ref.endswith(".cu"):
                jobs.append((ref, exe_path(n, "reference")))
            if args.optimized_dir:
                opt = os.path.join(args.optimized_dir, n, "optimized.cu")
                if os.path.exists(opt):
                    jobs.append((opt, exe_path(n, "optimized", opt)))
        log(f"building {len(jobs)} programs with {args.jobs} jobs ({nvcc})")
        t0 = time.time()
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
            for (src, exe), (ok, blog) in zip(jobs, ex.map(lambda j: build(nvcc, *j), jobs)):
                if not ok:
                    log(f"BUILD FAILED {os.path.relpath(src, BENCH_DIR)}\n{blog[-1500:]}")
        log(f"build done in {time.time() - t0:.1f}s")
        if args.build_only:
            return
        if todo:
            ceil = measure_ceilings(nvcc, args.timeout)
            log(f"ceilings: {json.dumps(ceil)}")
            with open(os.path.join(args.out, "ceilings.json"), "w") as f:
                json.dump(ceil, f, indent=2)
        for n in todo:
            if args.deadline and time.time() - t_start > args.deadline:
                log(f"deadline reached: {n} and later kernels left for the next call")
                break
            log(f"[{n}]")
            res = bench_kernel(n, metas[n], ceil, args, nvcc)
            with open(os.path.join(kout, n + ".json"), "w") as f:
                json.dump(res, f, indent=2)

    results = []
    for n in names:
        p = os.path.join(kout, n + ".json")
        if os.path.exists(p):
            with open(p) as f:
                results.append(json.load(f))
    recorded = os.path.join(args.out, "summary.json")
    if args.report_only and not results and os.path.exists(recorded):
        # A recorded run keeps only its summary (bench/README.md), which
        # holds every kernel's result: the table is printed, the record is
        # left as it is.
        with open(recorded) as f:
            results = [k for k in json.load(f).get("kernels", []) if k["name"] in names]
        if results:
            print(write_report(args.out, results, write=False))
        return
    if results:
        print(write_report(args.out, results))


if __name__ == "__main__":
    main()

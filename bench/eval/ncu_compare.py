#!/usr/bin/env python3
"""The probe's hardware metrics against Nsight Compute's, side by side.

Run on a GPU node from the repository root (needs nvcc, ncu, python3 and
the relocatable bundle built by tools/bundle.sh):

    python3 bench/eval/ncu_compare.py \
        [--bundle dist/clang-optiml-0.1.0-linux-x86_64.tar.xz] [--out DIR]

For each program it builds the binary with `nvcc -O3 -arch=sm_90 -cudart
static` (the flags eval uses on an sm_90 GPU), runs `clang-optiml eval FILE
--json` from the unpacked bundle and takes the metrics part (the first
launch of each target kernel, profiled by the probe's range profiler), then
profiles the same binary with `ncu --clock-control none --cache-control all`
and the same six metrics, and compares the first launch of each kernel.
A metric passes when the probe's value is within 5% of ncu's; values too
small for a ratio to mean much (both under 1 MiB, or both under 1
percentage point) are marked "abs" and counted separately.

Writes under --out (default $OUT, else ./ncu-compare): ncu_compare.md (the
table), ncu_compare.json (every value), ncu_compare_raw.tar.gz (eval's JSON,
the probe's metrics result, ncu's CSV per program) and prints the table.
"""

import argparse
import csv
import glob
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

PROGRAMS = [
    "examples/saxpy.cu",
    "examples/transpose.cu",
    "examples/reduction.cu",
    "examples/matmul.cu",
    "test/Inputs/eval/prog.cu",
]

# DefaultMetrics in lib/Eval/Evaluator.cpp: what eval asks the probe for.
METRICS = [
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
]

TOLERANCE = 0.05
# Below these, a ratio says little: 1 MiB of DRAM traffic, 1 point of a
# percentage. Time has no floor.
FLOORS = {
    "dram__bytes_read.sum": 1 << 20,
    "dram__bytes_write.sum": 1 << 20,
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": 1.0,
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": 1.0,
    "sm__warps_active.avg.pct_of_peak_sustained_active": 1.0,
}

SHORT = {
    "gpu__time_duration.sum": "time",
    "dram__bytes_read.sum": "DRAM read",
    "dram__bytes_write.sum": "DRAM write",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "SM throughput",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed":
        "memory throughput",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "warps active",
}

# ncu prints base units with --print-units base; the rest are converted in
# case an older ncu ignores it.
UNITS = {
    "nsecond": 1, "usecond": 1e3, "msecond": 1e6, "second": 1e9,
    "byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
    "%": 1, "": 1,
}


def log(msg):
    print(msg, flush=True)


def find_tool(name, patterns):
    found = shutil.which(name)
    if found:
        return found
    for pattern in patterns:
        hits = sorted(glob.glob(pattern))
        if hits:
            return hits[-1]
    return None


def require_gpu(script):
    """Exits with a clear word when no CUDA GPU is visible: these scripts
    measure on one and have nothing to say without it."""
    smi = shutil.which("nvidia-smi")
    p = subprocess.run([smi, "-L"], capture_output=True, text=True) if smi else None
    if not p or p.returncode != 0 or "GPU" not in p.stdout:
        sys.exit(f"{script}: needs a CUDA GPU (nvidia-smi -L lists none); "
                 "run it on a GPU node (README, \"Developers\": GPU tests)")


def unpack_bundle(bundle, work):
    """Unpacks a dist/clang-optiml-*.tar.xz into work; returns the paths of
    its clang-optiml and liboptiml-probe.so (None for what it lacks)."""
    with tarfile.open(bundle) as t:
        t.extractall(work)
    found = []
    for rel in (("bin", "clang-optiml"), ("lib", "liboptiml-probe.so")):
        hits = sorted(glob.glob(os.path.join(work, "clang-optiml-*", *rel)))
        found.append(hits[0] if hits else None)
    return tuple(found)


def run(cmd, timeout, **kw):
    """Runs cmd; returns (exit status or 'timeout', stdout, stderr)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout, **kw)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        return "timeout", out, err
    except OSError as e:
        return "not run", "", str(e)


def kernel_base_name(demangled):
    """kernelBaseName in lib/Eval/Protocol/ProbeProtocol.cpp: no parameters, no
    return type."""
    s = demangled.strip()
    if s.endswith(")"):
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            c = s[i]
            if c == ")":
                depth += 1
            elif c == "(":
                depth -= 1
                if depth == 0:
                    if i > 0:
                        s = s[:i]
                    break
    depth, start = 0, 0
    for i, c in enumerate(s):
        if c in "<(":
            depth += 1
        elif c in ">)" and depth > 0:
            depth -= 1
        elif c == " " and depth == 0:
            start = i + 1
    return s[start:].strip()


def name_matches(pattern, base):
    """kernelNameMatches: the name, or a template instance of it."""
    return bool(pattern) and (
        base == pattern or
        (base.startswith(pattern) and base[len(pattern):].startswith("<")))


def parse_ncu_csv(text):
    """{launch id: {"kernel": base name, metric: value}} from ncu --csv."""
    lines = [l for l in text.splitlines() if not l.startswith("==")]
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        return {}
    launches = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        try:
            lid = int(row["ID"])
        except (KeyError, ValueError, TypeError):
            continue
        entry = launches.setdefault(
            lid, {"kernel": kernel_base_name(row.get("Kernel Name", ""))})
        name = row.get("Metric Name", "")
        raw = (row.get("Metric Value") or "").replace(",", "")
        try:
            value = float(raw) * UNITS.get(row.get("Metric Unit", ""), 1)
        except ValueError:
            continue
        entry[name] = value
    return launches


def compare(metric, probe, ncu):
    if probe is None or ncu is None:
        return None, "missing"
    floor = FLOORS.get(metric, 0)
    ratio = probe / ncu if ncu else (1.0 if probe == 0 else float("inf"))
    if abs(ratio - 1) <= TOLERANCE:
        return ratio, "pass"
    if max(abs(probe), abs(ncu)) < floor:
        return ratio, "abs"
    return ratio, "FAIL"


def fmt(metric, v):
    if v is None:
        return "-"
    if metric.startswith("dram__bytes"):
        return f"{v / 1e6:.3f} MB"
    if metric == "gpu__time_duration.sum":
        return f"{v / 1e3:.2f} us"
    return f"{v:.2f}%"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle",
                    default="dist/clang-optiml-0.1.0-linux-x86_64.tar.xz")
    ap.add_argument("--out", default=os.environ.get("OUT", "ncu-compare"))
    ap.add_argument("--deadline", type=float, default=210,
                    help="seconds after which no further program is started")
    ap.add_argument("programs", nargs="*", default=PROGRAMS)
    args = ap.parse_args()
    require_gpu("ncu_compare")
    began = time.time()
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="ncu-compare-")
    raw_dir = os.path.join(work, "raw")
    os.makedirs(raw_dir)

    nvcc = find_tool("nvcc", ["/usr/local/cuda/bin/nvcc"])
    ncu = find_tool("ncu", ["/usr/local/cuda/bin/ncu",
                            "/opt/nvidia/nsight-compute/*/ncu",
                            "/usr/local/cuda*/nsight-compute*/ncu"])
    if not nvcc or not ncu:
        sys.exit(f"ncu_compare: need nvcc and ncu (found nvcc={nvcc}, ncu={ncu})")
    if not os.path.exists(args.bundle):
        sys.exit(f"ncu_compare: no bundle at {args.bundle} (tools/bundle.sh builds it)")
    tool, _ = unpack_bundle(args.bundle, work)
    if not tool:
        sys.exit(f"ncu_compare: {args.bundle} holds no bin/clang-optiml")
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(nvcc) + os.pathsep + env.get("PATH", "")

    setup = {
        "gpu": run(["nvidia-smi", "--query-gpu=name,driver_version",
                    "--format=csv,noheader"], 30)[1].strip(),
        "ncu": run([ncu, "--version"], 30)[1].strip().splitlines()[-1:],
        "tool": run([tool, "--version"], 30)[1].strip(),
    }
    log(f"GPU: {setup['gpu']}; ncu: {' '.join(setup['ncu'])}")

    bins = os.path.join(work, "bin")
    os.makedirs(bins)

    def build(src):
        name = os.path.splitext(os.path.basename(src))[0]
        out = os.path.join(bins, name)
        rc, _, err = run([nvcc, "-O3", "-arch=sm_90", "-cudart", "static",
                          "-o", out, src], 180, env=env)
        return src, (out if rc == 0 else None), err

    with ThreadPoolExecutor(max_workers=len(args.programs)) as pool:
        built = {src: (b, err) for src, b, err in pool.map(build, args.programs)}
    log(f"built {sum(1 for b, _ in built.values() if b)} of "
        f"{len(args.programs)} programs in {time.time() - began:.0f} s")

    results = []
    for src in args.programs:
        name = os.path.splitext(os.path.basename(src))[0]
        entry = {"program": src, "kernels": [], "problems": []}
        results.append(entry)
        binary, err = built[src]
        if not binary:
            entry["problems"].append("nvcc failed: " + err.strip()[-400:])
            continue
        if time.time() - began > args.deadline:
            entry["problems"].append(f"skipped: past the {args.deadline:.0f} s deadline")
            continue

        # The probe, through eval (metrics run: first launch of each target).
        run_dir = os.path.join(work, "runs", name)
        t0 = time.time()
        rc, out, err = run([tool, "eval", src, "--json", "--no-sanitize",
                            "--verify-first", "1", "--replays", "5",
                            "--timeout", "60", "--run-dir", run_dir,
                            "--cache-dir", os.path.join(work, "cache")],
                           150, env=env)
        entry["eval_seconds"] = round(time.time() - t0, 1)
        with open(os.path.join(raw_dir, f"{name}.eval.json"), "w") as f:
            f.write(out)
        with open(os.path.join(raw_dir, f"{name}.eval.stderr"), "w") as f:
            f.write(err)
        # One metrics run (metrics.result.json), or one per target kernel
        # under OPTIML_METRICS_PER_KERNEL=1 (metrics-1.result.json, ...).
        replay = {}
        entry["probe_errors"] = []
        for probe_result in sorted(glob.glob(os.path.join(run_dir, "metrics*.result.json"))):
            shutil.copy(probe_result, os.path.join(
                raw_dir, f"{name}.{os.path.basename(probe_result)}"))
            with open(probe_result) as f:
                pr = json.load(f)
            entry["probe_errors"] += pr.get("errors", [])
            for l in pr.get("launches", []):
                if not l.get("metrics"):
                    continue
                replay.setdefault(kernel_base_name(l.get("kernel", "")),
                                  (l.get("replay", "?"), l.get("l2Cleaned")))
        try:
            report = json.loads(out)
        except ValueError:
            entry["problems"].append(f"eval exited {rc} without JSON: {err.strip()[-400:]}")
            report = {"kernels": []}

        # ncu on the same binary: every launch (up to 64), first one per kernel.
        ncu_log = os.path.join(raw_dir, f"{name}.ncu.csv")
        t0 = time.time()
        rc, _, err = run([ncu, "--clock-control", "none", "--cache-control", "all",
                          "--metrics", ",".join(METRICS), "--csv",
                          "--print-units", "base", "--print-kernel-base", "demangled",
                          "--launch-count", "64", "--log-file", ncu_log, binary],
                         120, env=env)
        entry["ncu_seconds"] = round(time.time() - t0, 1)
        ncu_text = open(ncu_log).read() if os.path.exists(ncu_log) else ""
        launches = parse_ncu_csv(ncu_text)
        if not launches:
            entry["problems"].append(f"ncu exited {rc} with no rows: {err.strip()[-400:]}")

        for k in report.get("kernels", []):
            kname = k.get("name", "")
            m = k.get("metrics", {})
            probe_vals = m.get("values", {}) if m.get("available") else {}
            first = next((launches[i] for i in sorted(launches)
                          if name_matches(kname, launches[i]["kernel"])), None)
            rep, cleaned = next((v for b, v in replay.items()
                                 if name_matches(kname, b)), ("?", None))
            kentry = {"kernel": kname, "replay": rep, "l2_cleaned": cleaned,
                      "probe_problem": m.get("problem"), "metrics": []}
            if first is None:
                kentry["ncu_problem"] = "ncu profiled no launch of this kernel"
            for metric in METRICS:
                pv = probe_vals.get(metric)
                nv = first.get(metric) if first else None
                ratio, status = compare(metric, pv, nv)
                kentry["metrics"].append({"metric": metric, "probe": pv, "ncu": nv,
                                          "ratio": ratio, "status": status})
            entry["kernels"].append(kentry)
        log(f"{src}: eval {entry['eval_seconds']} s, ncu {entry['ncu_seconds']} s, "
            f"{len(entry['kernels'])} kernel(s)")

    # The table.
    md = io.StringIO()
    md.write(f"GPU: {setup['gpu']}; {' '.join(setup['ncu'])}; {setup['tool']}\n\n")
    md.write("probe = `clang-optiml eval --json` (range profiler, first launch);"
             " ncu = `ncu --clock-control none --cache-control all`, first launch."
             f" pass: within {TOLERANCE:.0%}; abs: both values under the floor"
             " (1 MiB, 1 point), where a ratio means little. Metrics: " +
             ", ".join(f"{v} = `{k}`" for k, v in SHORT.items()) + ".\n\n")
    md.write("| program | kernel | replay | metric | probe | ncu | probe/ncu | check |\n")
    md.write("|---|---|---|---|---|---|---|---|\n")
    counts = {"pass": 0, "abs": 0, "FAIL": 0, "missing": 0}
    for e in results:
        for k in e["kernels"]:
            rep = f"{k['replay']}, L2 {'clean' if k['l2_cleaned'] else 'not clean'}"
            for m in k["metrics"]:
                counts[m["status"]] += 1
                ratio = "-" if m["ratio"] is None else f"{m['ratio']:.3f}"
                md.write(f"| {os.path.basename(e['program'])} | {k['kernel']} | {rep} | "
                         f"{SHORT[m['metric']]} | {fmt(m['metric'], m['probe'])} | "
                         f"{fmt(m['metric'], m['ncu'])} | {ratio} | {m['status']} |\n")
    md.write(f"\n{counts['pass']} within {TOLERANCE:.0%}, {counts['abs']} within the "
             f"absolute floor, {counts['FAIL']} outside, {counts['missing']} missing.\n")
    for e in results:
        for p in e["problems"]:
            md.write(f"\n- {e['program']}: {p}")
        for k in e["kernels"]:
            for what in ("probe_problem", "ncu_problem"):
                if k.get(what):
                    md.write(f"\n- {e['program']} {k['kernel']}: {what}: {k[what]}")
        if e.get("probe_errors"):
            md.write(f"\n- {e['program']}: probe errors: {e['probe_errors'][:3]}")
    md.write(f"\n\nwall {time.time() - began:.0f} s\n")
    text = md.getvalue()
    print(text)
    with open(os.path.join(args.out, "ncu_compare.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "ncu_compare.json"), "w") as f:
        json.dump({"setup": setup, "tolerance": TOLERANCE, "floors": FLOORS,
                   "results": results, "counts": counts}, f, indent=1)
    with tarfile.open(os.path.join(args.out, "ncu_compare_raw.tar.gz"), "w:gz") as t:
        t.add(raw_dir, arcname="ncu_compare_raw")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if counts["FAIL"] == 0 and counts["missing"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

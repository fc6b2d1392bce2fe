#!/usr/bin/env python3
"""Parameter sweeps of the catalog's edits on the suite's programs.

For each configuration (a chain of edits) of a suite program, the edits are
applied one after another to bench/kernels/<program>/naive.cu with
`clang-optiml apply`, the result is compiled as bench/run.py compiles the
suite (nvcc -O3 -arch=sm_90, all at once) and run one at a time; the
program's own BENCH line gives the CUDA-event time and its CHECK line the
result against its reference. The naive program runs in the same sweep, so
every ratio is measured side by side on one GPU.

    python3 bench/sweep.py --tool clang-optiml --out DIR SWEEP.json
    python3 bench/sweep.py --list SWEEP.json      # the configurations

SWEEP.json maps a program to its configurations, each a name and a list of
edits ({"kind", "target", "params"}, as `clang-optiml apply --edit` takes):

    {"transpose": {"tile32-rows8": [{"kind": "transpose-through-shared",
                                      "target": "transpose",
                                      "params": {"tile": 32, "block_rows": 8}}]}}

Writes DIR/summary.md (one row per configuration: ms, over naive, check)
and DIR/summary.json; a configuration whose edit is refused or whose
program fails to build or check is reported with the reason, not dropped.
bench/sweeps/ holds the sweeps run so far.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "bench"))
import run as suite  # noqa: E402  (bench/run.py: the suite's build flags)

BENCH = re.compile(r"^BENCH .*kernel_ms=([0-9.]+)")
CHECK = re.compile(r"^CHECK (PASS|FAIL)")


def load(path):
    with open(path) as f:
        sweep = json.load(f)
    if not isinstance(sweep, dict):
        sys.exit("%s: a JSON object of programs is expected" % path)
    for program, configs in sweep.items():
        src = os.path.join(REPO, "bench", "kernels", program, "naive.cu")
        if not os.path.exists(src):
            sys.exit("%s: no suite program '%s' (bench/kernels/%s/naive.cu)"
                     % (path, program, program))
        if not isinstance(configs, dict):
            sys.exit("%s: '%s' must map names to lists of edits" % (path, program))
        for name, edits in configs.items():
            if not re.fullmatch(r"[A-Za-z0-9_.+=-]+", name) or name == "naive":
                sys.exit("%s: configuration name '%s' must be [A-Za-z0-9_.+=-]+ "
                         "and not 'naive'" % (path, name))
            if not isinstance(edits, list) or not all(isinstance(e, dict) for e in edits):
                sys.exit("%s: %s/%s must be a list of edit objects" % (path, program, name))
    return sweep


def prepare(tool, program, name, edits, out):
    """The configuration's source, or the reason there is none."""
    folder = os.path.join(out, program, name)
    os.makedirs(folder, exist_ok=True)
    cur = os.path.join(folder, "source.cu")
    shutil.copy(os.path.join(REPO, "bench", "kernels", program, "naive.cu"), cur)
    for i, e in enumerate(edits):
        ej = os.path.join(folder, "edit-%d.json" % i)
        with open(ej, "w") as f:
            json.dump(e, f)
        nxt = os.path.join(folder, "next.cu")
        p = subprocess.run([tool, "apply", cur, "--edit", ej, "-o", nxt],
                           capture_output=True, text=True)
        if p.returncode != 0:
            lines = p.stderr.strip().splitlines()
            errors = [l for l in lines if "error:" in l]
            last = (errors or lines or ["exit %d" % p.returncode])[-1]
            return None, "edit %d (%s) refused: %s" % (i + 1, e.get("kind"), last)
        os.replace(nxt, cur)
    return cur, ""


def run_one(exe, timeout):
    try:
        p = subprocess.run([exe], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % timeout
    ms = [float(m.group(1)) for m in map(BENCH.match, p.stdout.splitlines()) if m]
    checks = [m.group(1) for m in map(CHECK.match, p.stdout.splitlines()) if m]
    if p.returncode != 0 or "FAIL" in checks or not checks:
        return None, "exit %d, check %s" % (p.returncode, ",".join(checks) or "missing")
    if not ms:
        return None, "no BENCH line"
    return sum(ms), ""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sweep", help="the sweep's JSON file")
    ap.add_argument("--tool", default="clang-optiml", help="clang-optiml to apply the edits")
    ap.add_argument("--out", help="results folder (required unless --list)")
    ap.add_argument("--nvcc", help="nvcc (default: as bench/run.py finds it)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel builds")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per run")
    ap.add_argument("--list", action="store_true", help="print the configurations and stop")
    a = ap.parse_args(argv)
    sweep = load(a.sweep)
    if a.list:
        for program, configs in sweep.items():
            for name, edits in configs.items():
                print("%s/%s: %s" % (program, name, ", ".join(
                    "%s %s" % (e.get("kind"), json.dumps(e.get("params", {}), sort_keys=True))
                    for e in edits) or "(the program as written)"))
        return 0
    if not a.out:
        ap.error("--out is required")
    if os.path.exists(os.path.join(a.out, "summary.md")):
        ap.error("%s already holds a sweep" % a.out)
    nvcc = suite.find_nvcc(a.nvcc)
    rows = []
    for program, configs in sweep.items():
        for name, edits in [("naive", [])] + list(configs.items()):
            src, why = prepare(a.tool, program, name, edits, a.out)
            rows.append({"program": program, "config": name, "edits": edits,
                         "source": src, "problem": why})
    todo = [r for r in rows if r["source"]]
    print("sweep: %d configurations, %d to build" % (len(rows), len(todo)), flush=True)

    def build(r):
        exe = r["source"][:-3]
        ok, log = suite.build(nvcc, r["source"], exe, force=True)
        return r, exe, ok, log

    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
        for r, exe, ok, log in pool.map(build, todo):
            if ok:
                r["exe"] = exe
            else:
                r["problem"] = "nvcc failed: " + (log.strip().splitlines() or [""])[-1][:200]
    for r in rows:
        if r.get("exe"):
            r["ms"], r["problem"] = run_one(r["exe"], a.timeout)
            print("%s/%s: %s" % (r["program"], r["config"],
                                 "%.4f ms" % r["ms"] if r["ms"] else r["problem"]), flush=True)
    write(a, rows)
    return 0


def write(a, rows):
    naive = {r["program"]: r.get("ms") for r in rows if r["config"] == "naive"}
    lines = ["| program | configuration | edits | ms | over naive | result |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        n = naive.get(r["program"])
        ms = r.get("ms")
        lines.append("| %s | %s | %s | %s | %s | %s |" % (
            r["program"], r["config"],
            ", ".join("`%s %s`" % (e.get("kind"), " ".join(
                "%s=%s" % (k, json.dumps(v) if isinstance(v, str) else v)
                for k, v in sorted(e.get("params", {}).items()))) for e in r["edits"]) or "—",
            "%.4f" % ms if ms else "—",
            "%.2fx" % (n / ms) if ms and n else "—",
            "checked" if ms else r["problem"]))
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write("# Sweep: %s\n\nTimes are the programs' own CUDA-event medians "
                "(BENCH kernel_ms, summed over a program's BENCH lines), run one at "
                "a time on one GPU; `over naive` is naive's time over the "
                "configuration's in this sweep.\n\n" % os.path.basename(a.sweep))
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump([{k: v for k, v in r.items() if k not in ("source", "exe")}
                   for r in rows], f, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())

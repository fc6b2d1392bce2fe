#!/usr/bin/env python3
"""Seeded-bug corpus for the probe: builds prog.cu variants with nvcc and
judges each against the baseline through liboptiml-probe.so.

  corpus.py build --bin DIR                  # nvcc, no GPU needed
  corpus.py run --bin DIR --probe LIB --work DIR [--racecheck]
  corpus.py time --bin DIR --probe LIB --work DIR     # timing agreement
  corpus.py metrics --bin DIR --probe LIB --work DIR  # range profiler vs ncu

`run` prints one row per variant and ends with "N passed, N failed": a
variant passes when the verdict is what the table below expects (a correct
rewrite accepted; a seeded bug rejected for one of the listed reasons).
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CUDA = os.environ.get("CUDA_ROOT", "/usr/local/cuda")

# name -> (nvcc flags, expected): "pass", or the reasons that count as the
# right rejection. "race" means compute-sanitizer racecheck is the judge
# when the outputs happen to agree.
VARIANTS = {
    "baseline": ([], "pass"),
    "alt-block128": (["-DBLOCK=128"], "pass"),
    "alt-block512": (["-DBLOCK=512"], "pass"),
    "alt-grid-stride": (["-DALT_GRID_STRIDE"], "pass"),
    "alt-float4": (["-DALT_FLOAT4"], "pass"),
    "alt-fmaf": (["-DALT_FMAF"], "pass"),
    "alt-nofma": (["-fmad=false"], "pass"),
    # Reorders a float reduction: an edit that says it changes results, so
    # the evaluator widens the tolerance (PRECISION_CHANGING below).
    "alt-sum-shuffle": (["-DALT_SUM_SHUFFLE"], "pass"),
    "alt-hist-shared": (["-DALT_HIST_SHARED"], "pass"),
    "saxpy-off-by-one": (["-DBUG_SAXPY_OFF_BY_ONE"], {"mismatch"}),
    "saxpy-write-past-end": (["-DBUG_SAXPY_WRITE_PAST_END"], {"mismatch"}),
    "saxpy-wrong-index": (["-DBUG_SAXPY_WRONG_INDEX"], {"mismatch"}),
    "saxpy-wrong-math": (["-DBUG_SAXPY_WRONG_MATH"], {"mismatch"}),
    "saxpy-half-precision": (["-DBUG_SAXPY_HALF_PRECISION"], {"mismatch"}),
    "saxpy-nan-last": (["-DBUG_SAXPY_NAN_LAST"], {"mismatch"}),
    "saxpy-half-grid": (["-DBUG_SAXPY_HALF_GRID"], {"mismatch"}),
    "saxpy-mutates-y": (["-DBUG_SAXPY_MUTATES_Y"], {"unexpected-write"}),
    "saxpy-mutates-x": (["-DBUG_SAXPY_MUTATES_X"], {"unexpected-write"}),
    "saxpy-first-launch-only": (["-DBUG_SAXPY_FIRST_LAUNCH_ONLY"],
                                {"stale-output"}),
    "saxpy-skip-if-nonzero": (["-DBUG_SAXPY_SKIP_IF_NONZERO"],
                              {"stale-output"}),
    "saxpy-illegal-address": (["-DBUG_SAXPY_ILLEGAL_ADDRESS"], {"crash"}),
    "sum-no-sync": (["-DBUG_SUM_NO_SYNC"], {"mismatch", "race"}),
    "sum-race-after-load": (["-DBUG_SUM_RACE_AFTER_LOAD"], {"mismatch", "race"}),
    "sum-race-benign": (["-DBUG_SUM_RACE_BENIGN"], {"race"}),
    "sum-tree-off-by-one": (["-DBUG_SUM_TREE_OFF_BY_ONE"], {"mismatch"}),
    "sum-no-bounds": (["-DBUG_SUM_NO_BOUNDS"], {"mismatch"}),
    "sum-wrong-shared-index": (["-DBUG_SUM_WRONG_SHARED_INDEX"], {"mismatch"}),
    "sum-wrong-slot": (["-DBUG_SUM_WRONG_SLOT"], {"mismatch"}),
    "sum-mutates-input": (["-DBUG_SUM_MUTATES_INPUT"], {"unexpected-write"}),
    "sum-first-launch-only": (["-DBUG_SUM_FIRST_LAUNCH_ONLY"], {"stale-output"}),
    "sum-atomic-accumulate": (["-DBUG_SUM_ATOMIC_ACCUMULATE"],
                              {"mismatch", "stale-output"}),
    "hist-nonatomic": (["-DBUG_HIST_NONATOMIC"], {"mismatch", "race"}),
    "hist-off-by-one-bin": (["-DBUG_HIST_OFF_BY_ONE_BIN"], {"mismatch"}),
    "hist-out-of-range-bin": (["-DBUG_HIST_OUT_OF_RANGE_BIN"], {"mismatch"}),
    "hist-skip-last": (["-DBUG_HIST_SKIP_LAST"], {"mismatch"}),
    "hist-wrong-key-index": (["-DBUG_HIST_WRONG_KEY_INDEX"], {"mismatch"}),
    "hist-double-count": (["-DBUG_HIST_DOUBLE_COUNT"], {"mismatch"}),
    "hist-mutates-keys": (["-DBUG_HIST_MUTATES_KEYS"], {"unexpected-write"}),
    "hist-shared-no-sync": (["-DBUG_HIST_SHARED_NO_SYNC"], {"mismatch", "race"}),
}

# Variants standing for edits that declare a floating-point change, and the
# tolerance the evaluator then uses: 256 summands of magnitude ~1 in another
# order differ by a few ulps of the summands, not of the (smaller) sum.
PRECISION_CHANGING = {"alt-sum-shuffle"}
WIDENED_TOLERANCE = {"relTol": 1e-4, "absTol": 5e-5}

KERNELS = [
    {"name": "saxpy", "params": [
        {"index": 0, "pointer": False, "elementType": "int", "elementSize": 4},
        {"index": 1, "pointer": False, "elementType": "float",
         "elementSize": 4, "float": True},
        {"index": 2, "pointer": True, "elementType": "const float",
         "elementSize": 4, "float": True},
        {"index": 3, "pointer": True, "elementType": "const float",
         "elementSize": 4, "float": True},
        {"index": 4, "pointer": True, "elementType": "float",
         "elementSize": 4, "float": True}]},
    {"name": "block_sum", "params": [
        {"index": 0, "pointer": True, "elementType": "const float",
         "elementSize": 4, "float": True},
        {"index": 1, "pointer": True, "elementType": "float",
         "elementSize": 4, "float": True},
        {"index": 2, "pointer": False, "elementType": "int", "elementSize": 4}]},
    {"name": "histogram", "params": [
        {"index": 0, "pointer": True, "elementType": "const int",
         "elementSize": 4},
        {"index": 1, "pointer": True, "elementType": "unsigned int",
         "elementSize": 4},
        {"index": 2, "pointer": False, "elementType": "int", "elementSize": 4}]},
]

CORPUS_ARGS = [str((1 << 22) + 37), "5"]  # 16 MiB buffers, 5 launches each


def nvcc_build(bin_dir, name, flags):
    out = os.path.join(bin_dir, "prog-" + name)
    cmd = [os.path.join(CUDA, "bin", "nvcc"), "-O3", "-arch=sm_90",
           "-cudart", "static", "-o", out, os.path.join(HERE, "prog.cu")]
    r = subprocess.run(cmd + flags, capture_output=True, text=True)
    return name, r.returncode, r.stderr[-2000:]


def build(args):
    os.makedirs(args.bin, exist_ok=True)
    names = args.only or list(VARIANTS)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(nvcc_build, args.bin, n, VARIANTS[n][0])
                   for n in names]
        failed = 0
        for f in futures:
            name, rc, err = f.result()
            if rc:
                failed += 1
                print("build failed: %s\n%s" % (name, err))
    print("built %d variants, %d failed" % (len(names) - failed, failed))
    return 1 if failed else 0


def probe_env(args, config):
    env = dict(os.environ)
    env["CUDA_INJECTION64_PATH"] = os.path.abspath(args.probe)
    env["OPTIML_PROBE_CONFIG"] = config
    lib = os.path.join(CUDA, "lib64")
    env["LD_LIBRARY_PATH"] = lib + ":" + env.get("LD_LIBRARY_PATH", "")
    return env


def run_probe(args, binary, config, prog_args, timeout=60):
    """Runs binary under the probe; returns (exit code, result or None, log)."""
    cfg_path = config["resultPath"] + ".config.json"
    with open(cfg_path, "w") as f:
        json.dump(config, f, indent=1)
    if os.path.exists(config["resultPath"]):
        os.remove(config["resultPath"])
    try:
        r = subprocess.run([binary] + prog_args, env=probe_env(args, cfg_path),
                           capture_output=True, text=True, timeout=timeout)
        rc, log = r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        rc, log = -999, "timed out"
    result = None
    if os.path.exists(config["resultPath"]):
        with open(config["resultPath"]) as f:
            result = json.load(f)
    return rc, result, log


def verdict(rc, result, log):
    """(tags, first detail) of a candidate run; no tags means it passed."""
    if rc != 0:
        lines = log.strip().splitlines()
        own = [l for l in lines if l.startswith("prog:")] or lines[-1:] or [""]
        return {"crash"}, "exit %d: %s" % (rc, own[0][:100])
    if result is None:
        return {"no-result"}, "the probe wrote no result"
    tags, detail = set(), ""
    for launch in result["launches"]:
        for b in launch["buffers"]:
            where = "%s#%d param %d" % (launch["kernel"], launch["ordinal"],
                                        b["param"])
            if b.get("unexpectedWrite"):
                tags.add("unexpected-write")
                detail = detail or where + ": written, the reference did not"
            if b["status"] != "ok":
                tags.add(b["status"])
                if not detail:
                    detail = "%s: %s at %s (expected %s, got %s)" % (
                        where, b["status"], b.get("firstDiffIndex"),
                        b.get("expected"), b.get("actual"))
    for e in result["errors"]:
        if "launched" in e:
            tags.add("launch-count")
            detail = detail or e
    return tags, detail


def racecheck(args, binary):
    sanitizer = shutil.which("compute-sanitizer") or os.path.join(
        CUDA, "bin", "compute-sanitizer")
    if not os.path.exists(sanitizer):
        return None, "compute-sanitizer not found"
    small = [str((1 << 16) + 37), "1"]
    cmd = [sanitizer, "--tool", "racecheck", "--error-exitcode", "9",
           "--kernel-name", "regex:saxpy|block_sum|histogram", binary] + small
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        return None, "racecheck timed out"
    out = r.stdout + r.stderr
    if "hazard" in out.lower() and r.returncode != 0:
        return True, "racecheck: " + next(
            (l.strip() for l in out.splitlines() if "hazard" in l.lower()), "")
    if r.returncode not in (0, 9):
        return None, "racecheck failed: " + out.strip()[-120:]
    return False, "racecheck: no hazard"


def config(mode, work, name, **extra):
    c = {"mode": mode, "kernels": KERNELS,
         "snapshotDir": os.path.join(work, "reference"),
         "resultPath": os.path.join(work, name + ".result.json")}
    c.update(extra)
    return c


def wall(fn):
    t = time.monotonic()
    r = fn()
    return r, time.monotonic() - t


def run(args):
    os.makedirs(args.work, exist_ok=True)
    base = os.path.join(args.bin, "prog-baseline")
    plain, plain_s = wall(lambda: subprocess.run([base] + CORPUS_ARGS,
                                                 capture_output=True))
    (rc, ref, log), ref_s = wall(lambda: run_probe(
        args, base, config("reference", args.work, "reference"), CORPUS_ARGS))
    if rc != 0 or ref is None or ref["errors"]:
        print("reference run failed (exit %d):\n%s\n%s" % (
            rc, log[-3000:], json.dumps(ref, indent=1)[:3000] if ref else ""))
        return 1
    verified = sum(1 for l in ref["launches"] if l["verified"])
    poison = sum(1 for l in ref["launches"] for b in l["buffers"]
                 if b["poisonChecked"])
    print("reference: %d verified launches, %d poison-checked buffers" % (
        verified, poison))
    (_, again, _), again_s = wall(lambda: run_probe(
        args, base, config("candidate", args.work, "determinism"), CORPUS_ARGS))
    print("wall time: program alone %.2f s, reference run %.2f s, candidate "
          "run of the baseline %.2f s" % (plain_s, ref_s, again_s))
    rows, passed, failed = [], 0, 0
    for name in args.only or list(VARIANTS):
        flags, expected = VARIANTS[name]
        extra = {}
        if name in PRECISION_CHANGING:
            extra["tolerance"] = WIDENED_TOLERANCE
        rc, res, log = run_probe(args, os.path.join(args.bin, "prog-" + name),
                                 config("candidate", args.work, name, **extra),
                                 CORPUS_ARGS)
        tags, detail = verdict(rc, res, log)
        if not tags and expected != "pass" and "race" in expected and \
                args.racecheck:
            raced, why = racecheck(args, os.path.join(args.bin, "prog-" + name))
            if raced:
                tags.add("race")
            detail = why
        got = "pass" if not tags else "reject:" + ",".join(sorted(tags))
        ok = (expected == "pass" and not tags) or (
            expected != "pass" and bool(tags & expected))
        passed += ok
        failed += not ok
        want = "pass" if expected == "pass" else "reject:" + "|".join(
            sorted(expected))
        rows.append((name, want, got, "ok" if ok else "WRONG", detail))
    width = max(len(r[0]) for r in rows)
    print("%-*s  %-32s  %-34s  %-5s  %s" % (width, "variant", "expected",
                                            "verdict", "", "first reason"))
    for r in rows:
        print("%-*s  %-32s  %-34s  %-5s  %s" % (width, r[0], r[1], r[2], r[3],
                                                r[4][:110]))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


def parse_program_times(log):
    times = {}
    for line in log.splitlines():
        parts = line.split()
        if parts and parts[0] in ("saxpy_ms", "block_sum_ms"):
            times[parts[0][:-3]] = [float(x) for x in parts[1:]]
    return times


def spread(v):
    m = statistics.median(v)
    q = statistics.quantiles(v, n=4) if len(v) >= 4 else [min(v), m, max(v)]
    return m, (q[-1] - q[0]) / m


def time_cmd(args):
    os.makedirs(args.work, exist_ok=True)
    base = os.path.join(args.bin, "prog-baseline")
    prog_args = [str(args.n), str(args.launches)]
    # Independent measurement: the program's own events, no probe loaded.
    plain = subprocess.run([base] + prog_args, capture_output=True, text=True)
    if plain.returncode:
        print(plain.stdout, plain.stderr)
        return 1
    own = parse_program_times(plain.stdout)
    print("program alone (CUDA events, launches 2..%d):" % args.launches)
    for k, v in own.items():
        m, s = spread(v[1:])
        print("  %-10s median %.4f ms  IQR/median %.2f%%" % (k, m, 100 * s))
    for rep in range(args.processes):
        c = config("time", args.work, "time%d" % rep, replays=args.replays,
                   timeLaunches=1, flushL2=args.flush_l2)
        c.pop("snapshotDir")
        rc, res, log = run_probe(args, base, c, prog_args)
        if rc or res is None:
            print("time run failed: %d\n%s" % (rc, log[-2000:]))
            return 1
        same = parse_program_times(log)
        for launch in res["launches"]:
            k = launch["kernel"]
            if k not in own:
                continue
            t = launch["timesMs"]
            m, s = spread(t)
            ref = statistics.median(own[k][1:])
            same_m = statistics.median(same[k][1:])
            print("probe run %d: %-10s median %.4f ms over %d replays, IQR/median "
                  "%.2f%%, min..max %.4f..%.4f; vs program alone %+.2f%%, "
                  "vs same-process later launches %+.2f%%; regs %d" % (
                      rep, k, m, len(t), 100 * s, min(t), max(t),
                      100 * (m / ref - 1), 100 * (m / same_m - 1),
                      launch["registers"]))
        for e in res["errors"]:
            print("  probe error:", e)
    return 0


def metrics_cmd(args):
    os.makedirs(args.work, exist_ok=True)
    base = os.path.join(args.bin, "prog-baseline")
    prog_args = [str(args.n), "2"]
    c = config("metrics", args.work, "metrics", timeLaunches=1)
    c.pop("snapshotDir")
    rc, res, log = run_probe(args, base, c, prog_args)
    if rc or res is None:
        print("metrics run failed: %d\n%s" % (rc, log[-2000:]))
        return 1
    if res.get("metricsUnavailable"):
        print("metrics unavailable:", res["metricsUnavailable"])
    probe = {}
    for launch in res["launches"]:
        probe[launch["kernel"]] = launch["metrics"]
    for e in res["errors"]:
        print("probe error:", e)
    ncu = shutil.which("ncu")
    names = sorted({m for v in probe.values() for m in v})
    for kernel, values in probe.items():
        # ncu flushes the caches before each pass by default; the probe
        # does not, so DRAM writes of dirty lines left by earlier kernels
        # show up in its numbers: compare with both.
        flushed = ncu_values(ncu, kernel, names, base, prog_args, [])
        as_is = ncu_values(ncu, kernel, names, base, prog_args,
                           ["--cache-control", "none"])
        for m in names:
            v = values.get(m)
            line = "%-10s %-66s probe %12.6g" % (kernel, m, v)
            for label, ref in (("ncu", flushed), ("ncu-no-flush", as_is)):
                if ref.get(m):
                    line += "  %s %12.6g (%+.2f%%)" % (label, ref[m],
                                                      100 * (v / ref[m] - 1))
            print(line)
    return 0


UNITS = {"msecond": 1e6, "usecond": 1e3, "nsecond": 1, "Gbyte": 1e9,
         "Mbyte": 1e6, "Kbyte": 1e3, "byte": 1, "%": 1}


def ncu_values(ncu, kernel, names, binary, prog_args, extra):
    if not ncu or not names:
        return {}
    cmd = [ncu, "--clock-control", "none", "--kernel-name", kernel,
           "--launch-count", "1", "--csv", "--metrics", ",".join(names)] + \
        extra + [binary] + prog_args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    values = {}
    for line in r.stdout.splitlines():
        cells = [x.strip('"') for x in line.split('","')]
        if len(cells) > 3 and cells[-3] in names:
            try:
                values[cells[-3]] = float(cells[-1].replace(",", "")) * \
                    UNITS.get(cells[-2], 1)
            except ValueError:
                pass
    if not values:
        print("ncu gave no values (exit %d): %s" % (
            r.returncode, (r.stdout + r.stderr)[-600:]))
    return values


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("command", choices=["build", "run", "time", "metrics"])
    p.add_argument("--bin", required=True)
    p.add_argument("--probe")
    p.add_argument("--work", default="corpus-work")
    p.add_argument("--only", nargs="*")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--racecheck", action="store_true")
    p.add_argument("--n", type=int, default=1 << 28)
    p.add_argument("--launches", type=int, default=11)
    p.add_argument("--replays", type=int, default=20)
    p.add_argument("--processes", type=int, default=3)
    p.add_argument("--flush-l2", action="store_true")
    args = p.parse_args()
    if args.command != "build" and not args.probe:
        p.error("--probe is required")
    return {"build": build, "run": run, "time": time_cmd,
            "metrics": metrics_cmd}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())

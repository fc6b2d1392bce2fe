#!/usr/bin/env python3
"""Does profiling earlier kernels change a small kernel's DRAM write count?

The one gap left against ncu (docs/benchmarks.md, "Metrics against ncu"):
under `clang-optiml eval`, which profiles every target kernel of
test/Inputs/eval/prog.cu, the first saxpy launch's DRAM write comes out at
about half of ncu's (2.6 vs 4.6-4.9 MB), while the probe run directly with
saxpy as the only target gave 4.9-5.1 MB. This runs, on a GPU node, the
probe in metrics mode on the same binary with growing target lists
([saxpy], [init, saxpy], all four) and eval's own metrics configuration,
twice each, and ncu once, and prints saxpy's and block_sum's DRAM bytes
written for each, so the next change to the probe aims at the right cause.
Session 6 found the cause (the range profiler reused from init's launch;
eval now sets it up per launch); the table also gives saxpy's profiler
duration, which came out 5% above ncu's with the fresh profiler, and a
configuration with one unprofiled warm-up launch before the passes.

    python3 bench/eval/dram_context.py [--bundle dist/clang-optiml-*.tar.xz]
                                       [--out DIR]

Writes dram_context.md and dram_context.json under --out (default $OUT).
About a minute on the H200.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.getcwd()
sys.path.insert(0, os.path.join(ROOT, "bench", "eval"))
import ncu_compare  # noqa: E402
from probe_gpu_checks import find_tool, probe_run  # noqa: E402

PROG = os.path.join(ROOT, "test", "Inputs", "eval", "prog.cu")
WATCH = ("saxpy", "block_sum")
WRITE = "dram__bytes_write.sum"
TIME = "gpu__time_duration.sum"


def first_values(result):
    """kernel -> DRAM write of its first profiled launch; kernel + " passes"
    -> how many times the probe launched it for the profiler's passes."""
    out = {}
    for launch in result.get("launches", []):
        name = launch.get("kernel", "")
        base = name.split("(")[0].split("<")[0]
        if base in WATCH and base not in out and launch.get("metrics"):
            out[base] = launch["metrics"].get(WRITE)
            out[base + " time"] = launch["metrics"].get(TIME)
            out[base + " passes"] = launch.get("passes")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle",
                    default="dist/clang-optiml-0.1.0-linux-x86_64.tar.xz")
    ap.add_argument("--out", default=os.environ.get("OUT", "dram-context"))
    args = ap.parse_args()
    ncu_compare.require_gpu("dram_context")
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="dram-context-")
    tool, probe = ncu_compare.unpack_bundle(args.bundle, work)
    if not tool or not probe:
        sys.exit(f"{os.path.basename(__file__)}: no clang-optiml bundle at {args.bundle}")
    nvcc = find_tool("nvcc", ["/usr/local/cuda/bin/nvcc"])
    ncu = find_tool("ncu", ["/usr/local/cuda/bin/ncu",
                            "/opt/nvidia/nsight-compute/*/ncu"])
    binary = os.path.join(work, "prog")
    subprocess.run([nvcc, "-O3", "-arch=sm_90", "-cudart", "static", "-o",
                    binary, PROG], check=True)

    # eval's own metrics configuration, taken from its run directory.
    run_dir = os.path.join(work, "eval-run")
    subprocess.run([tool, "eval", PROG, "--no-sanitize", "--run-dir", run_dir],
                   capture_output=True, text=True, timeout=240)
    configs = {}
    eval_cfg = os.path.join(run_dir, "metrics.config.json")
    if os.path.exists(eval_cfg):
        with open(eval_cfg) as f:
            cfg = json.load(f)
        cfg.pop("resultPath", None)
        configs["eval's metrics config"] = cfg
    for label, names in (("[saxpy]", ["saxpy"]),
                         ("[init, saxpy]", ["init", "saxpy"]),
                         ("all four", ["init", "saxpy", "block_sum",
                                       "histogram"])):
        configs[label] = {"mode": "metrics",
                          "kernels": [{"name": n} for n in names]}
    # Session 5: what differs for saxpy between [saxpy] and [init, saxpy]
    # is that the range profiler object has profiled a launch before
    # (freshProfiler: the profiler set up anew per launch), or what init's profiling
    # left in L2 (cleanL2 off shows how much the clean matters).
    two = [{"name": "init"}, {"name": "saxpy"}]
    configs["[init, saxpy] fresh profiler"] = {
        "mode": "metrics", "kernels": two, "freshProfiler": True}
    configs["[init, saxpy] no L2 clean"] = {
        "mode": "metrics", "kernels": two, "cleanL2": False}
    # restoreWrittenOnly: saxpy's inputs are not copied back before each
    # pass (only its output is).
    configs["[saxpy] restore written only"] = {
        "mode": "metrics", "kernels": [{"name": "saxpy"}],
        "restoreWrittenOnly": True}
    configs["[init, saxpy] restore written only"] = {
        "mode": "metrics", "kernels": two, "restoreWrittenOnly": True}
    if "eval's metrics config" in configs:
        # eval's own config has had freshProfiler since session 6.
        configs["eval's metrics config, reused profiler"] = dict(
            configs["eval's metrics config"], freshProfiler=False)
        # Session 6: with a fresh profiler saxpy's duration came out 5%
        # above ncu's; one unprofiled launch first lets the clocks come up.
        configs["eval's metrics config, fresh profiler, 1 warm-up launch"] = dict(
            configs["eval's metrics config"], freshProfiler=True, warmUpLaunches=1)

    rows, record = [], {"configs": configs, "runs": {}}
    for label, cfg in configs.items():
        for rep in (1, 2):
            tag = f"{len(record['runs'])}"
            result, _, seconds = probe_run(probe, binary, [], cfg, work, tag)
            values = first_values(result)
            record["runs"][f"{label} #{rep}"] = {
                "values": values, "errors": result.get("errors"),
                "unavailable": result.get("metricsUnavailable"),
                "profiler_passes": result.get("profilerPasses"),
                "seconds": seconds}
            rows.append((f"{label} #{rep}", values))
    if ncu:
        # ncu flushes L2 before every replay pass by default; the second
        # row leaves the caches as the previous kernel left them.
        record["ncu"] = {}
        for control in ("all", "none"):
            log = os.path.join(work, f"ncu-{control}.csv")
            subprocess.run([ncu, "--clock-control", "none", "--cache-control",
                            control, "--metrics", ",".join(ncu_compare.METRICS),
                            "--csv", "--print-units", "base", "--log-file", log,
                            binary], capture_output=True, timeout=180)
            parsed = (ncu_compare.parse_ncu_csv(open(log).read())
                      if os.path.exists(log) else {})
            values = {}
            for lid in sorted(parsed):
                base = parsed[lid].get("kernel", "")
                if base in WATCH and base not in values:
                    values[base] = parsed[lid].get(WRITE)
                    values[base + " time"] = parsed[lid].get(TIME)
            record["ncu"][control] = values
            rows.append((f"ncu --cache-control {control}", values))
        # ncu's own count for saxpy's first three launches (session 3 saw
        # the first write about twice what later ones do, under ncu too).
        log = os.path.join(work, "ncu-saxpy3.csv")
        subprocess.run([ncu, "--clock-control", "none", "--cache-control", "all",
                        "--metrics", WRITE, "--csv", "--print-units", "base",
                        "-k", "saxpy", "-c", "3", "--log-file", log, binary],
                       capture_output=True, timeout=180)
        parsed = (ncu_compare.parse_ncu_csv(open(log).read())
                  if os.path.exists(log) else {})
        launches = [parsed[lid].get(WRITE) for lid in sorted(parsed)]
        record["ncu"]["saxpy launches 1-3"] = launches
        for i, v in enumerate(launches):
            rows.append((f"ncu --cache-control all, saxpy launch {i + 1}",
                         {"saxpy": v}))

    def mb(v):
        return "-" if v is None else f"{v / 1e6:.3f} MB"

    def us(v):
        return "-" if v is None else f"{v / 1e3:.2f} us"
    md = ["| run | saxpy DRAM write | saxpy time | saxpy passes | block_sum DRAM write |",
          "|---|---|---|---|---|"]
    md += [f"| {label} | {mb(v.get('saxpy'))} | {us(v.get('saxpy time'))} "
           f"| {v.get('saxpy passes', '-')} | {mb(v.get('block_sum'))} |"
           for label, v in rows]
    text = "\n".join(md) + "\n"
    print(text)
    with open(os.path.join(args.out, "dram_context.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "dram_context.json"), "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Where do the DRAM writes of a kernel that writes little come from?

The DRAM-write rows still outside 5% of ncu after the fresh profiler
(docs/benchmarks.md, "Metrics against ncu"): examples/reduction.cu's
block_sum writes 8 bytes (one atomicAdd per block) yet both tools count
megabytes (probe 3.1-3.3, ncu 2.4-2.5 MB), and examples/matmul.cu's matmul
writes a 16.8 MB result of which part is still in L2 when it ends (probe
13.2-13.5, ncu 12.2-12.4 MB). This runs, on a GPU node, each kernel under:

  probe  eval's own metrics configuration (6 metrics, 9 passes), with
         the probe's replays and with CUPTI's kernel replay (as ncu);
         DRAM read and write alone (1 pass: no restores between passes),
         also without the L2 clean and with CUPTI's kernel replay; both
         with the clean inside the pass (after the profiler's start, a
         user range around the launch alone: "cleanInPass");
  ncu    --cache-control all with eval's 6 metrics, three times (ncu's own
         spread); DRAM read and write alone; --cache-control none;
         --replay-mode application (the whole program rerun per pass, no
         save and restore of memory)

so the next change aims at the cause: if the 1-pass counts agree, the
replays (restores, cleans) add the writes; if ncu's application replay
differs from its kernel replay, ncu's own restores do.

    python3 bench/eval/dram_single.py [--bundle dist/clang-optiml-*.tar.xz]
                                      [--out DIR]

Writes dram_single.md and dram_single.json under --out (default $OUT).
About four minutes on the H200.
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

PROGRAMS = (("reduction", "examples/reduction.cu", "block_sum"),
            ("matmul", "examples/matmul.cu", "matmul"))
READ, WRITE = "dram__bytes_read.sum", "dram__bytes_write.sum"


def probe_values(result, kernel):
    """(DRAM write, DRAM read, passes) of the kernel's first profiled launch."""
    for launch in result.get("launches", []):
        name = launch.get("kernel", "")
        if ncu_compare.kernel_base_name(name) == kernel and launch.get("metrics"):
            m = launch["metrics"]
            return m.get(WRITE), m.get(READ), launch.get("passes")
    return None, None, None


def ncu_values(ncu, binary, work, tag, kernel, extra, metrics):
    log = os.path.join(work, f"ncu-{tag}.csv")
    subprocess.run([ncu, "--clock-control", "none", "--metrics", ",".join(metrics),
                    "--csv", "--print-units", "base", "-k", kernel, "-c", "1",
                    "--log-file", log] + extra + [binary],
                   capture_output=True, timeout=240)
    parsed = (ncu_compare.parse_ncu_csv(open(log).read())
              if os.path.exists(log) else {})
    for lid in sorted(parsed):
        return parsed[lid].get(WRITE), parsed[lid].get(READ), None
    return None, None, None


def mb(v):
    return "-" if v is None else f"{v / 1e6:.3f} MB"


def write(out, rows, record, final=False):
    """Writes the table so far (after each program, so that a run stopped
    by its time limit keeps what it measured)."""
    md = ["| program | run | DRAM write | DRAM read | passes |",
          "|---|---|---|---|---|"]
    md += [f"| {p} | {label} | {mb(w)} | {mb(r)} | {'-' if n is None else n} |"
           for p, label, w, r, n in rows]
    text = "\n".join(md) + "\n"
    if final:
        print(text)
    with open(os.path.join(out, "dram_single.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "dram_single.json"), "w") as f:
        json.dump(record, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle",
                    default="dist/clang-optiml-0.1.0-linux-x86_64.tar.xz")
    ap.add_argument("--out", default=os.environ.get("OUT", "dram-single"))
    args = ap.parse_args()
    ncu_compare.require_gpu("dram_single")
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="dram-single-")
    tool, probe = ncu_compare.unpack_bundle(args.bundle, work)
    if not tool or not probe:
        sys.exit(f"{os.path.basename(__file__)}: no clang-optiml bundle at {args.bundle}")
    nvcc = find_tool("nvcc", ["/usr/local/cuda/bin/nvcc"])
    ncu = find_tool("ncu", ["/usr/local/cuda/bin/ncu",
                            "/opt/nvidia/nsight-compute/*/ncu"])
    rows, record = [], {}
    for name, src, kernel in PROGRAMS:
        binary = os.path.join(work, name)
        subprocess.run([nvcc, "-O3", "-arch=sm_90", "-cudart", "static", "-o",
                        binary, os.path.join(ROOT, src)], check=True)
        run_dir = os.path.join(work, f"eval-{name}")
        subprocess.run([tool, "eval", os.path.join(ROOT, src), "--no-sanitize",
                        "--verify-first", "1", "--run-dir", run_dir],
                       capture_output=True, text=True, timeout=240)
        configs = {}
        eval_cfg = os.path.join(run_dir, "metrics.config.json")
        if os.path.exists(eval_cfg):
            with open(eval_cfg) as f:
                cfg = json.load(f)
            cfg.pop("resultPath", None)
            configs["probe, eval's metrics config"] = cfg
            configs["probe, eval's metrics config, CUPTI kernel replay"] = dict(
                cfg, kernelReplay=True)
            configs["probe, eval's metrics config, L2 cleaned inside the pass"] = dict(
                cfg, cleanInPass=True)
        one = {"mode": "metrics", "kernels": [{"name": kernel}],
               "metrics": [READ, WRITE], "freshProfiler": True}
        configs["probe, DRAM read+write only"] = one
        configs["probe, DRAM read+write only, no L2 clean"] = dict(one, cleanL2=False)
        configs["probe, DRAM read+write only, CUPTI kernel replay"] = dict(
            one, kernelReplay=True)
        configs["probe, DRAM read+write only, L2 cleaned inside the pass"] = dict(
            one, cleanInPass=True)
        record[name] = {"configs": configs, "runs": {}}
        for label, cfg in configs.items():
            for rep in (1, 2):
                tag = f"{name}-{len(record[name]['runs'])}"
                result, _, seconds = probe_run(probe, binary, [], cfg, work, tag)
                w, r, passes = probe_values(result, kernel)
                record[name]["runs"][f"{label} #{rep}"] = {
                    "write": w, "read": r, "passes": passes,
                    "errors": result.get("errors"), "seconds": round(seconds, 1)}
                rows.append((name, f"{label} #{rep}", w, r, passes))
        write(args.out, rows, record)
        if not ncu:
            continue
        six = ncu_compare.METRICS
        for label, tag, extra, metrics in (
                ("ncu --cache-control all #1", "all1", ["--cache-control", "all"], six),
                ("ncu --cache-control all #2", "all2", ["--cache-control", "all"], six),
                ("ncu --cache-control all #3", "all3", ["--cache-control", "all"], six),
                ("ncu --cache-control all, DRAM read+write only", "rw",
                 ["--cache-control", "all"], [READ, WRITE]),
                ("ncu --cache-control none", "none", ["--cache-control", "none"], six),
                ("ncu --replay-mode application", "app",
                 ["--cache-control", "all", "--replay-mode", "application"], six)):
            w, r, _ = ncu_values(ncu, binary, work, f"{name}-{tag}", kernel, extra, metrics)
            record[name]["runs"][label] = {"write": w, "read": r}
            rows.append((name, label, w, r, None))
        write(args.out, rows, record)

    write(args.out, rows, record, final=True)


if __name__ == "__main__":
    main()

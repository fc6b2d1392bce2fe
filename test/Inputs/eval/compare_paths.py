#!/usr/bin/env python3
"""Candidate runs compared on the GPU against the same runs compared on the
host (compareOnHost): the verdicts must be identical, field by field.

  compare_paths.py --probe LIB --bin DIR --work DIR VARIANT...

DIR/base is the reference; DIR/VARIANT the candidates (built by the caller
from prog.cu). Prints one line per variant:
  VARIANT: device=<comparedOn values> statuses=<sorted statuses> same=<bool>
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import KERNELS, CORPUS_ARGS  # noqa: E402


def run(probe, binary, cfg, path):
    with open(path, "w") as f:
        json.dump(cfg, f)
    env = dict(os.environ, CUDA_INJECTION64_PATH=probe, OPTIML_PROBE_CONFIG=path)
    subprocess.run([binary] + CORPUS_ARGS, env=env, capture_output=True,
                   timeout=120)
    with open(cfg["resultPath"]) as f:
        return json.load(f)


def strip(result):
    for launch in result.get("launches", []):
        launch.pop("comparedOn", None)
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--probe", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("variants", nargs="+")
    a = ap.parse_args()
    snap = os.path.join(a.work, "snap")
    base = {"kernels": KERNELS, "snapshotDir": snap, "verifyFirst": 2}
    ref = run(a.probe, os.path.join(a.bin, "base"),
              dict(base, mode="reference",
                   resultPath=os.path.join(a.work, "ref.json")),
              os.path.join(a.work, "ref.cfg"))
    print("reference errors:", ref["errors"])
    for v in a.variants:
        results = {}
        for where in ("device", "host"):
            results[where] = run(
                a.probe, os.path.join(a.bin, v),
                dict(base, mode="candidate", compareOnHost=where == "host",
                     resultPath=os.path.join(a.work, f"{v}.{where}.json")),
                os.path.join(a.work, f"{v}.{where}.cfg"))
        dev = results["device"]
        on = sorted({l.get("comparedOn", "-") for l in dev["launches"]})
        statuses = sorted({b["status"] for l in dev["launches"]
                           for b in l["buffers"]})
        same = strip(dev) == strip(results["host"])
        print(f"{v}: device={','.join(on)} statuses={','.join(statuses)} "
              f"same={same}")


if __name__ == "__main__":
    main()

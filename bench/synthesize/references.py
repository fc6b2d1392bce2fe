#!/usr/bin/env python3
"""Library references for the specs of bench/synthesize/ that have no suite
program at their shape, timed with CUDA events on the GPU node:

    python3 bench/synthesize/references.py --out DIR

- histogram-134m: CUB DeviceHistogram::HistogramEven on int samples
  (references/histogram_int.cu, built with nvcc);
- rowmean-32768x4096: PyTorch x.mean(dim=1);
- gather-67m: PyTorch index_select and take, the faster of the two.

Each result is a line `REF spec=NAME ms=...` and DIR/references.json.
stencil2d-8192 (one sweep of jacobi2d), softmax and stencil3d are compared
with the suite's own programs (bench/run.py) instead.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def median_ms(op, runs=30):
    import torch
    t0 = torch.cuda.Event(enable_timing=True)
    t1 = torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        op()
    ms = []
    for _ in range(runs):
        t0.record()
        op()
        t1.record()
        t1.synchronize()
        ms.append(t0.elapsed_time(t1))
    ms.sort()
    return ms[len(ms) // 2]


def torch_refs():
    import torch
    out = {}
    x = torch.rand(32768, 4096, device="cuda")
    ms = median_ms(lambda: x.mean(dim=1))
    ok = torch.allclose(x.mean(dim=1), x.double().mean(dim=1).float(), rtol=1e-4, atol=1e-6)
    out["rowmean-32768x4096"] = {"library": "PyTorch x.mean(dim=1)", "ms": ms, "check": ok}
    del x
    table = torch.rand(1 << 24, device="cuda")
    index = torch.randint(0, 1 << 24, (1 << 26,), device="cuda", dtype=torch.int32)
    index64 = index.long()
    a = median_ms(lambda: torch.index_select(table, 0, index))
    b = median_ms(lambda: torch.take(table, index64))
    ok = bool(torch.equal(torch.index_select(table, 0, index), table.cpu()[index64.cpu()].cuda()))
    lib = "PyTorch index_select" if a <= b else "PyTorch take"
    out["gather-67m"] = {"library": lib, "ms": min(a, b), "check": ok,
                         "index_select_ms": a, "take_ms": b}
    return out


def cub_histogram(work):
    exe = os.path.join(work, "histogram_int")
    subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-std=c++17", "-o", exe,
                    os.path.join(HERE, "references", "histogram_int.cu")], check=True)
    text = subprocess.run([exe], capture_output=True, text=True).stdout
    for line in text.splitlines():
        if line.startswith("REF "):
            f = dict(kv.split("=", 1) for kv in line.split()[1:])
            return {"histogram-134m": {"library": "CUB DeviceHistogram::HistogramEven",
                                       "ms": float(f["ms"]), "check": f["check"] == "PASS"}}
    raise SystemExit("histogram reference printed no result:\n" + text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    res = cub_histogram(args.out)
    res.update(torch_refs())
    for name, r in sorted(res.items()):
        print("REF spec=%s ms=%.5f check=%s library=%s" % (
            name, r["ms"], "PASS" if r["check"] else "FAIL", r["library"]))
    with open(os.path.join(args.out, "references.json"), "w") as f:
        json.dump(res, f, indent=2)
    return 0 if all(r["check"] for r in res.values()) else 1


sys.exit(main())

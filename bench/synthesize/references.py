#!/usr/bin/env python3
"""Library references for the specs of bench/synthesize/ that have no suite
program at their shape, timed with CUDA events on the GPU node:

    python3 bench/synthesize/references.py --out DIR

- histogram-134m: CUB DeviceHistogram::HistogramEven on int samples
  (HISTOGRAM_INT_CU below, written to DIR/histogram_int.cu and built with
  nvcc);
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

# The CUB reference program, as DIR/histogram_int.cu.
HISTOGRAM_INT_CU = r"""// Library reference for the spec histogram-134m (bench/synthesize/specs.json):
// cub::DeviceHistogram::HistogramEven over 2^27 int samples in [0, 256),
// 256 bins, timed with CUDA events (median of the timed runs).
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(call)                                                               \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_),      \
              __FILE__, __LINE__);                                             \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)

static const int N = 1 << 27;
static const int Bins = 256;

int main() {
  std::vector<int> h(N);
  unsigned s = 12345u;
  for (int i = 0; i < N; ++i) {
    s = s * 1664525u + 1013904223u;
    h[i] = (int)(s >> 24);
  }
  int *d = nullptr, *counts = nullptr;
  CK(cudaMalloc(&d, sizeof(int) * N));
  CK(cudaMalloc(&counts, sizeof(int) * Bins));
  CK(cudaMemcpy(d, h.data(), sizeof(int) * N, cudaMemcpyHostToDevice));
  void *temp = nullptr;
  size_t bytes = 0;
  CK(cub::DeviceHistogram::HistogramEven(temp, bytes, d, counts, Bins + 1, 0,
                                         Bins, N));
  CK(cudaMalloc(&temp, bytes));
  auto op = [&] {
    CK(cub::DeviceHistogram::HistogramEven(temp, bytes, d, counts, Bins + 1,
                                           0, Bins, N));
  };
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  for (int r = 0; r < 3; ++r)
    op();
  std::vector<float> ms;
  for (int r = 0; r < 30; ++r) {
    float t = 0;
    CK(cudaEventRecord(t0));
    op();
    CK(cudaEventRecord(t1));
    CK(cudaEventSynchronize(t1));
    CK(cudaEventElapsedTime(&t, t0, t1));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  std::vector<int> got(Bins), want(Bins, 0);
  CK(cudaMemcpy(got.data(), counts, sizeof(int) * Bins, cudaMemcpyDeviceToHost));
  for (int i = 0; i < N; ++i)
    ++want[h[i]];
  bool ok = got == want;
  printf("REF spec=histogram-134m ms=%.5f min_ms=%.5f check=%s\n",
         ms[ms.size() / 2], ms[0], ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
"""


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
    with open(exe + ".cu", "w") as f:
        f.write(HISTOGRAM_INT_CU)
    subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-std=c++17", "-o", exe, exe + ".cu"],
                   check=True)
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

"""bias_gelu (reference): torch.nn.functional.gelu(x + bias) (exact erf GELU), eager mode."""
import sys

import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def frand(n, seed, device="cuda"):
    """Same deterministic generator as frand() in the CUDA programs."""
    m = 0xFFFFFFFF
    i = torch.arange(n, device=device, dtype=torch.int64)
    h = ((i * 2654435761) & m) ^ ((seed * 0x9E3779B9) & m)
    h = h ^ (h >> 15)
    h = (h * 2246822519) & m
    h = h ^ (h >> 13)
    h = (h * 3266489917) & m
    h = h ^ (h >> 16)
    return (h >> 8).to(torch.float32) * (1.0 / 16777216.0)


def bench(name, size, op):
    """Times op() with CUDA events (2 warm-ups, then timed runs); prints the median."""
    t0 = torch.cuda.Event(enable_timing=True)
    t1 = torch.cuda.Event(enable_timing=True)
    first = 0.0
    for _ in range(2):
        t0.record()
        op()
        t1.record()
        t1.synchronize()
        first = t0.elapsed_time(t1)
    runs = 5 if first > 50 else (10 if first > 5 else 30)
    ms = []
    for _ in range(runs):
        t0.record()
        op()
        t1.record()
        t1.synchronize()
        ms.append(t0.elapsed_time(t1))
    ms.sort()
    print(f"BENCH name={name} variant=reference size={size} kernel_ms={ms[len(ms) // 2]:.5f} "
          f"min_ms={ms[0]:.5f} runs={runs}")


def report(ok, err):
    print(f"CHECK {'PASS' if ok else 'FAIL'} max_err={err:.3e}")
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


R, C = 16384, 8192  # problem size: rows, columns


def main():
    x = (frand(R * C, 80) * 8.0 - 4.0).view(R, C)
    b = frand(C, 81) - 0.5
    out = {}

    def op():
        out["y"] = torch.nn.functional.gelu(x + b)

    bench("bias_gelu", f"{R}x{C}", op)
    idx = torch.arange(0, R * C, 97, device="cuda")
    y = out["y"].view(-1)[idx].double().cpu()
    t = x.view(-1)[idx].double().cpu() + b[idx % C].double().cpu()
    want = 0.5 * t * (1.0 + torch.erf(t / 2.0 ** 0.5))
    err = (y - want).abs().max().item()
    report(err < 1e-5, err)


main()

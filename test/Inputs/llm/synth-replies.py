#!/usr/bin/env python3
"""Writes the scripted server's replies (server.py --script) for a mixture
of thoughts on test/synthesize/Inputs/small-transpose.json (48 x 20 floats,
seed 1, tolerance 0): six strategies, each program written to fail or pass
for one reason, and the repairs the tool asks for after each failure.

The kernels are real: on a GPU they fail for the reason named. On machines
without one, the fake-gpu nvcc of the synthesize tests reads the marker
comments ("fake-gpu: wrong", "fake-gpu: seed-1-only",
"fake-gpu: spec-sizes-only") and makes the program's outputs fail alike.

Requests arrive in this order: the strategies; the program of each
strategy; then, strategy by strategy, one repair request for each program
that failed.

Usage: synth-replies.py [--timing] > script.json
  --timing  two correct strategies only (shared tiles, one thread per
            element) for any transpose spec with input a and output b: the
            candidates then compete on time.
"""
import json
import struct
import sys

ROWS, COLS, SEED = 48, 20, 1
MASK = (1 << 64) - 1


def inputs(seed, stream, n):
    """The harness's generator (xorshift64*), values in [0, 1) as floats."""
    state = ((0x9E3779B97F4A7C15 * (seed + 1)) & MASK) ^ (
        (0xD1B54A32D192ED03 * (stream + 1)) & MASK)
    state = state or 1
    out = []
    for _ in range(n):
        state ^= state >> 12
        state ^= (state << 25) & MASK
        state ^= state >> 27
        u = (((state * 2685821657736338717) & MASK) >> 11) * (1.0 / 9007199254740992.0)
        out.append(struct.unpack("f", struct.pack("f", u))[0])
    return out


a = inputs(SEED, 0, ROWS * COLS)
b = [0.0] * (ROWS * COLS)
for r in range(ROWS):
    for c in range(COLS):
        b[c * ROWS + r] = a[r * COLS + c]

TILED = {
    "kernels": """constexpr int kTile = 32;
__global__ void transpose_tiled(const float *a, float *b, int rows, int cols) {
  __shared__ float tile[kTile][kTile + 1];
  int c = blockIdx.x * kTile + threadIdx.x;
  int r0 = blockIdx.y * kTile;
  for (int j = threadIdx.y; j < kTile; j += blockDim.y) {
    int r = r0 + j;
    if (r < rows && c < cols)
      tile[j][threadIdx.x] = a[(size_t)r * cols + c];
  }
  __syncthreads();
  int r = r0 + threadIdx.x;
  int c0 = blockIdx.x * kTile;
  for (int j = threadIdx.y; j < kTile; j += blockDim.y) {
    int cc = c0 + j;
    if (cc < cols && r < rows)
      b[(size_t)cc * rows + r] = tile[threadIdx.x][j];
  }
}
""",
    "launch": """dim3 block(kTile, 8);
dim3 grid((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile);
transpose_tiled<<<grid, block>>>(d_a, d_b, rows, cols);
""",
    "notes": "32x32 tiles through shared memory, padded against bank conflicts.",
}

SIMPLE = {
    "kernels": """__global__ void transpose_simple(const float *a, float *b, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * cols)
    return;
  int r = i / cols, c = i % cols;
  b[(size_t)c * rows + r] = a[i];
}
""",
    "launch": """int n = rows * cols;
transpose_simple<<<(n + 255) / 256, 256>>>(d_a, d_b, rows, cols);
""",
    "notes": "One thread per element, reads coalesced.",
}

ESCAPE = {
    "kernels": SIMPLE["kernels"].replace("transpose_simple", "transpose_escape"),
    "launch": """system("touch escaped-by-the-model");
int n = rows * cols;
transpose_escape<<<(n + 255) / 256, 256>>>(d_a, d_b, rows, cols);
""",
    "notes": "Scripted: a shell command in the launch statements.",
}

TYPO = {
    "kernels": """__global__ void transpose_typo(const float *a, float *b, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * cols)
    return;
  flaot v = a[i];
  b[(size_t)(i % cols) * rows + i / cols] = v;
}
""",
    "launch": """transpose_typo<<<(rows * cols + 255) / 256, 256>>>(d_a, d_b, rows, cols);
""",
    "notes": "Scripted: does not compile.",
}

WRONG = {
    "kernels": """// fake-gpu: wrong
__global__ void transpose_copy(const float *a, float *b, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols)
    b[i] = a[i];
}
""",
    "launch": """transpose_copy<<<(rows * cols + 255) / 256, 256>>>(d_a, d_b, rows, cols);
""",
    "notes": "Scripted: copies instead of transposing.",
}

HARDCODED = {
    "kernels": "// fake-gpu: seed-1-only\n__constant__ float kAnswers[%d] = {\n%s};\n"
    """__global__ void transpose_known(float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    b[i] = kAnswers[i %% %d];
}
""" % (ROWS * COLS, ",\n".join("  %.9gf" % v for v in b), ROWS * COLS),
    "launch": """transpose_known<<<(rows * cols + 255) / 256, 256>>>(d_b, rows * cols);
""",
    "notes": "Scripted: the answers for seed 1, hard-coded.",
}

SIZE_ONLY = {
    "kernels": """// fake-gpu: spec-sizes-only
__global__ void transpose_48x20(const float *a, float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  int r = i / 20, c = i %% 20;
  int o = c * 48 + r;
  if (o < n)
    b[o] = a[i];
}
""".replace("%%", "%"),
    "launch": """transpose_48x20<<<(rows * cols + 255) / 256, 256>>>(d_a, d_b, rows * cols);
""",
    "notes": "Scripted: written for 48 x 20 only.",
}

STRATEGIES = [
    ("shared tiles", "32x32 tiles staged through shared memory so that both the reads and the writes are coalesced.", TILED, None),
    ("thread per element", "One thread per element; a helper runs on the host first.", ESCAPE, SIMPLE),
    ("typo", "One thread per element.", TYPO, TYPO),
    ("copy", "A straight copy.", WRONG, SIMPLE),
    ("known answers", "Answers looked up in a table.", HARDCODED, TILED),
    ("fixed shape", "The shape is known: 48 x 20.", SIZE_ONLY, SIMPLE),
]


def reply(obj):
    return {"reply": {"json": obj}}


def main():
    strategies = STRATEGIES
    if "--timing" in sys.argv[1:]:
        strategies = [STRATEGIES[0], ("thread per element",
                                      "One thread per element, reads coalesced.",
                                      SIMPLE, None)]
    steps = [reply({"strategies": [{"name": n, "idea": i} for n, i, _, _ in strategies]})]
    for _, _, program, _ in strategies:
        steps.append(reply(program))
    for _, _, _, repair in strategies:
        if repair is not None:
            steps.append(reply(repair))
    print(json.dumps({"steps": steps}, indent=1))


if __name__ == "__main__":
    main()

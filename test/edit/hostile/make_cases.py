#!/usr/bin/env python3
"""Writes cases.jsonl, the hostile-edit corpus (run it after changing a case
here; the JSONL is what the runner, CI and the script writing the fuzzer seeds
(fuzz/make-seeds.py edit-check) read).

Each case: id, base (a program in Inputs/), edit (one edit or a list),
layer (checks, nvcc, verify, sanitizer, timeout, or valid), reason (a
substring of apply's message for `checks`, of the eval JSON for the GPU
layers), flags (extra apply flags), and what (one line: the attack)."""
import json
import os

HEAD = ("__global__ void saxpy(int n, float a, const float *x, float *y) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n")
BODY = "  if (i < n)\n    y[i] = a * x[i] + y[i];\n"


def saxpy(inner=BODY, before="", after="", head=HEAD):
    return before + head + inner + "}" + after


def rf(code, target="saxpy", **params):
    p = {"code": code}
    p.update(params)
    return {"kind": "replace-function", "target": target, "params": p}


def helper(code, target="saxpy"):
    return {"kind": "add-device-function", "target": target,
            "params": {"code": code}}


CASES = []


def case(id, layer, edit, reason="", what="", base="saxpy.cu", flags=()):
    CASES.append({"id": id, "base": base, "edit": edit, "layer": layer,
                  "reason": reason, "flags": list(flags), "what": what})


D = "[directive]"
C = "[code]"
# --- Directives, every spelling -------------------------------------------
SYS = '(system("touch pwned"), cudaSuccess)'
case("dir-define", "checks", rf(saxpy(before="#define cudaDeviceSynchronize() " + SYS + "\n")), C, "#define that rewrites main")
case("dir-digraph-define", "checks", rf(saxpy(inner="%:define cudaDeviceSynchronize() " + SYS + "\n" + BODY)), C, "%:define (the finding)")
case("dir-digraph-include", "checks", rf(saxpy(inner='%:include "/etc/passwd"\n' + BODY)), C, "%:include of a file outside")
case("dir-digraph-include-next", "checks", rf(saxpy(inner="%:include_next <stdio.h>\n" + BODY)), C, "%:include_next")
case("dir-digraph-undef", "checks", rf(saxpy(inner="%:undef CHECK\n" + BODY)), C, "%:undef of a macro main uses")
case("dir-include-passwd", "checks", rf(saxpy(inner='#include "/etc/passwd"\n' + BODY)), "cannot add #includes", "#include of /etc/passwd (must not leak)")
case("dir-include-angle", "checks", rf(saxpy(inner="#include </etc/passwd>\n" + BODY)), "cannot add #includes", "#include <...> of a file outside")
case("dir-import", "checks", rf(saxpy(inner='#import "/etc/passwd"\n' + BODY)), "cannot add #includes", "#import")
case("dir-embed", "checks", rf(saxpy(inner='  const char d[] = {\n#embed "/etc/passwd"\n  };\n' + BODY)), "cannot add #includes", "#embed of a file")
case("dir-has-include", "checks", rf(saxpy(inner='#if __has_include("/etc/passwd")\n  y[0] = 1;\n#endif\n' + BODY)), C, "__has_include probe")
case("dir-undef", "checks", rf(saxpy(inner="#undef SCALE\n" + BODY)), C, "#undef")
case("dir-space-hash", "checks", rf(saxpy(inner="   #   define SCALE 3.0f\n" + BODY)), C, "#define with spaces")
case("dir-comment-before", "checks", rf(saxpy(inner="/* x */ # define SCALE 3.0f\n" + BODY)), C, "comment before #")
case("dir-comment-between", "checks", rf(saxpy(inner="# /* x */ define SCALE 3.0f\n" + BODY)), C, "comment between # and define")
case("dir-splice-hash", "checks", rf(saxpy(inner="#\\\ndefine SCALE 3.0f\n" + BODY)), C, "line splice after #")
case("dir-splice-name", "checks", rf(saxpy(inner="#def\\\nine SCALE 3.0f\n" + BODY)), C, "line splice inside 'define'")
case("dir-digraph-splice", "checks", rf(saxpy(inner="%\\\n:define SCALE 3.0f\n" + BODY)), C, "line splice inside %:")
case("dir-digraph-splice-include", "checks", rf(saxpy(inner='%:\\\ninclude "/etc/passwd"\n' + BODY)), "cannot add #includes", "%: splice include")
case("dir-if0", "checks", rf(saxpy(inner="#if 0\n" + BODY)), C, "#if 0 that swallows code after the edit")
case("dir-endif", "checks", rf(saxpy(inner="#endif\n" + BODY)), C, "#endif")
case("dir-line", "checks", rf(saxpy(inner='#line 1 "main.cu"\n' + BODY)), C, "#line")
case("dir-error", "checks", rf(saxpy(inner="#error stop\n" + BODY)), C, "#error")
case("dir-null", "checks", rf(saxpy(inner="#\n" + BODY)), C, "null directive")
case("dir-pragma-push-macro", "checks", rf(saxpy(inner='#pragma push_macro("SCALE")\n' + BODY)), C, "#pragma push_macro")
case("dir-pragma-clang-attribute", "checks", rf(saxpy(inner="#pragma clang attribute push (__attribute__((constructor)), apply_to = function)\n" + BODY)), C, "#pragma clang attribute")
case("dir-pragma-poison", "checks", rf(saxpy(inner="#pragma GCC poison cudaFree\n" + BODY)), C, "#pragma GCC poison")
case("dir-pragma-unroll-junk", "checks", rf(saxpy(inner='#pragma unroll 4 "x"\n' + BODY)), C, "#pragma unroll with junk after")
case("dir-pragma-unroll-splice", "checks", rf(saxpy(inner="#pragma unroll \\\n  y[0] = 0;\n" + BODY)), C, "#pragma unroll joined to the next line")
case("dir-pragma-op", "checks", rf(saxpy(inner='  _Pragma("push_macro(\\"SCALE\\")")\n' + BODY)), C, "_Pragma operator")
case("dir-pragma-op-splice", "checks", rf(saxpy(inner='  _Pra\\\ngma("GCC poison cudaFree")\n' + BODY)), C, "_Pragma split by a splice")
case("dir-ms-pragma", "checks", rf(saxpy(inner='  __pragma(pack(1))\n' + BODY)), C, "__pragma")
case("dir-helper-define", "checks", helper("#define SCALE 3.0f\n__device__ float twice(float v) { return 2 * v; }"), C, "#define in a helper")
case("dir-helper-digraph", "checks", helper("__device__ float twice(float v) {\n%:define CHECK(x) 0\n  return 2 * v;\n}"), C, "%:define in a helper")
case("dir-after-body", "checks", rf(saxpy(after="\n%:define CHECK(x) 0")), "", "directive after the body")
# --- Text that reaches outside the edit -----------------------------------
case("splice-after-comment", "checks", rf(saxpy(after=" // end \\")), "[tokens]", "a // comment after the body, continued into the next line by a splice")
case("open-block-comment", "checks", rf(saxpy(after=" /*")), C, "an unterminated /* swallows code after")
case("open-raw-string", "checks", rf(saxpy(inner='  const char *s = R"(\n' + BODY)), C, "an unterminated raw string")
case("open-string", "checks", rf(saxpy(inner='  const char *s = "abc\n' + BODY)), C, "an unterminated string")
case("second-function", "checks", rf(saxpy(after="\n__global__ void other(float *p, int n) {}")), C, "redefines another kernel after the target")
case("brace-in-comment-trick", "checks", rf(saxpy(inner=BODY + "  // }\n}\n__global__ void other(float *p, int n) {\n")), C, "a } after a // comment to open a second function")
case("changes-launch", "checks", rf("int main() { return 0; }", target="main"), "[scope]", "host code as the target")
case("renames-kernel", "checks", rf(saxpy(head=HEAD.replace("saxpy(", "saxpy2("))), "[signature]", "renamed kernel")
case("helper-shadows", "checks", helper("__device__ float square(float v) { return 0; }"), C, "a helper that redefines an existing function")
case("helper-overload", "checks", helper("__device__ float square(double v) { return 0; }"), C, "a new overload that changes which function calls pick")
case("macro-swallow", "checks", rf(saxpy(inner=BODY + "  CHECK(\n")), "", "an open macro invocation")
# --- Attributes and builtins ----------------------------------------------
F = "[forbidden]"
case("attr-constructor-helper", "checks", helper('__attribute__((constructor)) __host__ __device__ void boot() { }'), F, "__attribute__((constructor)) on a device-side function")
case("attr-constructor-prio", "checks", helper('__attribute__((__constructor__(101))) __host__ __device__ void boot() { }'), F, "constructor with priority, underscored spelling")
case("attr-gnu-constructor", "checks", helper('[[gnu::constructor]] __host__ __device__ void boot() { }'), F, "[[gnu::constructor]]")
case("attr-destructor", "checks", helper('__attribute__((destructor)) __host__ __device__ void bye() { }'), F, "destructor")
case("attr-cleanup", "checks", rf(saxpy(inner="  float t __attribute__((cleanup(square))) = 0;\n" + BODY)), "", "cleanup attribute on a local")
case("attr-section", "checks", helper('__attribute__((section(".init_array"))) __host__ __device__ void boot() { }'), F, "section attribute")
case("builtin-alloca", "checks", rf(saxpy(inner="  float *t = (float *)__builtin_alloca(n * sizeof(float));\n  t[0] = 0;\n" + BODY)), F, "__builtin_alloca")
case("builtin-alloca-align", "checks", rf(saxpy(inner="  float *t = (float *)__builtin_alloca_with_align(n * 4, 64);\n  t[0] = 0;\n" + BODY)), F, "__builtin_alloca_with_align")
case("builtin-alloca-macro", "checks", rf(saxpy(inner="  float *t = (float *)__builtin_al\\\nloca(n);\n  t[0] = 0;\n" + BODY)), F, "__builtin_alloca split by a splice")
case("vla", "checks", rf(saxpy(inner="  float t[n];\n  t[0] = 0;\n" + BODY)), "", "variable-length array")
case("recursion", "checks", rf("__device__ float square(float v) { return v > 1e30f ? square(v / 2) : v * v; }", target="square"), F, "a device function made recursive")
case("recursion-helper", "checks", helper("__device__ int depth(int d) { return d > 0 ? depth(d - 1) + 1 : 0; }"), F, "a recursive helper")
# --- Inline asm, host calls, dynamic parallelism, heap, printf -------------
case("asm", "checks", rf(saxpy(inner='  asm volatile("trap;");\n' + BODY)), F, "inline asm")
case("asm-spliced", "checks", rf(saxpy(inner='  as\\\nm volatile("trap;");\n' + BODY)), F, "asm keyword split by a splice")
case("asm-underscored", "checks", rf(saxpy(inner='  __asm__ __volatile__("trap;");\n' + BODY)), F, "__asm__")
HOST_ASM = "compiled for the host"
case("asm-host-device", "checks", rf('__host__ __device__ float square(float v) {\n  asm volatile(".incbin \\"/etc/passwd\\"");\n  return v * v;\n}', target="square"), HOST_ASM, "host-side asm (.incbin) in a __host__ __device__ function, --allow-asm", flags=["--allow-asm"])
case("asm-host-helper", "checks", helper('__host__ __device__ inline int probe(int v) {\n  asm volatile(".incbin \\"/etc/passwd\\"");\n  return v;\n}'), HOST_ASM, "a new __host__ __device__ helper with host asm, --allow-asm", flags=["--allow-asm"])
case("host-call", "checks", rf(saxpy(inner="  if (i < n)\n    y[i] = hostScale(x[i]);\n")), "[type-checks]", "calls a host function")
case("host-system", "checks", rf(saxpy(inner='  if (i == 0)\n    system("touch pwned");\n' + BODY)), "[type-checks]", "system() from a kernel")
case("host-fopen", "checks", rf(saxpy(inner='  if (i == 0)\n    fopen("/etc/passwd", "r");\n' + BODY)), "[type-checks]", "fopen from a kernel")
case("dynamic-parallelism", "checks", rf(saxpy(inner="  if (i == 0)\n    other<<<1, 1>>>(y, n);\n" + BODY)), F, "kernel launch from a kernel")
case("dynamic-launch-api", "checks", rf(saxpy(inner="  if (i == 0)\n    cudaLaunchKernel((const void *)other, 1, 1, 0, 0, 0);\n" + BODY)), F, "cudaLaunchKernel from a kernel")
case("malloc", "checks", rf(saxpy(inner="  float *t = (float *)malloc(4);\n  free(t);\n" + BODY)), F, "device malloc")
case("new", "checks", rf(saxpy(inner="  float *t = new float[4];\n  delete[] t;\n" + BODY)), F, "operator new")
case("printf", "checks", rf(saxpy(inner='  printf("%d\\n", i);\n' + BODY)), F, "printf in a kernel")
case("printf-spliced", "checks", rf(saxpy(inner='  pri\\\nntf("%d\\n", i);\n' + BODY)), F, "printf split by a splice")
case("has-include-bare", "checks", rf(saxpy(inner='  int h = __has_include("/etc/passwd");\n' + BODY)), "[type-checks]", "__has_include outside a directive")
case("param-type", "checks", rf(saxpy(head=HEAD.replace("float a", "double a"))), "[signature]", "changed parameter type")
case("markdown", "checks", rf("```cuda\n" + saxpy() + "\n```"), C, "markdown fence")
# --- nvcc -------------------------------------------------------------------
case("nvcc-bad-ptx", "nvcc", rf(saxpy(inner='  asm volatile("this.is.not.ptx;");\n' + BODY)), "", "invalid PTX", flags=["--allow-asm"])
case("nvcc-bad-ptx-reg", "nvcc", rf(saxpy(inner='  unsigned r;\n  asm volatile("mov.u32 %0, %%nosuchreg;" : "=r"(r));\n  if (i == 0)\n    y[0] = r;\n' + BODY)), "", "PTX naming a register that does not exist", flags=["--allow-asm"])
case("nvcc-bad-ptx-operand", "nvcc", rf(saxpy(inner='  asm("add.f32 %0, %0;" :: "f"(a));\n' + BODY)), "", "PTX with a wrong operand count", flags=["--allow-asm"])
case("nvcc-shared-overflow", "nvcc", rf(saxpy(inner="  __shared__ float big[1 << 20];\n  big[threadIdx.x] = a;\n  __syncthreads();\n  if (i < n)\n    y[i] = big[threadIdx.x ^ 1] * x[i] + y[i];\n")), "", "4 MiB of static shared memory")
case("nvcc-ptx-incbin", "nvcc", rf(saxpy(inner='  asm(".incbin \\"/etc/passwd\\"");\n' + BODY)), "", "PTX .incbin of a file", flags=["--allow-asm"])
# --- run time: verification, sanitizer, time limit -------------------------
V = "verify"
case("verify-wrong", V, rf(saxpy(inner="  if (i < n)\n    y[i] = a * x[i];\n")), "mismatch", "wrong result")
case("verify-input-mutation", V, rf(saxpy(inner="  if (i < n) {\n    y[i] = a * x[i] + y[i];\n    ((float *)x)[i] = 0;\n  }\n")), "mismatch", "writes its input")
# x[n - 1] is 0 (i % 17), so dropping the last element alone changes nothing.
case("verify-skip-tail", V, rf(saxpy(inner="  if (i < n - 2)\n    y[i] = a * x[i] + y[i];\n")), "mismatch", "drops the last two elements")
case("verify-trap", V, rf(saxpy(inner="  if (i == 7)\n    __trap();\n" + BODY)), "failed", "traps")
case("verify-printf-flood", V, rf(saxpy(inner='  for (int k = 0; k < 64; ++k)\n    printf("%d %d\\n", i, k);\n' + BODY)), "stdout", "printf flood (allowed by flag)", flags=["--allow-printf"])
case("sanitizer-oob-write", "sanitizer", rf(saxpy(inner="  if (i < n) {\n    y[i] = a * x[i] + y[i];\n    if (i == 0)\n      y[n + 64] = 1.0f;\n  }\n")), "memcheck", "writes past the end of y")
case("sanitizer-oob-read", "sanitizer", rf(saxpy(inner="  if (i < n)\n    y[i] = a * x[i] + y[i] + 0.0f * x[i + n + 64];\n")), "memcheck", "reads past the end of x")
case("sanitizer-shared-race", "sanitizer", rf("__global__ void blockSum(const float *in, float *out, int n) {\n  __shared__ float s[BLOCK];\n  int t = threadIdx.x;\n  int i = blockIdx.x * BLOCK + t;\n  s[t] = i < n ? in[i] : 0.0f;\n  __syncthreads();\n  for (int w = BLOCK / 2; w > 0; w /= 2) {\n    if (t < w)\n      s[t] += s[t + w];\n  }\n  if (t == 0)\n    out[blockIdx.x] = s[0];\n}", target="blockSum"), "racecheck", "a reduction without barriers", base="reduce.cu")
# A volatile local whose address never escapes lives in a register, and
# nvcc removes the loop (measured on the H200): the flag is in shared memory.
case("timeout-spin", "timeout", rf(saxpy(inner="  __shared__ volatile int spin;\n  spin = 1;\n  while (spin) {\n  }\n" + BODY)), "timed out", "an infinite loop on a flag nobody clears")
case("timeout-input-spin", "timeout", rf(saxpy(inner="  while (*(volatile const float *)&x[0] >= 0.0f) {\n  }\n" + BODY)), "timed out", "spins on input data")
case("timeout-sleep", "timeout", rf(saxpy(inner="  for (volatile int k = 0; k >= 0; k += 0)\n    __nanosleep(1000000);\n" + BODY)), "timed out", "sleeps forever")
# --- valid but unusual ------------------------------------------------------
OK = "valid"
case("ok-raw-string-define", OK, rf(saxpy(inner='  const char *s = R"(#define X 1\n#include "/etc/passwd")";\n  (void)s;\n' + BODY)), what="raw string holding #define and #include")
case("ok-brace-in-spliced-comment", OK, rf(saxpy(inner="  // a comment continued \\\n  } with a brace\n" + BODY)), what="} inside a // comment continued by a splice")
case("ok-percent-op", OK, rf(saxpy(inner="  if (i < n)\n    y[i] = a * x[i] + y[i] + (float)(i % 1);\n")), what="% operator")
case("ok-percent-colon-spaced", OK, rf(saxpy(inner="  int r = i % 3;\n  if (i < n)\n    y[i] = a * x[i] + y[i] + (r % 1);\n")), what="% followed by a name")
case("ok-digraph-brackets", OK, rf(saxpy(inner="  if (i < n)\n    y<:i:> = a * x<:i:> + y<:i:>;\n")), what="<: :> digraphs as brackets")
case("ok-digraph-braces", OK, rf("__global__ void saxpy(int n, float a, const float *x, float *y) <%\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) <%\n    y[i] = a * x[i] + y[i];\n  %>\n%>"), what="<% %> digraphs as braces")
case("ok-string-include", OK, rf(saxpy(inner='  const char *m = "#include <stdio.h> %:define";\n  (void)m;\n' + BODY)), what="string literals holding directives")
case("ok-hash-in-comment", OK, rf(saxpy(inner="  // #define SCALE 3.0f\n  /* %:include \"/etc/passwd\" */\n" + BODY)), what="# and %: inside comments")
case("ok-pragma-unroll", OK, rf("__global__ void blockSum(const float *in, float *out, int n) {\n  __shared__ float s[BLOCK];\n  int t = threadIdx.x;\n  int i = blockIdx.x * BLOCK + t;\n  s[t] = i < n ? in[i] : 0.0f;\n  __syncthreads();\n#pragma unroll 4\n  for (int w = BLOCK / 2; w > 0; w /= 2) {\n    if (t < w)\n      s[t] += s[t + w];\n    __syncthreads();\n  }\n  if (t == 0)\n    out[blockIdx.x] = s[0];\n}", target="blockSum"), base="reduce.cu", what="#pragma unroll 4")
case("ok-pragma-unroll-expr", OK, rf("__global__ void blockSum(const float *in, float *out, int n) {\n  __shared__ float s[BLOCK];\n  int t = threadIdx.x;\n  int i = blockIdx.x * BLOCK + t;\n  s[t] = i < n ? in[i] : 0.0f;\n  __syncthreads();\n  %:pragma unroll (2 * 2)\n  for (int w = BLOCK / 2; w > 0; w /= 2) {\n    if (t < w)\n      s[t] += s[t + w];\n    __syncthreads();\n  }\n  if (t == 0)\n    out[blockIdx.x] = s[0];\n}", target="blockSum"), base="reduce.cu", what="%:pragma unroll (2 * 2)")
case("ok-pragma-nounroll", OK, rf("__global__ void blockSum(const float *in, float *out, int n) {\n  __shared__ float s[BLOCK];\n  int t = threadIdx.x;\n  int i = blockIdx.x * BLOCK + t;\n  s[t] = i < n ? in[i] : 0.0f;\n  __syncthreads();\n#pragma nounroll\n  for (int w = BLOCK / 2; w > 0; w /= 2) {\n    if (t < w)\n      s[t] += s[t + w];\n    __syncthreads();\n  }\n  if (t == 0)\n    out[blockIdx.x] = s[0];\n}", target="blockSum"), base="reduce.cu", what="#pragma nounroll")
case("ok-splice-mid-expression", OK, rf(saxpy(inner="  if (i < n)\n    y[i] = a * x[i] + \\\n        y[i];\n")), what="a line splice inside an expression")
case("ok-line-macro", OK, rf(saxpy(inner="  if (i < n && __LINE__ > 0)\n    y[i] = a * x[i] + y[i];\n")), what="__LINE__ in the edit")
case("ok-original-macros", OK, rf(saxpy(inner="  if (i < n && i < N_ELEMS)\n    y[i] = a * x[i] + y[i] * (SCALE / 2.0f);\n")), what="the original's macros used in the edit")
case("ok-unicode-comment", OK, rf(saxpy(inner="  // \u00e9t\u00e9 \u2713 fast path \u2014 no directive\n" + BODY)), what="non-ASCII text in comments")
case("ok-trigraph-string", OK, rf(saxpy(inner='  const char *t = "?\?=define";\n  (void)t;\n' + BODY)), what="trigraph-looking text in a string")
case("ok-lambda", OK, rf(saxpy(inner="  auto f = [&](int k) { return a * x[k] + y[k]; };\n  if (i < n)\n    y[i] = f(i);\n")), what="a lambda in the kernel")
case("ok-restrict", OK, rf("__global__ void saxpy(int n, float a, const float *__restrict__ x,\n                      float *__restrict__ y) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n)\n    y[i] = a * x[i] + y[i];\n}"), what="__restrict__ added")
case("ok-trap-guard", OK, rf(saxpy(inner="  if (n < 0)\n    __trap();\n" + BODY)), what="__trap on an impossible path")
case("ok-helper", OK, helper("__device__ __forceinline__ float fma2(float a, float b, float c) {\n  // } a brace in a comment\n  return a * b + c;\n}"), what="a helper with a } in a comment")
case("ok-comment-after-body", OK, rf(saxpy(after=" // done")), what="a // comment after the body")
case("ok-fixed-array", OK, rf(saxpy(inner="  float t[4] = {0, 0, 0, 0};\n  if (i < n)\n    y[i] = a * x[i] + y[i] + t[i & 3];\n")), what="a constant-size local array")

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "cases.jsonl"), "w") as f:
        for c in CASES:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    from collections import Counter
    print(len(CASES), Counter(c["layer"] for c in CASES))

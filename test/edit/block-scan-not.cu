// block-scan's look-alikes, each refused with the reason: a difference
// instead of a sum, an in-place step that reads a neighbour while it is
// being written, a halving reduction loop, blocks that are not whole warps,
// a loop that scans fewer elements than the block has, a return before the
// scan, a step without a barrier, the other buffer read after the loop,
// 16-bit elements, a neighbour two offsets away; with two arrays read and
// written through swapped pointers: a swap skipped on some steps, a
// neighbour read from the buffer being written, the result read after the
// loop from the other buffer, one pointer moved but not the other, both
// moved onto one buffer, an array named directly in the step; a pointer
// into the scanned array declared before the store or after the loop; in
// two halves of one array: the other half read after the loop, halves
// smaller than the block, the second half's variable not flipped, a read
// past the thread's own element after the loop.
// RUN: clang-optiml transforms -v %s -- %mock_args 2>&1 | FileCheck %s

#include "cuda_mock.h"

// CHECK: not block-scan minus: the loop at {{[0-9]+}}:3 is not a prefix-sum step: a step does not leave own + left in the current buffer for threads at or past the offset
__global__ void minus(const int *in, int *out) {
  __shared__ int buf[2][256];
  int tid = threadIdx.x;
  int cur = 0;
  buf[cur][tid] = in[tid];
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {
    if (tid >= off)
      buf[1 - cur][tid] = buf[cur][tid] - buf[cur][tid - off];
    else
      buf[1 - cur][tid] = buf[cur][tid];
    cur = 1 - cur;
    __syncthreads();
  }
  out[tid] = buf[cur][tid];
}

// CHECK: not block-scan racy: the loop at {{[0-9]+}}:3 reads a neighbour's element while threads write that buffer, with no barrier between
__global__ void racy(int *data) {
  __shared__ int s[256];
  int tid = threadIdx.x;
  s[tid] = data[tid];
  __syncthreads();
  for (int off = 1; off < 256; off *= 2) {
    if (tid >= off)
      s[tid] += s[tid - off];
    __syncthreads();
  }
  data[tid] = s[tid];
}

// CHECK: not block-scan tree: kernel 'tree' has no loop 'for (off = 1; off < n; off *= 2)' at its top level
__global__ void tree(const float *in, float *out) {
  __shared__ float s[256];
  int tid = threadIdx.x;
  s[tid] = in[blockIdx.x * 256 + tid];
  __syncthreads();
  for (int h = 128; h > 0; h >>= 1) {
    if (tid < h)
      s[tid] += s[tid + h];
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = s[0];
}

// CHECK: not block-scan odd_block: a launch uses blocks of 100 threads; the shuffles need a multiple of 32
__global__ void odd_block(int *data) {
  __shared__ int s[128];
  int tid = threadIdx.x;
  s[tid] = data[tid];
  __syncthreads();
  for (int off = 1; off < 128; off <<= 1) {
    int t = tid >= off ? s[tid - off] : 0;
    __syncthreads();
    s[tid] += t;
    __syncthreads();
  }
  data[tid] = s[tid];
}

// CHECK: not block-scan partial: a launch uses blocks of 256 threads, but the loop scans only the first 128
__global__ void partial(int *data) {
  __shared__ int s[256];
  int tid = threadIdx.x;
  s[tid] = data[tid];
  __syncthreads();
  for (int off = 1; off < 128; off <<= 1) {
    int t = tid >= off ? s[tid - off] : 0;
    __syncthreads();
    s[tid] += t;
    __syncthreads();
  }
  data[tid] = s[tid];
}

// CHECK: not block-scan early: 'return' at {{[0-9]+}}:5 may leave before the scan; every thread of the block must reach it
__global__ void early(const int *in, int *out, int n) {
  __shared__ int s[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * 256 + tid;
  if (i >= n)
    return;
  s[tid] = in[i];
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {
    int t = tid >= off ? s[tid - off] : 0;
    __syncthreads();
    s[tid] += t;
    __syncthreads();
  }
  out[i] = s[tid];
}

// CHECK: not block-scan no_barrier: the loop at {{[0-9]+}}:3 has no barrier between one step and the next
__global__ void no_barrier(int *data) {
  __shared__ int buf[2][256];
  int tid = threadIdx.x;
  int cur = 0;
  buf[cur][tid] = data[tid];
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {
    buf[1 - cur][tid] = buf[cur][tid] + (tid >= off ? buf[cur][tid - off] : 0);
    cur = 1 - cur;
  }
  __syncthreads();
  data[tid] = buf[cur][tid];
}

// CHECK: not block-scan other_buffer: 'buf[1 - cur][tid]' reads a buffer other than the current one
__global__ void other_buffer(int *data, int *prev) {
  __shared__ int buf[2][256];
  int tid = threadIdx.x;
  int cur = 0;
  buf[cur][tid] = data[tid];
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {
    buf[1 - cur][tid] = buf[cur][tid] + (tid >= off ? buf[cur][tid - off] : 0);
    cur = 1 - cur;
    __syncthreads();
  }
  data[tid] = buf[cur][tid];
  prev[tid] = buf[1 - cur][tid];
}

// CHECK: not block-scan shorts: the scanned elements are 'short': warp shuffles move 32- and 64-bit integers, float and double
__global__ void shorts(short *data) {
  __shared__ short s[256];
  int tid = threadIdx.x;
  s[tid] = data[tid];
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {
    short t = tid >= off ? s[tid - off] : 0;
    __syncthreads();
    s[tid] += t;
    __syncthreads();
  }
  data[tid] = s[tid];
}

// CHECK: not block-scan two_away: the loop at {{[0-9]+}}:3 is not a prefix-sum step: a step does not leave own + left in the current buffer for threads at or past the offset
__global__ void two_away(int *data) {
  __shared__ int s[256];
  int tid = threadIdx.x;
  s[tid] = data[tid];
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {
    int t = tid >= 2 * off ? s[tid - 2 * off] : 0;
    __syncthreads();
    s[tid] += t;
    __syncthreads();
  }
  data[tid] = s[tid];
}

// CHECK: not block-scan skipped_swap: the loop at {{[0-9]+}}:3 is not a prefix-sum step: the step's condition 'off != 4' is not 'tid >= offset' or its negation
__global__ void skipped_swap(int *data) {
  __shared__ int ping[256];
  __shared__ int pong[256];
  int *src = ping, *dst = pong;
  int tid = threadIdx.x;
  ping[tid] = data[tid];
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {
    dst[tid] = tid >= off ? src[tid] + src[tid - off] : src[tid];
    __syncthreads();
    if (off != 4) {
      int *t = src;
      src = dst;
      dst = t;
    }
  }
  data[tid] = src[tid];
}

// CHECK: not block-scan reads_written: the loop at {{[0-9]+}}:3 is not a prefix-sum step: a step does not leave own + left in the current buffer for threads at or past the offset
__global__ void reads_written(int *data) {
  __shared__ int ping[256];
  __shared__ int pong[256];
  int *src = ping;
  int *dst = pong;
  int tid = threadIdx.x;
  ping[tid] = data[tid];
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {
    dst[tid] = tid >= off ? src[tid] + dst[tid - off] : src[tid];
    __syncthreads();
    int *t = src;
    src = dst;
    dst = t;
  }
  data[tid] = src[tid];
}

// CHECK: not block-scan wrong_final: 'dst' at {{[0-9]+}}:15 is used after the loop other than to read an element through 'src', where the loop leaves the result
__global__ void wrong_final(int *data) {
  __shared__ int ping[256];
  __shared__ int pong[256];
  int *src = ping;
  int *dst = pong;
  int tid = threadIdx.x;
  ping[tid] = data[tid];
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {
    dst[tid] = tid >= off ? src[tid] + src[tid - off] : src[tid];
    __syncthreads();
    int *t = src;
    src = dst;
    dst = t;
  }
  data[tid] = dst[tid];
}

// CHECK: not block-scan half_swap: the loop at {{[0-9]+}}:3 moves the pointer 'src' but no second one; a double buffer swaps two
__global__ void half_swap(int *data) {
  __shared__ int ping[256];
  __shared__ int pong[256];
  int *src = ping;
  int *dst = pong;
  int tid = threadIdx.x;
  ping[tid] = data[tid];
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {
    dst[tid] = tid >= off ? src[tid] + src[tid - off] : src[tid];
    __syncthreads();
    src = dst;
  }
  data[tid] = src[tid];
}

// CHECK: not block-scan bad_swap: the loop at {{[0-9]+}}:3 is not a prefix-sum step: at the end of a step 'dst' does not name the buffer 'src' does not
__global__ void bad_swap(int *data) {
  __shared__ int ping[256];
  __shared__ int pong[256];
  int *src = ping;
  int *dst = pong;
  int tid = threadIdx.x;
  ping[tid] = data[tid];
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {
    dst[tid] = tid >= off ? src[tid] + src[tid - off] : src[tid];
    __syncthreads();
    src = dst;
    dst = src;
  }
  data[tid] = src[tid];
}

// CHECK: not block-scan named_array: the loop at {{[0-9]+}}:3 is not a prefix-sum step: the step names 'ping' directly; which buffer that is changes from step to step
__global__ void named_array(int *data) {
  __shared__ int ping[256];
  __shared__ int pong[256];
  int *src = ping;
  int *dst = pong;
  int tid = threadIdx.x;
  ping[tid] = data[tid];
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {
    dst[tid] = tid >= off ? ping[tid] + src[tid - off] : src[tid];
    __syncthreads();
    int *t = src;
    src = dst;
    dst = t;
  }
  data[tid] = src[tid];
}

// A pointer into the scanned array declared before the store and written
// through after the loop: with 7 steps the loop leaves the result in
// buf[1], the rewrite in buf[0], which the write would then clobber.
// CHECK: not block-scan alias_before: 'q' at {{[0-9]+}}:3 points into 'buf'; reads and writes through it are not followed, and the scan moves where the values are
__global__ void alias_before(int *data) {
  __shared__ int buf[2][128];
  int tid = threadIdx.x;
  int cur = 0;
  int *q = buf[0];
  buf[cur][tid] = data[tid];
  __syncthreads();
  for (int off = 1; off < 128; off <<= 1) {
    if (tid >= off)
      buf[1 - cur][tid] = buf[cur][tid] + buf[cur][tid - off];
    else
      buf[1 - cur][tid] = buf[cur][tid];
    cur = 1 - cur;
    __syncthreads();
  }
  q[tid] = 0;
  data[tid] = buf[cur][tid];
}

// The same through the address of an element of one half of one array.
// CHECK: not block-scan alias_addr: 'q' at {{[0-9]+}}:3 points into 'temp'; reads and writes through it are not followed, and the scan moves where the values are
__global__ void alias_addr(int *data) {
  extern __shared__ int temp[];
  const int thid = threadIdx.x;
  const int len = blockDim.x;
  int pout = 0, pin = 1;
  int *q = &temp[len + thid];
  temp[pout * len + thid] = data[thid];
  __syncthreads();
  for (int offset = 1; offset < len; offset *= 2) {
    pout = 1 - pout;
    pin = 1 - pout;
    if (thid >= offset)
      temp[pout * len + thid] =
          temp[pin * len + thid] + temp[pin * len + thid - offset];
    else
      temp[pout * len + thid] = temp[pin * len + thid];
    __syncthreads();
  }
  *q = 0;
  data[thid] = temp[pout * len + thid];
}

// A pointer to the first buffer taken after the loop, which with 7 steps
// is not the one holding the result.
// CHECK: not block-scan alias_after: 'buf' at {{[0-9]+}}:12 is used after the loop other than to read an element of the current buffer
__global__ void alias_after(int *data) {
  __shared__ int buf[2][128];
  int tid = threadIdx.x;
  int cur = 0;
  buf[cur][tid] = data[tid];
  __syncthreads();
  for (int off = 1; off < 128; off <<= 1) {
    buf[1 - cur][tid] = tid >= off ? buf[cur][tid] + buf[cur][tid - off]
                                   : buf[cur][tid];
    cur = 1 - cur;
    __syncthreads();
  }
  int *r = buf[0];
  data[tid] = r[tid];
}

// Two halves of one array: the half the last step read, read after the
// loop.
// CHECK: not block-scan halves_other: 'temp[pin * len + thid]' reads a part of 'temp' other than the current half 'pout * len + i'
__global__ void halves_other(int *data) {
  extern __shared__ int temp[];
  const int thid = threadIdx.x;
  const int len = blockDim.x;
  int pout = 0, pin = 1;
  temp[pout * len + thid] = data[thid];
  __syncthreads();
  for (int offset = 1; offset < len; offset *= 2) {
    pout = 1 - pout;
    pin = 1 - pout;
    if (thid >= offset)
      temp[pout * len + thid] =
          temp[pin * len + thid] + temp[pin * len + thid - offset];
    else
      temp[pout * len + thid] = temp[pin * len + thid];
    __syncthreads();
  }
  data[thid] = temp[pin * len + thid];
}

// Halves of 128 elements for blocks of 256 threads: they overlap.
// CHECK: not block-scan halves_len: a launch uses blocks of 256 threads, but 'temp' is split in halves of 128; a half must be the block
__global__ void halves_len(int *data) {
  __shared__ int temp[512];
  const int thid = threadIdx.x;
  int pout = 0, pin = 1;
  temp[pout * 128 + thid] = data[thid];
  __syncthreads();
  for (int offset = 1; offset < 256; offset *= 2) {
    pout = 1 - pout;
    pin = 1 - pout;
    if (thid >= offset)
      temp[pout * 128 + thid] =
          temp[pin * 128 + thid] + temp[pin * 128 + thid - offset];
    else
      temp[pout * 128 + thid] = temp[pin * 128 + thid];
    __syncthreads();
  }
  data[thid] = temp[pout * 128 + thid];
}

// `pin` never flipped: from the second step on it names the half being
// written.
// CHECK: not block-scan halves_unflipped: the loop at {{[0-9]+}}:3 is not a prefix-sum step: the half 'pin' is not the current buffer or the other one ({{[0-9]+}}:10)
__global__ void halves_unflipped(int *data) {
  extern __shared__ int temp[];
  const int thid = threadIdx.x;
  const int len = blockDim.x;
  int pout = 0, pin = 1;
  temp[pout * len + thid] = data[thid];
  __syncthreads();
  for (int offset = 1; offset < len; offset *= 2) {
    temp[pin * len + thid] =
        thid >= offset
            ? temp[pout * len + thid] + temp[pout * len + thid - offset]
            : temp[pout * len + thid];
    pout = 1 - pout;
    __syncthreads();
  }
  data[thid] = temp[pout * len + thid];
}

// Past the thread's own element after the loop: with 8 steps the loop
// leaves the other half holding the seventh, the rewrite nothing.
// CHECK: not block-scan halves_past: 'temp[pout * len + thid + len]' reads another element than the thread's own of the current half; after the loop only 'pout * len + tid' is known to stay in it
__global__ void halves_past(int *data) {
  extern __shared__ int temp[];
  const int thid = threadIdx.x;
  const int len = blockDim.x;
  int pout = 0, pin = 1;
  temp[pout * len + thid] = data[thid];
  __syncthreads();
  for (int offset = 1; offset < len; offset *= 2) {
    pout = 1 - pout;
    pin = 1 - pout;
    if (thid >= offset)
      temp[pout * len + thid] =
          temp[pin * len + thid] + temp[pin * len + thid - offset];
    else
      temp[pout * len + thid] = temp[pin * len + thid];
    __syncthreads();
  }
  data[thid] = temp[pout * len + thid + len];
}

int main() {
  int *d = nullptr, *p = nullptr;
  float *f = nullptr;
  short *h = nullptr;
  minus<<<1, 256>>>(d, d);
  racy<<<1, 256>>>(d);
  tree<<<4, 256>>>(f, f);
  odd_block<<<1, 100>>>(d);
  partial<<<1, 256>>>(d);
  early<<<4, 256>>>(d, d, 1000);
  no_barrier<<<1, 256>>>(d);
  other_buffer<<<1, 256>>>(d, p);
  shorts<<<1, 256>>>(h);
  two_away<<<1, 256>>>(d);
  skipped_swap<<<1, 256>>>(d);
  reads_written<<<1, 256>>>(d);
  wrong_final<<<1, 256>>>(d);
  half_swap<<<1, 256>>>(d);
  bad_swap<<<1, 256>>>(d);
  named_array<<<1, 256>>>(d);
  alias_before<<<1, 128>>>(d);
  alias_addr<<<1, 256, 2 * 256 * sizeof(int)>>>(d);
  alias_after<<<1, 128>>>(d);
  halves_other<<<1, 256, 2 * 256 * sizeof(int)>>>(d);
  halves_len<<<1, 256>>>(d);
  halves_unflipped<<<1, 256, 2 * 256 * sizeof(int)>>>(d);
  halves_past<<<1, 256, 2 * 256 * sizeof(int)>>>(d);
  return 0;
}

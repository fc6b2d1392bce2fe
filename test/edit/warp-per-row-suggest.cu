// warp-per-row states the longest row when the program fixes it and
// suggests parameters from it: a constexpr of 12 (16 lanes; one pass, no
// registers), a template parameter instantiated up to 4096 (the block form
// with 16 registers per thread first; a warp would need 128), a constant
// launch argument of 300 (a full warp with registers), and CSR rows known
// only at run time with one pass per row (8 lanes, a full warp, the block
// form).
// RUN: rm -rf %t && split-file %inputs/edit/restructure/warp.cases %t
// RUN: clang-optiml transforms %t/warp-rows-known.cu --kernel short_rows -- %mock_args | FileCheck --match-full-lines --check-prefix=SHORT %s
// RUN: clang-optiml transforms %t/warp-rows-known.cu --kernel long_rows -- %mock_args | FileCheck --match-full-lines --check-prefix=LONG %s
// RUN: clang-optiml transforms %t/warp-rows-known.cu --kernel mid_rows -- %mock_args | FileCheck --match-full-lines --check-prefix=MID %s
// RUN: clang-optiml transforms %t/warp-spmv.cu --kernel csr_mv -- %mock_args | FileCheck --match-full-lines --check-prefix=CSR %s

// SHORT:      warp-per-row short_rows: one thread per item 'r' (bound 'rows') with 1 inner loop: short_rows/loop0 (sum of 's'); rows of at most 12 elements; rewrite: one warp per item, lanes stride the loops
// SHORT-NEXT:     param per (string warp|block, optional)
// SHORT-NEXT:     param block_size (integer 32..1024, optional)
// SHORT-NEXT:     param lanes (integer 4..32, optional)
// SHORT-NEXT:     param registers (boolean, optional)
// SHORT-NEXT:     param online (boolean, optional)
// SHORT-NEXT:     try {"kind":"warp-per-row","target":"short_rows","params":{"block_size":256,"lanes":16,"per":"warp"}}
// SHORT-NEXT:     try {"kind":"warp-per-row","target":"short_rows","params":{"block_size":128,"per":"block"}}
// SHORT-NOT:      try {"kind":"warp-per-row"{{.*}}

// LONG:      warp-per-row long_rows: one thread per item 'r' (bound 'rows') with 2 inner loops: long_rows/loop0 (max of 'm') long_rows/loop1 (elementwise writes); rows of at most 4096 elements; rewrite: one warp per item, lanes stride the loops
// LONG:          try {"kind":"warp-per-row","target":"long_rows","params":{"block_size":256,"per":"block","registers":true}}
// LONG-NEXT:     try {"kind":"warp-per-row","target":"long_rows","params":{"block_size":256,"lanes":32,"per":"warp"}}
// LONG-NOT:      try {"kind":"warp-per-row"{{.*}}

// MID:      warp-per-row mid_rows: one thread per item 'r' (bound 'rows') with 2 inner loops: mid_rows/loop0 (sum of 's') mid_rows/loop1 (elementwise writes); rows of at most 300 elements; rewrite: one warp per item, lanes stride the loops
// MID:          try {"kind":"warp-per-row","target":"mid_rows","params":{"block_size":256,"lanes":32,"per":"warp","registers":true}}
// MID-NEXT:     try {"kind":"warp-per-row","target":"mid_rows","params":{"block_size":128,"per":"block","registers":true}}

// CSR:      warp-per-row csr_mv: one thread per item 'r' (bound 'num_rows') with 1 inner loop: csr_mv/loop0 (sum of 'dot'); rewrite: one warp per item, lanes stride the loops
// CSR:          try {"kind":"warp-per-row","target":"csr_mv","params":{"block_size":256,"lanes":8,"per":"warp"}}
// CSR-NEXT:     try {"kind":"warp-per-row","target":"csr_mv","params":{"block_size":256,"lanes":32,"per":"warp"}}
// CSR-NEXT:     try {"kind":"warp-per-row","target":"csr_mv","params":{"block_size":256,"per":"block"}}

// warp-per-row refuses, with the reason, registers it cannot fill safely
// (a row length known only at run time, rows too long for the lanes, a
// single pass, memory written between the passes, a start that is not a
// constant) and lanes it cannot use; 64 values per lane (4096 over
// 64 threads) is still accepted. The file is left unchanged.
// RUN: rm -rf %t.d && split-file %inputs/edit/restructure/warp.cases %t.d && cp %t.d/warp-registers-refuse.cu %t.cu
// RUN: echo '{"kind":"warp-per-row","target":"runtime_cols","params":{"registers":true}}' > %t.1.json
// RUN: not clang-optiml apply %t.cu --edit %t.1.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=RUNTIME %s
// RUN: echo '{"kind":"warp-per-row","target":"long_rows","params":{"registers":true}}' > %t.2.json
// RUN: not clang-optiml apply %t.cu --edit %t.2.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=LONG %s
// RUN: echo '{"kind":"warp-per-row","target":"long_rows","params":{"registers":true,"per":"block","block_size":64}}' > %t.3.json
// RUN: clang-optiml apply %t.cu --edit %t.3.json -o %t.3.out.cu -- %mock_args
// RUN: echo '{"kind":"warp-per-row","target":"one_pass","params":{"registers":true}}' > %t.4.json
// RUN: not clang-optiml apply %t.cu --edit %t.4.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=ONE %s
// RUN: echo '{"kind":"warp-per-row","target":"written_between","params":{"registers":true}}' > %t.5.json
// RUN: not clang-optiml apply %t.cu --edit %t.5.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=BETWEEN %s
// RUN: echo '{"kind":"warp-per-row","target":"from_begin","params":{"registers":true}}' > %t.6.json
// RUN: not clang-optiml apply %t.cu --edit %t.6.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=BEGIN %s
// RUN: echo '{"kind":"warp-per-row","target":"one_pass","params":{"per":"block","lanes":8}}' > %t.7.json
// RUN: not clang-optiml apply %t.cu --edit %t.7.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=BLOCKLANES %s
// RUN: echo '{"kind":"warp-per-row","target":"one_pass","params":{"lanes":12}}' > %t.8.json
// RUN: not clang-optiml apply %t.cu --edit %t.8.json -- %mock_args 2>&1 | FileCheck --match-full-lines --check-prefix=LANES %s
// RUN: cmp %t.d/warp-registers-refuse.cu %t.cu

// RUNTIME: clang-optiml: error: warp-per-row runtime_cols rejected: [not-applicable] params.registers: the row length must be fixed at compile time: the loop at 12:5 runs to the parameter 'cols', and runtime_cols/launch0 passes 'cols', which is not a compile-time constant
// LONG: clang-optiml: error: warp-per-row long_rows rejected: [not-applicable] params.registers: rows of up to 4096 elements need 128 values per lane with 32 lanes per row (at most 64); use per "block" or a larger block_size
// ONE: clang-optiml: error: warp-per-row one_pass rejected: [not-applicable] params.registers: no array is read at the loop's element ('x[j]') by two or more passes over the same range; there is nothing to keep
// BETWEEN: clang-optiml: error: warp-per-row written_between rejected: [not-applicable] params.registers: the statement at 46:5 writes memory before the last pass that reads 'x'; registers would hold stale values if they alias
// BEGIN: clang-optiml: error: warp-per-row from_begin rejected: [not-applicable] params.registers: the row length must be fixed at compile time: the loop at 60:5 starts at 'begin[row]', not at a compile-time constant
// BLOCKLANES: clang-optiml: error: warp-per-row one_pass rejected: [params] params.lanes applies to the warp form only; a block shares one item among all its threads
// LANES: clang-optiml: error: warp-per-row one_pass rejected: [params] params.lanes must be 4, 8, 16 or 32

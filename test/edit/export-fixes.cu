// apply --export-fixes writes the change as clang-tidy's YAML fixes (what
// clang-apply-replacements reads) with absolute paths, prints nothing and
// leaves the input alone; it refuses to overwrite the input and -i, and a
// directory that does not exist leaves no file behind. --diff names the
// file relative to the project root (the directory holding .git), so that
// `git apply` there gives what -o gives.
// RUN: rm -rf %t && mkdir -p %t/proj/src %t/proj/.git
// RUN: cp %s %t/proj/src/k.cu
// RUN: echo '{"kind":"unroll","target":"k/loop0"}' > %t/edit.json
// RUN: clang-optiml apply %t/proj/src/k.cu --edit %t/edit.json --export-fixes %t/fixes.yaml -- %mock_args > %t/stdout.txt
// RUN: count 0 < %t/stdout.txt
// RUN: cmp %s %t/proj/src/k.cu
// RUN: FileCheck --check-prefix=YAML %s < %t/fixes.yaml
// YAML: ---
// YAML-NEXT: MainSourceFile: '{{/.*}}/proj/src/k.cu'
// YAML-NEXT: Diagnostics:
// YAML-NEXT:   - DiagnosticName: clang-optiml-edit
// YAML-NEXT:     DiagnosticMessage:
// YAML-NEXT:       Message: 'unroll k/loop0{{.*}}'
// YAML-NEXT:       FilePath: '{{/.*}}/proj/src/k.cu'
// YAML-NEXT:       FileOffset: {{[0-9]+}}
// YAML-NEXT:       Replacements:
// YAML-NEXT:         - FilePath: '{{/.*}}/proj/src/k.cu'
// YAML-NEXT:           Offset: {{[0-9]+}}
// YAML-NEXT:           Length: {{[0-9]+}}
// YAML-NEXT:           ReplacementText: {{.*}}#pragma unroll{{.*}}
//
// RUN: not clang-optiml apply %t/proj/src/k.cu --edit %t/edit.json --export-fixes %t/proj/src/./k.cu -- %mock_args 2>&1 | FileCheck --check-prefix=SELF %s
// SELF: clang-optiml: error: --export-fixes '{{.*}}k.cu' is the source file itself; name a .yaml file
// RUN: cmp %s %t/proj/src/k.cu
// RUN: not clang-optiml apply %t/proj/src/k.cu --edit %t/edit.json -i --export-fixes %t/f.yaml -- %mock_args 2>&1 | FileCheck --check-prefix=INPLACE %s
// INPLACE: clang-optiml: error: -i and --export-fixes are mutually exclusive (the fixes apply to the file as it is)
// RUN: not clang-optiml apply %t/proj/src/k.cu --edit %t/edit.json --export-fixes %t/no/such/dir/f.yaml -- %mock_args 2>&1 | FileCheck --check-prefix=NODIR %s
// NODIR: clang-optiml: error: {{.*}}no/such/dir{{.*}}
// RUN: not ls %t/no
//
// RUN: clang-optiml apply %t/proj/src/k.cu --edit %t/edit.json --diff -- %mock_args > %t/proj/k.diff
// RUN: FileCheck --check-prefix=DIFF %s < %t/proj/k.diff
// DIFF: --- a/src/k.cu
// DIFF-NEXT: +++ b/src/k.cu
// RUN: clang-optiml apply %t/proj/src/k.cu --edit %t/edit.json -o %t/want.cu -- %mock_args
// RUN: cd %t/proj && git apply k.diff
// RUN: cmp %t/want.cu %t/proj/src/k.cu

#include "cuda_mock.h"

__global__ void k(float *p) {
  for (int j = 0; j < 4; ++j)
    p[j] = 0;
}

#!/bin/sh
# Rewrites input.cu with edits.json into check.cu (needs a clang-optiml
# build and the CUDA SDK). test/edit/vectorize.test keeps check.cu
# equal to this output.
set -e
here=$(dirname "$0")
tool=${CLANG_OPTIML:-clang-optiml}
"$tool" apply "$here/input.cu" --edit "$here/edits.json" -o "$here/check.cu"

#!/usr/bin/env bash
# The main job as a user runs it, on a GPU node, through the relocatable
# bundle (docs/deploy.md). Every command below is typed as the README and
# docs/user-guide.md show it: from the program's own directory, default
# paths, relative paths where a user would give them, and no flag the docs
# do not show (no --run-dir unless the step is about it).
#
#   scripts/gpu-acceptance.sh dist/clang-optiml-*.tar.xz [program.cu]
#
# Default program: examples/transpose.cu. Logs and a summary go to $OUT (or
# ./gpu-results); the last line reads "acceptance: N of M passed".
# Environment: BUDGET (evaluations per optimize, default 6).
set -uo pipefail
bundle=$(realpath "$1")
program=$(realpath "${2:-examples/transpose.cu}")
out=${OUT:-$PWD/gpu-results}
mkdir -p "$out"
out=$(realpath "$out")
budget=${BUDGET:-6}

repo=$(cd "$(dirname "$0")/.." && pwd)
# Install as a user would: unpack, put bin/ on PATH.
prefix=$(mktemp -d)
tar -C "$prefix" -xJf "$bundle"
export PATH=$(ls -d "$prefix"/clang-optiml-*)/bin:/usr/local/cuda/bin:$PATH

# The program in a directory of its own, as in a user's checkout.
home=$(mktemp -d)
mkdir -p "$home/project"
cp "$program" "$home/project/"
cd "$home/project"
name=$(basename "$program" .cu)
src=$name.cu

log=$out/acceptance.log
: >"$log"
passed=0
total=0
# step NAME EXPECTED_STATUSES CMD...: runs CMD, logs it, and checks its exit
# status is one of EXPECTED_STATUSES (comma separated).
step() {
  local what=$1 want=$2
  shift 2
  total=$((total + 1))
  echo "== $what" | tee -a "$log"
  echo "\$ $*" | tee -a "$log"
  "$@" >"$out/step$total.out" 2>&1
  local rc=$?
  cat "$out/step$total.out" >>"$log"
  if [[ ",$want," == *",$rc,"* ]]; then
    echo "-- ok (exit $rc)" | tee -a "$log"
    passed=$((passed + 1))
    return 0
  fi
  echo "-- FAIL: exit $rc, expected $want" | tee -a "$log"
  tail -n 15 "$out/step$total.out"
  return 1
}
# expect WHAT COND...: a check on files or output, counted like a step.
expect() {
  local what=$1
  shift
  total=$((total + 1))
  if "$@"; then
    echo "-- ok: $what" | tee -a "$log"
    passed=$((passed + 1))
  else
    echo "-- FAIL: $what" | tee -a "$log"
  fi
}
last_out() { cat "$out/step$total.out"; }

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$log"
clang-optiml --version | tee -a "$log"

# Exit status of optimize (docs/optimize.md): 0 written, 3 nothing better.
step "analyze" 0 clang-optiml analyze "$src"
step "eval (determinism and profile)" 0 clang-optiml eval "$src"
step "optimize with the default run directory" 0,3 \
  clang-optiml optimize "$src" -o "$name.fast.cu" --report report.html \
  --budget "$budget"
expect "report.html written" test -s report.html
expect "a journal under .optiml/" \
  bash -c 'ls .optiml/*/journal.jsonl >/dev/null 2>&1'
expect "the input is unchanged" cmp -s "$src" "$program"
if [ -s "$name.fast.cu" ]; then
  step "eval the result against the original" 0 \
    clang-optiml eval "$name.fast.cu" --against "$src"
  step "eval --against with a relative --run-dir" 0 \
    clang-optiml eval "$name.fast.cu" --against "$src" --run-dir rel-eval
else
  step "eval --against itself with a relative --run-dir" 0 \
    clang-optiml eval "$src" --against "$src" --run-dir rel-eval
fi

# Interrupted and resumed, with relative paths everywhere.
echo "== optimize --run-dir runs/$name, killed after its first journaled candidate" | tee -a "$log"
clang-optiml optimize "$src" --budget "$budget" --run-dir "runs/$name" \
  --eval-cache cache >"$out/killed.out" 2>&1 &
pid=$!
for _ in $(seq 1 240); do
  n=$(grep -c '"node"' "runs/$name/journal.jsonl" 2>/dev/null || true)
  if [ "${n:-0}" -ge 2 ] || ! kill -0 $pid 2>/dev/null; then break; fi
  sleep 0.5
done
# A second writer on the same run directory is refused while the first runs.
if kill -0 $pid 2>/dev/null; then
  step "a second optimize on the same run directory is refused" 1 \
    clang-optiml optimize "$src" --budget "$budget" --run-dir "runs/$name" --resume
  refusal_out=$out/step$total.out
  expect "the refusal names the other process" grep -q "$pid" "$refusal_out"
fi
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
cat "$out/killed.out" >>"$log"
step "optimize --resume after the kill" 0,3 \
  clang-optiml optimize "$src" --budget "$budget" --run-dir "runs/$name" \
  --resume -o resumed.cu --report resumed.html --eval-cache cache
resumed_out=$out/step$total.out
expect "the resumed report is written" test -s resumed.html
expect "the resumed run says it resumed" \
  grep -q "note: resuming the search in .*runs/$name/journal.jsonl" "$resumed_out"
# The resumed search starts from what the journal holds: its first progress
# line already shows the killed run's best, and the journal's node ids run
# on without a gap.
expect "the journal continues the killed run's nodes" python3 - "runs/$name/journal.jsonl" <<'PY'
import json, sys
ids = [json.loads(l).get("id") for l in open(sys.argv[1]) if '"node"' in l]
sys.exit(0 if ids == list(range(len(ids))) and len(ids) > 2 else 1)
PY

# "Optimize this kernel" from the editor (docs/editor.md): clangd-optiml
# from the bundle, driven over stdio as an editor drives it; the node has
# no clangd, so a stand-in language server sits behind the proxy (the
# proxy's actions and commands are its own). The edited buffer is then
# verified against the original as a user would check it.
kernel=$(clang-optiml analyze "$src" --json |
           python3 -c 'import json,sys; print(json.load(sys.stdin)["kernels"][0]["name"])')
step "editor: optimize $kernel through clangd-optiml" 0 \
  python3 "$repo/test/editor/Inputs/lsp_optimize.py" clangd-optiml \
  "$repo/test/editor/Inputs/stub_clangd.py" "$src" "$kernel" editor.cu \
  --optimize-arg=--budget="$budget"
editor_out=$out/step$total.out
if grep -q "faster than the original (verified" "$editor_out"; then
  expect "the editor was offered the verified best as a versioned edit" \
    grep -q "^applyEdit: .*(documentChanges version 1)" "$editor_out"
  expect "the report link names a file beside the journal" \
    grep -q "^report: exists True, beside the journal True" "$editor_out"
  step "eval the edited buffer against the original" 0 \
    clang-optiml eval editor.cu --against "$src"
else
  expect "the editor was told that nothing faster was found" \
    grep -q "nothing verified faster" "$editor_out"
fi
expect "the file on disk is unchanged by the editor's search" \
  grep -q "^file on disk unchanged: True" "$editor_out"

echo "acceptance: $passed of $total passed" | tee -a "$log"
(cd "$home/project" && find . -type f -size -2M \( -name '*.jsonl' -o -name '*.cu' \
   -o -name '*.html' -o -name '*.diff' -o -name '*.json' \) -print0 |
   tar --null -czf "$out/acceptance-files.tar.gz" -T -)
[ "$passed" = "$total" ]

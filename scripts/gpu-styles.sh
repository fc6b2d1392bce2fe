#!/usr/bin/env bash
# On a GPU node: styles programs (test/edit/*-styles.cu), checked the way a
# user meets them. For each program, every `// EDIT: {...}` line is applied
# one after another with `clang-optiml apply`, then one `clang-optiml eval`
# checks every kernel of the result against the program as written, launch
# by launch, with memcheck and racecheck on (the program also checks itself
# against the CPU). Prints one line per program and a closing
# `N passed, M failed`.
#
#   scripts/gpu-styles.sh TOOL OUTDIR STYLES.cu...
#   e.g. scripts/gpu-styles.sh clang-optiml gpu-results/styles test/edit/*-styles.cu
# (bench/gpu-run.py's styles task and scripts/gpu-edit-family.sh run it;
# EVAL_TIMEOUT seconds per eval, default 300.)
set -uo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
tool=$1 out=$2
shift 2
mkdir -p "$out"
passed=0 failed=0
for styles in "$@"; do
  name=$(basename "$styles" .cu)
  work=$(mktemp -d)
  cp "$styles" "$work/$name.cu"
  cp "$styles" "$work/edited.cu"
  problem="" edits=0
  while read -r e; do
    [ -n "$e" ] || continue
    edits=$((edits + 1))
    echo "$e" > "$work/e.json"
    if "$tool" apply "$work/edited.cu" --edit "$work/e.json" -o "$work/next.cu" \
         2> "$work/apply.err"; then
      mv "$work/next.cu" "$work/edited.cu"
    else
      problem="apply failed: $e: $(tail -1 "$work/apply.err")"
      break
    fi
  done < <(sed -n 's|^// EDIT: ||p' "$styles")
  [ "$edits" -gt 0 ] || problem="no EDIT line"
  cp "$work/edited.cu" "$out/$name.edited.cu"
  t0=$(date +%s)
  if [ -z "$problem" ]; then
    timeout "${EVAL_TIMEOUT:-300}" "$tool" eval "$work/edited.cu" \
      --against "$work/$name.cu" > "$out/$name.eval.txt" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] || problem="eval exit $rc"
  fi
  secs=$(( $(date +%s) - t0 ))
  if [ -z "$problem" ]; then
    passed=$((passed + 1))
    echo "PASS $name: $edits edit(s) applied, eval verified in $secs s"
  else
    failed=$((failed + 1))
    echo "FAIL $name: $problem"
  fi
  [ -f "$out/$name.eval.txt" ] &&
    grep -iE "verified|verdict|speedup|sanitizer|mismatch|FAIL|error" \
      "$out/$name.eval.txt" | head -12 | sed 's/^/  /'
  rm -rf "$work"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

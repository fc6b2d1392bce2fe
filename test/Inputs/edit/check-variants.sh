#!/usr/bin/env bash
# Checks the suite's kernels written in other styles (test/edit/variants-*.test,
# one program per split-file part) the way the catalog meets them:
#   - `clang-optiml transforms` lists every `// EDIT: {...}` line's kind and
#     target (the edits that give the suite's own version its result);
#   - the edits, applied one after another with `clang-optiml apply`, pass
#     their checks, and the result compiles with nvcc (when NVCC is given);
#   - a `// NOT-YET: KIND TARGET reason` line names an edit the catalog does
#     not offer yet: it must stay unoffered, so that the day it is offered
#     the line has to become an EDIT line (and the GPU run measures it);
#     `// NOT-YET: {...} reason` names an edit whose kind is offered but
#     whose parameters (the suite's) are refused: applied to the program,
#     it must still be refused;
#   - the program is left as it was.
# Prints one line per program and `variants: N checked, M failed`.
#
#   check-variants.sh NVCC|- DIR/*.cu
set -u
nvcc=$1
shift
checked=0 failed=0
for f in "$@"; do
  name=$(basename "$f" .cu)
  work=$(mktemp -d)
  cp "$f" "$work/orig.cu"
  cp "$f" "$work/edited.cu"
  problem=""
  lines=$(grep -c -E '^// (EDIT|NOT-YET): ' "$f")
  [ "$lines" -gt 0 ] || problem="no EDIT or NOT-YET line"
  if [ -z "$problem" ] && ! clang-optiml transforms "$f" > "$work/why.txt" 2> "$work/err.txt"; then
    problem="transforms failed: $(head -3 "$work/err.txt")"
  fi
  applied=0
  while [ -z "$problem" ] && read -r edit; do
    kind=$(printf '%s' "$edit" | sed -n 's/.*"kind":"\([^"]*\)".*/\1/p')
    target=$(printf '%s' "$edit" | sed -n 's/.*"target":"\([^"]*\)".*/\1/p')
    if ! grep -q -F "  $kind $target: " "$work/why.txt"; then
      problem="$kind $target is not offered"
      break
    fi
    printf '%s\n' "$edit" > "$work/e.json"
    if ! clang-optiml apply "$work/edited.cu" --edit "$work/e.json" \
         -o "$work/next.cu" > "$work/apply.txt" 2>&1; then
      problem="$kind $target: apply failed: $(grep -m2 -i -E 'error|reject' "$work/apply.txt")"
      break
    fi
    mv "$work/next.cu" "$work/edited.cu"
    applied=$((applied + 1))
  done < <(sed -n 's|^// EDIT: ||p' "$f")
  while [ -z "$problem" ] && read -r kind target _; do
    case $kind in
      '{'*)
        printf '%s\n' "$kind" > "$work/e.json"
        if clang-optiml apply "$f" --edit "$work/e.json" -o "$work/try.cu" \
             > /dev/null 2>&1; then
          problem="$kind applies now: make its NOT-YET line an EDIT line"
        fi ;;
      *)
        if grep -q -F "  $kind $target: " "$work/why.txt"; then
          problem="$kind $target is offered now: make its NOT-YET line an EDIT line"
        fi ;;
    esac
  done < <(sed -n 's|^// NOT-YET: ||p' "$f")
  if [ -z "$problem" ] && [ "$nvcc" != - ] &&
     ! "$nvcc" -c -std=c++17 -arch=sm_90 -o "$work/edited.o" "$work/edited.cu" \
       > "$work/nvcc.txt" 2>&1; then
    problem="the edited program does not compile: $(grep -m2 error "$work/nvcc.txt")"
  fi
  if [ -z "$problem" ] && ! cmp -s "$f" "$work/orig.cu"; then
    problem="the program was changed"
  fi
  checked=$((checked + 1))
  if [ -n "$problem" ]; then
    failed=$((failed + 1))
    echo "FAIL $name: $problem"
  else
    echo "ok $name: $applied edit(s) applied"
  fi
  rm -rf "$work"
done
echo "variants: $checked checked, $failed failed"
[ "$failed" -eq 0 ]

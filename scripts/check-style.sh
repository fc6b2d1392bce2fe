#!/usr/bin/env bash
# The tree's house style, as CI checks it (ctest's `style` test):
#   - every C++ source of ours (lib, include, tools, unittests, fuzz) is
#     formatted as .clang-format says (clang-format-22, or $CLANG_FORMAT);
#     `scripts/check-style.sh --fix` formats them in place;
#   - no function is longer than the hard limit of
#     scripts/check-function-length.py, and one over 200 lines says why in a
#     `Why long:` comment above it.
# Exit status: 0 clean, 1 something to fix (each named), 2 no clang-format.
set -uo pipefail
cd "$(dirname "$0")/.."
fmt=${CLANG_FORMAT:-clang-format-22}
if ! command -v "$fmt" >/dev/null; then
  echo "check-style: $fmt not found (apt-get install clang-format-22)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files -- 'lib/*.cpp' 'lib/*.h' 'include/*.h' \
  'tools/*.cpp' 'tools/*.h' 'unittests/*.cpp' 'unittests/*.h' 'fuzz/*.cpp' \
  'fuzz/*.h')
if [ "${1:-}" = --fix ]; then
  "$fmt" -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! "$fmt" --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "check-style: not formatted: $f (scripts/check-style.sh --fix)"
    bad=1
  fi
done
python3 scripts/check-function-length.py --top 0 >/dev/null || {
  python3 scripts/check-function-length.py --top 5
  bad=1
}
echo "check-style: ${#files[@]} files checked"
exit $bad

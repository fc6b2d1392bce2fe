#!/usr/bin/env bash
# clang-tidy with the tree's .clang-tidy on every .cpp of lib/ and tools/
# that the build compiles (its compile_commands.json), as CI checks it
# (ctest's `tidy` test). Any finding fails.
#
#   scripts/check-tidy.sh [BUILD_DIR]     (default: build)
#
# Environment: CLANG_TIDY (default clang-tidy-22), JOBS (default: the
# number of cores). Exit status: 0 clean, 1 findings (printed), 2 no
# clang-tidy or no compile database.
set -uo pipefail
cd "$(dirname "$0")/.."
tidy=${CLANG_TIDY:-clang-tidy-22}
build=${1:-build}
if ! command -v "$tidy" >/dev/null; then
  echo "check-tidy: $tidy not found (apt-get install clang-tidy-22)" >&2
  exit 2
fi
if [ ! -f "$build/compile_commands.json" ]; then
  echo "check-tidy: no $build/compile_commands.json (configure with" \
       "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON)" >&2
  exit 2
fi
mapfile -t files < <(python3 - "$build/compile_commands.json" <<'PY'
import json, os, subprocess, sys
built = {os.path.realpath(e["file"]) for e in json.load(open(sys.argv[1]))}
ours = subprocess.run(["git", "ls-files", "lib/*.cpp", "tools/*.cpp"],
                      capture_output=True, text=True, check=True).stdout.split()
for f in ours:
    if os.path.realpath(f) in built:
        print(f)
PY
)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
printf '%s\n' "${files[@]}" |
  xargs -P "${JOBS:-$(nproc)}" -n 1 "$tidy" -p "$build" --quiet \
    >"$log" 2>&1
status=$?
# Findings are lines `file:line:col: warning|error: ... [check]`.
if grep -qE ': (warning|error): ' "$log"; then
  grep -E -A3 ': (warning|error): ' "$log"
  echo "check-tidy: findings in $(grep -E ': (warning|error): ' "$log" |
    cut -d: -f1 | sort -u | wc -l) files (of ${#files[@]})"
  exit 1
fi
if [ $status -ne 0 ]; then
  cat "$log"
  exit 1
fi
echo "check-tidy: ${#files[@]} files clean"

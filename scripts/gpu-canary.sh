#!/usr/bin/env bash
# On a GPU node: the secrets canary (docs/llm.md, "Keys"), from the
# relocatable bundle (tools/bundle.sh). Run it as a task of the GPU runner,
# which records a run folder:
#
#   python3 bench/gpu-run.py canary [--bundle BUNDLE]
#
# (it runs `OUT=WORK bash scripts/gpu-canary.sh BUNDLE`).
#
# A key (built at run time by test/Inputs/secrets/canary.py, in no file) is
# put in clang-optiml's environment only, under OPENAI_API_KEY,
# ANTHROPIC_API_KEY and MY_LLM_CRED (the api_key_env of the project's
# .clang-optiml.json). Then:
#   1. `clang-optiml eval canary.cu`: the program hunts for the key in every
#      run (reference, self-check, timing, metrics, compute-sanitizer): its
#      environment, /proc/<pid>/environ, cmdline and memory of its ancestors
#      (clang-optiml, the sanitizer), every file of the project directory
#      and the caches; it exits 3 naming what it found.
#   2. `clang-optiml optimize canary.cu --policy llm` against the scripted
#      server (test/Inputs/llm/server.py) echoing the key in every field of
#      its replies (the '#--- llm-echo-key.json' part of
#      test/search/secrets-canary.test): the original and the candidates
#      hunt likewise.
#   3. A search of every file written (journal, kept sources, report,
#      summary, response cache, build cache, outputs) for the key.
# Prints "gpu-canary: PASS" (exit 0) or "gpu-canary: FAIL" with what was
# found (exit 1). Everything goes to $OUT/gpu-canary.tar.gz (OUT defaults to
# ./gpu-canary-results).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=${1:?usage: scripts/gpu-canary.sh BUNDLE.tar.xz}
out=${OUT:-$PWD/gpu-canary-results}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
res=$work/gpu-canary
proj=$res/proj
mkdir -p "$proj/.git" "$res/xdg"
tar -C "$work" -xJf "$bundle" || { echo "gpu-canary.sh: cannot unpack $bundle" >&2; exit 1; }
tool=$(ls -d "$work"/clang-optiml-*/)bin/clang-optiml
export PATH=/usr/local/cuda/bin:$PATH
canary=$root/test/Inputs/secrets/canary.py
cp "$root/test/Inputs/secrets/canary.cu" "$proj/canary.cu"

# The server's script: the test's '#--- llm-echo-key.json' part, taken out
# as split-file does (the lines up to the next '#--- ' line).
awk '/^#--- /{p = ($2 == "llm-echo-key.json"); next} p' \
  "$root/test/search/secrets-canary.test" >"$work/llm-echo-key.json"
timeout 900 python3 "$root/test/Inputs/llm/server.py" --port-file "$work/port" \
  --script "$work/llm-echo-key.json" </dev/null \
  >"$res/server.out" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do test -s "$work/port" && break; sleep 0.1; done
port=$(cat "$work/port" 2>/dev/null) || { echo "gpu-canary.sh: no server" >&2; exit 1; }
printf '{"llm": {"model": "canary-model", "base_url": "http://127.0.0.1:%s/v1", "api_key_env": "MY_LLM_CRED", "cache_dir": "%s"}}\n' \
  "$port" "$res/llm-cache" > "$proj/.clang-optiml.json"

cd "$proj" || exit 1
echo "== eval canary.cu" | tee "$res/eval.txt"
env XDG_CACHE_HOME="$res/xdg" python3 "$canary" exec OPENAI_API_KEY ANTHROPIC_API_KEY MY_LLM_CRED -- \
  "$tool" eval canary.cu --cache-dir "$res/build-cache" --run-arg "$res" >>"$res/eval.txt" 2>&1
eval_rc=$?
echo "eval exit $eval_rc" | tee -a "$res/eval.txt"
echo "== optimize canary.cu --policy llm" | tee "$res/optimize.txt"
env XDG_CACHE_HOME="$res/xdg" python3 "$canary" exec OPENAI_API_KEY ANTHROPIC_API_KEY MY_LLM_CRED -- \
  timeout 600 "$tool" optimize canary.cu --policy llm --budget 3 --time 120s \
  --run-dir "$res/run" --report "$res/report.html" --summary-json "$res/summary.json" \
  --run-arg "$res" -o "$res/canary.opt.cu" >>"$res/optimize.txt" 2>&1
opt_rc=$?
echo "optimize exit $opt_rc" | tee -a "$res/optimize.txt"
cd "$work" || exit 1

fail=0
if grep -h "CANARY FOUND" "$res/eval.txt" "$res/optimize.txt" "$res"/run/journal.jsonl 2>/dev/null; then
  fail=1
fi
python3 "$canary" grep "$res" | tee "$res/grep.txt"
grep -q "^grep: 0 file" "$res/grep.txt" || fail=1
[ "$eval_rc" = 0 ] || { echo "eval did not pass (exit $eval_rc): see eval.txt"; fail=1; }
grep -q "clang-optiml: policy llm" "$res/optimize.txt" || { echo "optimize did not start its LLM policy"; fail=1; }
tail -n 25 "$res/eval.txt" "$res/optimize.txt"
tar -C "$work" -czf "$out/gpu-canary.tar.gz" gpu-canary
if [ "$fail" = 0 ]; then echo "gpu-canary: PASS"; else echo "gpu-canary: FAIL"; fi
exit "$fail"

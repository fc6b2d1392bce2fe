#!/usr/bin/env bash
# On a GPU node: the mixture of thoughts end to end, from the relocatable
# bundle (tools/bundle.sh), against the scripted server standing in for the
# model (test/Inputs/llm/server.py, replies from
# test/Inputs/llm/synth-replies.py), configured as a user would: a
# .clang-optiml.json beside the spec, `clang-optiml synthesize --spec ...`
# typed in the spec's directory.
#
#   python3 bench/gpu-run.py synthesize-llm [--bundle BUNDLE] [--extra FLAGS]
#
# records a run folder (it runs `OUT=WORK [EXTRA=FLAGS] bash
# scripts/gpu-synthesize-llm.sh BUNDLE`; EXTRA: more synthesize flags).
#
# Two runs:
#   reasons  test/synthesize/Inputs/small-transpose.json (48 x 20): six
#            strategies whose programs fail for one reason each (a shell
#            command, a compile error, wrong results, hard-coded answers,
#            a program for one size only) and are repaired once; every
#            verdict is checked against the reason expected.
#   timing   a 8192 x 8192 transpose: two correct strategies (shared tiles,
#            one thread per element) and the template compete on time.
#
# The log goes to $OUT/synthesize-llm.log; the programs written, each run's
# output and the requests the server received are packed into
# $OUT/synthesize-llm.tar.gz (OUT defaults to ./gpu-results).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=${1:?usage: scripts/gpu-synthesize-llm.sh BUNDLE.tar.xz}
top=${OUT:-$PWD/gpu-results}
mkdir -p "$top"
top=$(cd "$top" && pwd)
work=$(mktemp -d)
out=$work/synthesize-llm
mkdir -p "$out"
tar -C "$work" -xJf "$bundle" || { echo "cannot unpack $bundle" >&2; exit 1; }
tool=$(ls -d "$work"/clang-optiml-*/)bin/clang-optiml
export PATH=/usr/local/cuda/bin:$PATH
server=
trap 'test -n "$server" && kill "$server" 2>/dev/null; tar -C "$work" -czf "$top/synthesize-llm.tar.gz" synthesize-llm; rm -rf "$work"' EXIT

# run NAME SPEC REPLIES REQUEST: the server with REPLIES, then synthesize in
# a directory of its own holding the spec and the project's LLM config.
run() {
  local name=$1 spec=$2 replies=$3 request=$4 dir=$work/$1
  mkdir -p "$dir"
  cp "$spec" "$dir/$name.json"
  rm -f "$work/port"
  timeout 900 python3 "$root/test/Inputs/llm/server.py" --port-file "$work/port" \
    --log "$out/$name.server.log" --script "$replies" </dev/null \
    >"$out/$name.server.out" 2>&1 &
  server=$!
  for _ in $(seq 100); do test -s "$work/port" && break; sleep 0.1; done
  cat >"$dir/.clang-optiml.json" <<JSON
{"llm": {"provider": "openai", "model": "scripted",
         "base_url": "http://127.0.0.1:$(cat "$work/port")/v1",
         "no_cache": true, "max_attempts": 1}}
JSON
  echo "== $name: synthesize --spec $name.json \"$request\" ${EXTRA:-}"
  local start=$(date +%s)
  (cd "$dir" && env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY \
     "$tool" synthesize --spec "$name.json" "$request" --thoughts 6 \
     --no-optimize ${EXTRA:-} >"$out/$name.out" 2>"$out/$name.err")
  echo "exit $? after $(( $(date +%s) - start )) s"
  cat "$out/$name.out"
  grep -v '^  pass ' "$out/$name.err"
  cp "$dir/$name.cu" "$out/" 2>/dev/null
  python3 - "$(cat "$work/port")" "$out/$name.requests.json" <<'PY'
import json, sys, urllib.request as u
stats = json.load(u.urlopen(u.Request("http://127.0.0.1:%s/_control/stats" % sys.argv[1],
                                      data=b"{}"), timeout=10))
json.dump(stats["requests"], open(sys.argv[2], "w"), indent=1)
print("== scripted server: %d request(s), %d malformed" % (stats["count"], stats["invalid"]))
PY
  kill "$server" 2>/dev/null
  server=
}

{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$tool" --version
  python3 "$root/test/Inputs/llm/synth-replies.py" >"$work/reasons.json"
  run reasons "$root/test/synthesize/Inputs/small-transpose.json" \
    "$work/reasons.json" "transpose a 48 x 20 float matrix"
  echo "== reasons: each verdict against the reason expected"
  python3 - "$out/reasons.err" <<'PY'
import re, sys
err = open(sys.argv[1]).read()
want = [
    ("template transpose", "verified"),
    ("llm 'shared tiles'", "verified"),
    ("llm 'thread per element'", "refused by the checks: .*host code uses 'system'"),
    ("llm 'thread per element' (repaired)", "verified"),
    ("llm 'typo'", "does not compile: .*flaot"),
    ("llm 'typo' (repaired)", "does not compile: .*flaot"),
    ("llm 'copy'", "wrong at spec sizes, seed 1"),
    ("llm 'copy' (repaired)", "verified"),
    ("llm 'known answers'", "right at the first seed, wrong at spec sizes, seed 2"),
    ("llm 'known answers' (repaired)", "verified"),
    ("llm 'fixed shape'", "right at the spec's sizes, wrong at edge"),
    ("llm 'fixed shape' (repaired)", "verified"),
]
lines = {}
for l in err.splitlines():
    m = re.match(r"\s+\[\d+\] (.*?): (.*)$", l)
    if m:
        lines[m.group(1)] = m.group(2)
bad = 0
for who, pattern in want:
    got = lines.get(who, "(missing)")
    ok = re.match(pattern, got) is not None
    bad += not ok
    print("%s  %s: %s" % ("ok  " if ok else "FAIL", who, got))
kept = [w for w, g in lines.items() if g.endswith("<- kept")]
print("kept:", kept, "(the fastest verified)")
print("reasons: %d of %d as expected" % (len(want) - bad, len(want)))
PY
  python3 "$root/test/Inputs/llm/synth-replies.py" --timing >"$work/timing.json"
  cat >"$work/timing-spec.json" <<'JSON'
{
  "class": "transpose",
  "inputs": [{"name": "a", "type": "float", "shape": ["rows", "cols"]}],
  "outputs": [{"name": "b", "type": "float", "shape": ["cols", "rows"]}],
  "sizes": {"rows": 8192, "cols": 8192},
  "tolerance": 0,
  "reference": "void reference(const float *a, float *b, int rows, int cols) {\n  for (int r = 0; r < rows; ++r)\n    for (int c = 0; c < cols; ++c)\n      b[(size_t)c * rows + r] = a[(size_t)r * cols + c];\n}\n"
}
JSON
  run timing "$work/timing-spec.json" "$work/timing.json" \
    "transpose an 8192 x 8192 float matrix"
} 2>&1 | tee "$top/synthesize-llm.log"

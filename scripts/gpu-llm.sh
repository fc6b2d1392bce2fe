#!/usr/bin/env bash
# On a GPU node: run `clang-optiml optimize --policy llm` from the relocatable
# bundle (tools/bundle.sh) against a scripted server standing in for the model
# (test/Inputs/llm/server.py on loopback, replies from
# test/Inputs/llm/saxpy-replies.json), then summarize the journal: which LLM
# proposals were applied, rejected (and why), evaluated and verified.
#
#   scripts/gpu-llm.sh dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
#
# Everything (journal, report, optimizer output, server log and the requests
# the server received) is packed into $OUT/gpu-llm.tar.gz (OUT defaults to
# ./gpu-llm-results).
#
# Environment: DRY_RUN=1 adds --dry-run (a machine without a GPU: the model is
# asked once and its proposals are applied and checked, nothing is run),
# BUDGET (evaluations, default 6), TIME (default 150s), SRC (default
# examples/saxpy.cu), REPLIES (the server's script), EXTRA (more optimize
# flags), LIMIT (seconds after which optimize is stopped, default 270: the
# search, then the final re-measurement and sanitizer runs, which took about
# two minutes for saxpy on the H200; the journal survives a stop).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=${1:?usage: scripts/gpu-llm.sh BUNDLE.tar.xz}
src=${SRC:-$root/examples/saxpy.cu}
replies=${REPLIES:-$root/test/Inputs/llm/saxpy-replies.json}
out=${OUT:-$PWD/gpu-llm-results}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
res=$work/gpu-llm
mkdir -p "$res"
tar -C "$work" -xJf "$bundle" || { echo "gpu-llm.sh: cannot unpack $bundle" >&2; exit 1; }
tool=$(ls -d "$work"/clang-optiml-*/)bin/clang-optiml
export PATH=/usr/local/cuda/bin:$PATH

# The scripted server; it exits on its own should this script be killed.
timeout 600 python3 "$root/test/Inputs/llm/server.py" --port-file "$work/port" \
  --log "$res/server.log" --script "$replies" </dev/null >"$res/server.out" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do test -s "$work/port" && break; sleep 0.1; done
if ! test -s "$work/port"; then
  echo "gpu-llm.sh: the scripted server did not start:" >&2
  cat "$res/server.out" >&2
  exit 1
fi
port=$(cat "$work/port")

mode=()
if [ -n "${DRY_RUN:-}" ]; then mode=(--dry-run); fi
{
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  else
    echo "no nvidia-smi"
  fi
  "$tool" --version
  echo "== ldd $tool"
  env -u LD_LIBRARY_PATH ldd "$tool"
  echo "== optimize $src --policy llm ${mode[*]} (scripted server on 127.0.0.1:$port)"
  start=$(date +%s)
  # A base URL on loopback needs no key; keys of the environment are not
  # wanted here, and optimize would drop them from its children anyway.
  timeout "${LIMIT:-270}" env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY \
    OPENAI_BASE_URL="http://127.0.0.1:$port/v1" \
    "$tool" optimize "$src" --policy llm --llm-provider openai \
    --llm-model scripted-saxpy --llm-proposals 4 --no-llm-cache \
    --budget "${BUDGET:-6}" --time "${TIME:-150s}" \
    --run-dir "$res/run" --report "$res/report.html" \
    -o "$res/$(basename "$src" .cu).optimized.cu" "${mode[@]}" ${EXTRA:-}
  rc=$?
  if [ "$rc" = 124 ]; then echo "stopped after ${LIMIT:-270} s (LIMIT)"; fi
  echo "exit $rc after $(( $(date +%s) - start )) s"
} >"$res/optimize.log" 2>&1
cat "$res/optimize.log"

# What the model was sent: every request body the server received.
python3 - "$port" "$res/server-requests.json" <<'EOF'
import json, sys, urllib.request as u
req = u.Request("http://127.0.0.1:%s/_control/stats" % sys.argv[1], data=b"{}",
                headers={"Content-Type": "application/json"})
stats = json.load(u.urlopen(req, timeout=10))
for r in stats["requests"]:
    r["headers"].pop("authorization", None)
    r["headers"].pop("x-api-key", None)
with open(sys.argv[2], "w") as f:
    json.dump(stats, f, indent=1)
print("== scripted server: %d request(s), %d malformed" % (stats["count"], stats["invalid"]))
EOF
kill "$server" 2>/dev/null
cat "$res/server.log" 2>/dev/null

echo "== journal summary"
python3 - "$res/run/journal.jsonl" <<'EOF' | tee "$res/summary.txt"
import collections, json, os, sys
path = sys.argv[1]
if not os.path.exists(path):
    print("no journal (a dry run writes none): %s" % path)
    sys.exit(0)
nodes, final = [], None
for line in open(path):
    try:
        j = json.loads(line)
    except ValueError:
        continue
    if j.get("type") == "node":
        nodes.append(j)
    elif j.get("type") == "final":
        final = j

def describe(n):
    e = n.get("edit") or {}
    return "%s @ %s %s" % (e.get("kind"), e.get("target"),
                           json.dumps(e.get("params", {}), sort_keys=True))

def reason(n):
    if n.get("reject_reason"):
        return n["reject_reason"]
    if n.get("checks"):
        return "; ".join("%s: %s" % (c["check"], c["message"]) for c in n["checks"])
    return n.get("outcome", {}).get("failure", "")

llm = [n for n in nodes if n.get("origin") == "llm"]
count = collections.Counter(n["status"] for n in llm)
evaluated = [n for n in llm if n.get("evaluation", 0) > 0]
verified = [n for n in llm if n.get("outcome", {}).get("verified")]
print("LLM proposals: %d in the journal" % len(llm))
print("  rejected before evaluation (with reasons): %d" % count["rejected"])
print("  applied and evaluated: %d (verified %d, failed %d)" %
      (len(evaluated), len(verified), count["failed"]))
print("  duplicates: %d" % count["duplicate"])
other = collections.Counter(n.get("origin") for n in nodes if n.get("origin") != "llm")
print("other nodes: %s" % dict(other))
for n in llm:
    o = n.get("outcome", {})
    line = "  node %s (parent %s) %-9s %s" % (n["id"], n["parent"], n["status"], describe(n))
    if n["status"] in ("evaluated", "failed"):
        t = o.get("time", {})
        line += "  compiled=%s verified=%s" % (o.get("compiled"), o.get("verified"))
        if t.get("available"):
            line += " %.4f ms" % t["median_ms"]
        if n.get("reward"):
            line += " speedup=%.3f" % n["reward"].get("raw_speedup", 0)
    print(line)
    if n.get("rationale"):
        print("      why: %s" % n["rationale"])
    r = reason(n)
    if r and n["status"] != "evaluated":
        print("      reason: %s" % r.replace("\n", " ")[:400])
if final:
    print("final: %s" % json.dumps({k: final.get(k) for k in
          ("evaluations", "best", "best_speedup", "improved", "final_speedup",
           "conclusion", "stop_reason", "sanitizer_clean")}))
EOF

(cd "$work" && find gpu-llm -type f -size -8M -print0 |
   tar --null -czf "$out/gpu-llm.tar.gz" -T -)
ls -la "$out"

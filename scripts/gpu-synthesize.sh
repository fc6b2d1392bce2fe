#!/usr/bin/env bash
# On a GPU node: `clang-optiml synthesize` with the bundle on every spec of
# examples/synthesize (or the specs given): each program is written from its
# class's template, verified at the spec's sizes with three seeds and at edge
# sizes, then optimized (BUDGET evaluations, default 8; OPTIMIZE=0 stops at
# the verified program).
#
#   scripts/gpu-synthesize.sh dist/clang-optiml-*.tar.xz [SPEC...]
#
# A SPEC of the form SET.json:NAME is the spec NAME of a set of specs (one
# JSON object keyed by name, as bench/synthesize/specs.json): it is written
# to the work directory under the path it would have as a file beside the
# set (bench/synthesize/NAME.json) and synthesized from there, so that the
# program names its spec as it would name that file.
#
# Results (the programs, each run's --json result, optimize's reports and
# the log, appended to by each run) go under $OUT/synthesize (or
# ./gpu-results/synthesize). EXTRA:
# more synthesize flags (--seeds 1 for specs whose host reference is slow).
set -uo pipefail
bundle=$1
shift
out=${OUT:-$PWD/gpu-results}/synthesize
mkdir -p "$out"
work=$(mktemp -d)
tar -C "$work" -xJf "$bundle"
tool=$(ls -d "$work"/clang-optiml-*)/bin/clang-optiml
export PATH=/usr/local/cuda/bin:$PATH
specs=("$@")
if [ ${#specs[@]} -eq 0 ]; then
  specs=(examples/synthesize/*.json examples/synthesize/*.yaml)
fi
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$tool" --version
  for spec in "${specs[@]}"; do
    dir=. o=$out
    case "$spec" in
      *.json:*)
        name=${spec##*:}
        rel=$(dirname "${spec%:*}")/$name.json
        case "$rel" in /*|*..*) rel=$name.json ;; esac
        mkdir -p "$work/$(dirname "$rel")"
        python3 -c 'import json, sys
spec = json.load(open(sys.argv[1]))[sys.argv[2]]
open(sys.argv[3], "w").write(json.dumps(spec, indent=2) + "\n")' \
          "${spec%:*}" "$name" "$work/$rel" || continue
        spec=$rel dir=$work
        case "$o" in /*) ;; *) o=$PWD/$o ;; esac ;;
      *) name=$(basename "${spec%.*}") ;;
    esac
    echo "== $name: synthesize --spec $spec"
    opt=(--optimize-arg=--budget="${BUDGET:-8}" --run-dir "$work/runs/$name"
         --report "$o/$name.report.html")
    [ "${OPTIMIZE:-1}" = 0 ] && opt=(--no-optimize)
    start=$(date +%s)
    (cd "$dir" && "$tool" synthesize --spec "$spec" -o "$o/$name.cu" --json \
      "${opt[@]}" ${EXTRA:-}) > "$out/$name.json"
    echo "exit $? after $(( $(date +%s) - start )) s"
    python3 - "$out/$name.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("no JSON result:", e); sys.exit()
for c in r.get("candidates", []):
    t = c.get("time_ms")
    print("candidate %s%s: %s%s%s" % (
        c["origin"], " " + c["strategy"] if c["origin"] != "template" else
        (" (" + c["thought"] + ")" if c.get("thought") else ""),
        c["status"], ", %.4f ms" % t if t is not None else "",
        "  <- kept" if c.get("kept") else ""))
print("verified:", r.get("verified"), "runs:",
      ", ".join("%s %s" % (x["label"], "pass" if x["passed"] else "FAIL")
                for x in r.get("runs", [])))
for x in r.get("runs", []):
    if not x["passed"]:
        print(x["verdict"]); print(x.get("output", ""))
o = r.get("optimize")
if o:
    s = o.get("summary") or {}
    print("optimize: exit", o.get("exit_status"), "final speedup",
          s.get("final_speedup"), "original ms", s.get("original_ms"),
          "best path", s.get("best_path"))
PY
  done
} 2>&1 | tee -a "$out/synthesize.log"
ls -la "$out"

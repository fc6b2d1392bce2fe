#!/usr/bin/env python3
"""Stands in for clang-optiml in the compare.py test: `optimize` logs its
command line to $FAKE_LOG, writes a journal, a snapshot under the run's eval/
directory (which must not be packed) and, unless $FAKE_DIE_ON names
"<program>-<strategy>" and this is no --resume, best.cu and the summary."""
import json, os, sys

if sys.argv[1:2] == ["--version"]:
    print("fake clang-optiml 0.1")
    sys.exit(0)
args = sys.argv[2:]
src = args[0]
opt = {}
i = 1
while i < len(args):
    if args[i] == "--resume":
        opt["resume"] = True
        i += 1
    else:
        opt.setdefault(args[i], []).append(args[i + 1])
        i += 2
program = os.path.basename(os.path.dirname(src))
strategy, seed = opt["--strategy"][0], int(opt["--seed"][0])
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write("%s %s %d%s cache=%s gpu=%s\n" % (program, strategy, seed,
            " resume" if opt.get("resume") else "",
            os.path.basename(opt["--eval-cache"][0]),
            os.environ.get("CUDA_VISIBLE_DEVICES", "any")))
run = opt["--run-dir"][0]
os.makedirs(os.path.join(run, "eval", "original", "snapshots"), exist_ok=True)
with open(os.path.join(run, "eval", "original", "snapshots", "big.json"), "w") as f:
    f.write("{}")
with open(os.path.join(run, "journal.jsonl"), "a") as f:
    f.write('{"type": "run"}\n')
if os.environ.get("FAKE_DIE_ON") == "%s-%s" % (program, strategy) and not opt.get("resume"):
    sys.exit(1)
speed = {"mcts": 2.0, "greedy": 1.5, "random": 1.0}[strategy] + 0.1 * seed
improved = strategy != "random"
if improved:
    with open(os.path.join(run, "best.cu"), "w") as f:
        f.write("// best of %s %s %d\n" % (program, strategy, seed))
summary = {"strategy": strategy, "seed": seed, "budget": int(opt["--budget"][0]),
           "evaluations": 3, "evaluations_cached": 1 if strategy == "greedy" else 0,
           "improved": improved, "final_speedup": speed if improved else 1.0,
           "best_evaluation": seed + 1 if improved else 0, "seconds": 10.0 * seed,
           "best_path": ["vectorize"],
           # A later seed's final check served by the evaluation cache.
           "final": {"cached": strategy == "greedy" and seed == 2},
           "curve": [[seed + 1, speed]] if improved else []}
with open(opt["--summary-json"][0], "w") as f:
    json.dump(summary, f)

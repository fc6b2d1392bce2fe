#!/usr/bin/env python3
"""Kill an optimize run with SIGKILL in the middle and resume it, on a GPU
node: nothing evaluated before the kill is evaluated again, and the resumed
run ends with exactly the budget.

    python3 bench/search/resume_demo.py --bundle dist/clang-optiml-0.1.0-linux-x86_64.tar.xz \\
        [--program examples/saxpy.cu] [--budget 6] [--kill-after 2] [--out DIR]

1. `optimize PROGRAM --budget B --run-dir D` runs in its own process group;
   once its journal holds --kill-after evaluated nodes, the whole group gets
   SIGKILL (no chance to flush or clean up).
2. `optimize PROGRAM --budget B --run-dir D --resume` continues it.
3. Checks: the journal lines written before the kill are unchanged (a torn
   last line excepted); evaluation numbers run 1..B with none repeated; no
   program (source key) is evaluated twice; the resumed run reports
   B - (evaluations before the kill) evaluations of its own.
Writes resume_demo.json and the two logs under --out; exits 1 if a check
fails.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import unpack_bundle  # noqa: E402


def journal_nodes(run_dir):
    """(complete lines, evaluated nodes) of the journal."""
    path = os.path.join(run_dir, "journal.jsonl")
    if not os.path.exists(path):
        return [], []
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    complete = lines[:-1]  # the last piece is torn or empty
    nodes = []
    for l in complete:
        try:
            d = json.loads(l)
        except ValueError:
            continue
        if d.get("type") == "node" and d.get("evaluation", 0) > 0:
            nodes.append(d)
    return complete, nodes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--bundle")
    src.add_argument("--tool")
    ap.add_argument("--program", default="examples/saxpy.cu")
    ap.add_argument("--budget", type=int, default=6)
    ap.add_argument("--kill-after", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--out", default=os.environ.get("OUT", "resume-demo"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    tool = a.tool or unpack_bundle(a.bundle)
    run_dir = os.path.join(tempfile.mkdtemp(prefix="optiml-resume-run-"), "run")
    base = [tool, "optimize", a.program, "--budget", str(a.budget),
            "--run-dir", run_dir, "--verify-first", "1", "--no-sanitize",
            "--final-rounds", "1"]
    began = time.time()
    with open(os.path.join(a.out, "first.log"), "w") as log:
        p = subprocess.Popen(base, stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)
        killed_at = None
        while p.poll() is None and time.time() - began < a.timeout:
            _, nodes = journal_nodes(run_dir)
            if len(nodes) >= a.kill_after:
                os.killpg(p.pid, signal.SIGKILL)
                killed_at = time.time() - began
                break
            time.sleep(0.2)
        if p.poll() is None and killed_at is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    before_lines, before = journal_nodes(run_dir)
    summary = os.path.join(a.out, "resumed-summary.json")
    with open(os.path.join(a.out, "resumed.log"), "w") as log:
        rc = subprocess.call(base + ["--resume", "--summary-json", summary],
                             stdout=log, stderr=subprocess.STDOUT,
                             timeout=a.timeout)
    after_lines, after = journal_nodes(run_dir)
    evals = [n["evaluation"] for n in after]
    keys = [n["key"] for n in after if not n.get("outcome", {}).get("cached")]
    s = {}
    if os.path.exists(summary):
        with open(summary) as f:
            s = json.load(f)
    checks = {
        "killed with SIGKILL after evaluations": killed_at is not None and len(before) >= 1,
        # 0: a faster variant found, 3: none (both a finished search).
        "resumed run finished (exit 0 or 3)": rc in (0, 3),
        "journal before the kill kept": after_lines[:len(before_lines)] == before_lines,
        "evaluations numbered 1..budget once each": sorted(evals) == list(range(1, a.budget + 1)),
        "no program evaluated twice": len(keys) == len(set(keys)),
        "resumed run evaluated only the rest":
            s.get("evaluations_this_run") == a.budget - len(before),
    }
    result = {"program": a.program, "budget": a.budget,
              "killed_after_s": killed_at, "evaluated_before_kill": len(before),
              "evaluated_after_resume": len(after),
              "evaluations_this_run": s.get("evaluations_this_run"),
              "resumed_exit": rc, "checks": checks,
              "passed": all(checks.values())}
    with open(os.path.join(a.out, "resume_demo.json"), "w") as f:
        json.dump(result, f, indent=1)
    for k, v in checks.items():
        print("%s: %s" % ("PASS" if v else "FAIL", k))
    print("killed after %s s with %d evaluation(s) journaled; resumed run: %s of its own"
          % (None if killed_at is None else round(killed_at, 1), len(before),
             s.get("evaluations_this_run")))
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Compare search strategies, and fill the suite's optimized column.

Runs `clang-optiml optimize` on suite programs (bench/kernels/<name>/naive.cu)
for each (program, strategy, seed) not yet done, on a GPU node, from the
repository root. Resumable across device calls:

- all state lives in the results directory (e.g. gpu-state/strategies, kept
  on the machine or carried between calls; not committed: a recorded run
  keeps `summarize`'s table and --json, and its journals, as bench/README.md
  describes, and bench/gpu-run.py does that);
- a run is done when its summary.json exists; a run killed midway left its
  journal (journal.jsonl + sources/), and the next call continues it with
  `optimize --resume` without re-evaluating anything;
- an evaluation cache (<results>/eval-cache, small JSON files) is shared by
  every run, so strategies and seeds on one program reuse each other's
  measurements (budgets count cached evaluations all the same);
- each run's snapshots (<run>/eval) are removed when it ends;
- no run starts after --deadline seconds, a run still going at --stop-at
  seconds is stopped (its journal stays), and after every run the journals,
  summaries, logs and best sources (never snapshots) are packed into one
  tar under $OUT.

    python3 bench/search/compare.py run --bundle dist/clang-optiml-0.1.0-linux-x86_64.tar.xz \\
        --results gpu-state/strategies --programs axpy,transpose,gemv,softmax \\
        --strategies mcts,greedy,random --seeds 1 --budget 30 --deadline 420
    python3 bench/search/compare.py summarize gpu-state/strategies [--checkpoints 5,10,20,30] [--json]
    python3 bench/search/compare.py summarize bench/results/2026-11-30-strategies/summary.json
    python3 bench/search/compare.py export-optimized gpu-state/column \\
        --strategy mcts --seed 1 --out gpu-state/column/optimized

The optimized column: `run --programs all --strategies mcts --seeds 1`, then
`export-optimized`, then `bench/run.py --optimized-dir <that dir>`.

The variants (the suite's kernels written in other styles, the split-file
parts of test/edit/variants-*.test): `variants DIR` writes a kernels folder
with each kernel's suite version and its variants, `run --kernels-dir DIR
--strategies mcts --seeds 1` searches each at optimize's defaults, and
`variants-table RESULTS` puts each variant's best beside its suite
version's (bench/gpu-run.py variants does the three).
"""

import argparse
import glob
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNELS_DIR = os.path.join(REPO, "bench", "kernels")
# Files that travel back: small text results, never snapshots or binaries.
PACK_SUFFIXES = (".json", ".jsonl", ".cu", ".diff", ".log", ".txt", ".md")
PACK_MAX_BYTES = 2 << 20


# ---------------------------------------------------------------------------
# Pure parts (tested by test/search/compare-driver.test)
# ---------------------------------------------------------------------------

def suite_programs(kernels_dir=KERNELS_DIR):
    """Every suite program that has a naive.cu, sorted."""
    return sorted(n for n in os.listdir(kernels_dir)
                  if os.path.isfile(os.path.join(kernels_dir, n, "naive.cu")))


def parse_programs(spec, kernels_dir=KERNELS_DIR):
    """'all' or a comma-separated list of suite program names."""
    known = suite_programs(kernels_dir)
    if spec == "all":
        return known
    names = [p.strip() for p in spec.split(",") if p.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit("unknown program(s) %s; the suite has: %s"
                         % (", ".join(unknown), ", ".join(known)))
    return names


def run_args(name, kernels_dir=KERNELS_DIR):
    """The program's own arguments: bench/run.py runs the suite programs
    without any; a program's entry in suite.json may list them under
    "run_args"."""
    with open(os.path.join(kernels_dir, "suite.json")) as f:
        meta = json.load(f).get(name, {})
    args = meta.get("run_args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise SystemExit("suite.json: %s: run_args must be a list of strings" % name)
    return args


def run_id(strategy, seed):
    return "%s-s%s" % (strategy, seed)


def run_dir(results, program, strategy, seed):
    return os.path.join(results, "runs", program, run_id(strategy, seed))


def plan(results, programs, strategies, seeds):
    """(program, strategy, seed, state) for every run; state is 'done'
    (summary.json exists), 'resume' (a journal exists) or 'new'. Programs
    outer, then seeds, then strategies: strategies of one program run
    together, so the evaluation cache serves the later ones."""
    out = []
    for p in programs:
        for seed in seeds:
            for s in strategies:
                d = run_dir(results, p, s, seed)
                if os.path.exists(os.path.join(d, "summary.json")):
                    state = "done"
                elif os.path.exists(os.path.join(d, "run", "journal.jsonl")):
                    state = "resume"
                else:
                    state = "new"
                out.append((p, s, seed, state))
    return out


def supersede(results, programs, strategies, seeds, stamp):
    """Moves the runs of these programs (for these strategies and seeds) to
    <results>/superseded/<stamp>/<program>/<run>, so they run again from
    scratch (after a change to the tool) while the old journals stay.
    Returns the moved run directories, relative to results."""
    moved = []
    for p in programs:
        for seed in seeds:
            for s in strategies:
                d = run_dir(results, p, s, seed)
                if not os.path.isdir(d):
                    continue
                dest = os.path.join(results, "superseded", stamp, p, run_id(s, seed))
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                shutil.move(d, dest)
                moved.append(os.path.relpath(d, results))
    return moved


def optimize_command(tool, program, strategy, seed, budget, results, time_limit,
                     resume, args, kernels_dir=KERNELS_DIR, extra=()):
    d = run_dir(results, program, strategy, seed)
    cmd = [tool, "optimize", os.path.join(kernels_dir, program, "naive.cu"),
           "--budget", str(budget), "--strategy", strategy, "--seed", str(seed),
           "--run-dir", os.path.join(d, "run"),
           "--summary-json", os.path.join(d, "summary.json"),
           "--eval-cache", os.path.join(results, "eval-cache")]
    if time_limit:
        cmd += ["--time", time_limit]
    if resume:
        cmd.append("--resume")
    for a in args:
        cmd += ["--run-arg", a]
    cmd += list(extra)
    return cmd


def recorded_runs(path):
    """The runs of a recorded result (bench/README.md's layout): a
    summary.json written by `summarize --json`, or the folder holding it.
    None when path is a results directory with runs/ of its own."""
    f = path
    if os.path.isdir(path):
        if os.path.isdir(os.path.join(path, "runs")):
            return None
        f = os.path.join(path, "summary.json")
    if not os.path.isfile(f):
        return None
    with open(f) as fh:
        data = json.load(fh)
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        raise SystemExit("%s: not a summary written by `compare.py summarize --json`" % f)
    return data["runs"]


def load_summaries(results):
    """{program: {strategy: [summary, ...]}} from runs/*/*/summary.json, or
    from a recorded summary.json (recorded_runs)."""
    out = {}
    recorded = recorded_runs(results)
    if recorded is not None:
        for r in recorded:
            s = dict(r["summary"])
            s["_seed_dir"] = r["run"]
            out.setdefault(r["program"], {}).setdefault(s["strategy"], []).append(s)
        return out
    runs = os.path.join(results, "runs")
    if not os.path.isdir(runs):
        return out
    for p in sorted(os.listdir(runs)):
        for r in sorted(os.listdir(os.path.join(runs, p))):
            f = os.path.join(runs, p, r, "summary.json")
            if not os.path.exists(f):
                continue
            with open(f) as fh:
                s = json.load(fh)
            s["_seed_dir"] = r
            out.setdefault(p, {}).setdefault(s["strategy"], []).append(s)
    return out


def speedup(s):
    """The verified speedup a run ends with (1.0 when nothing beat the
    original after the final check)."""
    return float(s.get("final_speedup", 1.0)) if s.get("improved") else 1.0


def fmt_x(v):
    return "%.2fx" % v


def best_after(curve, k):
    """The best speedup the search had measured after k evaluations, from a
    summary's curve ([[evaluation, best so far], ...], one point per
    improvement); 1.0 before the first."""
    best = 1.0
    for ev, sp in curve:
        if ev <= k:
            best = max(best, float(sp))
    return best


def anytime_table(data, order, checkpoints):
    """Median (over seeds) best-so-far speedup after k evaluations, per
    program and strategy: how fast each strategy gets there, not only where
    it ends. Search measurements (before the final check)."""
    lines = ["| program | strategy | " + " | ".join("after %d" % k for k in checkpoints) + " |",
             "|---|---|" + "---|" * len(checkpoints)]
    for p in sorted(data):
        for st in order:
            runs = [r for r in data[p].get(st, []) if "curve" in r]
            if not runs:
                continue
            cells = []
            for k in checkpoints:
                if any(int(r.get("budget", 0)) < k for r in runs):
                    cells.append("—")
                    continue
                cells.append(fmt_x(statistics.median(best_after(r["curve"], k) for r in runs)))
            lines.append("| %s | %s | %s |" % (p, st, " | ".join(cells)))
    return lines


def read_settings(results):
    """results/settings.json (what the last `run` on results was asked), or
    {} when there is none or it cannot be read."""
    try:
        with open(os.path.join(results, "settings.json")) as f:
            s = json.load(f)
        return s if isinstance(s, dict) else {}
    except (OSError, ValueError):
        return {}


def summarize(results, strategies=None, checkpoints=(5, 10, 20, 30)):
    """A markdown table: per program and strategy, the verified speedup over
    seeds (median, min-max), evaluations to reach it, cache use."""
    data = load_summaries(results)
    if not data:
        return "no finished runs in %s\n" % results
    order = strategies or sorted({s for per in data.values() for s in per})
    lines = ["| program | strategy | seeds | verified speedup, median (min-max) "
             "| evaluations to reach it, median (min-max) | evaluations (cached) "
             "| final checks cached | wall s, median |",
             "|---|---|---|---|---|---|---|---|"]
    wins = {}
    medians = {}  # program -> strategy -> (runs, median verified speedup)
    for p in sorted(data):
        best_here = None
        for st in order:
            runs = data[p].get(st)
            if not runs:
                continue
            sp = [speedup(r) for r in runs]
            ev = [int(r.get("best_evaluation", 0)) for r in runs if r.get("improved")]
            tot = sum(int(r.get("evaluations", 0)) for r in runs)
            cached = sum(int(r.get("evaluations_cached", 0)) for r in runs)
            # A final check served by the evaluation cache repeats an
            # earlier run's measurement: not an independent one.
            finals = [r for r in runs if isinstance(r.get("final"), dict)]
            finals_cached = sum(1 for r in finals if r["final"].get("cached"))
            wall = statistics.median(float(r.get("seconds", 0)) for r in runs)
            med = statistics.median(sp)
            medians.setdefault(p, {})[st] = (len(runs), med)
            ev_cell = ("%g (%d-%d)" % (statistics.median(ev), min(ev), max(ev))
                       if ev else "—")
            lines.append("| %s | %s | %d | %s (%s-%s) | %s | %d (%d) | %s | %.0f |"
                         % (p, st, len(runs), fmt_x(med), fmt_x(min(sp)),
                            fmt_x(max(sp)), ev_cell, tot, cached,
                            "%d of %d" % (finals_cached, len(finals))
                            if finals else "—", wall))
            if best_here is None or med > best_here[1] + 1e-9:
                best_here = (st, med)
            elif abs(med - best_here[1]) <= 1e-9:
                best_here = (best_here[0] + "=" + st, med)
        if best_here:
            wins[p] = best_here
    lines.append("")
    lines.append("Best median per program: " + ", ".join(
        "%s %s (%s)" % (p, w[0], fmt_x(w[1])) for p, w in sorted(wins.items())))
    # Across programs, only those where every strategy has as many runs as
    # the most any has there (a strategy still running would drag its mean).
    complete = [p for p, per in sorted(medians.items())
                if all(st in per for st in order)
                and len({per[st][0] for st in order}) == 1]
    if len(complete) > 1:
        lines.append("Geomean of the per-program medians over the %d programs "
                     "every strategy has finished (%s): %s" % (
                         len(complete), ", ".join(complete), ", ".join(
                             "%s %s" % (st, fmt_x(math.exp(statistics.mean(
                                 math.log(medians[p][st][1]) for p in complete))))
                             for st in order)))
    anytime = anytime_table(data, order, checkpoints)
    if len(anytime) > 2:
        lines.append("")
        lines.append("Best speedup measured by the search after k evaluations "
                     "(median over seeds; before the final check):")
        lines.append("")
        lines.extend(anytime)
    if read_settings(results).get("shared_gpu"):
        lines.append("")
        lines.append("Runs shared a GPU (more at once than GPUs): the searches' own "
                     "timings, the speedups above included, were disturbed by each "
                     "other; compare times measured alone (bench/run.py, "
                     "compare.py variants-time).")
    return "\n".join(lines) + "\n"


def pack_members(results):
    """Relative paths under results that travel: text results only, no
    snapshots (the run's eval/ directory), nothing over 2 MiB."""
    out = []
    for root, dirs, files in os.walk(results):
        rel_root = os.path.relpath(root, results)
        parts = [] if rel_root == "." else rel_root.split(os.sep)
        # runs/<p>/<r>/run/eval holds snapshots and probe results.
        if len(parts) >= 5 and parts[0] == "runs" and parts[3] == "run" and parts[4] == "eval":
            dirs[:] = []
            continue
        dirs.sort()
        for f in sorted(files):
            path = os.path.join(root, f)
            if not f.endswith(PACK_SUFFIXES) and f != "best.cu":
                continue
            if os.path.getsize(path) > PACK_MAX_BYTES:
                continue
            out.append(os.path.relpath(path, results))
    return out


def pack(results, out_dir, name):
    """Packs results into <out_dir>/search-results.tar.gz. Another process
    may be rewriting a file meanwhile (two lanes on one results directory):
    then this archive is skipped, the previous one stays, and the next
    pack (after the next run, or at the end) catches up."""
    os.makedirs(out_dir, exist_ok=True)
    target = os.path.join(out_dir, "search-results.tar.gz")
    tmp = target + ".tmp"
    try:
        with tarfile.open(tmp, "w:gz") as t:
            for m in pack_members(results):
                t.add(os.path.join(results, m), arcname=os.path.join(name, m))
        os.replace(tmp, target)
    except (OSError, tarfile.TarError) as e:
        sys.stderr.write("packing %s skipped: %s\n" % (results, e))
        if os.path.exists(tmp):
            os.remove(tmp)
    return target


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------

def unpack_bundle(bundle):
    work = tempfile.mkdtemp(prefix="optiml-compare-")
    with tarfile.open(bundle) as t:
        t.extractall(work)
    for d in sorted(os.listdir(work)):
        tool = os.path.join(work, d, "bin", "clang-optiml")
        if os.path.exists(tool):
            return tool
    raise SystemExit("%s: no clang-optiml-*/bin/clang-optiml inside" % bundle)


LOCK = threading.Lock()


def log(results, line):
    stamp = time.strftime("%H:%M:%S")
    with LOCK:
        print("[%s] %s" % (stamp, line), flush=True)
        with open(os.path.join(results, "driver.log"), "a") as f:
            f.write("[%s] %s\n" % (stamp, line))


def lanes(todo, gpus):
    """Splits the runs to do over gpus workers, whole programs at a time
    (round robin in plan order), so the runs of one program stay on one
    worker, one after another, and the later ones find the earlier ones'
    evaluations in the cache."""
    programs = []
    for r in todo:
        if r[0] not in programs:
            programs.append(r[0])
    out = [[] for _ in range(max(1, gpus))]
    for i, p in enumerate(programs):
        out[i % len(out)].extend(r for r in todo if r[0] == p)
    return [l for l in out if l]


def gpu_count():
    """GPUs nvidia-smi lists (1 when it cannot say)."""
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return 1
    return max(1, sum(1 for l in out.splitlines() if l.startswith("GPU ")))


def resume_refused(logfile, start):
    """Why `optimize --resume` refused to continue its journal, from the
    log it wrote after byte start ("cannot resume: ..."), or None."""
    with open(logfile, errors="replace") as f:
        f.seek(start)
        for line in f:
            if "error: cannot resume: " in line:
                return line.split("error: cannot resume: ", 1)[1].strip()
    return None


def run_one(cmd, logfile, stop_in, env=None):
    """Runs cmd (its own process group) with output to logfile; stops it
    (SIGINT, then SIGKILL) when stop_in seconds have passed."""
    with open(logfile, "a") as lf:
        lf.write("$ " + " ".join(cmd) + "\n")
        lf.flush()
        p = subprocess.Popen(cmd, stdout=lf, stderr=subprocess.STDOUT,
                             start_new_session=True, env=env)
        try:
            return p.wait(timeout=max(1, stop_in))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGINT)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
            return "stopped"


def cmd_run(a):
    began = time.time()
    programs = parse_programs(a.programs, a.kernels_dir)
    strategies = [s for s in a.strategies.split(",") if s]
    for s in strategies:
        if s not in ("mcts", "greedy", "beam", "random"):
            raise SystemExit("unknown strategy '%s' (mcts, greedy, beam, random)" % s)
    seeds = [int(x) for x in a.seeds.split(",") if x]
    results = os.path.abspath(a.results)
    os.makedirs(results, exist_ok=True)
    out_dir = a.out or os.environ.get("OUT") or os.path.join(os.getcwd(), "gpu-results")
    name = os.path.basename(results.rstrip("/"))
    tool = a.tool or unpack_bundle(a.bundle)
    if not os.environ.get("PATH", "").startswith("/usr/local/cuda/bin"):
        os.environ["PATH"] = "/usr/local/cuda/bin:" + os.environ.get("PATH", "")

    # More runs at once than GPUs: they share one, now or in an earlier call
    # on these results (kept, so that every summary of them says so).
    have = gpu_count() if a.gpus > 1 else 1
    shared = a.gpus > have or bool(read_settings(results).get("shared_gpu"))
    with open(os.path.join(results, "settings.json"), "w") as f:
        json.dump({"programs": programs, "strategies": strategies, "seeds": seeds,
                   "budget": a.budget, "time_per_run": a.time_per_run,
                   "extra": a.extra, "gpus": a.gpus, "shared_gpu": shared}, f, indent=1)
    env_txt = os.path.join(results, "env.txt")
    if not os.path.exists(env_txt):
        with open(env_txt, "w") as f:
            for c in (["nvidia-smi", "--query-gpu=name,driver_version",
                       "--format=csv,noheader"], [tool, "--version"]):
                try:
                    f.write(subprocess.run(c, capture_output=True, text=True,
                                           timeout=60).stdout)
                except (OSError, subprocess.SubprocessError) as e:
                    f.write("%s: %s\n" % (c[0], e))

    if a.rerun:
        again = parse_programs(a.rerun, a.kernels_dir)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for m in supersede(results, again, strategies, seeds, stamp):
            log(results, "%s moved to superseded/%s: it runs again" % (m, stamp))
    todo = [r for r in plan(results, programs, strategies, seeds) if r[3] != "done"]
    done_before = len(plan(results, programs, strategies, seeds)) - len(todo)
    log(results, "%d run(s) done before, %d to go" % (done_before, len(todo)))
    extra = a.extra.split() if a.extra else []

    def work(runs, gpu):
        env = None
        if gpu is not None:
            env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu))
        for program, strategy, seed, state in runs:
            elapsed = time.time() - began
            if a.deadline and elapsed > a.deadline:
                log(results, "deadline of %ds passed: %s %s seed %s not started"
                    % (a.deadline, program, strategy, seed))
                continue
            d = run_dir(results, program, strategy, seed)
            os.makedirs(d, exist_ok=True)
            cmd = optimize_command(tool, program, strategy, seed, a.budget, results,
                                   a.time_per_run, state == "resume",
                                   run_args(program, a.kernels_dir), a.kernels_dir,
                                   extra)
            stop_in = (a.stop_at - elapsed) if a.stop_at else 10 ** 9
            log(results, "%s %s %s seed %s%s" % (
                "resume" if state == "resume" else "run", program, strategy, seed,
                "" if gpu is None else " on GPU %d" % gpu))
            t0 = time.time()
            logfile = os.path.join(d, "optimize.log")
            start = os.path.getsize(logfile) if os.path.exists(logfile) else 0
            rc = run_one(cmd, logfile, stop_in, env)
            why = resume_refused(logfile, start) if state == "resume" and rc == 1 else None
            if why:
                # The journal cannot go on (its sources are gone and the
                # edits now give other programs): that search starts afresh,
                # the old journal kept beside it.
                stamp = time.strftime("%Y%m%d-%H%M%S")
                for m in supersede(results, [program], [strategy], [seed], stamp):
                    log(results, "%s cannot resume (%s): moved to superseded/%s, "
                        "it starts afresh" % (m, why, stamp))
                os.makedirs(d, exist_ok=True)
                cmd = [c for c in cmd if c != "--resume"]
                stop_in = (a.stop_at - (time.time() - began)) if a.stop_at else 10 ** 9
                rc = run_one(cmd, logfile, stop_in, env)
            # Snapshots and probe results (gigabytes for the larger programs):
            # a resumed run prepares its reference again.
            shutil.rmtree(os.path.join(d, "run", "eval"), ignore_errors=True)
            ok = os.path.exists(os.path.join(d, "summary.json"))
            log(results, "%s %s seed %s: exit %s after %.0f s%s"
                % (program, strategy, seed, rc, time.time() - t0,
                   "" if ok else " (no summary: resumable)"))
            with LOCK:
                pack(results, out_dir, name)

    if a.gpus <= 1:
        work(todo, None)
    else:
        if have < a.gpus:
            log(results, "%d runs at once on %d GPU(s): runs share a GPU, so the search "
                "timings disturb each other (the suite's table times each source alone)"
                % (a.gpus, have))
        threads = [threading.Thread(target=work, args=(runs, i % max(1, have)))
                   for i, runs in enumerate(lanes(todo, a.gpus))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    pack(results, out_dir, name)
    left = [r for r in plan(results, programs, strategies, seeds) if r[3] != "done"]
    log(results, "%d run(s) left; packed into %s" % (len(left), out_dir))
    sys.stdout.write(summarize(results, strategies))
    return 0


def summaries_json(results):
    """Every finished run's summary.json, in one object: what a recorded
    result keeps (bench/README.md), and what `summarize` reads back."""
    data = load_summaries(results)
    runs = []
    for p in sorted(data):
        for st in sorted(data[p]):
            for s in data[p][st]:
                s = dict(s)
                r = s.pop("_seed_dir")
                runs.append({"program": p, "run": r, "summary": s})
    return {"runs": runs}


def cmd_summarize(a):
    if a.json:
        json.dump(summaries_json(a.results), sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
        return 0
    checkpoints = [int(k) for k in a.checkpoints.split(",") if k]
    sys.stdout.write(summarize(a.results, [s for s in (a.strategies or "").split(",") if s] or None,
                               checkpoints))
    return 0


def cmd_export(a):
    """<out>/<program>/optimized.cu and search.json for bench/run.py
    --optimized-dir, from one strategy and seed. Programs where nothing beat
    the original get a search.json only (no optimized.cu)."""
    if recorded_runs(a.results) is not None:
        raise SystemExit("%s is a recorded summary: export-optimized needs each run's "
                         "best.cu; unpack the run's journals.tar.xz and pass the results "
                         "folder inside it" % a.results)
    data = load_summaries(a.results)
    os.makedirs(a.out, exist_ok=True)
    n = 0
    for p in sorted(data):
        runs = [s for s in data[p].get(a.strategy, [])
                if s["_seed_dir"] == run_id(a.strategy, a.seed)]
        if not runs:
            continue
        s = runs[0]
        d = os.path.join(a.out, p)
        os.makedirs(d, exist_ok=True)
        best = os.path.join(run_dir(a.results, p, a.strategy, a.seed), "run", "best.cu")
        improved = bool(s.get("improved")) and os.path.exists(best)
        if improved:
            shutil.copyfile(best, os.path.join(d, "optimized.cu"))
            n += 1
        with open(os.path.join(d, "search.json"), "w") as f:
            json.dump({"source": "clang-optiml optimize --strategy %s --seed %s --budget %s"
                                 % (a.strategy, a.seed, s.get("budget")),
                       "evaluations": s.get("evaluations"),
                       "evaluations_cached": s.get("evaluations_cached"),
                       "wall_s": round(float(s.get("seconds", 0)), 1),
                       "verified": improved,
                       "improved": improved,
                       "final_speedup": speedup(s),
                       "best_path": s.get("best_path", [])}, f, indent=1)
    print("%d optimized source(s) written to %s" % (n, a.out))
    return 0


VARIANT_TESTS = os.path.join(REPO, "test", "edit", "variants-*.test")


def variant_parts(paths):
    """{part name without .cu: text} of the split-file parts ('//--- NAME')
    of the variants tests: the suite's kernels written in other styles,
    named <kernel>.<style>.cu."""
    parts = {}
    for path in sorted(paths):
        name, lines = None, []
        with open(path) as f:
            text = f.read().splitlines(keepends=True)
        for line in text + ["//--- "]:
            if line.startswith("//--- "):
                if name:
                    parts[name[:-3] if name.endswith(".cu") else name] = "".join(lines)
                name, lines = line[len("//--- "):].strip(), []
            elif name is not None:
                lines.append(line)
    return parts


def cmd_variants(a):
    """A kernels folder for `run --kernels-dir`: <kernel>/naive.cu (the
    suite's own version) and <kernel>.<style>/naive.cu (each variant), for
    the suite kernels asked for, with suite.json (run arguments) beside."""
    parts = variant_parts(glob.glob(a.tests))
    kernels = sorted({n.split(".")[0] for n in parts})
    wanted = kernels if a.programs == "all" else parse_programs(a.programs)
    missing = [k for k in wanted if k not in kernels]
    if missing:
        raise SystemExit("no variants of %s in %s" % (", ".join(missing), a.tests))
    os.makedirs(a.out, exist_ok=True)
    shutil.copyfile(os.path.join(KERNELS_DIR, "suite.json"), os.path.join(a.out, "suite.json"))
    n = 0
    for name in sorted(parts):
        kernel = name.split(".")[0]
        if kernel not in wanted:
            continue
        for prog, text in ((kernel, None), (name, parts[name])):
            d = os.path.join(a.out, prog)
            os.makedirs(d, exist_ok=True)
            if text is None:
                shutil.copyfile(os.path.join(KERNELS_DIR, kernel, "naive.cu"),
                                os.path.join(d, "naive.cu"))
            else:
                with open(os.path.join(d, "naive.cu"), "w") as f:
                    f.write(text)
                n += 1
    print("%d variant(s) of %d kernel(s) written to %s" % (n, len(wanted), a.out))
    return 0


def best_ms(s):
    """The verified best's median time, else the original's (nothing beat it)."""
    final = s.get("final") or {}
    side = "candidate" if s.get("improved") else "original"
    return (final.get(side) or {}).get("median_ms")


def load_times(results):
    """<results>/times.json (variants-time), or the "times" a recorded
    summary.json keeps; {} when the versions were never timed alone."""
    path = results if results.endswith(".json") else os.path.join(results, "summary.json")
    if os.path.isdir(results) and os.path.exists(os.path.join(results, "times.json")):
        path = os.path.join(results, "times.json")
        with open(path) as f:
            return json.load(f)
    if os.path.exists(path):
        with open(path) as f:
            d = json.load(f)
        if isinstance(d, dict) and isinstance(d.get("times"), dict):
            return d["times"]
    return {}


def variants_table(results, strategy="mcts"):
    """Each variant's result beside the suite's own version of its kernel:
    the gap is how much slower the variant's best is than the suite
    version's best (the target: within 10%). Times are those of
    variants-time (each program alone, its own CUDA-event median) where the
    kernel was timed, else the search's final check."""
    data = load_summaries(results)
    times = load_times(results)
    first = lambda p: (data.get(p, {}).get(strategy) or [None])[0]

    def ms(p, side):
        kernel = p.split(".")[0]
        t = ((times.get(kernel) or {}).get("versions") or {}).get(p, {}).get(side) or {}
        if "ms" in t:
            return t["ms"], "event", t.get("check")
        s = first(p)
        if side == "original":
            v = ((s.get("final") or {}).get("original") or {}).get("median_ms")
        else:
            v = best_ms(s)
        return v, "search", None

    lines = ["| kernel | version | original ms | best ms | verified (search) | best edits "
             "| gap to the suite's |", "|---|---|---|---|---|---|---|"]
    kinds = set()
    for p in sorted(data, key=lambda n: (n.split(".")[0], "." in n, n)):
        s = first(p)
        if s is None:
            continue
        kernel, _, style = p.partition(".")
        orig, k1, _ = ms(p, "original")
        best, k2, check = ms(p, "best")
        kinds.update((k1, k2))
        gap = "—"
        if style and first(kernel) is not None and best:
            own, k3, _ = ms(kernel, "best")
            kinds.add(k3)
            if own:
                gap = "%+.0f%%" % (100.0 * (best / own - 1.0))
        fmt = lambda v: "%.4f" % v if v else "—"
        lines.append("| %s | %s | %s | %s%s | %s | %s | %s |" % (
            kernel, style or "suite", fmt(orig), fmt(best),
            " (CHECK %s)" % check if check not in (None, "PASS", "none") else "",
            fmt_x(speedup(s)),
            ", ".join("`%s`" % e for e in s.get("best_path", [])) or "—", gap))
    note = {frozenset(["event"]): "Times: each program alone, its own CUDA-event median "
                                  "(variants-time), every version of a kernel in one step.",
            frozenset(["search"]): "Times: the searches' final checks (not timed alone).",
            }.get(frozenset(kinds), "Times: each program alone (variants-time) where its "
                                    "kernel was timed, else the search's final check.")
    if read_settings(results).get("shared_gpu"):
        note += (" The searches shared a GPU: their 'verified (search)' speedups were "
                 "measured beside each other's work and are not results.")
    return "\n".join(lines) + "\n\n" + note + "\n"


def bench_runner():
    """bench/run.py as a module: its nvcc flags, build, run and BENCH parsing."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_run",
                                                  os.path.join(REPO, "bench", "run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def source_stamp(paths):
    import hashlib
    h = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            h.update(f.read())
        h.update(b"\0")
    return h.hexdigest()[:16]


def versions_of(kernel, kernels_dir):
    """The suite version first, then its variants (<kernel>.<style>)."""
    names = sorted(d for d in os.listdir(kernels_dir)
                   if d.startswith(kernel + ".") and
                   os.path.exists(os.path.join(kernels_dir, d, "naive.cu")))
    return [kernel] + names


def time_program(br, exe, args, cwd, timeout):
    """One run of a built program: its BENCH median (CUDA events) and CHECK."""
    try:
        p = subprocess.run([exe] + args, capture_output=True, text=True, timeout=timeout,
                           env=br.run_env(), cwd=cwd)
        out, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired:
        return {"error": "timed out after %d s" % timeout}
    parsed = br.parse_output(out)
    if rc != 0 or "kernel_ms" not in parsed:
        return {"error": "exit %s, no BENCH line" % rc if "kernel_ms" not in parsed
                else "exit %s" % rc, "check": parsed.get("check", "none")}
    return {"ms": float(parsed["kernel_ms"]), "check": parsed.get("check", "none")}


def cmd_variants_time(a):
    """Times every version of each kernel whose searches have all finished
    (the suite's own and its variants; original and best), each program
    alone and one after another in this one step, with the programs' own
    CUDA-event BENCH medians, into <results>/times.json. A kernel already
    timed with the same sources is skipped unless --force."""
    br = bench_runner()
    nvcc = br.find_nvcc(a.nvcc)
    data = load_summaries(a.results)
    path = os.path.join(a.results, "times.json")
    times = {}
    if os.path.exists(path):
        with open(path) as f:
            times = json.load(f)
    kernels = sorted({n.split(".")[0] for n in os.listdir(a.kernels_dir)
                      if os.path.exists(os.path.join(a.kernels_dir, n, "naive.cu"))})
    build_dir = tempfile.mkdtemp(prefix="optiml-variants-time-")
    for kernel in kernels:
        versions = versions_of(kernel, a.kernels_dir)
        sums = {v: (data.get(v, {}).get(a.strategy) or [None])[0] for v in versions}
        if any(s is None for s in sums.values()):
            print("%s: not every version's search has finished; not timed" % kernel)
            continue
        sources = {}
        for v in versions:
            orig = os.path.join(a.kernels_dir, v, "naive.cu")
            best = os.path.join(run_dir(a.results, v, a.strategy, 1), "run", "best.cu")
            sources[v] = [orig] + ([best] if sums[v].get("improved") and os.path.exists(best)
                                   else [])
        stamp = source_stamp([p for v in versions for p in sources[v]])
        if not a.force and times.get(kernel, {}).get("stamp") == stamp:
            print("%s: timed before with these sources" % kernel)
            continue
        jobs = [(v, side, src) for v in versions
                for side, src in zip(("original", "best"), sources[v])]
        import concurrent.futures
        def build(job):
            v, side, src = job
            exe = os.path.join(build_dir, v + "-" + side)
            return job, exe, br.build(nvcc, src, exe, force=True)
        with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
            built = list(pool.map(build, jobs))
        entry = {"stamp": stamp, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                 "versions": {}}
        for (v, side, src), exe, (ok, blog) in built:
            r = time_program(br, exe, run_args(v, a.kernels_dir), os.path.dirname(src),
                             a.timeout) if ok else {"error": "nvcc failed: " + blog[-300:]}
            entry["versions"].setdefault(v, {})[side] = r
            if side == "original" and len(sources[v]) == 1:
                entry["versions"][v]["best"] = dict(r, same_as="original")
            print("%s %s: %s" % (v, side, "%.4f ms, CHECK %s" % (r["ms"], r["check"])
                                 if "ms" in r else r["error"]), flush=True)
        times[kernel] = entry
        with open(path + ".tmp", "w") as f:
            json.dump(times, f, indent=1, sort_keys=True)
        os.replace(path + ".tmp", path)
    shutil.rmtree(build_dir, ignore_errors=True)
    return 0


def cmd_variants_table(a):
    sys.stdout.write(variants_table(a.results, a.strategy))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run the (program, strategy, seed) runs not yet done")
    src = r.add_mutually_exclusive_group(required=True)
    src.add_argument("--bundle", help="dist/clang-optiml-*.tar.xz (unpacked to a temporary directory)")
    src.add_argument("--tool", help="a clang-optiml executable")
    r.add_argument("--results", required=True, help="results directory (state; copied back into the repository)")
    r.add_argument("--programs", required=True, help="'all' or names of bench/kernels/<name>")
    r.add_argument("--strategies", default="mcts,greedy,random")
    r.add_argument("--seeds", default="1")
    r.add_argument("--budget", type=int, default=30)
    r.add_argument("--time-per-run", default="", help="optimize --time for each run (e.g. 120s)")
    r.add_argument("--deadline", type=float, default=0, help="start no run after this many seconds")
    r.add_argument("--stop-at", type=float, default=0,
                   help="stop a run still going at this many seconds (its journal stays; resumed next time)")
    r.add_argument("--extra", default="", help="more optimize flags, space-separated")
    r.add_argument("--rerun", default="",
                   help="programs whose runs (of these strategies and seeds) are moved to "
                        "<results>/superseded/<time>/ and run again from scratch")
    r.add_argument("--gpus", type=int, default=1,
                   help="run this many runs at once, whole programs per run, each on its own GPU "
                        "(CUDA_VISIBLE_DEVICES) while there are GPUs enough, else "
                        "sharing them round robin")
    r.add_argument("--out", help="where the tar goes (default $OUT)")
    r.add_argument("--kernels-dir", default=KERNELS_DIR,
                   help="programs as <dir>/<name>/naive.cu with suite.json (default bench/kernels)")
    r.set_defaults(func=cmd_run)
    s = sub.add_parser("summarize", help="markdown table of the finished runs")
    s.add_argument("results", help="a results directory, or a recorded summary.json "
                                   "(or its folder) written with --json")
    s.add_argument("--json", action="store_true",
                   help="every finished run's summary in one JSON object instead of the table")
    s.add_argument("--strategies", help="column order")
    s.add_argument("--checkpoints", default="5,10,20,30",
                   help="evaluation counts of the anytime table (default 5,10,20,30)")
    s.set_defaults(func=cmd_summarize)
    e = sub.add_parser("export-optimized", help="optimized sources for bench/run.py --optimized-dir")
    e.add_argument("results")
    e.add_argument("--strategy", default="mcts")
    e.add_argument("--seed", default="1")
    e.add_argument("--out", required=True)
    e.set_defaults(func=cmd_export)
    v = sub.add_parser("variants", help="a --kernels-dir of the suite's kernels and their "
                                        "variants (test/edit/variants-*.test)")
    v.add_argument("out", help="the kernels folder to write")
    v.add_argument("--programs", default="all", help="'all' or suite kernels")
    v.add_argument("--tests", default=VARIANT_TESTS, help=argparse.SUPPRESS)
    v.set_defaults(func=cmd_variants)
    vt = sub.add_parser("variants-time",
                        help="time each finished kernel's versions (original and best) "
                             "alone, one after another, into <results>/times.json")
    vt.add_argument("results")
    vt.add_argument("--kernels-dir", required=True, help="the folder `variants` wrote")
    vt.add_argument("--strategy", default="mcts")
    vt.add_argument("--jobs", type=int, default=8, help="parallel compilations")
    vt.add_argument("--timeout", type=int, default=120, help="seconds per program run")
    vt.add_argument("--nvcc", help="default: $NVCC, PATH, /usr/local/cuda/bin/nvcc")
    vt.add_argument("--force", action="store_true", help="time kernels timed before too")
    vt.set_defaults(func=cmd_variants_time)
    t = sub.add_parser("variants-table", help="markdown: each variant's best beside the "
                                              "suite version's")
    t.add_argument("results", help="a results directory or a recorded summary.json")
    t.add_argument("--strategy", default="mcts")
    t.set_defaults(func=cmd_variants_table)
    a = ap.parse_args(argv)
    return a.func(a)


if __name__ == "__main__":
    sys.exit(main())

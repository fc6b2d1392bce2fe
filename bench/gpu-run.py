#!/usr/bin/env python3
"""The GPU runner: one task per kind of measurement, each recorded as a run
folder in bench/README.md's layout (summary.md with the exact commands and
the machine at its end, summary.json, and journals.tar.xz for searches).

Run on the GPU node from the repository root, with the relocatable bundle
(tools/bundle.sh) in dist/:

    python3 bench/gpu-run.py TASK [options] [-- task arguments]
    python3 bench/gpu-run.py TASK --print ...    # the commands, nothing run
    python3 bench/gpu-run.py --list

The run folder is --out, else $OUT/<date>-<task>[-<label>] when $OUT is set
(a device call brings $OUT back), else bench/results/<date>-<task>[-<label>].
It is written whole at the end (assembled beside it, then renamed) and an
existing one is never overwritten. The scripts' own outputs (snapshots,
logs, per-candidate files) stay in --work (a temporary folder unless given).
Searches keep their state in --state (default gpu-state/<task>), so a task
stopped by the device call's limit resumes in the next call; cmake-project
keeps its project there, so `--phase search` and `--phase check` can be two
calls on one machine.
"""

import argparse
import datetime
import glob
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "bench", "search"))
import compare  # noqa: E402  (bench/search/compare.py: the suite's programs)

DEFAULT_BUNDLE = "dist/clang-optiml-0.1.0-linux-x86_64.tar.xz"
EXAMPLES = ["examples/saxpy.cu", "examples/transpose.cu", "examples/reduction.cu",
            "examples/matmul.cu"]
RESTRUCTURE = "softmax,layernorm,spmv_csr,gemv,histogram,transpose"
COLUMN_EXTRA = "--verify-first=1 --no-sanitize --final-rounds=3"
TOOL = "{tool}"  # the bundle's bin/clang-optiml, once unpacked


class Step:
    """One command of a task. argv may hold {work}, {bundle}, {state},
    {tool} and {out}; env adds variables; its output goes to stdout (a file
    under work) when given, else to the step's log, work/step-<name>.log;
    cwd is where it runs (the repository root unless given); ok lists the
    exit statuses that are not failures."""

    def __init__(self, name, argv, env=None, unpack=False, stdout=None, cwd=None, ok=(0,)):
        self.name, self.argv, self.env, self.unpack = name, argv, env or {}, unpack
        self.stdout = stdout  # a file under work for the output, else the step's log
        self.cwd, self.ok = cwd, ok


class Part:
    """What the summary takes from a step: md and json are paths under work
    (globs allowed for evals); kind is 'script' (the script's md and json),
    'compare' (compare.py summarize), 'journals' (optimize journals),
    'evals' (eval --json reports) or 'log' (a text the script printed)."""

    def __init__(self, title, kind, md=None, js=None, source=None):
        self.title, self.kind, self.md, self.js, self.source = title, kind, md, js, source


# ---------------------------------------------------------------------------
# Tasks
# ---------------------------------------------------------------------------

def py(*args):
    return ["python3"] + list(args)


def t_suite(a):
    argv = py("bench/run.py", "--out", "{work}/suite", "--jobs", str(a.jobs),
              "--timeout", "90")
    if a.kernels:
        argv += ["--kernels", a.kernels]
    if a.optimized_dir:
        argv += ["--optimized-dir", a.optimized_dir]
    if a.deadline:
        argv += ["--deadline", str(a.deadline)]
    return ("The suite (bench/run.py): naive, reference%s, with the ceilings."
            % (" and the sources of " + a.optimized_dir if a.optimized_dir else ""),
            [Step("suite", argv)],
            [Part("", "script", "suite/summary.md", "suite/summary.json", "bench/run.py")])


def t_restructure(a):
    a.kernels = a.kernels or RESTRUCTURE
    a.optimized_dir = a.optimized_dir or "bench/results/restructure"
    intro, steps, parts = t_suite(a)
    return ("One restructuring edit per program (bench/results/restructure), measured "
            "by the suite.", steps, parts)


def compare_run(a, programs, strategies, seeds, budget):
    argv = py("bench/search/compare.py", "run", "--bundle", "{bundle}", "--results", "{state}",
              "--programs", programs, "--strategies", strategies, "--seeds", seeds,
              "--budget", str(budget), "--extra=" + (a.extra or COLUMN_EXTRA),
              "--out", "{work}/packed", "--gpus", str(a.gpus))
    if a.deadline:
        argv += ["--deadline", str(a.deadline)]
    if a.stop_at:
        argv += ["--stop-at", str(a.stop_at)]
    if a.rerun:
        argv += ["--rerun", a.rerun]
    return Step("search", argv)


def t_column(a):
    programs = a.programs or "all"
    return ("The optimized column: `optimize` (catalog policy, MCTS, seed 1, budget %d) on "
            "suite programs (%s); the best sources are exported to {state}/optimized for "
            "`bench/gpu-run.py suite --optimized-dir {state}/optimized`." % (a.budget or 10, programs),
            [compare_run(a, programs, "mcts", "1", a.budget or 10),
             Step("export", py("bench/search/compare.py", "export-optimized", "{state}",
                               "--strategy", "mcts", "--seed", "1", "--out", "{state}/optimized"))],
            [Part("", "compare", source="bench/search/compare.py summarize")])


def t_variants(a):
    programs = a.suite_programs or "all"
    steps = [Step("kernels", py("bench/search/compare.py", "variants", "{state}/kernels",
                                "--programs", programs))]
    run = compare_run(a, "all", "mcts", "1", a.budget or 30)
    i = run.argv.index("--extra=" + (a.extra or COLUMN_EXTRA))
    run.argv[i] = "--extra=" + (a.extra or "")
    run.argv += ["--kernels-dir", "{state}/kernels"]
    steps.append(run)
    time_argv = py("bench/search/compare.py", "variants-time", "{state}",
                   "--kernels-dir", "{state}/kernels", "--jobs", "16")
    steps.append(Step("time", time_argv))
    return ("The suite's kernels written in other styles (test/edit/variants-*.test): "
            "`optimize` at its defaults (MCTS, seed 1, budget %d) on each variant and on "
            "the suite's own version of %s; once every version of a kernel is searched, "
            "its originals and bests are timed alone, one after another (their own "
            "CUDA-event medians), and each variant's best is put beside its suite "
            "version's." % (a.budget or 30, programs),
            steps + [Step("table", py("bench/search/compare.py", "variants-table", "{state}"),
                          stdout="{work}/variants-table.md")],
            [Part("Each variant beside the suite's version", "script", md="variants-table.md",
                  source="bench/search/compare.py variants-table"),
             Part("", "compare", source="bench/search/compare.py summarize")])


def t_strategies(a):
    programs = a.programs or "gemv,softmax,transpose,spmv_csr"
    return ("Strategies compared at equal budget (%d evaluations, seeds 1-3, catalog policy) "
            "on %s." % (a.budget or 30, programs),
            [compare_run(a, programs, "mcts,greedy,random", "1,2,3", a.budget or 30)],
            [Part("", "compare", source="bench/search/compare.py summarize")])


def t_optimize(a):
    env = {"OUT": "{work}", "BUDGET": str(a.budget or 12), "TIME": a.time or "150s"}
    if a.deadline:
        env["DEADLINE"] = str(int(a.deadline))
    if a.extra:
        env["EXTRA"] = a.extra
    return ("`optimize` (catalog policy, MCTS, seed 1) on %s; each row is the journal's "
            "final record." % ", ".join(a.programs_list or EXAMPLES),
            [Step("optimize", ["bash", "scripts/gpu-optimize.sh", "{bundle}"]
                  + (a.programs_list or EXAMPLES), env)],
            [Part("", "journals", js="optimize-runs.tar.gz", source="scripts/gpu-optimize.sh")])


def t_llm(a):
    env = {"OUT": "{work}", "BUDGET": str(a.budget or 4), "TIME": a.time or "60s",
           "LIMIT": "200"}
    return ("`optimize --policy llm` against the scripted server (test/Inputs/llm); no "
            "real model.",
            [Step("llm", ["bash", "scripts/gpu-llm.sh", "{bundle}"], env)],
            [Part("", "journals", js="gpu-llm.tar.gz", source="scripts/gpu-llm.sh")])


def script_task(intro, name, script, md, js, extra_args=()):
    return (intro,
            [Step(name, py(script, "--bundle", "{bundle}", "--out", "{work}/" + name)
                  + list(extra_args))],
            [Part("", "script", name + "/" + md, name + "/" + js, script)])


def t_probe_checks(a):
    return script_task("The probe's GPU checks (L2 clean, device against host verdicts, "
                       "last-launch matching, ...).", "checks",
                       "bench/eval/probe_gpu_checks.py", "probe_gpu_checks.md",
                       "probe_gpu_checks.json")


def t_ncu_compare(a):
    return script_task("eval's metrics beside ncu's (first launch of each kernel, 5%).",
                       "ncu", "bench/eval/ncu_compare.py", "ncu_compare.md",
                       "ncu_compare.json", a.programs_list)


def t_dram_context(a):
    return script_task("A small kernel's DRAM write under different profiling contexts.",
                       "dram-context", "bench/eval/dram_context.py", "dram_context.md",
                       "dram_context.json")


def t_dram_single(a):
    return script_task("DRAM writes of single kernels under different replay schemes.",
                       "dram-single", "bench/eval/dram_single.py", "dram_single.md",
                       "dram_single.json")


def t_event_timing(a):
    steps, parts = [], []
    for name, flags, title in (("default", [], "L2 as the launches leave it"),
                               ("flush", ["--flush-l2"], "--flush-l2")):
        steps.append(Step(name, py("bench/eval/event_timing.py", "--bundle", "{bundle}",
                                   "--out", "{work}/" + name) + flags + a.programs_list))
        parts.append(Part(title, "script", name + "/event_timing.md",
                          name + "/event_timing.json", "bench/eval/event_timing.py"))
    return ("eval's times against the programs' own CUDA events.", steps, parts)


def t_verify_edits(a):
    argv = ["python3", "bench/edits/verify_examples.py", "--tool", TOOL,
            "--out", "{work}/verify", "--jobs", "4"]
    if a.deadline:
        argv += ["--deadline", str(a.deadline)]
    return ("Every edit `transforms` suggests, applied and verified against the original.",
            [Step("verify", argv + (a.programs_list or EXAMPLES), unpack=True)],
            [Part("", "script", "verify/verify-edits.md", "verify/verify-edits.jsonl",
                  "bench/edits/verify_examples.py")])


def t_verify_variants(a):
    programs = a.suite_programs or "all"
    verify = ("python3 bench/edits/verify_examples.py --tool {tool} --source-edits "
              "--out {work}/verify --jobs 6%s {work}/kernels/*.*/naive.cu"
              % (" --deadline %s" % a.deadline if a.deadline else ""))
    return ("The variants' own edits (their `// EDIT:` lines, the edits the suite's own "
            "version gets) applied one after another to each variant of %s, every step "
            "verified against the variant as written." % programs,
            [Step("kernels", py("bench/search/compare.py", "variants", "{work}/kernels",
                                "--programs", programs)),
             Step("verify", ["bash", "-c", verify], unpack=True)],
            [Part("", "script", "verify/verify-edits.md", "verify/verify-edits.jsonl",
                  "bench/edits/verify_examples.py")])


def t_stencil_edits(a):
    return ("Stencil shared-tiling and hoist on the suite's jacobi2d and conv2d.",
            [Step("stencil", ["bash", "scripts/gpu-stencil-edits.sh", "{bundle}"],
                  {"OUT": "{work}"})],
            [Part("", "evals", js="stencil-edits/*.eval.json",
                  source="scripts/gpu-stencil-edits.sh")])


def t_gemm_edits(a):
    return ("shared-tiling's register tile (micro=8) against the plain tiles on sgemm, "
            "exact at odd sizes under the sanitizers, optimize on examples/matmul.cu, "
            "and the suite's sgemm row beside cuBLAS.",
            [Step("gemm", ["bash", "scripts/gpu-gemm-edits.sh", "{bundle}"],
                  {"OUT": "{work}"})],
            [Part("", "log", md="gemm-edits/gemm-edits.log",
                  source="scripts/gpu-gemm-edits.sh")])


def edit_family(name, styles, kernel, suite_edit, what):
    """A task that runs scripts/gpu-edit-family.sh for one transform family."""
    def task(a):
        return (what,
                [Step(name, ["bash", "scripts/gpu-edit-family.sh", "{bundle}", name, styles,
                             kernel, suite_edit],
                      {"OUT": "{work}"})],
                [Part("", "log", md=f"{name}/{name}.log",
                      source="scripts/gpu-edit-family.sh")])
    return task


t_block_scan = edit_family(
    "block-scan", "test/edit/block-scan-styles.cu", "scan",
    '{"kind":"block-scan","target":"scan_block"}',
    "block-scan on eight scan styles (verified by eval under the sanitizers), "
    "the suite's scan, optimize on it as a user types it, and the scan row beside CUB.")
t_block_product = edit_family(
    "shared-tiling-block", "test/edit/shared-tiling-block-styles.cu", "batched_gemm_small",
    '{"kind":"shared-tiling","target":"batched_gemm","params":{"rows":8}}',
    "shared-tiling rows on four block-sized product styles (verified by eval under the "
    "sanitizers), the suite's batched_gemm_small, optimize on it as a user types it, and "
    "its row beside cuBLAS.")

t_vectorize_stencil = edit_family(
    "vectorize-stencil", "test/edit/vectorize-stencil-styles.cu", "stencil3d7",
    '{"kind":"vectorize-stencil","target":"stencil"}',
    "vectorize-stencil on eight stencil styles (verified by eval under the sanitizers), "
    "the suite's stencil3d7, optimize on it as a user types it, and its row beside the "
    "hand-written reference.")


_constant_memory = edit_family(
    "constant-memory", "test/edit/constant-memory-styles.cu", "conv2d",
    '[{"kind":"shared-tiling","target":"conv2d","params":{"rows":8}},'
    '{"kind":"constant-memory","target":"conv2d","params":{"param":"filt"}}]',
    "constant-memory on five arrays in four kernel styles (verified by eval under the "
    "sanitizers), the suite's conv2d with shared-tiling rows=8 (streamed) and its filter "
    "in constant memory, optimize on it as a user types it, and its row beside the "
    "hand-written reference.")


def t_constant_memory(a):
    what, steps, parts = _constant_memory(a)
    steps[0].env["OPTIMIZE_TIMEOUT"] = "270"  # the call's 10 minutes hold every step
    return what, steps, parts


def t_stencil_rows(a):
    conv = edit_family(
        "shared-tiling-rows", "test/edit/shared-tiling-rows-styles.cu", "conv2d",
        '{"kind":"shared-tiling","target":"conv2d","params":{"rows":8}}', "")(a)
    conv[1][0].env["OPTIMIZE"] = "0"  # optimize on conv2d: task constant-memory
    steps = conv[1] + [Step("shared-tiling-rows-jacobi2d",
                            ["bash", "scripts/gpu-edit-family.sh", "{bundle}",
                             "shared-tiling-rows-jacobi2d", "test/edit/shared-tiling-rows-styles.cu",
                             "jacobi2d",
                             '{"kind":"shared-tiling","target":"jacobi","params":{"rows":4}}'],
                            {"OUT": "{work}", "OPTIMIZE": "0"})]
    parts = conv[2] + [Part("", "log", md="shared-tiling-rows-jacobi2d/shared-tiling-rows-jacobi2d.log",
                            source="scripts/gpu-edit-family.sh")]
    return ("shared-tiling rows on six 2D stencil styles (verified by eval under the "
            "sanitizers), the suite's conv2d (streamed) and jacobi2d, "
            "and their rows beside the hand-written references.", steps, parts)


def t_styles(a):
    files = a.programs_list or sorted(glob.glob(os.path.join(REPO, "test/edit/*-styles.cu")))
    files = [os.path.relpath(f, REPO) if os.path.isabs(f) else f for f in files]
    return ("Styles programs (%d): each program's EDIT lines applied one after another, "
            "then `eval` against the program as written, memcheck and racecheck on "
            "(scripts/gpu-styles.sh)." % len(files),
            [Step("styles", ["bash", "scripts/gpu-styles.sh", TOOL, "{work}/styles"] + files,
                  unpack=True, stdout="{work}/styles.log")],
            [Part("", "log", md="styles.log", source="scripts/gpu-styles.sh")])


def t_warp_reduce(a):
    return ("warp-reduce on two shared-memory tree reductions.",
            [Step("warp-reduce", ["bash", "scripts/gpu-warp-reduce.sh", "{bundle}"],
                  {"OUT": "{work}"})],
            [Part("", "evals", js="*.eval.json", source="scripts/gpu-warp-reduce.sh")])


def t_resume_demo(a):
    return ("A search killed with SIGKILL and resumed: nothing lost, nothing repeated.",
            [Step("resume", py("bench/search/resume_demo.py", "--bundle", "{bundle}",
                               "--out", "{work}/resume"))],
            [Part("", "script", None, "resume/resume_demo.json", "bench/search/resume_demo.py")])


def t_acceptance(a):
    return ("The main job as a user types it, through the bundle.",
            [Step("acceptance", ["bash", "scripts/gpu-acceptance.sh", "{bundle}"]
                  + a.programs_list[:1], {"OUT": "{work}", "BUDGET": str(a.budget or 6)})],
            [Part("", "log", md="acceptance.log", source="scripts/gpu-acceptance.sh")])


def t_synthesize(a):
    env = {"OUT": "{work}", "BUDGET": str(a.budget or 8)}
    return ("`synthesize` on every spec of examples/synthesize: each template's program "
            "verified at three seeds and edge sizes, then optimized.",
            [Step("synthesize", ["bash", "scripts/gpu-synthesize.sh", "{bundle}"], env)],
            [Part("", "log", md="synthesize/synthesize.log",
                  source="scripts/gpu-synthesize.sh")])


def t_synthesize_llm(a):
    env = {"OUT": "{work}"}
    if a.extra:
        env["EXTRA"] = a.extra
    return ("`synthesize --thoughts 6` against the scripted server (test/Inputs/llm/server.py, "
            "replies from test/Inputs/llm/synth-replies.py), configured as a user would: "
            "every verdict of the 48 x 20 spec against the reason expected, then an "
            "8192 x 8192 transpose whose correct strategies compete on time.",
            [Step("synthesize-llm", ["bash", "scripts/gpu-synthesize-llm.sh", "{bundle}"], env)],
            [Part("", "log", md="synthesize-llm.log", source="scripts/gpu-synthesize-llm.sh")])


def t_canary(a):
    return ("The secrets canary (docs/llm.md, \"Keys\"): a key in clang-optiml's environment "
            "only; `eval canary.cu` and `optimize --policy llm` against a server echoing "
            "it, every run hunting for it; then every file written searched for it. "
            "The last line reads PASS or FAIL.",
            [Step("canary", ["bash", "scripts/gpu-canary.sh", "{bundle}"], {"OUT": "{work}"})],
            [Part("", "log", md="step-canary.log", source="scripts/gpu-canary.sh")])


def t_cmake_project(a):
    phases = [a.phase] if a.phase else ["search", "check"]
    env = {"OUT": "{work}", "STATE": "{state}"}
    titles = {"search": "search: configure, build, app-optimize",
              "check": "check: rebuild, outputs compared, ncu times, one source changed"}
    return ("examples/cmake-project through the bundle as docs/cmake.md shows it "
            "(%s); state in {state}, so `--phase search` and `--phase check` can be two "
            "calls on one machine." % ", then ".join(phases),
            [Step(p, ["bash", "scripts/gpu-cmake-project.sh", p]
                  + (["{bundle}"] if p == "search" else []), env) for p in phases],
            [Part(titles[p], "log", md="step-%s.log" % p, source="scripts/gpu-cmake-project.sh")
             for p in phases])


def t_projects(a):
    """Projects as users have them: the CUDA samples' reduction (warp-reduce,
    then eval --against), kernels in an included .cu (needle) and in a header,
    optimize from the main file, and the tuned-variant database."""
    budget = str(a.budget or 8)
    red, needle, header = "{work}/red", "{work}/needle", "{work}/header"
    mock = "test/Inputs/cuda_mock.h"
    inputs = lambda d: sorted(os.path.relpath(f, REPO) for f in
                              glob.glob(os.path.join(REPO, "test/Inputs/include-kernels", d, "*")))
    compare_needle = (
        "test -f out/needle_kernel.cu || { echo \"no out/needle_kernel.cu: nothing to compare\"; "
        "exit 0; }; nvcc -arch=sm_90 -o orig needle.cu && ./orig > orig.txt && mkdir -p fast "
        "&& cp needle.cu cuda_mock.h out/needle_kernel.cu fast/ && (cd fast && nvcc "
        "-arch=sm_90 -o fast needle.cu && ./fast > ../fast.txt) && cmp orig.txt fast.txt "
        "&& echo \"needle outputs identical\"")
    steps = [
        Step("dirs", ["mkdir", "-p", red, needle, header], unpack=True),
        Step("copy-red", ["cp", "test/edit/Inputs/reduce-cg/reduce.cu", red + "/"]),
        Step("edit", ["echo", '{"kind":"warp-reduce","target":"reduce0","params":{}}'],
             stdout=red + "/w.json"),
        Step("apply", [TOOL, "apply", "reduce.cu", "--edit", "w.json", "-o", "reduce.warp.cu"],
             cwd=red),
        Step("eval-against", [TOOL, "eval", "reduce.warp.cu", "--against", "reduce.cu"], cwd=red),
        Step("copy-needle", ["cp"] + inputs("needle") + [mock, needle + "/"]),
        Step("analyze-needle", [TOOL, "analyze", "needle.cu"], cwd=needle),
        # optimize exits 3 when no candidate beats the original: not a failure.
        Step("optimize-needle", ["timeout", "240", TOOL, "optimize", "needle.cu", "--budget",
                                 budget, "-o", "out/", "--report", "needle.html"],
             cwd=needle, ok=(0, 3)),
        # ls exits 2 when out/ was not written.
        Step("out-needle", ["ls", "-R", "out"], cwd=needle, ok=(0, 2)),
        Step("compare-needle", ["bash", "-c", compare_needle], cwd=needle),
        Step("db-needle", [TOOL, "db", "list"], cwd=needle),
        Step("copy-header", ["cp", "-r"] + inputs("header") + [mock, header + "/"]),
        Step("optimize-header", ["timeout", "200", TOOL, "optimize", "main.cu", "--budget",
                                 budget, "-o", "out/", "--", "-Iinclude"],
             cwd=header, ok=(0, 3)),
        Step("out-header", ["ls", "-R", "out"], cwd=header, ok=(0, 2)),
        Step("db-header", [TOOL, "db", "list"], cwd=header),
    ]
    titles = {
        "apply": "warp-reduce on the CUDA samples' reduction: apply",
        "eval-against": "eval reduce.warp.cu --against reduce.cu",
        "analyze-needle": "analyze needle.cu (kernels in the included needle_kernel.cu)",
        "optimize-needle": "optimize needle.cu --budget %s -o out/" % budget,
        "out-needle": "needle: out/",
        "compare-needle": "needle: outputs of the original and the variant",
        "db-needle": "needle: db list",
        "optimize-header": "optimize main.cu --budget %s -o out/ -- -Iinclude (kernels in "
                           "include/kernels.cuh)" % budget,
        "out-header": "header: out/",
        "db-header": "header: db list",
    }
    return ("warp-reduce on the CUDA samples' reduction (eval --against), optimize of "
            "kernels in an included .cu (needle) and in a header from the main file "
            "(budget %s), and the tuned-variant database after each." % budget, steps,
            [Part(titles[s.name], "log", md="step-%s.log" % s.name, source="bench/gpu-run.py")
             for s in steps if s.name in titles])


def t_verdicts(a):
    steps, parts = [], []
    for p in a.programs_list or EXAMPLES:
        n = os.path.basename(p)[:-3]
        steps.append(Step("eval-" + n, [TOOL, "eval", p, "--json", "--no-sanitize",
                                        "--verify-first", "1"],
                          unpack=True, stdout="{work}/%s.eval.json" % n))
    parts.append(Part("", "evals", js="*.eval.json", source="clang-optiml eval --json"))
    return ("eval's time and verdict line for each program (metrics on).", steps, parts)


def t_dot_grid_stride(a):
    """`warp-reduce grid_stride` on the suite's dot (one element per thread,
    a block tree, one atomic per block) with three grid caps, each applied
    and evaluated against the original (under 5 minutes)."""
    naive = "bench/kernels/dot/naive.cu"
    steps, parts = [], []
    for cap in ("1056", "528", "2112"):
        edit, out = "{work}/edit-%s.json" % cap, "{work}/dot-gs-%s.cu" % cap
        steps += [
            Step("edit-" + cap, ["echo", '{"kind":"warp-reduce","target":"dot","params":'
                                 '{"grid_stride":true,"max_blocks":%s,"changes_precision":true}}'
                                 % cap], stdout=edit, unpack=True),
            Step("apply-" + cap, [TOOL, "apply", naive, "--edit", edit, "-o", out]),
            Step("eval-" + cap, ["timeout", "90", TOOL, "eval", out, "--against", naive,
                                 "--verify-first", "1"])]
        parts.append(Part("max_blocks %s" % cap, "log", md="step-eval-%s.log" % cap,
                          source="clang-optiml eval --against"))
    return ("warp-reduce grid_stride on the suite's dot, three grid caps, each evaluated "
            "against the original.", steps, parts)


def t_pointer_arrays(a):
    """eval on a program whose kernel takes arrays of device pointers
    (test/eval/Inputs/ptrarray.cu): against itself it must verify (the
    arrays' addresses differ between runs); a candidate with one wrong
    matrix, or with the matrices named in another order, must not."""
    prog = "test/eval/Inputs/ptrarray.cu"
    steps = [Step("eval-self", [TOOL, "eval", prog], unpack=True)]
    parts = [Part("against itself", "log", md="step-eval-self.log", source="clang-optiml eval")]
    for name, define, ok, expect in (
            ("bug", "BUG_BATCH 3", (3,), "the buffer its element 3 points into"),
            ("shuffle", "SHUFFLE", (3,), "element(s) differ")):
        src = "{work}/%s.cu" % name
        steps += [
            Step("make-" + name, ["sed", "1i #define " + define, prog], stdout=src),
            Step("eval-" + name, [TOOL, "eval", src, "--against", prog], ok=ok),
            Step("grep-" + name, ["grep", "-c", expect, "{work}/step-eval-%s.log" % name])]
        parts.append(Part(name, "log", md="step-eval-%s.log" % name,
                          source="clang-optiml eval --against"))
    # Other ways to write the same program, each against itself and with one
    # wrong element of matrix 3 of C, named as the report must name it:
    # the kernel as a template (its matrices compared as the floats every
    # launch gives T, a value, not bytes); the pointers as members of an
    # array of structs in device memory.
    wrong = "1 element(s) differ, first at \\[18\\]: expected 0.776223838"
    for name, define, where in (
            ("template", "TEMPLATED", "the buffer its element 3 points into"),
            ("structs", "STRUCTS", "the buffer its element 3's 'c' points into")):
        src, bug = "{work}/%s.cu" % name, "{work}/%s-bug.cu" % name
        steps += [
            Step("make-" + name, ["sed", "1i #define " + define, prog], stdout=src),
            Step("eval-" + name, [TOOL, "eval", src]),
            Step("make-%s-bug" % name, ["sed", "1i #define BUG_BATCH 3", src], stdout=bug),
            Step("eval-%s-bug" % name, [TOOL, "eval", bug, "--against", src], ok=(3,)),
            Step("grep-%s-bug" % name, ["grep", "-c", where + ": " + wrong,
                                        "{work}/step-eval-%s-bug.log" % name])]
        parts += [Part(name, "log", md="step-eval-%s.log" % name, source="clang-optiml eval"),
                  Part(name + ", a wrong matrix", "log", md="step-eval-%s-bug.log" % name,
                       source="clang-optiml eval --against")]
    return ("eval and arrays of device pointers: the program against itself, a wrong "
            "matrix, the matrices in another order, a wrong matrix of the kernel "
            "written as a template, the pointers as members of an array of structs.",
            steps, parts)


def t_wide_loads(a):
    return ("The scalar tail and unaligned fallback of 16- and 8-byte loads against the CPU.",
            [Step("build", ["nvcc", "-O3", "-arch=sm_90", "-std=c++17", "-o", "{work}/wide-check",
                            "bench/checks/wide-loads/check.cu"]),
             Step("run", ["{work}/wide-check"], stdout="{work}/wide-check.txt")],
            [Part("", "log", md="wide-check.txt", source="bench/checks/wide-loads/check.cu")])


def t_l2clean(a):
    return ("L2 preparations against ncu's flush (a retired measurement: docs/eval.md).",
            [Step("l2clean", ["bash", "bench/eval/l2clean/run.sh"], {"OUT": "{work}"})],
            [Part("", "log", md="l2clean/summary.txt", source="bench/eval/l2clean/run.sh")])


TASKS = {
    "suite": (t_suite, "the suite: naive, reference and --optimized-dir sources (bench/run.py)"),
    "restructure": (t_restructure, "one restructuring edit per program, measured by the suite"),
    "column": (t_column, "optimize on suite programs, sources exported for `suite --optimized-dir`"),
    "strategies": (t_strategies, "mcts, greedy, random at equal budget (bench/search/compare.py)"),
    "variants": (t_variants, "optimize on the suite's kernels in other styles beside the suite's own"),
    "optimize": (t_optimize, "optimize on programs (scripts/gpu-optimize.sh), journals kept"),
    "llm": (t_llm, "optimize --policy llm against the scripted server (scripts/gpu-llm.sh)"),
    "probe-checks": (t_probe_checks, "the probe's GPU checks (bench/eval/probe_gpu_checks.py)"),
    "ncu-compare": (t_ncu_compare, "eval's metrics beside ncu's (bench/eval/ncu_compare.py)"),
    "event-timing": (t_event_timing, "eval's times against CUDA events (bench/eval/event_timing.py)"),
    "dram-context": (t_dram_context, "DRAM write under profiling contexts (bench/eval/dram_context.py)"),
    "dram-single": (t_dram_single, "DRAM writes under replay schemes (bench/eval/dram_single.py)"),
    "l2clean": (t_l2clean, "L2 preparations against ncu (bench/eval/l2clean/run.sh)"),
    "verify-edits": (t_verify_edits, "every suggested edit verified (bench/edits/verify_examples.py)"),
    "verify-variants": (t_verify_variants, "the variants' own edits verified step by step (bench/edits/verify_examples.py)"),
    "stencil-edits": (t_stencil_edits, "stencil tiling and hoist (scripts/gpu-stencil-edits.sh)"),
    "gemm-edits": (t_gemm_edits, "register-blocked matmul edits (scripts/gpu-gemm-edits.sh)"),
    "block-scan": (t_block_scan, "block-scan on scan styles and the suite (scripts/gpu-edit-family.sh)"),
    "shared-tiling-block": (t_block_product, "shared-tiling rows on batched small products (scripts/gpu-edit-family.sh)"),
    "vectorize-stencil": (t_vectorize_stencil, "vectorize-stencil on stencil styles and the suite (scripts/gpu-edit-family.sh)"),
    "constant-memory": (t_constant_memory, "constant-memory on filters (scripts/gpu-edit-family.sh)"),
    "shared-tiling-rows": (t_stencil_rows, "shared-tiling rows on 2D stencils (scripts/gpu-edit-family.sh)"),
    "styles": (t_styles, "styles programs' edits applied and eval'd under the sanitizers (scripts/gpu-styles.sh)"),
    "warp-reduce": (t_warp_reduce, "warp-reduce on tree reductions (scripts/gpu-warp-reduce.sh)"),
    "dot-grid-stride": (t_dot_grid_stride, "warp-reduce grid_stride on the suite's dot, three grid caps"),
    "pointer-arrays": (t_pointer_arrays, "eval follows arrays of device pointers (test/eval/Inputs/ptrarray.cu)"),
    "wide-loads": (t_wide_loads, "wide-load tails against the CPU (bench/checks/wide-loads)"),
    "resume-demo": (t_resume_demo, "a search killed and resumed (bench/search/resume_demo.py)"),
    "acceptance": (t_acceptance, "the main job as a user runs it (scripts/gpu-acceptance.sh; about 390 s with --budget 4 on an H100: give a call 450 s)"),
    "verdicts": (t_verdicts, "eval --json time and verdict line of each program"),
    "synthesize": (t_synthesize, "synthesize and optimize every example spec (scripts/gpu-synthesize.sh)"),
    "synthesize-llm": (t_synthesize_llm, "synthesize's thoughts against the scripted server (scripts/gpu-synthesize-llm.sh)"),
    "canary": (t_canary, "the secrets canary: eval and optimize --policy llm find no key (scripts/gpu-canary.sh)"),
    "cmake-project": (t_cmake_project, "examples/cmake-project searched and rebuilt (scripts/gpu-cmake-project.sh)"),
    "projects": (t_projects, "warp-reduce on a samples reduction, kernels in an included .cu and a header"),
}
# Tasks that run a search keep state between calls.
SEARCHES = ("column", "strategies", "variants")
STATEFUL = SEARCHES + ("cmake-project",)


# ---------------------------------------------------------------------------
# Summaries
# ---------------------------------------------------------------------------

def demote(md):
    out, fence = [], False
    for line in md.splitlines():
        if line.startswith("```"):
            fence = not fence
        out.append("#" + line if not fence and line.startswith("#") else line)
    return "\n".join(out).strip() + "\n"


def fenced(text):
    return "```text\n" + text.rstrip() + "\n```\n"


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def journal_rows(tar_path, name):
    """Journals (and final records) of the optimize runs packed in tar_path."""
    rows, data, members = [], [], []
    with tarfile.open(tar_path) as t:
        for m in sorted(t.getmembers(), key=lambda m: m.name):
            if not m.isfile() or os.path.basename(m.name) != "journal.jsonl":
                continue
            text = t.extractfile(m).read()
            members.append((name + "/" + m.name.lstrip("./"), text))
            recs = [json.loads(l) for l in text.decode().splitlines() if l.strip()]
            head = next((r for r in recs if r.get("type") == "run"), {})
            fin = ([r for r in recs if r.get("type") == "final"] or [{}])[-1]
            prog = os.path.basename(head.get("file", m.name))
            rows.append("| %s | %s | %s | %s | %s |" % (
                prog, head.get("budget"), fin.get("evaluations"), fin.get("conclusion"),
                fin.get("stop_reason")))
            data.append({"program": prog, "budget": head.get("budget"),
                         "strategy": head.get("strategy"), "seed": head.get("seed"),
                         "final": fin})
    md = "\n".join(["| program | budget | evaluations | result | stop |",
                    "|---|---|---|---|---|"] + rows) + "\n"
    return md, {"runs": data}, members


def evals_table(paths):
    rows = ["| report | passed | kernel | median ms | original ms | verdict |",
            "|---|---|---|---|---|---|"]
    data = {}
    for p in paths:
        n = os.path.basename(p)[:-len(".eval.json")]
        try:
            d = json.loads(read(p))
        except ValueError as e:
            rows.append("| %s | unreadable: %s | | | | |" % (n, e))
            continue
        data[n] = d
        for k in d.get("kernels", []):
            t = (k.get("time") or {}).get("median_ms")
            o = (k.get("original_time") or {}).get("median_ms")
            rows.append("| %s | %s | %s | %s | %s | %s |" % (
                n, "yes" if d.get("passed") else "no", k.get("name"),
                "%.4f" % t if t else "—", "%.4f" % o if o else "—",
                (k.get("metrics") or {}).get("verdict") or ""))
    return "\n".join(rows) + "\n", data


def save_state(state, target):
    """Packs the search state (journals, every candidate's source, summaries,
    the evaluation cache; no snapshots, nothing over 2 MiB) beside the run
    folder, so a search stopped by a call's limit resumes in a later call on
    a fresh machine. The run folder's journals.tar.xz keeps no candidate
    sources; this archive is for resuming only, not to be committed."""
    name = os.path.basename(os.path.normpath(state))
    tmp, count = target + ".tmp", 0
    with tarfile.open(tmp, "w:xz") as t:
        for root, dirs, files in os.walk(state):
            dirs[:] = sorted(d for d in dirs if d != "eval")
            for f in sorted(files):
                path = os.path.join(root, f)
                if os.path.islink(path) or os.path.getsize(path) > (2 << 20):
                    continue
                t.add(path, arcname=os.path.join(name, os.path.relpath(path, state)))
                count += 1
    os.replace(tmp, target)
    return target, count


def collect(a, parts, work, state, failures):
    """(markdown sections, summary.json, archive members)."""
    md, datas, members = [], [], []
    for p in parts:
        sec, data = [], None
        if p.kind == "script":
            if p.md and os.path.exists(os.path.join(work, p.md)):
                sec.append(demote(read(os.path.join(work, p.md))))
            if p.js and os.path.exists(os.path.join(work, p.js)):
                text = read(os.path.join(work, p.js))
                data = (json.loads(text) if not p.js.endswith(".jsonl") else
                        [json.loads(l) for l in text.splitlines() if l.strip()])
                if not p.md:
                    sec.append(fenced(json.dumps(data, indent=1)))
        elif p.kind == "compare":
            base = [sys.executable, os.path.join(REPO, "bench/search/compare.py"),
                    "summarize", state]
            if a.task == "strategies":
                base += ["--strategies", "mcts,greedy,random"]
            r = subprocess.run(base, capture_output=True, text=True)
            sec.append(demote(r.stdout) if r.returncode == 0 else fenced(r.stderr))
            r = subprocess.run(base + ["--json"], capture_output=True, text=True)
            if r.returncode == 0:
                data = json.loads(r.stdout)
                times = os.path.join(state, "times.json")
                if os.path.exists(times):  # variants-time's, for variants-table
                    data["times"] = json.loads(read(times))
            keep = ("journal.jsonl", "summary.json", "settings.json", "best.cu", "times.json")
            for f in sorted(glob.glob(os.path.join(state, "**", "*"), recursive=True)):
                rel = os.path.relpath(f, state)
                parts_ = rel.split(os.sep)
                if (os.path.isfile(f) and not {"eval", "sources", "eval-cache"} & set(parts_)
                        and (os.path.basename(f) in keep or parts_[0] == "optimized")):
                    with open(f, "rb") as fh:
                        members.append((a.task + "/" + rel, fh.read()))
        elif p.kind == "journals":
            tar = os.path.join(work, p.js)
            if os.path.exists(tar):
                text, data, members_ = journal_rows(tar, a.task)
                sec.append(demote(text))
                members += members_
                for f in ("summary.txt",):
                    with tarfile.open(tar) as t:
                        for m in t.getmembers():
                            if os.path.basename(m.name) == f:
                                sec.append(fenced(t.extractfile(m).read().decode()))
        elif p.kind == "evals":
            paths = sorted(glob.glob(os.path.join(work, p.js)))
            text, data = evals_table(paths)
            sec.append(demote(text))
        elif p.kind == "log":
            if os.path.exists(os.path.join(work, p.md)):
                text = read(os.path.join(work, p.md))
                sec.append(fenced(text))
                data = {"log": text.splitlines()}
        if not sec:
            sec.append("Nothing came out of this step (see the failures above).\n")
        md.append((p, sec))
        datas.append((p, data))
    if len(parts) == 1 and datas[0][1] is not None and not failures:
        summary = datas[0][1]
    else:
        summary = {"run": os.path.basename(a.out), "task": a.task,
                   "failures": failures,
                   "parts": [{"title": p.title, "source": p.source, "data": d}
                             for p, d in datas if d is not None]}
    return md, summary, members


# Environment variables the step scripts read (scripts/gpu-*.sh).
PASSED_ENV = ("BUDGET", "DEADLINE", "DRY_RUN", "EXTRA", "LIMIT", "OPTIMIZE",
              "OPTIMIZE_TIMEOUT", "REPLIES", "SEED", "SRC", "STRATEGY", "TIME", "TOOL")


def bundle_info(bundle):
    """The BUILD-INFO lines tools/bundle.sh puts in the bundle (its commit)."""
    try:
        with tarfile.open(bundle) as t:
            for m in t.getmembers():
                if m.name.endswith("/BUILD-INFO") and m.isfile():
                    return t.extractfile(m).read().decode(errors="replace").splitlines()
    except (OSError, tarfile.TarError):
        pass
    return ["bundle built from: unknown (no BUILD-INFO in the bundle)"]


def machine(tool, bundle):
    lines = ["Date: " + datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")]
    if bundle and os.path.isfile(bundle):
        with open(bundle, "rb") as f:
            lines.append("bundle: %s sha256 %s" % (bundle, hashlib.sha256(f.read()).hexdigest()))
        lines += ["bundle " + l for l in bundle_info(bundle)]
    # The node's copy of the tree may carry an older .git than what was
    # copied, so its HEAD is not recorded: the bundle's BUILD-INFO is.
    for cmd in (["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,clocks.max.memory",
                 "--format=csv,noheader"], ["nvcc", "--version"],
                [tool, "--version"] if tool else None):
        if not cmd:
            continue
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=REPO)
            out = r.stdout.strip().splitlines()
            lines.append("%s: %s" % (" ".join(cmd[:2]), out[-1] if cmd[0] == "nvcc" and out
                                     else " / ".join(out)))
        except (OSError, subprocess.SubprocessError) as e:
            lines.append("%s: %s" % (cmd[0], e))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def fill(s, subs):
    for k, v in subs.items():
        s = s.replace("{" + k + "}", v)
    return s


def shell_line(step, subs):
    env = " ".join("%s=%s" % (k, shlex.quote(fill(v, subs))) for k, v in step.env.items())
    line = (env + " " if env else "") + shlex.join(fill(x, subs) for x in step.argv)
    line += " > " + shlex.quote(fill(step.stdout, subs)) if step.stdout else ""
    if step.cwd:
        line = "(cd %s && %s)" % (shlex.quote(fill(step.cwd, subs)), line)
    return line


def parse(argv):
    ap = argparse.ArgumentParser(
        prog="bench/gpu-run.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="tasks:\n" + "\n".join("  %-16s %s" % (k, v[1]) for k, v in TASKS.items()))
    ap.add_argument("task", nargs="?", help="one of the tasks below")
    ap.add_argument("programs", nargs="*",
                    help="programs (optimize, ncu-compare, event-timing, verify-edits, "
                         "verdicts, acceptance)")
    ap.add_argument("--list", action="store_true", help="list the tasks and exit")
    ap.add_argument("--print", action="store_true", dest="dry",
                    help="print the commands and the run folder; run and write nothing")
    ap.add_argument("--bundle", default=DEFAULT_BUNDLE, help="default: %(default)s")
    ap.add_argument("--out", help="the run folder (see above)")
    ap.add_argument("--label", help="appended to the default run folder's name")
    ap.add_argument("--work", help="scratch folder (default: a new temporary one)")
    ap.add_argument("--state", help="state kept between calls (column, strategies, "
                                    "variants, cmake-project; default gpu-state/<task>)")
    ap.add_argument("--phase", choices=("search", "check"),
                    help="cmake-project: one phase only (default: search, then check)")
    ap.add_argument("--kernels", help="suite, restructure: comma-separated suite programs")
    ap.add_argument("--optimized-dir", help="suite: <kernel>/optimized.cu sources to measure")
    ap.add_argument("--programs", dest="suite_programs",
                    help="column, strategies, variants, verify-variants: 'all' or comma-separated suite programs")
    ap.add_argument("--budget", type=int, help="evaluations per search")
    ap.add_argument("--time", help="optimize, llm: optimize --time per program")
    ap.add_argument("--extra", help="more optimize flags (column, strategies, optimize)")
    ap.add_argument("--gpus", type=int, default=1, help="column, strategies, variants: runs at once")
    ap.add_argument("--rerun", default="",
                    help="column, strategies, variants: comma-separated searches (a suite "
                         "program, or program.variant) to run again from scratch after a "
                         "change to the tool; their old runs move to <state>/superseded/. "
                         "Give it in one call only: a later call with it starts them over again")
    ap.add_argument("--jobs", type=int, default=16, help="suite: parallel compilations")
    ap.add_argument("--deadline", type=float, default=0,
                    help="start nothing new after this many seconds (where the script can)")
    ap.add_argument("--stop-at", type=float, default=0,
                    help="column, strategies, variants: stop a search still going at this many seconds")
    # Programs may come before or after the options.
    a = ap.parse_intermixed_args(argv)
    if a.list:
        for k, v in TASKS.items():
            print("%-16s %s" % (k, v[1]))
        sys.exit(0)
    if not a.task:
        ap.error("a task is needed (--list shows them)")
    if a.task not in TASKS:
        ap.error("unknown task '%s'; the tasks: %s" % (a.task, ", ".join(TASKS)))
    takes_programs = ("optimize", "ncu-compare", "event-timing", "verify-edits", "verdicts",
                      "acceptance", "styles")
    if a.programs and a.task not in takes_programs:
        ap.error("%s takes no programs (got %s)" % (a.task, " ".join(a.programs)))
    if a.task == "acceptance" and len(a.programs) > 1:
        ap.error("acceptance takes one program")
    if a.optimized_dir and a.task not in ("suite", "restructure"):
        ap.error("--optimized-dir is for suite and restructure")
    if a.suite_programs and a.task not in SEARCHES + ("verify-variants",):
        ap.error("--programs is for column, strategies, variants and verify-variants "
                 "(suite takes --kernels)")
    if a.state and a.task not in STATEFUL:
        ap.error("--state is for column, strategies, variants and cmake-project")
    if a.phase and a.task != "cmake-project":
        ap.error("--phase is for cmake-project")
    # Suite program names are checked here, before anything runs.
    try:
        if a.kernels:
            compare.parse_programs(a.kernels)
        if a.suite_programs:
            compare.parse_programs(a.suite_programs)
    except SystemExit as e:
        ap.error(str(e))
    for p in a.programs:
        if not os.path.exists(os.path.join(REPO, p)) and not os.path.exists(p):
            ap.error("%s: no such program" % p)
    a.programs_list = list(a.programs)
    a.programs = a.suite_programs
    return a


def main(argv=None):
    a = parse(argv)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    name = "%s-%s%s" % (date, a.task, "-" + a.label if a.label else "")
    if not a.out:
        a.out = os.path.join(os.environ["OUT"] if os.environ.get("OUT")
                             else os.path.join(REPO, "bench", "results"), name)
    state = a.state or os.path.join("gpu-state", a.task)
    intro, steps, parts = TASKS[a.task][0](a)
    work = a.work or ("WORK" if a.dry else tempfile.mkdtemp(prefix="gpu-run-"))
    if not a.dry:
        work = os.path.abspath(work)  # steps may run in folders of their own (cwd)
    tool_dir = os.path.join(work, "bundle")
    subs = {"work": work, "bundle": a.bundle, "state": state, "out": a.out,
            "tool": os.path.join(tool_dir, "clang-optiml-*", "bin", "clang-optiml")}
    # Variables the scripts read from the environment are part of the command.
    passed = ["%s=%s" % (k, shlex.quote(os.environ[k])) for k in PASSED_ENV
              if os.environ.get(k) is not None]
    invocation = " ".join(passed + ["python3 bench/gpu-run.py " + shlex.join(
        argv if argv is not None else sys.argv[1:])])
    unpack = any(s.unpack for s in steps)
    if a.dry:
        print("# task %s: %s" % (a.task, fill(intro, subs)))
        print("# run folder: %s (summary.md, summary.json%s)"
              % (a.out, ", journals.tar.xz" if any(p.kind in ("compare", "journals")
                                                    for p in parts) else ""))
        if a.task in SEARCHES:
            print("# search state (resumable): %s" % state)
        elif a.task in STATEFUL:
            print("# state kept between calls: %s" % state)
        if unpack:
            print(shlex.join(["mkdir", "-p", tool_dir]) + " && "
                  + shlex.join(["tar", "-C", tool_dir, "-xJf", a.bundle]))
        for s in steps:
            print(shell_line(s, subs))
        return 0

    if os.path.exists(a.out) and os.listdir(a.out):
        sys.stderr.write("gpu-run: %s exists: a recorded run is never overwritten "
                         "(--out or --label for another)\n" % a.out)
        return 2
    needs_bundle = unpack or any("{bundle}" in x for s in steps for x in s.argv)
    if needs_bundle and not os.path.isfile(a.bundle):
        sys.stderr.write("gpu-run: no bundle at %s (tools/bundle.sh builds it)\n" % a.bundle)
        return 2
    os.makedirs(work, exist_ok=True)
    if a.task in STATEFUL:
        os.makedirs(state, exist_ok=True)
    os.environ["PATH"] = "/usr/local/cuda/bin:" + os.environ.get("PATH", "")
    tool = None
    lines = ["# " + invocation, "# on %s, from the repository root" % date]
    if unpack:
        os.makedirs(tool_dir, exist_ok=True)
        with tarfile.open(a.bundle) as t:
            t.extractall(tool_dir)
        tool = (glob.glob(subs["tool"]) or [None])[0]
        if not tool:
            sys.stderr.write("gpu-run: %s holds no clang-optiml-*/bin/clang-optiml\n" % a.bundle)
            return 2
        subs["tool"] = tool
        lines.append(shlex.join(["tar", "-C", tool_dir, "-xJf", a.bundle]))
    failures = []
    for s in steps:
        line = shell_line(s, subs)
        lines.append(line)
        print("[gpu-run] %s" % line, flush=True)
        env = dict(os.environ, **{k: fill(v, subs) for k, v in s.env.items()})
        log_path = os.path.join(work, "step-%s.log" % s.name)
        with open(fill(s.stdout, subs) if s.stdout else log_path, "w") as out, \
                open(log_path, "a") as log:
            try:
                rc = subprocess.run([fill(x, subs) for x in s.argv],
                                    cwd=os.path.join(REPO, fill(s.cwd, subs)) if s.cwd else REPO,
                                    env=env, stdout=out,
                                    stderr=log if s.stdout else subprocess.STDOUT).returncode
            except OSError as e:
                log.write("%s\n" % e)
                rc = 127
        with open(log_path, "a") as log:
            log.write("[exit %d]\n" % rc)
        print("[gpu-run] %s: exit %d (log %s)" % (s.name, rc, log_path), flush=True)
        if rc not in s.ok:
            failures.append("%s exited with %d" % (s.name, rc))

    sections, summary, members = collect(a, parts, work, state, failures)
    # Assembled beside the run folder, then renamed: never half written.
    parent = os.path.dirname(os.path.abspath(a.out))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".gpu-run-", dir=parent)
    md = ["# %s: %s" % (a.task, os.path.basename(a.out)), "", fill(intro, subs), "",
          "Exact commands and the machine: the last two sections"
          + ("; journals: `journals.tar.xz`" if members else "") + ".", ""]
    if failures:
        md += ["**Failed steps**: " + "; ".join(failures) + " (logs in %s)." % work, ""]
    for p, sec in sections:
        if len(sections) > 1 or p.title:
            md += ["## " + (p.title or p.source), ""]
        md += sec
    md += ["", "## Command", "", fenced("\n".join(lines)),
           "## Machine", "", fenced(machine(tool, a.bundle if needs_bundle else None))]
    with open(os.path.join(tmp, "summary.md"), "w") as f:
        f.write("\n".join(md).rstrip() + "\n")
    with open(os.path.join(tmp, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    if members:
        import io
        with tarfile.open(os.path.join(tmp, "journals.tar.xz"), "w:xz") as t:
            for arc, data in members:
                info = tarfile.TarInfo(arc)
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    if os.path.exists(a.out):
        os.rmdir(a.out)  # empty (checked above)
    os.rename(tmp, a.out)
    print("[gpu-run] recorded %s%s" % (a.out, " (with failures)" if failures else ""))
    if a.task in STATEFUL and os.path.isdir(state):
        kept = save_state(state, os.path.join(parent, "gpu-state-%s.tar.xz" % a.task))
        print("[gpu-run] state for the next call: %s (%d files; not a result: "
              "tar -C gpu-state -xJf it, then carry gpu-state)" % (kept[0], kept[1]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

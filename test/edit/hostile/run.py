#!/usr/bin/env python3
"""Runs the hostile-edit corpus (cases.jsonl) and checks that each case is
stopped at the layer it names, and that each valid case is accepted.

  checks     `clang-optiml apply` rejects it, with `reason` in its message
  nvcc       apply accepts it; `nvcc -c` of the result fails
  verify, sanitizer, timeout
             apply accepts it and nvcc compiles it; with --gpu,
             `clang-optiml eval CAND.cu --against ORIG.cu --json` fails and
             its output holds `reason`
  valid      apply accepts it and nvcc compiles it (with --gpu, eval passes)

No output of any case may hold the content of a file an edit tried to pull
in (/etc/passwd's first line is looked for everywhere).

  run.py --tool build/bin/clang-optiml [--nvcc nvcc] [--gpu] [-j N]
         [--only ID ...] [--layer L ...] [--keep DIR] [-v]

apply and nvcc run in parallel (-j); with --gpu the evals then run one at a
time, each printed as it ends. On the H200 the whole corpus takes minutes;
--layer verify sanitizer timeout runs the hostile run-time cases alone.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(HERE, "Inputs")
MOCK_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "Inputs"))
HOSTILE = {"checks", "nvcc", "verify", "sanitizer", "timeout"}
RUNTIME = {"verify", "sanitizer", "timeout"}


def secret_markers():
    """Text that must never appear in any output: the first line of
    /etc/passwd (what the corpus tries to include)."""
    try:
        with open("/etc/passwd") as f:
            first = f.readline().strip()
        return [first] if len(first) > 8 else []
    except OSError:
        return []


def run(cmd, cwd, timeout):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return 124, "(timed out after %d s)" % timeout


def check_case(c, args, markers):
    """Returns (ok, message)."""
    d = os.path.join(args.work, c["id"])
    os.makedirs(d, exist_ok=True)
    for h in ("hostile.h",):
        shutil.copy(os.path.join(INPUTS, h), d)
    shutil.copy(os.path.join(MOCK_DIR, "cuda_mock.h"), d)
    shutil.copy(os.path.join(INPUTS, c["base"]), os.path.join(d, "orig.cu"))
    with open(os.path.join(d, "edit.json"), "w") as f:
        json.dump(c["edit"], f)
    cand = os.path.join(d, "cand.cu")
    outputs = []

    def leaked():
        return any(m in o for m in markers for o in outputs)

    rc, out = run([args.tool, "apply", "orig.cu", "--edit", "edit.json",
                   "-o", "cand.cu"] + c["flags"] +
                  ["--", "-nocudainc", "-nocudalib", "-I."], d, 120)
    outputs.append(out)
    layer = c["layer"]
    if layer == "checks":
        if leaked():
            return False, "the message quotes a file the edit pulled in"
        if rc == 0:
            return False, "apply accepted it (expected a rejection by the checks)"
        if os.path.exists(cand):
            return False, "apply failed but wrote the output"
        if c["reason"] not in out:
            return False, "rejected, but not for %r: %s" % (
                c["reason"], out.strip().splitlines()[0] if out.strip() else "")
        return True, "rejected: " + out.strip().splitlines()[0]
    if rc != 0:
        return False, "apply rejected it: " + (out.strip().splitlines() or [""])[0]
    rc, out = run([args.nvcc, "-c", "cand.cu", "-o", "cand.o"], d, 300)
    outputs.append(out)
    if leaked():
        return False, "nvcc output quotes a file the edit pulled in"
    if layer == "nvcc":
        if rc == 0:
            return False, "nvcc compiled it (expected nvcc to fail)"
        return True, "nvcc failed"
    if rc != 0:
        return False, "nvcc failed: " + (out.strip().splitlines() or [""])[0]
    if not args.gpu:
        return True, "accepted and compiled (run-time layer not run: no --gpu)"
    return None, "accepted and compiled"


def eval_case(c, args, markers):
    """The GPU layer: eval the candidate against the original. Returns
    (ok, message)."""
    d = os.path.join(args.work, c["id"])
    layer = c["layer"]
    cmd = [args.tool, "eval", "cand.cu", "--against", "orig.cu", "--json",
           "--timeout", str(args.timeout)]
    if layer in ("valid", "verify", "timeout"):
        # Sanitizers and metrics are not what these layers are about; they
        # would multiply the run time by ten or more.
        cmd += ["--no-sanitize", "--no-metrics"]
    elif layer == "sanitizer":
        cmd += ["--no-metrics"]
    rc, out = run(cmd, d, args.timeout * 30 + 120)
    with open(os.path.join(d, "eval.out"), "w") as f:
        f.write(out)
    if any(m in out for m in markers):
        return False, "eval output quotes a file the edit pulled in"
    report = eval_report(out)
    if report is None:
        return False, "eval printed no JSON report (exit %d): %s" % (
            rc, (out.strip().splitlines() or [""])[-1])
    status = report.get("verify", {}).get("status", "")
    if layer == "valid":
        if rc != 0 or status != "verified":
            return False, "eval rejected a valid edit (exit %d, %s)" % (rc, status)
        return True, "verified"
    if rc == 0:
        return False, "eval accepted it (expected the %s layer to stop it)" % layer
    if rc != 3:
        return False, "eval failed with exit %d instead of a verdict" % rc
    if layer == "verify":
        if status not in ("mismatch", "failed"):
            return False, "verification did not fail (%s)" % status
    elif layer == "sanitizer":
        hits = [t for t in report.get("sanitizers", [])
                if t.get("tool") == c["reason"] and t.get("ran")
                and not t.get("clean")]
        if not hits:
            return False, "%s did not report it" % c["reason"]
        return True, "%s reported it" % c["reason"]
    elif layer == "timeout":
        if "timed out" not in out.lower():
            return False, "no run timed out (%s)" % status
    if c["reason"].lower() not in out.lower():
        return False, "eval rejected it, but its report lacks %r" % c["reason"]
    return True, "eval rejected it (%s, %s)" % (status, c["reason"])


def eval_report(out):
    """The JSON object eval --json printed (other lines around it are
    progress on stderr)."""
    start = out.find("{")
    while start != -1:
        try:
            obj, _ = json.JSONDecoder().raw_decode(out[start:])
            if isinstance(obj, dict) and "verify" in obj:
                return obj
        except ValueError:
            pass
        start = out.find("{", start + 1)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or
                    "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--cases", default=os.path.join(HERE, "cases.jsonl"))
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--timeout", type=int, default=20,
                    help="eval --timeout for each program run (GPU mode)")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--layer", nargs="*",
                    help="only the cases meant for these layers")
    ap.add_argument("--keep", help="keep the work files in this directory")
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args()
    if os.sep not in args.tool:
        args.tool = shutil.which(args.tool) or args.tool
    args.tool = os.path.abspath(args.tool)
    with open(args.cases) as f:
        cases = [json.loads(l) for l in f if l.strip()]
    if args.only:
        cases = [c for c in cases if c["id"] in args.only]
    if args.layer:
        cases = [c for c in cases if c["layer"] in args.layer]
    args.work = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(
        prefix="hostile-")
    os.makedirs(args.work, exist_ok=True)
    markers = secret_markers()
    start = time.time()

    def report(c, ok, msg):
        if not ok or args.v:
            print("%s %s [%s] %s: %s" % ("ok  " if ok else "FAIL", c["id"],
                                         c["layer"], c["what"], msg),
                  flush=True)

    # apply and nvcc in parallel; then, with --gpu, the evals one at a time
    # (one GPU), each reported as it ends.
    results = {}
    pending = []
    with concurrent.futures.ThreadPoolExecutor(max(1, args.j)) as pool:
        futures = {pool.submit(check_case, c, args, markers): c for c in cases}
        for f in concurrent.futures.as_completed(futures):
            c = futures[f]
            ok, msg = f.result()
            if ok is None:
                pending.append(c)
                continue
            results[c["id"]] = (ok, msg)
            report(c, ok, msg)
    if pending:
        print("apply and nvcc done for %d cases (%.0f s); %d evals on the GPU"
              % (len(cases), time.time() - start, len(pending)), flush=True)
    for c in sorted(pending, key=lambda c: c["id"]):
        t0 = time.time()
        ok, msg = eval_case(c, args, markers)
        results[c["id"]] = (ok, "%s (%.0f s)" % (msg, time.time() - t0))
        report(c, *results[c["id"]])
    results = [(c, results[c["id"]]) for c in cases]
    # Without --gpu the run-time cases are only brought to the GPU layer
    # (applied and compiled); they are counted apart, not as stopped.
    checked = HOSTILE if args.gpu else HOSTILE - RUNTIME
    stopped = sum(1 for c, (ok, _) in results if ok and c["layer"] in checked)
    hostile = sum(1 for c in cases if c["layer"] in checked)
    ready = sum(1 for c, (ok, _) in results
                if ok and not args.gpu and c["layer"] in RUNTIME)
    runtime = sum(1 for c in cases if not args.gpu and c["layer"] in RUNTIME)
    accepted = sum(1 for c, (ok, _) in results if ok and c["layer"] == "valid")
    valid = sum(1 for c in cases if c["layer"] == "valid")
    by_layer = {}
    for c, (ok, _) in results:
        t = by_layer.setdefault(c["layer"], [0, 0])
        t[0] += ok
        t[1] += 1
    print("layers: " + ", ".join("%s %d/%d" % (k, v[0], v[1])
                                 for k, v in sorted(by_layer.items())))
    print("hostile corpus: %d of %d stopped at the expected layer, "
          "%d of %d valid accepted (%s, %.0f s)" %
          (stopped, hostile, accepted, valid,
           "GPU layers run" if args.gpu else
           "GPU layers not run: %d of %d run-time cases applied and compiled"
           % (ready, runtime), time.time() - start))
    if not args.keep:
        shutil.rmtree(args.work, ignore_errors=True)
    return 0 if (stopped == hostile and accepted == valid and
                 ready == runtime) else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Checks, on a GPU node, that every catalog edit `transforms` suggests for a
program still produces the original's results.

For each program and each suggested edit (every suggestion of every
applicable kind, or the first per kind with --first-only): `apply` writes the
candidate, and `eval --against ORIGINAL` builds both, runs them under the
probe and compares every verified launch of the target kernel. The result
table (markdown) and one JSON line per edit go to --out.

    python3 bench/edits/verify_examples.py --tool BUNDLE/bin/clang-optiml \
        --out $OUT examples/saxpy.cu examples/transpose.cu

With --source-edits, a program's own `// EDIT: {...}` lines (the variants
corpus, test/edit/variants-*.test, extracted by `bench/search/compare.py
variants`) are applied one after another instead, and each step's program is
verified against the original: the edits the suite's own version gets, on the
same kernel written another way.

    python3 bench/edits/verify_examples.py --tool BUNDLE/bin/clang-optiml \
        --source-edits --out $OUT KERNELS/*.*/naive.cu

An original whose own two runs disagree (nondeterministic) is evaluated
again with --verify-last=false, as docs/optimize.md advises for iterative
programs whose float noise grows over the launches; such a row says
"verified (first launches)".

Edits that declare a precision change are evaluated with --precision-changing
(the tolerance the search would use). Timing is reported as eval measured
it; with --jobs > 1 several evaluations share the GPU and the times are not
comparable (verification is unaffected).
"""
import argparse
import concurrent.futures as cf
import json
import os
import subprocess
import sys
import tempfile
import time


def run(cmd, timeout=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def suggestions(tool, path, first_only):
    rc, out, err = run([tool, "transforms", path, "--json"])
    if rc != 0:
        raise SystemExit(f"transforms failed on {path}: {err.strip()}")
    d = json.loads(out)
    for k in d["kernels"]:
        for a in k["applicable"]:
            sugg = a.get("suggestions", [])
            if first_only:
                sugg = sugg[:1]
            for s in sugg:
                yield k["kernel"], a["kind"], s, a.get("changes_precision", False)


def source_edits(path):
    """The program's `// EDIT: {...}` lines, in order (empty when it has none)."""
    with open(path) as f:
        return [json.loads(l[len("// EDIT: "):]) for l in f if l.startswith("// EDIT: ")]


def program_name(path):
    """A readable name: the variant's folder (axpy.soa/naive.cu) or the file."""
    base = os.path.basename(path)
    return os.path.basename(os.path.dirname(path)) if base == "naive.cu" else base[:-3]


def apply_edit(tool, src, edit, work, tag):
    """`apply` EDIT to SRC: (candidate path, nvcc flags, changes precision) or
    raises RuntimeError with apply's last line."""
    ej = os.path.join(work, tag + ".json")
    cu = os.path.join(work, tag + ".cu")
    with open(ej, "w") as f:
        json.dump(edit, f)
    rc, out, err = run([tool, "apply", src, "--edit", ej, "--json", "-o", cu])
    if rc != 0:
        raise RuntimeError(" ".join(err.strip().splitlines()[-1:]))
    applied = json.loads(out[: out.rindex("]") + 1])
    flags, precision = [], False
    for a in applied:
        flags += a.get("nvcc_flags", [])
        precision = precision or a.get("changes_precision", False)
    return cu, flags, precision


def check_chain(tool, path, edits, work, args):
    """Applies EDITS one after another and verifies every step against PATH."""
    rows, src, flags, precision = [], path, [], False
    for n, edit in enumerate(edits, 1):
        kernel = edit["target"].split("/")[0]
        row = {"program": path, "kernel": kernel, "edit": edit, "step": n}
        try:
            src, more, prec = apply_edit(tool, src, edit, work,
                                         f"{program_name(path)}-step{n}")
        except RuntimeError as e:
            row.update(status="apply-failed", detail=str(e))
            return rows + [row]
        flags, precision = flags + more, precision or prec
        rows.append(evaluate(tool, path, src, kernel, flags, precision, row, work, args))
    return rows


def check(tool, path, kernel, edit, precision, work, args):
    tag = f"{program_name(path)}-{edit['kind']}-{abs(hash(json.dumps(edit, sort_keys=True))) % 10**8}"
    row = {"program": path, "kernel": kernel, "edit": edit}
    try:
        cu, flags, prec = apply_edit(tool, path, edit, work, tag)
    except RuntimeError as e:
        row.update(status="apply-failed", detail=str(e))
        return row
    return evaluate(tool, path, cu, kernel, flags, precision or prec, row, work, args)


def evaluate(tool, path, cu, kernel, flags, precision, row, work, args):
    """`eval CU --against PATH` on KERNEL; the verdict and time go into ROW."""
    cmd = [tool, "eval", cu, "--against", path, "--kernel", kernel, "--json",
           "--no-metrics", "--timeout", str(args.timeout),
           "--cache-dir", os.path.join(work, "cache")]
    if not args.sanitize:
        cmd.append("--no-sanitize")
    if precision:
        cmd.append("--precision-changing")
    for fl in flags:
        cmd.append("--nvcc-arg=" + fl)
    t = time.time()
    for last in (True, False):
        try:
            rc, out, err = run(cmd if last else cmd + ["--verify-last=false"],
                               timeout=args.timeout * 30)
        except subprocess.TimeoutExpired:
            row.update(status="eval-timeout")
            return row
        try:
            rep = json.loads(out)
        except json.JSONDecodeError:
            row.update(status="eval-error", detail=(err or out).strip()[-300:])
            return row
        v = rep.get("verify", {})
        # An original whose own two runs disagree is judged on its first
        # launches alone, the lever docs/optimize.md gives for iterative
        # programs whose float noise grows (the row says so).
        if v.get("status") != "nondeterministic" or not last:
            break
        row["last_launch"] = "nondeterministic in the original: " + v.get("detail", "")[:160]
    row["eval_seconds"] = round(time.time() - t, 1)
    row["status"] = v.get("status", "?")
    row["detail"] = v.get("detail", "")
    if not last and row["status"] == "verified":
        row["status"] = "verified (first launches)"
    times = [k.get("time", {}).get("median_ms") for k in rep.get("kernels", [])]
    row["median_ms"] = times[0] if times else None
    san = [f"{s.get('tool')}: {'clean' if s.get('clean') else s.get('first_error', '')}"
           for s in rep.get("sanitizers", [])]
    if san:
        row["sanitizers"] = san
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", required=True, help="clang-optiml binary")
    ap.add_argument("--out", default=os.environ.get("OUT", "verify-out"))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=30, help="per program run, s")
    ap.add_argument("--first-only", action="store_true")
    ap.add_argument("--sanitize", action="store_true",
                    help="also run memcheck and racecheck on every candidate")
    ap.add_argument("--deadline", type=float, default=0,
                    help="start no evaluation after this many seconds")
    ap.add_argument("--source-edits", action="store_true",
                    help="apply each program's own `// EDIT:` lines in order and verify "
                         "every step (programs without such lines are skipped)")
    ap.add_argument("programs", nargs="+")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="verify-edits-")
    began = time.time()
    if args.source_edits:
        todo = [(p, source_edits(p)) for p in args.programs]
        todo = [t for t in todo if t[1]]
        print(f"{sum(len(e) for _, e in todo)} edits in {len(todo)} programs to check",
              flush=True)
    else:
        todo = [(p, *s) for p in args.programs
                for s in suggestions(args.tool, p, args.first_only)]
        print(f"{len(todo)} edits to check", flush=True)
    rows = []
    log = open(os.path.join(args.out, "verify-edits.jsonl"), "w")

    def one(item):
        late = args.deadline and time.time() - began > args.deadline
        if args.source_edits:
            path, edits = item
            if late:
                return [{"program": path, "kernel": e["target"].split("/")[0], "edit": e,
                         "step": n, "status": "not-run (deadline)"}
                        for n, e in enumerate(edits, 1)]
            return check_chain(args.tool, path, edits, work, args)
        path, kernel, kind, edit, prec = item
        if late:
            return [{"program": path, "kernel": kernel, "edit": edit,
                     "status": "not-run (deadline)"}]
        return [check(args.tool, path, kernel, edit, prec, work, args)]

    with cf.ThreadPoolExecutor(args.jobs) as ex:
        for done in ex.map(one, todo):
            for row in done:
                rows.append(row)
                log.write(json.dumps(row) + "\n")
                log.flush()
                print(f"{program_name(row['program'])} {row['edit']['kind']} "
                      f"{json.dumps(row['edit'].get('params', {}))}: {row['status']} "
                      f"{row.get('detail') or ''}", flush=True)
    with open(os.path.join(args.out, "verify-edits.md"), "w") as f:
        f.write("| program | kernel | edit | params | result | eval ms | detail |\n")
        f.write("| --- | --- | --- | --- | --- | --- | --- |\n")
        # With --source-edits each row is the program after this edit and
        # the ones above it.
        for r in rows:
            det = r.get("detail") or ""
            if isinstance(det, list):
                det = " ".join(det)
            f.write(f"| {program_name(r['program'])} | {r['kernel']} | "
                    f"{r['edit']['kind']} | `{json.dumps(r['edit'].get('params', {}))}` | "
                    f"{r['status']} | {r.get('median_ms') or ''} | "
                    f"{(det or r.get('last_launch', '')).replace('|', '/')[:120]} |\n")
    bad = [r for r in rows if not r["status"].startswith("verified")]
    print(f"{len(rows) - len(bad)} verified, {len(bad)} not verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())

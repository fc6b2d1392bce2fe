#!/usr/bin/env python3
"""The catalog on real programs, on the CPU: what `transforms` offers, whether
every suggestion applies, and whether each applied edit compiles with nvcc.

Programs are CUDA files of public suites (Rodinia, HeCBench, the CUDA
samples), listed in bench/real/programs.txt as `SOURCE:DIR` lines, each DIR a
program's folder inside that suite's git checkout. Nothing of theirs is kept
here: the checkouts are given with --source NAME=PATH (a work tree, or a bare
git directory, whose HEAD is extracted), and the run records their commits.

For every .cu file of a program (its own folder on the include path, plus the
suite's common folders):

  1. nvcc -c -arch=sm_90 compiles the file as written (else it is counted,
     and its edits are applied but not compiled);
  2. `clang-optiml transforms FILE --json -v` lists what applies, with its
     suggestions, and why the rest does not;
  3. each suggestion is applied alone (`apply FILE --edit E -o OUT`): a
     refusal of the tool's own suggestion is a defect;
  4. each applied edit is compiled with the same nvcc command: a failure is
     a defect.

Each file's result is written to OUT/files/ as soon as it is done, so a run
that stops resumes where it stopped. The summary (OUT/summary.md,
OUT/summary.json) counts files, kernels, offers per kind, and every defect
with its command.

  python3 bench/real/sweep.py --tool build/bin/clang-optiml \\
      --source hecbench=/path/to/HeCBench --source rodinia=/path/to/gpu-rodinia \\
      --source samples=/path/to/cuda-samples --out /tmp/real [--jobs 2]
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

SOURCE_FILE = re.compile(r"\.(cu|cuh|h|hh|hpp|hxx|c|cc|cpp|cxx|inc|inl|def)$")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Folders of a suite that its programs include from, relative to its root.
COMMON_INCLUDES = {
    "samples": ["Common"],
    "rodinia": ["common", "cuda/common"],
    "hecbench": ["src/include"],
}
# What an old suite needs to build with CUDA 13, as a user porting it would
# add: Rodinia calls cudaThreadSynchronize (removed) and includes the
# samples' helper_cuda.h.
COMPAT_FLAGS = {
    "rodinia": ["-DcudaThreadSynchronize=cudaDeviceSynchronize", "-I{samples}/Common"],
}


def families():
    """Each transform kind's family, as docs/transforms/<kind>.md states it."""
    out = {}
    folder = os.path.join(ROOT, "docs", "transforms")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".md") or name == "README.md":
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            m = re.search(r"Family: ([a-z -]+?)[\s(]", f.read())
        if m:
            out[name[:-3]] = m.group(1).strip()
    return out


def read_list(path):
    programs = []
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            source, _, folder = line.partition(":")
            if not folder:
                sys.exit(f"sweep: {path}: '{line}' is not SOURCE:DIR")
            programs.append((source, folder.strip("/")))
    return programs


def checkout(name, path, work):
    """A work tree for a suite: PATH itself, or HEAD of a bare git dir."""
    git = ["git", "--git-dir", path] if not os.path.isdir(os.path.join(path, ".git")) else ["git", "-C", path]
    try:
        commit = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        commit = "unknown"
    if os.path.isdir(os.path.join(path, ".git")) or not os.path.exists(os.path.join(path, "HEAD")):
        return path, commit
    tree = os.path.join(work, "src", name)
    stamp = os.path.join(tree, ".commit")
    if os.path.exists(stamp) and open(stamp).read().strip() == commit:
        return tree, commit
    shutil.rmtree(tree, ignore_errors=True)
    os.makedirs(tree)
    # Only sources and headers: a snapshot may lack its large data files.
    listing = subprocess.run(git + ["ls-tree", "-r", "-z", "HEAD"], capture_output=True,
                             check=True).stdout.decode("utf-8", "replace").split("\0")
    wanted = []
    for entry in listing:
        meta, _, name = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob" and SOURCE_FILE.search(name):
            wanted.append((parts[2], name))
    batch = subprocess.Popen(git + ["cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for sha, name in wanted:
        batch.stdin.write(sha.encode() + b"\n")
        batch.stdin.flush()
        header = batch.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            continue
        data = batch.stdout.read(int(header[2]))
        batch.stdout.read(1)
        dest = os.path.normpath(os.path.join(tree, name))
        if not dest.startswith(tree + os.sep):
            continue
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(data)
    batch.stdin.close()
    batch.wait()
    with open(stamp, "w") as f:
        f.write(commit + "\n")
    return tree, commit


def run(cmd, timeout, cwd=None):
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                           errors="replace")
        return p.returncode, p.stdout, p.stderr, time.monotonic() - start
    except subprocess.TimeoutExpired:
        return "timeout", "", f"timed out after {timeout} s", time.monotonic() - start


def tail(text, n=600):
    text = text.strip()
    return text if len(text) <= n else "..." + text[-n:]


def list_transforms(args, path, flags, rec):
    """`transforms` on the file: its kernels (offers, reasons) into rec, and
    the suggested edits; None when it fails."""
    for key in ("transforms_error", "transforms_rc", "kernels"):
        rec.pop(key, None)
    rc, out, err, secs = run([args.tool, "transforms", path, "--json", "-v", "--"] + flags, args.timeout)
    rec["transforms_s"] = round(secs, 2)
    if rc != 0:
        rec["transforms_error"] = tail(err or out)
        rec["transforms_rc"] = rc
        return None
    try:
        doc = json.loads(out)
    except json.JSONDecodeError as e:
        rec["transforms_error"] = f"not JSON: {e}"
        return None
    kernels = []
    edits = []
    for k in doc.get("kernels", []):
        offers = [{"kind": a["kind"], "target": a["target"], "suggestions": len(a.get("suggestions", []))}
                  for a in k.get("applicable", [])]
        why = [{"kind": n["kind"], "reason": n.get("reason", "")} for n in k.get("not_applicable", [])]
        kernels.append({"kernel": k["kernel"], "offers": offers, "not": why})
        for a in k.get("applicable", []):
            for s in a.get("suggestions", []):
                edits.append(s)
    rec["kernels"] = kernels
    return edits


def flags_for(args, tree, source, folder):
    incs = [os.path.join(tree, folder)] + [os.path.join(tree, c) for c in COMMON_INCLUDES.get(source, [])
                                          if os.path.isdir(os.path.join(tree, c))]
    compat = [f.format(**args.trees) for f in COMPAT_FLAGS.get(source, [])
              if all(f"{{{k}}}" not in f or k in args.trees for k in ("samples",))]
    return [f"-I{i}" for i in incs] + compat + ["-std=c++17"]


def refresh(args, tree, rec):
    """A record made by another build of the tool: when that build's
    `transforms` suggests the same edits and none of them was a defect, only
    the offers and reasons are refreshed (the edits' outcomes stand);
    otherwise the file is redone (a defect is always judged by the build
    that reports it)."""
    path = os.path.join(tree, rec["program"], rec["file"])
    flags = flags_for(args, tree, rec["source"], rec["program"])
    new = dict(rec)
    edits = list_transforms(args, path, flags, new)
    old = [e["edit"] for e in rec.get("edits", [])]
    if edits is None and "transforms_error" in rec:
        new["tool_sha"] = args.tool_sha
        return new
    defect = any("refused" in e or e.get("nvcc") is False for e in rec.get("edits", []))
    if edits is not None and "transforms_error" not in rec and edits == old and not defect:
        new["tool_sha"] = args.tool_sha
        return new
    return sweep_file(args, tree, rec["source"], rec["program"], rec["file"])


def sweep_file(args, tree, source, folder, cu):
    path = os.path.join(tree, folder, cu)
    flags = flags_for(args, tree, source, folder)
    nvcc = [args.nvcc, "-c", "-arch=sm_90", "-w"] + flags
    scratch = os.path.join(args.out, "scratch", hashlib.sha1(path.encode()).hexdigest()[:12])
    os.makedirs(scratch, exist_ok=True)
    rec = {"source": source, "program": folder, "file": cu}
    rc, _, err, _ = run(nvcc + [path, "-o", os.path.join(scratch, "orig.o")], args.timeout)
    rec["nvcc_original"] = rc == 0
    if rc != 0:
        rec["nvcc_original_error"] = tail(err)
    rec["tool_sha"] = args.tool_sha
    edits = list_transforms(args, path, flags, rec)
    if edits is None:
        shutil.rmtree(scratch, ignore_errors=True)
        return rec
    results = []
    compile_all = args.compile_all
    kinds_seen = set()

    def seen_local(e):
        if args.families.get(e["kind"]) == "restructuring":
            return False
        key = (e["kind"], e["target"].split("/")[0])
        if key in kinds_seen:
            return True
        kinds_seen.add(key)
        return False

    for n, e in enumerate(edits):
        ej = os.path.join(scratch, f"e{n}.json")
        with open(ej, "w") as f:
            json.dump(e, f)
        # A copy of the program's folder, edited in place: an edit may
        # rewrite a header or .cu file that this file includes.
        work = os.path.join(scratch, "w")
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(os.path.join(tree, folder), work)
        wflags = [f"-I{work}"] + flags[1:]
        rc, out, err, secs = run([args.tool, "apply", os.path.join(work, cu), "--edit", ej, "-i", "--"]
                                 + wflags, args.timeout)
        r = {"edit": e, "apply_s": round(secs, 2)}
        if rc != 0:
            r["refused"] = tail(err or out)
            r["apply_rc"] = rc
        elif rec["nvcc_original"] and not compile_all and seen_local(e):
            # Another suggestion of this local kind for this kernel (other
            # numbers) compiled already: applied and checked, not compiled.
            r["nvcc_skipped"] = True
        elif rec["nvcc_original"]:
            rc2, _, err2, _ = run([args.nvcc, "-c", "-arch=sm_90", "-w"] + wflags
                                  + [os.path.join(work, cu), "-o", os.path.join(scratch, f"o{n}.o")],
                                  args.timeout)
            r["nvcc"] = rc2 == 0
            if rc2 != 0:
                r["nvcc_error"] = tail(err2, 1200)
        results.append(r)
    rec["edits"] = results
    shutil.rmtree(scratch, ignore_errors=True)
    return rec


# Why a kernel gets no restructuring offer, by the first of these that its
# refusals (the tool's own reasons) name; the order puts what keeps every
# restructuring away (the launches unseen) first.
CAUSES = [
    ("its launches are in another file of the program",
     ("outside the file an edit rewrites", "never launched in this file")),
    ("launched through a function pointer", ("address is taken",)),
    ("already cooperates (shared memory, barriers, warp primitives)",
     ("already cooperates", "uses shared memory or barriers", "already uses shared memory",
      "already synchronizes")),
    ("no bounds guard after its index (the grid covers the data exactly)",
     ("not followed at once by a bounds guard", "is not a bounds guard")),
    ("no thread index of the usual forms", ("no index of the form", "no thread index")),
    ("uses 2D/3D thread indices the pattern does not take", ("2D thread",)),
]


def cause(kernel, fam):
    reasons = " ".join(n["reason"] for n in kernel["not"] if fam.get(n["kind"]) == "restructuring")
    for name, needles in CAUSES:
        if any(x in reasons for x in needles):
            return name
    return "other (each pattern's own reason)"


def summarize(recs, fam, meta):
    files = len(recs)
    compiled = sum(r["nvcc_original"] for r in recs)
    parsed = [r for r in recs if "kernels" in r]
    kernels = [k for r in parsed for k in r["kernels"]]
    kinds = {}
    for k in kernels:
        for o in k["offers"]:
            kinds.setdefault(o["kind"], {"kernels": set(), "suggestions": 0})
            kinds[o["kind"]]["kernels"].add((id(k)))
    restructuring = [k for k in kernels if any(fam.get(o["kind"]) == "restructuring" for o in k["offers"])]
    any_offer = [k for k in kernels if k["offers"]]
    causes = {}
    for k in kernels:
        if k not in restructuring:
            c = cause(k, fam)
            causes[c] = causes.get(c, 0) + 1
    edits = [e for r in parsed for e in r["edits"]]
    by_kind = {}
    for r in parsed:
        for e in r["edits"]:
            b = by_kind.setdefault(e["edit"]["kind"], {"suggested": 0, "refused": 0, "compiled": 0,
                                                       "failed": 0, "kernels": 0, "not_compiled": 0})
            b["suggested"] += 1
            if "refused" in e:
                b["refused"] += 1
            elif e.get("nvcc") is True:
                b["compiled"] += 1
            elif e.get("nvcc") is False:
                b["failed"] += 1
            else:
                b["not_compiled"] += 1
    for kind, v in kinds.items():
        by_kind.setdefault(kind, {"suggested": 0, "refused": 0, "compiled": 0, "failed": 0, "kernels": 0,
                                 "not_compiled": 0})
        by_kind[kind]["kernels"] = len(v["kernels"])
    defects = []
    for r in parsed:
        for e in r["edits"]:
            if "refused" in e or e.get("nvcc") is False:
                defects.append({"file": f"{r['source']}:{r['program']}/{r['file']}", "edit": e["edit"],
                                "why": e.get("refused") or e.get("nvcc_error")})
    # A file nvcc cannot compile alone either is a fragment another file
    # includes (Rodinia's kernels): counted, not a failure of the tool.
    failures = [{"file": f"{r['source']}:{r['program']}/{r['file']}", "why": r["transforms_error"]}
                for r in recs if "transforms_error" in r and r["nvcc_original"]]
    fragments = sum(1 for r in recs if "transforms_error" in r and not r["nvcc_original"])
    summary = {
        "meta": meta,
        "files": files, "files_nvcc_ok": compiled, "files_parsed": len(parsed),
        "programs": len({(r["source"], r["program"]) for r in recs}),
        "kernels": len(kernels), "kernels_with_offer": len(any_offer),
        "kernels_with_restructuring_offer": len(restructuring),
        "no_restructuring_causes": causes,
        "fragments": fragments, "edits": len(edits), "by_kind": by_kind, "defects": defects, "transforms_failures": failures,
        "transforms_median_s": sorted(r["transforms_s"] for r in parsed)[len(parsed) // 2] if parsed else None,
    }
    return summary


def markdown(s, fam):
    lines = [f"# The catalog on real programs ({s['meta']['date']})", "",
             f"Command: `{s['meta']['command']}`", "",
             "Sources: " + ", ".join(f"{k} at {v}" for k, v in s["meta"]["commits"].items()), "",
             f"- {s['programs']} programs, {s['files']} .cu files ({s['files_nvcc_ok']} compile with nvcc as "
             f"written, {s['files_parsed']} parsed by `transforms`; {s['fragments']} neither compile nor parse "
             f"alone, being fragments other files include), {s['kernels']} kernels",
             f"- kernels with an offer: {s['kernels_with_offer']}; with a restructuring offer: "
             f"{s['kernels_with_restructuring_offer']}",
             f"- suggestions applied alone: {s['edits']}; defects (a suggestion refused by `apply`, or "
             f"an applied edit nvcc rejects): {len(s['defects'])}",
             f"- `transforms` per file: median {s['transforms_median_s']} s", "",
             "Kernels without a restructuring offer, by the first cause their refusals name:", "",
             "| cause | kernels |", "|---|---|"]
    for c, n in sorted(s["no_restructuring_causes"].items(), key=lambda x: -x[1]):
        lines.append(f"| {c} | {n} |")
    lines += ["",
             "| kind | family | kernels offered | suggestions | refused by apply | compiled | nvcc failed | applied, not compiled |",
             "|---|---|---|---|---|---|---|---|"]
    for kind in sorted(s["by_kind"], key=lambda k: (fam.get(k, ""), k)):
        b = s["by_kind"][kind]
        lines.append(f"| {kind} | {fam.get(kind, '?')} | {b['kernels']} | {b['suggested']} | {b['refused']} | "
                     f"{b['compiled']} | {b['failed']} | {b['not_compiled']} |")
    if s["transforms_failures"]:
        lines += ["", "Files nvcc compiles that `transforms` could not read:", ""]
        lines += [f"- {f['file']}: {f['why'].splitlines()[-1] if f['why'] else ''}" for f in s["transforms_failures"]]
    if s["defects"]:
        lines += ["", "Defects:", ""]
        def first_error(text):
            found = [x for x in (text or "").splitlines() if "rejected" in x or "error:" in x]
            return (found or (text or "").splitlines() or [""])[0]
        lines += [f"- {d['file']}: `{json.dumps(d['edit'])}`: {first_error(d['why'])}" for d in s["defects"]]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", default=os.path.join(ROOT, "build", "bin", "clang-optiml"))
    ap.add_argument("--source", action="append", default=[], metavar="NAME=PATH",
                    help="a suite's checkout (work tree or bare git directory)")
    ap.add_argument("--list", default=os.path.join(HERE, "programs.txt"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--nvcc", default="/usr/local/cuda/bin/nvcc")
    ap.add_argument("--timeout", type=int, default=180, help="seconds per command")
    ap.add_argument("--only", help="programs whose SOURCE:DIR contains this text")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--compile-all", action="store_true",
                    help="compile every applied suggestion (default: every restructuring one, and the "
                         "first of each other kind per kernel)")
    args = ap.parse_args()
    args.out = os.path.abspath(args.out)
    os.makedirs(os.path.join(args.out, "files"), exist_ok=True)
    # The run uses its own copy of the tool, so a rebuild meanwhile changes
    # nothing; records made with another build are refreshed (refresh()).
    with open(args.tool, "rb") as f:
        args.tool_sha = hashlib.sha256(f.read()).hexdigest()[:16]
    copy = os.path.join(args.out, "tool", args.tool_sha, "clang-optiml")
    if not os.path.exists(copy):
        os.makedirs(os.path.dirname(copy), exist_ok=True)
        shutil.copy2(args.tool, copy + ".tmp")
        os.replace(copy + ".tmp", copy)
    args.tool = copy
    sources = {}
    commits = {}
    for s in args.source:
        name, _, path = s.partition("=")
        if not path or not os.path.isdir(path):
            sys.exit(f"sweep: --source {s}: not NAME=DIR with an existing DIR")
        sources[name], commits[name] = checkout(name, os.path.abspath(path), args.out)
    args.trees = sources
    args.families = families()
    programs = read_list(args.list)
    if args.only:
        programs = [p for p in programs if args.only in f"{p[0]}:{p[1]}"]
    tasks = []
    for source, folder in programs:
        if source not in sources:
            sys.exit(f"sweep: {source}:{folder}: no --source {source}=PATH")
        d = os.path.join(sources[source], folder)
        if not os.path.isdir(d):
            print(f"sweep: {source}:{folder}: no such folder, skipped", file=sys.stderr)
            continue
        for cu in sorted(os.listdir(d)):
            if cu.endswith(".cu"):
                tasks.append((source, folder, cu))
    done = {}
    for name in os.listdir(os.path.join(args.out, "files")):
        with open(os.path.join(args.out, "files", name)) as f:
            r = json.load(f)
        done[(r["source"], r["program"], r["file"])] = r
    todo = [t for t in tasks if t not in done or done[t].get("tool_sha") != args.tool_sha]
    if not args.report_only and todo:
        print(f"sweep: {len(tasks)} files, {len(todo)} to do, {args.jobs} at a time", file=sys.stderr)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futs = {pool.submit(refresh, args, sources[t[0]], done[t]) if t in done
                    else pool.submit(sweep_file, args, sources[t[0]], *t): t for t in todo}
            for n, fut in enumerate(concurrent.futures.as_completed(futs), 1):
                t = futs[fut]
                r = fut.result()
                key = hashlib.sha1(f"{t}".encode()).hexdigest()[:16]
                tmp = os.path.join(args.out, "files", key + ".json.tmp")
                with open(tmp, "w") as f:
                    json.dump(r, f, indent=1)
                os.replace(tmp, os.path.join(args.out, "files", key + ".json"))
                done[t] = r
                bad = sum(1 for e in r.get("edits", []) if "refused" in e or e.get("nvcc") is False)
                print(f"[{n}/{len(todo)}] {t[0]}:{t[1]}/{t[2]}: {len(r.get('kernels', []))} kernels, "
                      f"{len(r.get('edits', []))} edits, {bad} defects"
                      + (" (transforms failed)" if "transforms_error" in r else ""), file=sys.stderr)
    recs = [done[t] for t in tasks if t in done]
    fam = families()
    meta = {"date": time.strftime("%Y-%m-%d"), "commits": commits,
            "command": "python3 bench/real/sweep.py " + " ".join(
                a for a in sys.argv[1:] if not a.startswith("--source") and "=" not in a) + " --source ...",
            "tool_sha256_16": args.tool_sha}
    s = summarize(recs, fam, meta)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(s, f, indent=1)
    md = markdown(s, fam)
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(md)
    print(md)


if __name__ == "__main__":
    main()

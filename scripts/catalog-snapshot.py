#!/usr/bin/env python3
"""Records what the transform catalog does to the examples and the suite
programs, and compares two such records byte for byte.

A refactoring of lib/Edit must leave the catalog's behaviour unchanged:
record a snapshot with the build before the change, another after it, and
compare them.

    scripts/catalog-snapshot.py record OUTDIR [--tool BIN] [--quick | --full]
                                [--jobs N] [--resume]
    scripts/catalog-snapshot.py compare BEFORE AFTER [--subset]

For every program (examples/*.cu and bench/kernels/*/naive.cu, which parse
with the tool's default flags) a snapshot holds:

  transforms.json   `transforms FILE --json`
  transforms.txt    `transforms FILE -v` (the reasons edits do not apply)
  apply/NNN.*       for suggested edits: the edit, `apply FILE --edit E
                    --json -o OUT` (stdout, stderr, exit status) and OUT
  dryrun.txt        `optimize FILE --dry-run --no-compile` (the first level
                    of the search: priors, applied and checked)

plus schema.json (`transforms --schema`). Every apply re-parses the file
twice for its checks (several seconds each), so by default only the first
suggestion of each (kernel, kind) is applied and the dry run covers the
examples; --full applies every suggestion and dry-runs every program (about
600 parses: an hour or more on two busy cores); --quick applies the first
suggestion of each kind over all programs (one apply per kind) and dry-runs
examples/reduction.cu only. --resume keeps what OUTDIR already holds and
runs only what is missing (a record that was stopped, or a quick record
grown into a fuller one). Paths of the checkout and of the
snapshot are replaced by $ROOT and $OUT so that records from two checkouts
compare.

compare prints the files that differ (with the first lines of a diff) and
exits 1 when any does, 0 when the two records are identical.
"""
import argparse
import concurrent.futures as cf
import difflib
import glob
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def programs():
    files = sorted(glob.glob(os.path.join(ROOT, "examples", "*.cu")))
    files += sorted(glob.glob(os.path.join(ROOT, "bench", "kernels", "*",
                                           "naive.cu")))
    return [os.path.relpath(f, ROOT) for f in files]


def tag(rel):
    """examples/saxpy.cu -> examples-saxpy; bench/kernels/dot/naive.cu ->
    kernels-dot."""
    parts = rel[:-3].split("/")
    if parts[0] == "bench":
        return "kernels-" + parts[2]
    return "-".join(parts)


class Recorder:
    def __init__(self, tool, out):
        self.tool = tool
        self.out = os.path.abspath(out)

    def norm(self, text):
        return text.replace(self.out, "$OUT").replace(ROOT, "$ROOT")

    def run(self, args):
        p = subprocess.run([self.tool] + args, cwd=ROOT, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        return p.returncode, self.norm(p.stdout), self.norm(p.stderr)

    def write(self, path, text):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def save(self, base, rc, out, err):
        self.write(base + ".out", out)
        self.write(base + ".err", err)
        self.write(base + ".rc", "%d\n" % rc)

    def done(self, path):
        return self.resume and os.path.exists(path)

    def transforms(self, rel):
        d = os.path.join(self.out, tag(rel))
        if self.done(os.path.join(d, "transforms.txt.rc")):
            with open(os.path.join(d, "transforms.json")) as f:
                text = f.read()
            return json.loads(text) if text else None
        rc, out, err = self.run(["transforms", rel, "--json"])
        self.write(os.path.join(d, "transforms.json"), out)
        self.write(os.path.join(d, "transforms.json.err"), err + "rc=%d\n" % rc)
        rc2, out2, err2 = self.run(["transforms", rel, "-v"])
        self.save(os.path.join(d, "transforms.txt"), rc2, out2, err2)
        return json.loads(out) if rc == 0 else None

    def apply(self, rel, n, edit):
        d = os.path.join(self.out, tag(rel), "apply")
        base = os.path.join(d, "%03d-%s" % (n, edit["kind"]))
        if self.done(base + ".rc"):
            return
        self.write(base + ".edit.json", json.dumps(edit, indent=1) + "\n")
        cu = base + ".result.cu"
        rc, out, err = self.run(["apply", rel, "--edit", base + ".edit.json",
                                 "--json", "-o", cu])
        self.save(base, rc, out, err)
        if os.path.exists(cu):
            with open(cu) as f:
                text = f.read()
            self.write(cu, self.norm(text))

    def dry_run(self, rel):
        d = os.path.join(self.out, tag(rel))
        if self.done(os.path.join(d, "dryrun.txt.rc")):
            return
        rc, out, err = self.run(["optimize", rel, "--dry-run", "--no-compile"])
        self.save(os.path.join(d, "dryrun.txt"), rc, out, err)


def edits_of(listing, mode, kinds_seen):
    """The suggested edits of a `transforms --json` listing, numbered in its
    order: every one (full), the first of each (kernel, kind) (default), or
    the first of each kind not in \p kinds_seen (quick). The numbers are the
    same in every mode, so a smaller record is a subset of a fuller one."""
    n = 0
    for k in listing.get("kernels", []):
        seen = set()
        for a in k.get("applicable", []):
            for s in a.get("suggestions", []):
                key = (k["kernel"], s["kind"])
                if mode == "full" or (mode == "default" and key not in seen) \
                        or (mode == "quick" and s["kind"] not in kinds_seen):
                    yield n, s
                seen.add(key)
                kinds_seen.add(s["kind"])
                n += 1


def record(args):
    if os.path.exists(args.outdir) and os.listdir(args.outdir) and \
            not args.resume:
        raise SystemExit("%s exists and is not empty (--resume adds what "
                         "it lacks)" % args.outdir)
    tool = os.path.abspath(args.tool)
    if not os.access(tool, os.X_OK):
        raise SystemExit("%s: not an executable (build clang-optiml first, "
                         "or pass --tool)" % tool)
    rec = Recorder(tool, args.outdir)
    rec.resume = args.resume
    mode = "full" if args.full else "quick" if args.quick else "default"
    os.makedirs(rec.out, exist_ok=True)
    began = time.time()
    rc, out, err = rec.run(["transforms", "--schema"])
    rec.write(os.path.join(rec.out, "schema.json"), out + err)
    files = programs()
    if args.only:
        files = [f for f in files if any(o in f for o in args.only.split(","))]
    with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        listings = dict(zip(files, ex.map(rec.transforms, files)))
        jobs = []
        kinds_seen = set()
        for rel in files:
            if listings[rel] is None:
                continue
            for n, e in edits_of(listings[rel], mode, kinds_seen):
                jobs.append(ex.submit(rec.apply, rel, n, e))
            if mode == "full" or (mode == "default" and
                                  rel.startswith("examples/")) or \
                    (mode == "quick" and rel == "examples/reduction.cu"):
                jobs.append(ex.submit(rec.dry_run, rel))
        for j in jobs:
            j.result()
    print("recorded %d programs, %d runs in %.0f s: %s" %
          (len(files), len(jobs), time.time() - began, rec.out))


def tree(d):
    out = {}
    for dirpath, _, names in os.walk(d):
        for n in names:
            p = os.path.join(dirpath, n)
            out[os.path.relpath(p, d)] = p
    return out


def compare(args):
    a, b = tree(args.before), tree(args.after)
    if not a:
        raise SystemExit("%s: empty or missing" % args.before)
    bad = 0
    if args.subset:
        # A default record against a full one: what AFTER holds must match.
        a = {k: v for k, v in a.items()
             if k in b or os.path.basename(k).startswith(("transforms", "schema"))}
    for rel in sorted(set(a) | set(b)):
        if rel not in b:
            print("only in %s: %s" % (args.before, rel))
            bad += 1
            continue
        if rel not in a:
            print("only in %s: %s" % (args.after, rel))
            bad += 1
            continue
        with open(a[rel], "rb") as fa, open(b[rel], "rb") as fb:
            ta, tb = fa.read(), fb.read()
        if ta == tb:
            continue
        bad += 1
        print("differs: %s" % rel)
        diff = difflib.unified_diff(
            ta.decode(errors="replace").splitlines(),
            tb.decode(errors="replace").splitlines(),
            "before/" + rel, "after/" + rel, lineterm="")
        for i, line in enumerate(diff):
            if i == 20:
                print("  ...")
                break
            print("  " + line)
    print("%d of %d files differ" % (bad, len(set(a) | set(b))))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="record a snapshot into OUTDIR")
    r.add_argument("outdir")
    r.add_argument("--tool", default=os.path.join(ROOT, "build", "bin",
                                                  "clang-optiml"))
    size = r.add_mutually_exclusive_group()
    size.add_argument("--full", action="store_true",
                      help="apply every suggestion and dry-run every program")
    size.add_argument("--quick", action="store_true",
                      help="apply one suggestion per kind, dry-run one example")
    r.add_argument("--resume", action="store_true",
                   help="keep what OUTDIR holds, run only what is missing")
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--only", help="programs whose path contains one of these "
                   "comma-separated strings")
    c = sub.add_parser("compare", help="compare two snapshots")
    c.add_argument("before")
    c.add_argument("after")
    c.add_argument("--subset", action="store_true",
                   help="AFTER may leave out applies and dry runs that "
                   "BEFORE has (a default record against a full one)")
    args = ap.parse_args()
    if args.cmd == "record":
        record(args)
        return 0
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())

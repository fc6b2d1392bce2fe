#!/usr/bin/env python3
"""For each CUDA file: take the first suggested edit (`transforms --json`),
write the result with `apply -o`, export it with `apply --export-fixes`, run
clang-apply-replacements on a copy of the file and compare byte for byte.
Also checks that --export-fixes leaves the file alone and prints nothing.

usage: export_fixes_roundtrip.py [--one-run] WORKDIR FILE... -- TOOL-ARGS...
--one-run: `apply -o OUT --export-fixes FIXES` in one process (a third
less time for the long suite programs) instead of two.
Environment: OPTIML (clang-optiml), CAR (clang-apply-replacements).
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, **kw)


def main():
    args = sys.argv[1:]
    extra = []
    if "--" in args:
        extra = args[args.index("--") + 1:]
        args = args[:args.index("--")]
    one_run = "--one-run" in args
    args = [a for a in args if a != "--one-run"]
    work, files = args[0], args[1:]
    tool = os.environ.get("OPTIML", "clang-optiml")
    car = os.environ.get("CAR", "clang-apply-replacements-22")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    same = 0
    for n, src in enumerate(files):
        # bench/kernels/<name>/naive.cu and examples/<name>.cu
        name = "%02d-%s-%s" % (n, os.path.basename(os.path.dirname(src)),
                               os.path.basename(src))
        d = os.path.join(work, name)
        os.makedirs(os.path.join(d, "fixes"))
        copy = os.path.join(d, os.path.basename(src))
        shutil.copyfile(src, copy)
        t = run([tool, "transforms", "--json", copy] + extra)
        if t.returncode:
            print("FAIL %s: transforms: %s" % (name, t.stderr.decode()))
            continue
        edit = None
        for k in json.loads(t.stdout)["kernels"]:
            for c in k["applicable"]:
                if c["suggestions"]:
                    edit = c["suggestions"][0]
                    break
            if edit:
                break
        if not edit:
            print("NONE %s: no suggested edit" % name)
            continue
        ej = os.path.join(d, "edit.json")
        with open(ej, "w") as f:
            json.dump(edit, f)
        expected = os.path.join(d, "expected.out")
        yaml = os.path.join(d, "fixes", "fixes.yaml")
        before = open(copy, "rb").read()
        if not one_run:
            a = run([tool, "apply", copy, "--edit", ej, "-o", expected] +
                    extra)
            if a.returncode:
                print("REJECTED %s %s: %s" % (name, json.dumps(edit),
                                              a.stderr.decode().strip()))
                continue
        x = run([tool, "apply", copy, "--edit", ej, "--export-fixes", yaml] +
                (["-o", expected] if one_run else []) + extra)
        if x.returncode or x.stdout:
            print("FAIL %s: --export-fixes: rc %d, stdout %r, %s" %
                  (name, x.returncode, x.stdout[:80], x.stderr.decode()))
            continue
        if open(copy, "rb").read() != before:
            print("FAIL %s: --export-fixes changed the input" % name)
            continue
        r = run([car, os.path.join(d, "fixes")])
        if r.returncode:
            print("FAIL %s: %s: %s" % (name, car, r.stderr.decode()))
            continue
        got = open(copy, "rb").read()
        want = open(expected, "rb").read()
        if got != want:
            print("DIFF %s: %s differs from apply -o (%s vs %s)" %
                  (name, os.path.basename(copy),
                   hashlib.sha256(got).hexdigest()[:12],
                   hashlib.sha256(want).hexdigest()[:12]))
            continue
        if got == before:
            print("FAIL %s: the edit changed nothing" % name)
            continue
        same += 1
        print("OK %s %s" % (name, edit["kind"]))
    print("identical: %d of %d" % (same, len(files)))
    return 0 if same == len(files) else 1


if __name__ == "__main__":
    sys.exit(main())

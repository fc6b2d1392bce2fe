#!/usr/bin/env python3
"""A canary key, and a child that hunts for it.

The key's value is in no file: it is built here from a reversed hex string,
so a search of the disk finds it only where the tool (or a reply) put it.

  canary.py exec VAR [VAR...] -- CMD ARGS...
      sets each VAR to the key and execs CMD: no process but CMD ever holds
      the key (the shell that ran this never sees it).
  canary.py probe REPORT ROOT
      what a candidate process would do: looks for the key (and the names of
      the variables that held it) in its own environment, in
      /proc/<pid>/environ and cmdline of every ancestor, the memory of those
      up to clang-optiml, in every file
      under ROOT, in every .clang-optiml.json from the working directory up,
      and in ~/.cache/clang-optiml/llm; appends one line per route to REPORT.
  canary.py grep PATH...
      looks for the key in files (recursively); exit status 1 when found.
"""

import os
import sys

_HEX = "79656b2d6c6165722d612d746f6e2d34356531336337662d7972616e61632d6c6d6974706f"
NAMES = (b"OPENAI_API_KEY", b"MY_LLM_CRED")


def key():
    return bytes.fromhex(_HEX).decode()[::-1]


def found_in(data, k):
    hits = []
    if k in data:
        hits.append("the key")
    for n in NAMES:
        if n + b"=" in data:
            hits.append(n.decode() + "=")
    return hits


def read(path, limit=None):
    with open(path, "rb") as f:
        return f.read() if limit is None else f.read(limit)


def scan_memory(pid, k):
    """'denied', 'clean' or 'FOUND'."""
    try:
        mem = open("/proc/%d/mem" % pid, "rb", buffering=0)
    except OSError:
        return "denied"
    found = False
    try:
        for line in read("/proc/%d/maps" % pid).decode().splitlines():
            parts = line.split()
            if len(parts) < 2 or not parts[1].startswith("r"):
                continue
            if len(parts) >= 6 and parts[5] in ("[vvar]", "[vsyscall]", "[vvar_vclock]"):
                continue
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            if hi - lo > 1 << 30:
                continue
            try:
                mem.seek(lo)
                chunk = mem.read(hi - lo)
            except (OSError, OverflowError, ValueError):
                continue
            if chunk and k in chunk:
                found = True
                break
    except OSError:
        return "denied"
    finally:
        mem.close()
    return "FOUND" if found else "clean"


def ancestors():
    pid = os.getppid()
    seen = 0
    while pid > 1 and seen < 64:
        seen += 1
        try:
            comm = read("/proc/%d/comm" % pid).decode().strip()
            stat = read("/proc/%d/stat" % pid).decode()
            ppid = int(stat[stat.rfind(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            return
        yield pid, comm
        pid = ppid


def files_under(root):
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            if os.path.isfile(p) and not os.path.islink(p):
                yield p


def probe(report, root):
    k = key().encode()
    lines = []

    def say(route, result):
        lines.append("%s: %s" % (route, result))

    env = b"\0".join(a.encode() + b"=" + b.encode() for a, b in os.environ.items())
    hits = found_in(env, k)
    say("own environment", "FOUND " + ", ".join(hits) if hits else "clean")
    # Memory is scanned up to the tool: above it are the user's own
    # processes (a shell whose history holds whatever was typed).
    below_tool = True
    for pid, comm in ancestors():
        for what in ("environ", "cmdline"):
            try:
                hits = found_in(read("/proc/%d/%s" % (pid, what)), k)
                res = "FOUND " + ", ".join(hits) if hits else "clean"
            except OSError:
                res = "denied"
            say("%s of %s" % (what, comm), res)
        if below_tool:
            say("memory of %s" % comm, scan_memory(pid, k))
        below_tool = below_tool and comm != "clang-optiml"
    checked = 0
    for p in files_under(root):
        checked += 1
        try:
            if found_in(read(p), k):
                say("file " + os.path.relpath(p, root), "FOUND")
        except OSError:
            pass
    say("files under the test directory", "%s (%s files)" % (
        "checked", "some" if checked else "no"))
    d = os.getcwd()
    while True:
        c = os.path.join(d, ".clang-optiml.json")
        if os.path.isfile(c) and found_in(read(c), k):
            say("config " + c, "FOUND")
        if d == os.path.dirname(d):
            break
        d = os.path.dirname(d)
    cache = os.path.join(os.environ.get("HOME", "/nonexistent"), ".cache", "clang-optiml", "llm")
    for p in files_under(cache) if os.path.isdir(cache) else ():
        try:
            if found_in(read(p), k):
                say("cache file " + p, "FOUND")
        except OSError:
            pass
    with open(report, "a") as f:
        f.write("\n".join(lines) + "\n")


def grep(paths):
    k = key().encode()
    bad = 0
    n = 0
    for path in paths:
        for p in files_under(path) if os.path.isdir(path) else [path]:
            n += 1
            try:
                if k in read(p):
                    print("FOUND the key in " + p)
                    bad += 1
            except OSError:
                pass
    print("grep: %d file(s) hold the key" % bad)
    return 1 if bad else 0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    mode = sys.argv[1]
    if mode == "exec":
        args = sys.argv[2:]
        sep = args.index("--")
        for var in args[:sep]:
            os.environ[var] = key()
        cmd = args[sep + 1:]
        os.execvp(cmd[0], cmd)
    if mode == "probe":
        probe(sys.argv[2], sys.argv[3])
        return 0
    if mode == "grep":
        return grep(sys.argv[2:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())

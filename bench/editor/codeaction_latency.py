#!/usr/bin/env python3
"""textDocument/codeAction latency: clangd-optiml (clangd plus the catalog's
actions) against clangd alone, side by side in one run, on the largest
suite program (bench/kernels/cg/naive.cu, real CUDA headers).

Two cases, each timed --runs times, the two servers interleaved:
  warm:  the same request on an unchanged buffer, the proxy idle (its
         analysis of the text is in);
  edit:  a didChange (a comment line added at the end), then the request at
         once (clangd rebuilds its AST, the proxy re-parses the buffer).
Prints medians, their ratio, and how many actions each answer held.

  python3 bench/editor/codeaction_latency.py [--proxy build/bin/clangd-optiml]
      [--clangd clangd-22] [--file bench/kernels/cg/naive.cu] [--runs 15]
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "editor", "Inputs"))
from lsp_client import Client  # noqa: E402


def open_server(argv, work, uri, text, want_hints):
    c = Client(argv, work)
    c.request("initialize", {"processId": os.getpid(),
                             "rootUri": "file://" + work, "capabilities": {}})
    c.notify("initialized", {})
    c.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "cuda", "version": 1, "text": text}})
    # Ready when clangd has published (and, for the proxy, the hints).
    c.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
               and (not want_hints or any(d.get("source") == "clang-optiml"
                                          for d in m["params"]["diagnostics"])),
               timeout=300)
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--proxy", default=os.path.join(ROOT, "build", "bin",
                                                    "clangd-optiml"))
    ap.add_argument("--clangd", default=shutil.which("clangd-22") or "clangd")
    ap.add_argument("--file", default=os.path.join(
        ROOT, "bench", "kernels", "cg", "naive.cu"))
    ap.add_argument("--cuda", default="/usr/local/cuda")
    ap.add_argument("--runs", type=int, default=15)
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="optiml-lsp-bench-")
    src = os.path.join(work, os.path.basename(a.file))
    shutil.copyfile(a.file, src)
    with open(os.path.join(work, "compile_commands.json"), "w") as f:
        json.dump([{"directory": work, "file": src, "arguments": [
            "clang++", "-x", "cuda", "--cuda-path=" + a.cuda,
            "--cuda-gpu-arch=sm_90", "-Wno-unknown-cuda-version",
            "-isystem", a.cuda + "/include/cccl", "-c", src]}], f)
    text = open(src).read()
    uri = "file://" + src
    lines = text.split("\n")
    kline = next(i for i, l in enumerate(lines) if "__global__" in l)
    rng = {"start": {"line": kline, "character": 0},
           "end": {"line": kline, "character": len(lines[kline])}}

    servers = {
        "clangd": open_server([a.clangd], work, uri, text, False),
        "clangd-optiml": open_server([a.proxy, "--clangd=" + a.clangd], work,
                                     uri, text, True),
    }
    times = {(s, case): [] for s in servers for case in ("warm", "edit")}
    counts = {}
    version = {s: 1 for s in servers}
    for run in range(a.runs):
        for case in ("warm", "edit"):
            for name, c in servers.items():
                if case == "edit":
                    version[name] += 1
                    n = len(text.split("\n")) - 1
                    c.notify("textDocument/didChange", {
                        "textDocument": {"uri": uri,
                                         "version": version[name]},
                        "contentChanges": [{"range": {
                            "start": {"line": n, "character": 0},
                            "end": {"line": n, "character": 0}},
                            "text": "// edit %d\n" % run}]})
                t0 = time.perf_counter()
                r = c.request("textDocument/codeAction", {
                    "textDocument": {"uri": uri}, "range": rng,
                    "context": {"diagnostics": []}}, timeout=300)
                times[(name, case)].append(time.perf_counter() - t0)
                counts[name] = len(r.get("result") or [])
                if case == "edit" and name == "clangd-optiml":
                    # The next warm request finds the proxy idle: its
                    # analysis of the new text is in (hints published).
                    v = version[name]
                    if not c.wait_for(
                            lambda m: m.get("method") ==
                            "textDocument/publishDiagnostics" and
                            m["params"].get("version", 0) >= v and any(
                                d.get("source") == "clang-optiml"
                                for d in m["params"]["diagnostics"]),
                            timeout=120):
                        print("note: no hints for version %d in 120 s" % v)
    for c in servers.values():
        c.request("shutdown", None)
        c.notify("exit", None)
    print("file: %s (%d lines), %d runs, codeAction at line %d" % (
        os.path.relpath(a.file, ROOT), len(lines), a.runs, kline + 1))
    for case in ("warm", "edit"):
        m = {s: statistics.median(times[(s, case)]) * 1000 for s in servers}
        print("%-5s clangd %8.1f ms   clangd-optiml %8.1f ms   ratio %.2f" %
              (case, m["clangd"], m["clangd-optiml"],
               m["clangd-optiml"] / m["clangd"]))
    print("actions: clangd %d, clangd-optiml %d" % (
        counts["clangd"], counts["clangd-optiml"]))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

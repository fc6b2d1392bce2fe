#!/usr/bin/env python3
"""'Optimize this kernel' through clangd-optiml, as an editor drives it.

usage: lsp_optimize.py PROXY CLANGD SOURCE KERNEL APPLIED [PROXY-ARGS...]

Opens SOURCE (saved), asks for code actions on KERNEL's line, runs the
optimize action, answers the workspace/applyEdit it brings, writes the
edited buffer to APPLIED, and prints a line per step (FileCheck reads
them): the action's title, the progress kinds, the closing message, the
edit's label and form, and whether the report link names a file in the
search's run directory. The editor says it takes versioned edits
(documentChanges).
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import Client, apply_edits  # noqa: E402


def main():
    proxy, clangd, src, kernel, applied_path = sys.argv[1:6]
    extra = sys.argv[6:]
    src = os.path.abspath(src)
    text = open(src).read()
    uri = "file://" + src
    c = Client([proxy, "--clangd=" + clangd] + extra, os.path.dirname(src))
    applied = []

    def on_apply(params):
        applied.append(params)
        return {"applied": True}

    c.on_request["workspace/applyEdit"] = on_apply
    c.request("initialize", {
        "processId": os.getpid(), "rootUri": "file://" + os.path.dirname(src),
        "capabilities": {"workspace": {"workspaceEdit": {
            "documentChanges": True}},
            "window": {"workDoneProgress": True}}})
    c.notify("initialized", {})
    c.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "cuda", "version": 1, "text": text}})

    lines = text.split("\n")
    line = next(i for i, l in enumerate(lines)
                if "__global__" in l and re.search(r"\b%s\b" % kernel, l))
    opt = None
    for _ in range(120):  # the first analysis may still be running
        r = c.request("textDocument/codeAction", {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": line, "character": 0},
                      "end": {"line": line, "character": len(lines[line])}},
            "context": {"diagnostics": []}}, timeout=120)
        opt = next((a for a in r.get("result") or []
                    if a.get("command", {}).get("command") ==
                    "clang-optiml.optimize"), None)
        if opt:
            break
        c.wait_for(lambda m: False, timeout=1)
    if not opt:
        raise SystemExit("FAIL: no optimize action on " + kernel)
    print("action: " + opt["title"])
    c.request("workspace/executeCommand", {
        "command": opt["command"]["command"],
        "arguments": opt["command"]["arguments"]})
    m = c.wait_for(lambda m: m.get("method") == "window/showMessage",
                   timeout=3600)
    if not m:
        raise SystemExit("FAIL: optimize sent no closing message")
    prog = [n["params"]["value"] for n in c.notes
            if n.get("method") == "$/progress"]
    kinds = [p["kind"] for p in prog]
    print("progress: " + " ".join(k for i, k in enumerate(kinds)
                                  if k != "report" or kinds[i - 1] != "report"))
    for p in prog:
        if p["kind"] == "report" and "] best " in p.get("message", ""):
            print("progress line: " + p["message"])
            break
    msg = m["params"]["message"]
    print("message: type %d: %s" % (m["params"]["type"], msg))
    if applied:
        edit = applied[-1]["edit"]
        if "documentChanges" in edit:
            dc = edit["documentChanges"][0]
            form = "documentChanges version %s" % dc["textDocument"]["version"]
            edits = dc["edits"]
        else:
            form, edits = "changes", edit["changes"][uri]
        new_text = apply_edits(text, edits)
        with open(applied_path, "w") as f:
            f.write(new_text)
        print("applyEdit: %s (%s)" % (applied[-1]["label"], form))
    report = re.search(r"report: file://(\S+)", msg)
    if report:
        path = report.group(1)
        print("report: exists %s, beside the journal %s" % (
            os.path.isfile(path),
            os.path.isfile(os.path.join(os.path.dirname(path),
                                        "journal.jsonl"))))
    print("file on disk unchanged: %s" % (open(src).read() == text))
    c.request("shutdown", None)
    c.notify("exit", None)
    print("exit: %s" % c.p.wait(timeout=60))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A scripted LSP client for clangd-optiml, speaking JSON-RPC over stdio with
the real clangd behind the proxy.

usage: lsp_client.py PROXY CLANGD CLANG-OPTIML WORKDIR INPUTS

Walks one session and prints a line per step (FileCheck reads them):
initialize, didOpen, hints, codeAction on a kernel, executeCommand and the
workspace/applyEdit it brings (the result compared with `clang-optiml
apply` for the same edit), didChange with unsaved text, clangd killed
mid-session, the optimize command without a GPU, shutdown and exit.
"""
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time


class Client:
    def __init__(self, argv, cwd):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, cwd=cwd)
        self.q = queue.Queue()
        self.next_id = 0
        self.notes = []
        self.on_request = {}
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        f = self.p.stdout
        while True:
            length = None
            while True:
                line = f.readline()
                if not line:
                    self.q.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                k, _, v = line.decode().partition(":")
                if k.lower() == "content-length":
                    length = int(v)
            self.q.put(json.loads(f.read(length)))

    def send(self, msg):
        msg["jsonrpc"] = "2.0"
        body = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def notify(self, method, params):
        self.send({"method": method, "params": params})

    def handle(self, msg):
        """A message that is not the awaited response."""
        if "method" in msg and "id" in msg:  # a request to the client
            fn = self.on_request.get(msg["method"])
            result = fn(msg["params"]) if fn else None
            self.send({"id": msg["id"], "result": result})
        self.notes.append(msg)

    def request(self, method, params, timeout=60):
        self.next_id += 1
        rid = self.next_id
        self.send({"id": rid, "method": method, "params": params})
        end = time.time() + timeout
        while time.time() < end:
            try:
                msg = self.q.get(timeout=1)
            except queue.Empty:
                continue
            if msg is None:
                raise SystemExit("FAIL: the proxy closed its output")
            if msg.get("id") == rid and "method" not in msg:
                return msg
            self.handle(msg)
        raise SystemExit("FAIL: no answer to %s in %ds" % (method, timeout))

    def wait_for(self, pred, timeout=60):
        for m in self.notes:
            if pred(m):
                self.notes.remove(m)
                return m
        end = time.time() + timeout
        while time.time() < end:
            try:
                msg = self.q.get(timeout=1)
            except queue.Empty:
                continue
            if msg is None:
                raise SystemExit("FAIL: the proxy closed its output")
            self.handle(msg)
            if pred(msg):
                self.notes.remove(msg)
                return msg
        return None


def offset(text, pos):
    lines = text.split("\n")
    return sum(len(l) + 1 for l in lines[:pos["line"]]) + pos["character"]


def apply_edits(text, edits):
    for e in sorted(edits, key=lambda e: offset(text, e["range"]["start"]),
                    reverse=True):
        b, x = offset(text, e["range"]["start"]), offset(text, e["range"]["end"])
        text = text[:b] + e["newText"] + text[x:]
    return text


def children(pid):
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)],
                         capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def main():
    proxy, clangd, optiml, work, inputs = sys.argv[1:6]
    os.makedirs(work, exist_ok=True)
    src = os.path.join(work, "k.cu")
    text = open(src).read()
    mock = ["-nocudainc", "-nocudalib", "-I" + inputs]
    with open(os.path.join(work, "compile_commands.json"), "w") as f:
        json.dump([{"directory": work, "file": "k.cu",
                    "arguments": ["clang++", "-x", "cuda",
                                  "--cuda-gpu-arch=sm_90", "-c", "k.cu"] +
                    mock}], f)
    uri = "file://" + src
    c = Client([proxy, "--clangd=" + clangd, "--clang-optiml=" + optiml],
               work)

    applied = []

    def on_apply(params):
        applied.append(params)
        return {"applied": True}

    c.on_request["workspace/applyEdit"] = on_apply

    r = c.request("initialize", {"processId": os.getpid(),
                                 "rootUri": "file://" + work,
                                 "capabilities": {}})
    cmds = r["result"]["capabilities"]["executeCommandProvider"]["commands"]
    print("initialize: clangd %s, commands %s" % (
        "serverInfo" in r["result"],
        " ".join(x for x in cmds if x.startswith("clang-optiml"))))
    c.notify("initialized", {})
    c.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "cuda", "version": 1, "text": text}})

    # Hints arrive merged into clangd's publishDiagnostics.
    d = c.wait_for(lambda m: m.get("method") ==
                   "textDocument/publishDiagnostics" and any(
                       x.get("source") == "clang-optiml"
                       for x in m["params"]["diagnostics"]))
    if not d:
        raise SystemExit("FAIL: no clang-optiml hints")
    for x in d["params"]["diagnostics"]:
        if x.get("source") == "clang-optiml":
            print("hint: line %d severity %d %s: %s" % (
                x["range"]["start"]["line"] + 1, x["severity"], x["code"],
                x["message"]))

    # Code actions on the kernel's name.
    line = text.split("\n").index(
        next(l for l in text.split("\n") if l.startswith("__global__")))
    rng = {"start": {"line": line, "character": 16},
           "end": {"line": line, "character": 16}}
    t0 = time.time()
    r = c.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": rng,
        "context": {"diagnostics": []}})
    actions = r["result"]
    ours = [a for a in actions if a["title"].startswith("clang-optiml:")]
    for a in ours:
        print("action: " + a["title"])
    unroll = next(a for a in ours if a["command"]["arguments"][0]
                  .get("edit", {}).get("kind") == "unroll")

    # executeCommand: the proxy answers, then asks the editor to apply.
    r = c.request("workspace/executeCommand", {
        "command": unroll["command"]["command"],
        "arguments": unroll["command"]["arguments"]})
    print("executeCommand: result %s" % json.dumps(r.get("result")))
    if not c.wait_for(lambda m: m.get("method") == "workspace/applyEdit"):
        raise SystemExit("FAIL: no workspace/applyEdit")
    edit = applied[-1]["edit"]["changes"][uri]
    new_text = apply_edits(text, edit)
    edit_json = os.path.join(work, "edit.json")
    with open(edit_json, "w") as f:
        json.dump(unroll["command"]["arguments"][0]["edit"], f)
    cli = subprocess.run([optiml, "apply", src, "--edit", edit_json, "--"] +
                         mock, capture_output=True, text=True)
    print("applyEdit: %s; same as clang-optiml apply: %s" % (
        applied[-1]["label"], cli.returncode == 0 and cli.stdout == new_text))

    # Unsaved text: a second kernel exists only in the buffer.
    added = ("\n__global__ void unsaved_kernel(float *q) {\n"
             "  for (int j = 0; j < 8; ++j)\n"
             "    q[threadIdx.x * 8 + j] += 1;\n}\n")
    buf = new_text + added
    c.notify("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"text": new_text}]})
    end_line = len(new_text.split("\n")) - 1
    c.notify("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": 3},
        "contentChanges": [{"range": {
            "start": {"line": end_line, "character": 0},
            "end": {"line": end_line, "character": 0}}, "text": added}]})
    # Code actions are answered at once from the last analysis; the hints
    # of the new text say when it is in.
    if not c.wait_for(lambda m: m.get("method") ==
                      "textDocument/publishDiagnostics" and any(
                          "q[threadIdx.x * 8 + j]" in x["message"]
                          for x in m["params"]["diagnostics"])):
        raise SystemExit("FAIL: no hints for the unsaved text")
    kline = buf.split("\n").index("__global__ void unsaved_kernel(float *q) {")
    r = c.request("textDocument/codeAction", {
        "textDocument": {"uri": uri},
        "range": {"start": {"line": kline, "character": 20},
                  "end": {"line": kline, "character": 20}},
        "context": {"diagnostics": []}})
    titles = [a["title"] for a in r["result"]
              if a["title"].startswith("clang-optiml:")]
    print("unsaved: %d actions for unsaved_kernel; file on disk unchanged: %s"
          % (sum("unsaved_kernel" in t for t in titles),
             open(src).read() == text))

    # clangd killed mid-session: started again, the buffer replayed.
    old = children(c.p.pid)
    for pid in old:
        os.kill(pid, signal.SIGKILL)
    time.sleep(1)
    sym = None
    for _ in range(30):
        r = c.request("textDocument/documentSymbol",
                      {"textDocument": {"uri": uri}})
        if "result" in r and r["result"]:
            sym = r["result"]
            break
        time.sleep(1)
    new = children(c.p.pid)
    names = sorted(s["name"] for s in (sym or []))
    print("restart: clangd %s; symbols of the unsaved buffer: %s" % (
        "replaced" if new and not set(new) & set(old) else "NOT replaced",
        " ".join(n for n in names if "kernel" in n or n == "k")))
    r = c.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": rng,
        "context": {"diagnostics": []}})
    print("after restart: %d clang-optiml actions" % sum(
        a["title"].startswith("clang-optiml:") for a in r["result"]))

    # Optimize this kernel: needs a saved file and a GPU.
    opt = next(a for a in ours if a["command"]["command"] ==
               "clang-optiml.optimize")
    c.request("workspace/executeCommand", {
        "command": opt["command"]["command"],
        "arguments": opt["command"]["arguments"]})
    m = c.wait_for(lambda m: m.get("method") == "window/showMessage")
    print("optimize (unsaved): " + (m["params"]["message"] if m else "-"))

    # Saved again (the buffer back to the disk text): without a GPU the
    # search says so plainly.
    c.notify("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": 4},
        "contentChanges": [{"text": text}]})
    c.request("workspace/executeCommand", {
        "command": opt["command"]["command"],
        "arguments": opt["command"]["arguments"]})
    m = c.wait_for(lambda m: m.get("method") == "window/showMessage",
                   timeout=120)
    print("optimize (saved): " + (m["params"]["message"] if m else "-"))
    prog = [m["params"]["value"]["kind"] for m in c.notes
            if m.get("method") == "$/progress"]
    print("progress: " + " ".join(k for i, k in enumerate(prog)
                                  if k != "report" or prog[i - 1] != "report"))

    r = c.request("shutdown", None)
    print("shutdown: %s" % json.dumps(r.get("result")))
    c.notify("exit", None)
    try:
        rc = c.p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        rc = "hung"
    print("exit: %s" % rc)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A minimal language server standing in for clangd where there is none
(the GPU node has no LLVM): it answers initialize with empty capabilities,
every other request with an empty result, and exits on exit. The proxy's
own actions, hints and commands are what a test through it sees."""
import json
import sys


def read():
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        k, _, v = line.decode().partition(":")
        if k.lower() == "content-length":
            length = int(v)
    return json.loads(sys.stdin.buffer.read(length))


def send(msg):
    body = json.dumps(msg).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


while True:
    msg = read()
    if msg is None or msg.get("method") == "exit":
        break
    if "id" not in msg or "method" not in msg:
        continue  # a notification, or an answer to a request of ours
    result = None
    if msg["method"] == "initialize":
        result = {"capabilities": {}, "serverInfo": {"name": "stub-clangd"}}
    elif msg["method"] in ("textDocument/codeAction",
                           "textDocument/documentSymbol"):
        result = []
    send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

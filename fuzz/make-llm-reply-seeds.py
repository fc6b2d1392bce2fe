#!/usr/bin/env python3
"""Writes the seeds of llm-reply-fuzzer: what a server sends, one reply
each, with a newline at the end: an OpenAI reply (content, and a tool
call), an Anthropic tool_use reply, a server error body, a response-cache
entry and prose around a fenced JSON block. All but the cache entry carry
something the redactor must remove (a key, a bearer token, credentials in
a URL).

usage: fuzz/make-llm-reply-seeds.py OUTDIR

The seeds are kept here rather than as a corpus directory; the fuzzer reads
the directory this writes."""
import os
import sys

SEEDS = {
    "anthropic.json": (
        '{"id":"msg_1","type":"message","role":"assistant","model":"m",'
        '"content":[{"type":"text","text":"Here:"},{"type":"tool_use",'
        '"id":"toolu_1","name":"propose_edits",'
        '"input":{"proposals":[{"kind":"unroll","target":"scale/loop0",'
        '"params":{"factor":4},'
        '"rationale":"x-api-key: abcd1234efgh"}]}}],'
        '"stop_reason":"tool_use","usage":{"input_tokens":7,'
        '"output_tokens":3}}'),
    "cache.json": (
        r'{"text":"ok","json":"{\"x\":1}","mode":"json_schema",'
        '"usage":{"input":1,"output":2},"usage_estimated":false,'
        '"finish_reason":"stop"}'),
    "error.json": (
        '{"error": {"message": "Incorrect API key provided: sk-ant-api03-'
        r'zzzzzzzzzzzzzzzz. \"api_key\": \"local-xyz\"",'
        ' "type": "invalid_request_error"}}'),
    "fenced.txt": (
        r'{"choices":[{"message":{"content":"Sure! ```json\n{\"proposals\"'
        r': [{\"kind\": \"tile-loop\", \"target\": \"k/loop0\",'
        r' \"params\": {\"tile\": 32},'
        r' \"rationale\": \"see http://user:pw@host/x\"}]}\n``` and {\"mor'
        r'e\": [1,2"}}]}'),
    "openai-tool.json": (
        '{"choices":[{"index":0,"message":{"role":"assistant",'
        '"content":null,"tool_calls":[{"id":"call_1","type":"function",'
        '"function":{"name":"propose_edits",'
        r'"arguments":"{\"proposals\": [{\"kind\": \"replace-function\",'
        r' \"target\": \"scale\", \"params\": {},'
        r' \"code\": \"__global__ void scale(int n) {\\n  // \\u0073k-abcd'
        r'efghijklmnopqrstu\\n}\",'
        r' \"rationale\": \"Bearer abcdefgh12345678\"}]}"}}]},'
        '"finish_reason":"tool_calls"}]}'),
    "openai.json": (
        '{"id":"chatcmpl-1","object":"chat.completion","model":"m",'
        '"choices":[{"index":0,"message":{"role":"assistant",'
        r'"content":"{\"proposals\": [{\"kind\": \"vectorize\",'
        r' \"target\": \"scale\", \"params\": {\"width\": 4},'
        r' \"rationale\": \"wider loads,'
        r' key sk-proj-abcdefghijklmnop1234\"}]}"},'
        '"finish_reason":"stop"}],"usage":{"prompt_tokens":10,'
        '"completion_tokens":5,"total_tokens":15}}'),
}


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, text in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(text.encode("utf-8") + b"\n")
    print(f"{len(SEEDS)} seeds in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

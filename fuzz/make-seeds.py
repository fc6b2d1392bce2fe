#!/usr/bin/env python3
"""Writes the seeds of a fuzzer (fuzz/CMakeLists.txt) into OUTDIR, the
directory the fuzzer then reads:

usage: fuzz/make-seeds.py FUZZER OUTDIR

FUZZER is one of:
  edit-json   edit-json-fuzzer: an edit of each shape the reader takes
              (parameters of each JSON type, a qualified target, a loop
              target, replace-function's code, a list of edits), one file
              each, compact JSON without a trailing newline.
  edit-check  edit-check-fuzzer: the code of every hostile-corpus case
              (test/edit/hostile/cases.jsonl), one file per case named by
              its id; a case whose edit is a list gives one file per edit
              that has code (ID.1, ID.2, ...).
  llm-reply   llm-reply-fuzzer: what a server sends, one reply each, with a
              newline at the end: an OpenAI reply (content, and a tool
              call), an Anthropic tool_use reply, a server error body, a
              response-cache entry and prose around a fenced JSON block.
              All but the cache entry carry something the redactor must
              remove (a key, a bearer token, credentials in a URL).
  spec        spec-fuzzer: every example spec of examples/synthesize as
              example-NAME, behind the byte that picks the reader (the
              fuzzer reads the first byte: 0 JSON, 1 YAML), and the
              fuzzer's two findings (SPEC_FINDINGS below, the reader byte
              included), byte for byte.

The edit and reply seeds are kept here rather than as corpus directories.
The hostile corpus and the examples are the one source of the attacks and
of the valid specs: those seeds are made from them when fuzzing starts, so
they never fall behind them."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

EDIT_JSON_SEEDS = {
    "flags.json": (
        '{"kind":"compile-flags","target":"ns::scale",'
        '"params":{"use_fast_math":true,"maxrregcount":64}}'),
    "list.json": (
        '[{"kind":"launch-bounds","target":"saxpy",'
        '"params":{"max_threads":256,"min_blocks":2}},'
        '{"kind":"fast-math","target":"saxpy",'
        '"params":{"functions":["expf"]}}]'),
    "rc.json": (
        '{"kind":"restrict-const","target":"saxpy",'
        '"params":{"const":true,"restrict":false}}'),
    "replace.json": (
        '{"kind":"replace-function","target":"saxpy",'
        '"params":{"code":"__global__ void saxpy(int n) {}",'
        '"changes_precision":true}}'),
    "roc.json": (
        '{"kind":"read-only-cache","target":"saxpy",'
        '"params":{"params":["x","y"]}}'),
    "unroll.json": (
        '{"kind":"unroll","target":"saxpy/loop0","params":{"factor":4}}'),
}

LLM_REPLY_SEEDS = {
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

SELECTOR = {".json": b"\x00", ".yaml": b"\x01", ".yml": b"\x01"}

# Inputs that crashed the readers before their fixes: a JSON number out of
# range, a YAML key without a place.
SPEC_FINDINGS = {
    "json-number-out-of-range": (
        b'\x00{\n  "class": "row-reduce",\n  "request":'
        b' "the mean of each row of a 12768 x 1024'
        b' matrix",\n  "inputs":[[11111111e1111r (i'
        b'nt j = 0; j <(n; ++j)1111111111111111111'
        b'1111111111111111111111111111111111111111'
        b'11111111[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['
        b'[[[[[[[[[[[[[[[[[[[[[[[[[[[[ [\n    {\n   '
        b'   "name": "x",\n      "tSype": "float",\n'
        b'      "shape": [\n        "rows",\n       '
        b' "cols"\n      ]  }\n  \n  ],\n  "outputs": '
        b'[\n    {\n      "name": "mean",\n      " {\n'
        b'    "      s += x[(qize_t)r * cols + c];'
        b'\\n    mean[r] =  each row of a 12768 x 1'
        b'024 matrix",\n  "inputs":[[[[[[[[[[[[[[[['
        b'[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['
        b'[[[[[[ [\n    {\n      "name": "x",\n      '
        b'"tSype": "float",\n      "shape": [\n     '
        b'   "rows",\n        "cols"\n      ]  }\n  \n'
        b'  ],\n  "outputs": [\n    {\n      "name": '
        b'"mean",\n      " {\n    "      s += x[(qiz'
        b'e_t)r * cols + c];\\n    m(float)(s / col'
        b's);\\n  }\\n}\\n"\n}\n'),
    "yaml-key-without-place": (
        b'\x01# One [\n    ?   "m\xb6,*(pe: float, shaxe '
        b' "\xff\tn:\'a'),
}


def write(out, name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


def edit_json(out):
    for name, text in EDIT_JSON_SEEDS.items():
        write(out, name, text.encode("utf-8"))
    return len(EDIT_JSON_SEEDS)


def llm_reply(out):
    for name, text in LLM_REPLY_SEEDS.items():
        write(out, name, text.encode("utf-8") + b"\n")
    return len(LLM_REPLY_SEEDS)


def edit_check(out):
    cases = os.path.join(HERE, os.pardir, "test", "edit", "hostile", "cases.jsonl")
    written = 0
    with open(cases, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            case = json.loads(line)
            edits = case["edit"]
            many = isinstance(edits, list)
            codes = [e.get("params", {}).get("code")
                     for e in (edits if many else [edits])]
            codes = [c for c in codes if isinstance(c, str)]
            for n, code in enumerate(codes, 1):
                name = f"{case['id']}.{n}" if many else case["id"]
                write(out, name, code.encode("utf-8"))
                written += 1
    return written


def spec(out):
    examples = os.path.join(HERE, os.pardir, "examples", "synthesize")
    written = 0
    for name in sorted(os.listdir(examples)):
        ext = os.path.splitext(name)[1]
        if ext not in SELECTOR:
            print(f"make-seeds: {name}: not .json or .yaml", file=sys.stderr)
            return None
        with open(os.path.join(examples, name), "rb") as f:
            write(out, "example-" + name, SELECTOR[ext] + f.read())
        written += 1
    for name, data in SPEC_FINDINGS.items():
        write(out, name, data)
        written += 1
    return written


FUZZERS = {"edit-json": edit_json, "edit-check": edit_check,
           "llm-reply": llm_reply, "spec": spec}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in FUZZERS:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        print("FUZZER: " + ", ".join(FUZZERS), file=sys.stderr)
        return 2
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    written = FUZZERS[sys.argv[1]](out)
    if written is None:
        return 1
    print(f"{written} seeds in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

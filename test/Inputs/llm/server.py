#!/usr/bin/env python3
"""A scripted LLM server for the LLM client's tests.

Speaks OpenAI chat completions (POST /v1/chat/completions) and Anthropic
Messages (POST /v1/messages) on 127.0.0.1, serving replies from a script
that the test sets through a control endpoint:

  POST /_control/script  {"steps": [STEP, ...], "default": STEP,
                          "unsupported": ["response_format", "tools"]}
      Replaces the script and resets the statistics. Each API request takes
      the next step; when none is left, "default" (or a 500) answers.
      A request using an "unsupported" feature gets a 400 without taking a
      step, like a server that lacks the feature.
  POST /_control/stats   -> {"count", "max_in_flight", "invalid", "requests"}

A STEP is an object:
  status      HTTP status (default 200)
  headers     extra response headers
  delay       seconds to wait before answering
  drop        close the connection without answering
  body        the response body as text, sent as is
  body_b64    the response body as base64 (for bytes that are not UTF-8)
  huge        send a body of this many bytes
  echo_key    replace "{{KEY}}" anywhere in the step with the key the
              request carried (Authorization: Bearer, or x-api-key): a
              server that echoes the key back
  reply       {"text": str, "json": obj, "json_raw": str, "usage": [in, out]
               or null, "finish": "stop" | "length"}: wrapped in the wire
               format of the request's path. "json" goes where the request
               asked for structured output (tool call, or the content for
               response_format); "json_raw" is the same as text (to send
               broken JSON).

Requests are checked against the wire formats (model, messages, headers);
a malformed one gets a 400 and counts in "invalid".

Usage: server.py --port-file FILE [--log FILE] [--script FILE]
  --port-file  written with the port once listening
  --log        one JSON line per API request: its number, path, model, the
               structured-output mode asked for, which step answered, status
  --script     the initial script (as for /_control/script)
"""

import argparse
import base64
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATE = {}
LOG = None


def reset(script):
    STATE.clear()
    STATE.update(
        steps=list(script.get("steps", [])),
        default=script.get("default"),
        unsupported=list(script.get("unsupported", [])),
        count=0,
        in_flight=0,
        max_in_flight=0,
        invalid=0,
        requests=[],
    )


reset({})


def check_request(path, headers, body):
    """Returns a complaint about the request, or None."""
    if not isinstance(body, dict):
        return "body is not a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "missing model"
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        return "missing messages"
    for m in msgs:
        if m.get("role") not in ("user", "assistant", "system"):
            return "bad role %r" % m.get("role")
        if not isinstance(m.get("content"), str):
            return "message content must be a string"
    if headers.get("content-type") != "application/json":
        return "content-type must be application/json"
    if path == "/v1/messages":
        if "anthropic-version" not in headers:
            return "missing anthropic-version header"
        if not isinstance(body.get("max_tokens"), int):
            return "anthropic requests need max_tokens"
        if any(m["role"] == "system" for m in msgs):
            return "anthropic takes the system prompt in 'system'"
        if "tools" in body:
            for t in body["tools"]:
                if "input_schema" not in t or "name" not in t:
                    return "anthropic tools need name and input_schema"
    else:
        if "tools" in body:
            for t in body["tools"]:
                if t.get("type") != "function" or "parameters" not in t.get("function", {}):
                    return "openai tools need type=function and parameters"
        rf = body.get("response_format")
        if rf is not None:
            if rf.get("type") != "json_schema" or "schema" not in rf.get("json_schema", {}):
                return "bad response_format"
    return None


def tool_name(body):
    tools = body.get("tools") or []
    if not tools:
        return None
    t = tools[0]
    return t.get("name") or t.get("function", {}).get("name")


def wrap_openai(reply, body):
    usage = reply.get("usage", [100, 50])
    structured = reply.get("json_raw")
    if structured is None and "json" in reply:
        structured = json.dumps(reply["json"])
    text = reply.get("text")
    msg = {"role": "assistant", "content": None}
    finish = reply.get("finish", "stop")
    if body.get("tools") and structured is not None:
        msg["tool_calls"] = [{
            "id": "call_1", "type": "function",
            "function": {"name": tool_name(body), "arguments": structured}}]
        msg["content"] = text
        if finish == "stop":
            finish = "tool_calls"
    elif body.get("response_format") and structured is not None:
        msg["content"] = structured
    else:
        msg["content"] = text if text is not None else structured
    out = {"id": "chatcmpl-test", "object": "chat.completion",
           "model": body.get("model"),
           "choices": [{"index": 0, "message": msg, "finish_reason": finish}]}
    if usage is not None:
        out["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                        "total_tokens": usage[0] + usage[1]}
    return out


def wrap_anthropic(reply, body):
    usage = reply.get("usage", [100, 50])
    text = reply.get("text")
    content = []
    stop = {"stop": "end_turn", "length": "max_tokens"}.get(
        reply.get("finish", "stop"), "end_turn")
    if body.get("tools") and "json" in reply:
        if text:
            content.append({"type": "text", "text": text})
        content.append({"type": "tool_use", "id": "toolu_1",
                        "name": tool_name(body), "input": reply["json"]})
        if stop == "end_turn":
            stop = "tool_use"
    else:
        t = text
        if t is None:
            t = reply.get("json_raw")
        if t is None and "json" in reply:
            t = json.dumps(reply["json"])
        content.append({"type": "text", "text": t or ""})
    out = {"id": "msg_test", "type": "message", "role": "assistant",
           "model": body.get("model"), "content": content,
           "stop_reason": stop}
    if usage is not None:
        out["usage"] = {"input_tokens": usage[0], "output_tokens": usage[1]}
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    counted = False

    def uncount(self):
        # A request stops being in flight before its reply is written: the
        # client may send its next request as soon as it has the reply.
        if self.counted:
            self.counted = False
            with LOCK:
                STATE["in_flight"] -= 1

    answered_by = None

    def log_answer(self, status):
        if LOG is None or self.answered_by is None:
            return
        body = self.request_body if isinstance(self.request_body, dict) else {}
        mode = ("response_format" if "response_format" in body
                else "tools" if "tools" in body else "text")
        line = {"n": self.request_number, "time": round(time.time(), 3),
                "path": self.path, "model": body.get("model"), "mode": mode,
                "answered_by": self.answered_by, "status": status}
        with LOCK:
            LOG.write(json.dumps(line) + "\n")
            LOG.flush()

    def send(self, status, payload, headers=None, content_type="application/json"):
        self.uncount()
        self.log_answer(status)
        if isinstance(payload, (dict, list)):
            payload = json.dumps(payload).encode()
        elif isinstance(payload, str):
            payload = payload.encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for k, v in (headers or {}).items():
                self.send_header(k, str(v))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self):
        self.send(405, {"error": {"message": "POST only"}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length) if length else b""
        if self.path.startswith("/_control/"):
            return self.control(raw)
        with LOCK:
            STATE["in_flight"] += 1
            STATE["max_in_flight"] = max(STATE["max_in_flight"], STATE["in_flight"])
        self.counted = True
        try:
            self.api(raw)
        finally:
            self.uncount()

    def control(self, raw):
        if self.path == "/_control/script":
            with LOCK:
                reset(json.loads(raw or b"{}"))
            return self.send(200, {"ok": True})
        if self.path == "/_control/stats":
            with LOCK:
                stats = {k: STATE[k] for k in ("count", "max_in_flight", "invalid", "requests")}
            return self.send(200, stats)
        self.send(404, {"error": {"message": "unknown control path"}})

    def api(self, raw):
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        self.request_body = body
        with LOCK:
            STATE["count"] += 1
            self.request_number = STATE["count"]
            STATE["requests"].append({"path": self.path, "headers": headers,
                                      "body": body if body is not None else raw.decode("latin-1")})
        self.answered_by = "invalid"
        if self.path not in ("/v1/chat/completions", "/v1/messages"):
            with LOCK:
                STATE["invalid"] += 1
            return self.send(404, {"error": {"message": "no such endpoint " + self.path}})
        complaint = check_request(self.path, headers, body)
        if complaint:
            with LOCK:
                STATE["invalid"] += 1
            return self.send(400, {"error": {"message": "test server: " + complaint}})
        for feature in STATE["unsupported"]:
            if feature in body:
                self.answered_by = "unsupported " + feature
                return self.send(400, {"error": {"message": "'%s' is not supported by this server" % feature}})
        with LOCK:
            if STATE["steps"]:
                step = STATE["steps"].pop(0)
                STATE["step"] = STATE.get("step", 0) + 1
                self.answered_by = "step %d" % STATE["step"]
            else:
                self.answered_by = "default"
                step = STATE["default"] or {"status": 500, "body": '{"error": {"message": "no scripted reply left"}}'}
        if step.get("echo_key"):
            auth = headers.get("authorization", "")
            key = auth[7:] if auth.lower().startswith("bearer ") else headers.get("x-api-key", "")
            step = json.loads(json.dumps(step).replace("{{KEY}}", json.dumps(key)[1:-1]))
        if step.get("delay"):
            time.sleep(step["delay"])
        if step.get("drop"):
            self.log_answer("dropped")
            self.uncount()
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.close_connection = True
            return
        status = step.get("status", 200)
        headers_out = step.get("headers", {})
        if "huge" in step:
            n = int(step["huge"])
            payload = b'{"choices": [{"message": {"content": "' + b"x" * n + b'"}}]}'
            return self.send(status, payload, headers_out)
        if "body_b64" in step:
            return self.send(status, base64.b64decode(step["body_b64"]), headers_out)
        if "body" in step:
            return self.send(status, step["body"], headers_out)
        reply = step.get("reply", {"text": "ok"})
        wrapped = (wrap_anthropic if self.path == "/v1/messages" else wrap_openai)(reply, body)
        self.send(status, wrapped, headers_out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log")
    parser.add_argument("--script")
    args = parser.parse_args()
    global LOG
    if args.log:
        LOG = open(args.log, "a")
    if args.script:
        with open(args.script) as f:
            reset(json.load(f))
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())

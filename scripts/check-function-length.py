#!/usr/bin/env python3
"""Reports C++ functions longer than a number of lines.

usage: scripts/check-function-length.py [--max N] [--hard-limit N]
                                        [--explain-above N] [--top N]
                                        [--file-limit N] [PATH...]

Scans the .cpp and .h files under PATH (default: lib, tools, include and
unittests, from the repository root) with a brace-matching scan of its
own: comments, string
and character literals (raw strings included) are blanked first, then every
'{' opened at namespace or class scope whose header reads like a function
(a parameter list, not a control statement, an initializer or a lambda)
starts a function that ends at its matching '}'. Lambdas and local classes
count toward the function that holds them. A function's length is its lines
from the first line of its signature to its closing brace.

Prints how many functions exceed --max (default 150) and the --top longest
of them (default 20); exits 1 when a file is longer than --file-limit lines
(default 1000), when a function exceeds --hard-limit (default 500),
or when one longer than --explain-above lines (default 200) has no comment
right above its signature with a line that starts `Why long:` (saying why
it stays in one piece), 2 on a usage error. No compiler or compile database is needed, so it runs
anywhere the sources are.
"""

import argparse
import bisect
import os
import re
import sys

CONTROL = {"if", "for", "while", "switch", "catch", "do", "else", "return",
           "sizeof", "alignof", "decltype", "static_assert"}
SCOPE_KEYWORDS = ("namespace", "class", "struct", "union", "enum")


def blank_literals(text):
    """Comments and literals become spaces; newlines are kept."""
    out = []
    i, n = 0, len(text)

    def blank(s):
        return "".join(c if c == "\n" else " " for c in s)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(blank(text[i:j]))
            i = j
        elif c == "R" and text.startswith('"', i + 1) and (
                i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
                or text[i - 1] in "u8LU"):
            m = re.match(r'R"([^()\\ ]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(blank(text[i:j]))
            i = j
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            # A ' after a digit or letter is a digit separator (1'000).
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(blank(text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def function_name(header):
    """The name of the function a header declares, or None if it is none."""
    h = re.sub(r"\s+", " ", header).strip()
    h = re.sub(r"^((public|protected|private) ?: ?)+", "", h)
    h = re.sub(r"^(template ?<.*?> ?)+", "", h)
    if "(" not in h or h.startswith(SCOPE_KEYWORDS + ("typedef", "using")):
        return None
    m = re.search(r"((?:\w+::)*operator\s*\S+?|~?[A-Za-z_]\w*"
                  r"(?:::~?[A-Za-z_]\w*)*)\s*\(", h)
    if not m or m.group(1).split("::")[-1] in CONTROL:
        return None
    return m.group(1)


def is_initializer(header):
    """`= {...}`, `x = [&] {...}`, `return {...}`: not a function body."""
    depth = 0
    for ch in header:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "=" and depth == 0:
            return True
    return False


def scan(path):
    """(name, first line, last line) of each function in the file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = blank_literals(f.read())
    # Preprocessor lines take no part in scopes.
    text = re.sub(r"(?m)^[ \t]*#.*(?:\\\n.*)*$",
                  lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    found = []
    stack = []  # per open '{': (kind, name, first line)
    header_start = 0
    for i, c in enumerate(text):
        if c == "{":
            inside = any(k != "scope" for k, _, _ in stack)
            header = text[header_start:i]
            name = None
            if not inside and not is_initializer(header):
                name = function_name(header)
            if not inside and re.search(r"\)[\w\s]*:[^;]*\w\s*$", header):
                # `A(x) : B{y}`: a member initialized in braces; the body
                # comes after it, with the same header.
                stack.append(("braced-init", None, 0))
                continue
            if name:
                # The signature starts after an access label, if any.
                lead = re.match(r"\s*((public|protected|private)\s*:\s*)*",
                                header)
                first = bisect.bisect_right(line_starts,
                                            header_start + lead.end())
                stack.append(("function", name, first))
            elif inside or is_initializer(header):
                stack.append(("opaque", None, 0))
            else:
                stack.append(("scope", None, 0))
            header_start = i + 1
        elif c == "}":
            kind = None
            if stack:
                kind, name, first = stack.pop()
                if kind == "function":
                    found.append((name, first,
                                  bisect.bisect_right(line_starts, i)))
            if kind != "braced-init":
                header_start = i + 1
        elif c == ";":
            header_start = i + 1
    return found


def explained(lines, first):
    """Whether the comment block right above line `first` (1-based) says
    why the function is long."""
    i = first - 2
    while i >= 0 and lines[i].strip().startswith(("template", "static", "[[")):
        i -= 1  # a signature spread over lines starts at its first
    while i >= 0 and lines[i].strip().startswith("//"):
        if re.match(r"\s*//+\s*Why long:", lines[i]):
            return True
        i -= 1
    return False


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("paths", nargs="*",
                   default=["lib", "tools", "include", "unittests"])
    p.add_argument("--max", type=int, default=150,
                   help="report functions longer than this (lines)")
    p.add_argument("--hard-limit", type=int, default=500,
                   help="fail when a function is longer than this (lines)")
    p.add_argument("--explain-above", type=int, default=200,
                   help="fail when a function longer than this (lines) has "
                   "no 'Why long:' comment above it")
    p.add_argument("--top", type=int, default=20,
                   help="how many of the longest functions to list")
    p.add_argument("--file-limit", type=int, default=1000,
                   help="fail when a file is longer than this (lines)")
    args = p.parse_args()

    files = []
    for root in args.paths:
        if os.path.isfile(root):
            files.append(root)
            continue
        if not os.path.isdir(root):
            print(f"check-function-length: no such file or directory: {root}",
                  file=sys.stderr)
            return 2
        for d, _, names in os.walk(root):
            files += [os.path.join(d, n) for n in names
                      if n.endswith((".cpp", ".h"))]

    long_ones = []
    over = []
    unexplained = []
    long_files = []
    for f in sorted(files):
        with open(f, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().split("\n")
        n_lines = len(lines) - (1 if lines and lines[-1] == "" else 0)
        if n_lines > args.file_limit:
            long_files.append((n_lines, f))
        for name, first, last in scan(f):
            n = last - first + 1
            if n > args.max:
                long_ones.append((n, f, first, name))
            if n > args.hard_limit:
                over.append((n, f, first, name))
            if n > args.explain_above and not explained(lines, first):
                unexplained.append((n, f, first, name))
    long_ones.sort(key=lambda x: (-x[0], x[1], x[2]))
    print(f"{len(long_ones)} functions longer than {args.max} lines "
          f"(in {len(files)} files)")
    for n, f, first, name in long_ones[:args.top]:
        print(f"{n:6}  {f}:{first}  {name}")
    status = 0
    if over:
        print(f"error: {len(over)} functions longer than the hard limit of "
              f"{args.hard_limit} lines", file=sys.stderr)
        status = 1
    for n, f, first, name in unexplained:
        print(f"error: {f}:{first}: {name} is {n} lines long (over "
              f"{args.explain_above}) and no 'Why long:' comment above it "
              "says why; split it or explain", file=sys.stderr)
        status = 1
    for n, f in long_files:
        print(f"error: {f} is {n} lines long (over {args.file_limit}); "
              "split it by the shapes it handles", file=sys.stderr)
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())

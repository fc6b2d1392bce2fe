#!/usr/bin/env python3
"""Checks docs/transforms/ against the catalog: one page per transform kind,
no page for a kind that does not exist, and each page's parameter table
exactly as the catalog describes its parameters.

    clang-optiml transforms --schema > schema.json
    scripts/check-transform-docs.py schema.json docs/transforms
    scripts/check-transform-docs.py schema.json docs/transforms --table KIND

The catalog's own description of its parameters is the JSON Schema that
`transforms --schema` generates from each transform's ParamSpecs. A page's
"## Parameters" section holds a table with one row per parameter, in the
catalog's order:

    | name | type | description |
    | --- | --- | --- |
    | `factor` | integer 2..16, required | elements per thread (K) |

or the line "None." when the transform takes no parameters. --table prints
the section a page must hold for KIND. Exits 1 and names every mismatch.
"""
import argparse
import json
import os
import re
import sys


def catalog(schema_path):
    with open(schema_path) as f:
        schema = json.load(f)
    kinds = {}
    for kind, d in schema["$defs"].items():
        if kind == "edit":
            continue
        params = d["properties"]["params"]
        required = set(params.get("required", []))
        kinds[kind] = [(name, type_text(p, name in required), p["description"])
                       for name, p in params["properties"].items()]
    return kinds


def type_text(p, required):
    t = p["type"]
    if t == "array":
        items = p.get("items", {})
        s = "list of strings"
        if "enum" in items:
            s += " (" + ", ".join(items["enum"]) + ")"
    elif t == "string" and "enum" in p:
        s = "one of " + ", ".join(p["enum"])
    elif t == "integer" and "minimum" in p and "maximum" in p:
        s = "integer %d..%d" % (p["minimum"], p["maximum"])
    else:
        s = t
    if required:
        s += ", required"
    elif "default" in p:
        s += ", default " + json.dumps(p["default"])
    return s


def table(params):
    if not params:
        return "None.\n"
    rows = ["| name | type | description |", "| --- | --- | --- |"]
    for name, t, desc in params:
        rows.append("| `%s` | %s | %s |" % (name, t, desc.replace("|", "\\|")))
    return "\n".join(rows) + "\n"


def page_params(text):
    """The rows of the page's parameter table, or None without a section."""
    m = re.search(r"^## Parameters\s*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not m:
        return None
    body = m.group(1).strip()
    if body.startswith("None."):
        return []
    rows = []
    for line in body.splitlines():
        line = line.strip()
        if not line.startswith("|") or line.startswith("| name") or \
                line.startswith("| ---"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 3:
            rows.append(("?", "?", line))
            continue
        name = cells[0].strip("`")
        rows.append((name, cells[1], cells[2].replace("\\|", "|")))
    return rows


def check(kinds, docs):
    problems = []
    pages = {f[:-3] for f in os.listdir(docs)
             if f.endswith(".md") and f != "README.md"}
    for kind in sorted(set(kinds) - pages):
        problems.append("%s/%s.md: missing: the catalog kind '%s' has no page"
                        % (docs, kind, kind))
    for page in sorted(pages - set(kinds)):
        problems.append("%s/%s.md: names no catalog kind (kinds: %s)"
                        % (docs, page, ", ".join(sorted(kinds))))
    for kind in sorted(pages & set(kinds)):
        path = os.path.join(docs, kind + ".md")
        with open(path) as f:
            text = f.read()
        if not text.startswith("# `%s`" % kind):
            problems.append("%s: the title is not '# `%s`'" % (path, kind))
        for section in ("## What it matches", "## Parameters",
                        "## Before and after", "## Measured effect"):
            if not re.search("^" + re.escape(section) + r"\s*$", text, re.M):
                problems.append("%s: no '%s' section" % (path, section))
        got = page_params(text)
        if got is None:
            continue
        want = kinds[kind]
        got_names = [r[0] for r in got]
        want_names = [r[0] for r in want]
        if got_names != want_names:
            problems.append("%s: parameters %s, the catalog's are %s" %
                            (path, got_names or "none", want_names or "none"))
            continue
        for (name, gt, gd), (_, wt, wd) in zip(got, want):
            if gt != wt:
                problems.append("%s: parameter '%s': type '%s', the catalog "
                                "says '%s'" % (path, name, gt, wt))
            if gd != wd:
                problems.append("%s: parameter '%s': description '%s', the "
                                "catalog says '%s'" % (path, name, gd, wd))
    return problems


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("schema", help="the output of `clang-optiml transforms --schema`")
    ap.add_argument("docs", help="the folder of pages (docs/transforms)")
    ap.add_argument("--table", metavar="KIND",
                    help="print the parameter section KIND's page must hold")
    args = ap.parse_args()
    kinds = catalog(args.schema)
    if args.table:
        if args.table not in kinds:
            sys.exit("no catalog kind '%s'" % args.table)
        sys.stdout.write(table(kinds[args.table]))
        return 0
    problems = check(kinds, args.docs)
    for p in problems:
        print(p)
    if problems:
        print("%d problems in %s" % (len(problems), args.docs))
        return 1
    print("%d pages match the catalog's %d kinds" % (len(kinds), len(kinds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

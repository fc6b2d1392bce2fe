#!/usr/bin/env python3
"""One line per launch of a probe result, for FileCheck:

    errors [...]
    launch <ordinal> verified|unverified <buffer statuses>
    launch <ordinal> verified written in=no out=yes   (a reference result)

A reference result lists which of the first two pointer buffers were
written; a candidate result the distinct buffer statuses, sorted.
"""
import json
import sys

r = json.load(open(sys.argv[1]))
print("errors", r["errors"])
for l in r["launches"]:
    head = f"launch {l['ordinal']} {'verified' if l['verified'] else 'unverified'}"
    if r.get("mode") == "reference":
        names = ("in", "out")
        written = " ".join(f"{n}={'yes' if b['written'] else 'no'}"
                           for n, b in zip(names, l["buffers"]))
        print(head, "written", written)
    else:
        print(head, " ".join(sorted({b["status"] for b in l["buffers"]})))

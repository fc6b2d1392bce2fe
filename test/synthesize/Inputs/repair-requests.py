#!/usr/bin/env python3
"""Prints what each repair request of a mixture of thoughts carried (from
the scripted server's /_control/stats requests): the strategy, the first
line of the launch statements the assistant gave, and the first lines of the
feedback that followed."""
import json
import sys

requests = json.load(open(sys.argv[1]))
for r in requests:
    msgs = r["body"]["messages"]
    if len(msgs) < 3 or msgs[-2]["role"] != "assistant":
        continue
    given = json.loads(msgs[-2]["content"])
    user = msgs[-1]["content"]
    strategy = user.split('same strategy ("', 1)[1].split('")', 1)[0]
    print("repair of '%s': assistant gave launch with %s" %
          (strategy, given["launch"].strip().splitlines()[0]))
    feedback = user.split("That program was not accepted:\n\n", 1)[1]
    lines = [l for l in feedback.splitlines() if l.strip()]
    skip = 1 if lines[0].startswith(("The checks refused", "nvcc's errors")) else 0
    for l in lines[skip:skip + 3]:
        if l.startswith("Write the corrected"):
            break
        print(l)
print("%d requests" % len(requests))

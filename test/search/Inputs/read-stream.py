"""Runs a command and checks that its stdout streams: the line matching
WAIT_FOR must arrive within TIMEOUT seconds while the command is still
running (held back by the stand-in nvcc until the file GO exists); then GO
is created and the rest is read. Prints everything read, then "streamed" or
"not streamed", and exits with the command's status.

    read-stream.py WAIT_FOR GO TIMEOUT -- COMMAND...
"""
import os
import selectors
import subprocess
import sys
import time

wait_for, go, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
cmd = sys.argv[5:]
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
sel = selectors.DefaultSelector()
sel.register(p.stdout, selectors.EVENT_READ)
deadline = time.time() + timeout
buf = b""
streamed = False
while time.time() < deadline:
    if not sel.select(timeout=max(0.0, deadline - time.time())):
        break
    chunk = os.read(p.stdout.fileno(), 65536)
    if not chunk:
        break
    buf += chunk
    if wait_for.encode() in buf and p.poll() is None:
        streamed = True
        break
open(go, "w").close()
rest, _ = p.communicate()
sys.stdout.write((buf + rest).decode(errors="replace"))
print("streamed" if streamed else "not streamed")
sys.exit(p.returncode)

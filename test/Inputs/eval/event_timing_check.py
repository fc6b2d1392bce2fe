"""CPU checks of bench/eval/event_timing.py's logic (no GPU): finding the
end of a launch statement, reading the rewritten program's times, and
the pass/FAIL verdict (2% of the events' median; spread under 1% for
kernels of 1 ms or more). Prints one line per check and exits 1 if any
fails."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "bench", "eval"))
import event_timing as et  # noqa: E402

failed = 0


def check(name, ok, detail=""):
    global failed
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    failed += 0 if ok else 1


text = 'k<<<g, b>>>(f(a, ";"), /* ; */ s[1]);\nnext();'
end = et.statement_end(text, 0)
check("statement end skips strings, comments, parentheses",
      text[:end] == 'k<<<g, b>>>(f(a, ";"), /* ; */ s[1]);', repr(text[:end]))
check("no end without a semicolon", et.statement_end("k<<<g, b>>>(a)", 0) is None)

src = "void f(float *y) {\n  if (1)\n    k<<<1, 32>>>(y);\n}\n"
out = et.timing_variant(src, [("k", "k/launch0", 3, 5)], 4, False)
check("launch kept once and timed once", out.count("k<<<1, 32>>>(y);") == 2, out)
check("no flush without --flush-l2", "optiml_event_flush_l2" not in out)
out = et.timing_variant(src, [("k", "k/launch0", 3, 5)], 4, True)
check("flush before each timed launch with --flush-l2",
      "optiml_event_flush_l2();" in out.split("for (int optiml_r")[1])
try:
    et.timing_variant(src, [("k", "k/launch0", 2, 3)], 4, False)
    check("a site that is not a launch is refused", False, "no error")
except ValueError as e:
    check("a site that is not a launch is refused", "k/launch0" in str(e), str(e))

err = ("mismatch at 3\n"
       "optiml-event-timing saxpy saxpy/launch0 0.5 0.25 0.75 status=0\n"
       "optiml-event-timing scale scale/launch0 0.1 0.1 status=700\n")
t = et.parse_timings(err)
check("times read", t.get(("saxpy", "saxpy/launch0")) == [0.5, 0.25, 0.75], t)
check("a CUDA error gives no times", t.get(("scale", "scale/launch0"), 1) is None, t)

check("1.9% over: passes", et.verdict(1.019, 1.0, 0.5)[1] == "pass")
check("2.5% under: fails", et.verdict(0.975, 1.0, 0.5)[1] == "FAIL")
check("1 ms kernel, spread 1.2%: fails", et.verdict(1.0, 1.0, 1.2)[1] == "FAIL")
check("0.1 ms kernel, spread 5%: passes", et.verdict(0.1, 0.1, 5.0)[1] == "pass")
print(f"{failed} failed")
sys.exit(1 if failed else 0)

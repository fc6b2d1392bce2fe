"""CPU checks of bench/eval/ncu_compare.py's logic (no GPU, no ncu): the
CSV parser, kernel names, the pass/abs/FAIL verdicts and the bundle
unpacker. Prints one line per check and exits 1 if any fails."""

import os
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "bench", "eval"))
import ncu_compare as nc  # noqa: E402

failed = 0


def check(name, ok, detail=""):
    global failed
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    failed += 0 if ok else 1


CSV = '''==PROF== Connected to process 1
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","1","prog","h","init(float *, int)","1","7","(256, 1, 1)","(8, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_write.sum","byte","23,345,152"
"0","1","prog","h","init(float *, int)","1","7","(256, 1, 1)","(8, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","14,272"
"1","1","prog","h","void ops::saxpy<float>(int, float, const float *, float *)","1","7","(256, 1, 1)","(8, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_write.sum","byte","5,135,360"
"1","1","prog","h","void ops::saxpy<float>(int, float, const float *, float *)","1","7","(256, 1, 1)","(8, 1, 1)","0","9.0","Command line profiler metrics","sm__throughput.avg.pct_of_peak_sustained_elapsed","%","40.43"
'''

p = nc.parse_ncu_csv(CSV)
check("two launches parsed", sorted(p) == [0, 1], p)
check("thousands separators", p.get(0, {}).get("dram__bytes_write.sum") == 23345152.0, p.get(0))
check("kernel base names", p.get(0, {}).get("kernel") == "init"
      and p.get(1, {}).get("kernel") == "ops::saxpy<float>", p)
check("percent kept", abs(p.get(1, {}).get(
    "sm__throughput.avg.pct_of_peak_sustained_elapsed", 0) - 40.43) < 1e-9, p.get(1))
check("no header, nothing parsed", nc.parse_ncu_csv("==PROF== nothing\n") == {})
check("template instance matches its name", nc.name_matches("ops::saxpy", "ops::saxpy<float>")
      and not nc.name_matches("ops::sax", "ops::saxpy<float>"))

W = "dram__bytes_write.sum"
check("within 5% passes", nc.compare(W, 5.25e6, 5.086e6)[1] == "pass")
check("half fails", nc.compare(W, 2.369e6, 5.135e6)[1] == "FAIL")
check("both under the floor: abs", nc.compare(W, 1000.0, 262144.0)[1] == "abs")
check("one side over the floor fails", nc.compare(W, 3.245e6, 2.549e6)[1] == "FAIL")
check("missing value", nc.compare(W, None, 1.0)[1] == "missing")
check("time has no floor", nc.compare("gpu__time_duration.sum", 15.97e3, 15.14e3)[1] == "FAIL")

work = tempfile.mkdtemp()
src = os.path.join(work, "src", "clang-optiml-0.1.0")
os.makedirs(os.path.join(src, "bin"))
os.makedirs(os.path.join(src, "lib"))
for rel in ("bin/clang-optiml", "lib/liboptiml-probe.so"):
    open(os.path.join(src, rel), "w").close()
bundle = os.path.join(work, "b.tar.xz")
with tarfile.open(bundle, "w:xz") as t:
    t.add(src, arcname="clang-optiml-0.1.0")
tool, probe = nc.unpack_bundle(bundle, os.path.join(work, "out"))
check("bundle unpacked", tool and tool.endswith("bin/clang-optiml")
      and probe and probe.endswith("lib/liboptiml-probe.so"), (tool, probe))
with tarfile.open(os.path.join(work, "empty.tar.xz"), "w:xz") as t:
    pass
check("empty bundle: nothing found", nc.unpack_bundle(
    os.path.join(work, "empty.tar.xz"), os.path.join(work, "out2")) == (None, None))

print(f"{failed} failed")
sys.exit(1 if failed else 0)

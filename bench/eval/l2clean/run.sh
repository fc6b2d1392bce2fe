#!/usr/bin/env bash
# On the GPU node, from the repository root: DRAM bytes written by two small-
# write kernels under ncu --cache-control all (ncu flushes and invalidates L2)
# and under --cache-control none after each L2 preparation of l2clean.cu.
# Writes $OUT/l2clean/{*.csv,summary.txt}.
set -u
D=$OUT/l2clean; mkdir -p $D
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -arch=sm_90 -o $D/l2clean bench/eval/l2clean/l2clean.cu || exit 1
M=dram__bytes_write.sum,dram__bytes_read.sum
run() { # name cache mode
  ncu --clock-control none --cache-control $2 --print-units base --metrics $M -k regex:_target --csv \
    $D/l2clean $3 3 > $D/$1.csv 2> $D/$1.err
}
for i in 1 2 3; do run ncu-all-$i all none; done
for m in none read2 read4 read2x2 memset2 memset2-read2; do run clean-$m none $m; done
python3 - "$D" <<'PY'
import csv, io, os, sys, glob, statistics
d = sys.argv[1]
out = []
for f in sorted(glob.glob(os.path.join(d, "*.csv"))):
    text = open(f).read()
    start = text.find('"ID"')
    vals = {}
    for row in csv.DictReader(io.StringIO(text[start:])):
        if row.get("Metric Name") != "dram__bytes_write.sum":
            continue
        v = float(row["Metric Value"].replace(",", ""))
        u = row["Metric Unit"]
        v *= {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6}.get(u, 1)
        vals.setdefault(row["Kernel Name"].split("(")[0], []).append(v / 1e6)
    name = os.path.basename(f)[:-4]
    out.append(name + ": " + "; ".join(
        f"{k} " + ", ".join(f"{x:.3f}" for x in v) + " MB" for k, v in sorted(vals.items())))
open(os.path.join(d, "summary.txt"), "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY

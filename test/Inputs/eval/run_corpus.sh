#!/bin/sh
# Builds the seeded-bug corpus with nvcc and judges every variant against the
# baseline through the probe, on a machine with a GPU:
#   run_corpus.sh PROBE.so [WORKDIR]
# Set BIN to a folder of prebuilt variants (corpus.py build) to skip nvcc,
# and RACECHECK=1 to let compute-sanitizer judge races whose outputs agree.
set -e
here=$(cd "$(dirname "$0")" && pwd)
probe=${1:?usage: run_corpus.sh PROBE.so [WORKDIR]}
work=${2:-${TMPDIR:-/tmp}/optiml-corpus}
bin=${BIN:-$work/bin}
if [ -z "$BIN" ]; then
  python3 "$here/corpus.py" build --bin "$bin" --jobs "${JOBS:-8}"
fi
rm -rf "$work/run"
exec python3 "$here/corpus.py" run --bin "$bin" --probe "$probe" \
  --work "$work/run" ${RACECHECK:+--racecheck}

#!/usr/bin/env bash
# Session 17, on nvidia-h200 (16 CPU cores; no GPU used), from the repo root; carry [".whl"]:
#   bash scripts/device_s17_call1.sh OUTDIR
# on the CPU cores only: the `dense` kind's leave-network-group-out run of f16nhwc (12 threads) and, at low
# priority, of i8nhwc90, within the call's time; logs come back as logs.tgz.
set -uo pipefail
out=${1:?usage: device_s17_call1.sh OUTDIR}
t0=$(date +%s)
left() { echo $(( 580 - ($(date +%s) - t0) )); }
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs
record_env "$out/env.txt"
S=sweeps
lono() {  # lono NAME NICE OMP ARGS...
  local name=$1 nic=$2 omp=$3; shift 3
  OMP_NUM_THREADS=$omp nice -n "$nic" timeout $(( $(left) - 5 )) python3 -m predictor.lono "$@" --groups 6 --kind dense \
    --max-portfolio 24 --jobs 6 --out "$out/lono-$name-dense" > "/tmp/logs/lono-$name.log" 2>&1 &
}
lono f16nhwc 0 2 $S/h200.parquet $S/h200-nets.parquet $S/h200-graph-f16.parquet --family f16nhwc
lono i8nhwc90 19 1 $S/h200-sm90-i8.parquet $S/h200-sm90-i8-nets.parquet --family i8nhwc90
wait
echo "lonos done at $(date +%T), $(left) s left"
for d in "$out"/lono-*; do grep -A3 "^| family | model" "$d/REPORT.md" | tail -1; done
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

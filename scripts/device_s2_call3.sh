#!/usr/bin/env bash
# Session 2, call 3 (nvidia-h200-x2), from the repo root:  bash scripts/device_s2_call3.sh OUTDIR
# The Orin-sized proxy: the catalog's network layers at batch 1 and 8 (what a Jetson runs) on a
# 16-SM green-context partition of each H200, f16nhwc and i8nc32, timing method 2; problems the
# 16-SM sweep already holds are skipped.  Each family is split over the two GPUs (--shard).
set -euo pipefail
out=${1:?OUTDIR}
source scripts/device_env.sh
B=.dev/build
deadline=$(( $(date +%s) + ${BUDGET_S:-540} ))
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv; } > "$out/env.txt" 2>&1
python3 - <<'PY'
import csv
from predictor.shapes import network_layers
with open("/tmp/nets_b1_b8.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["N", "C", "H", "W", "K", "R", "S", "stride", "pad", "dilation", "network"])
    for s in network_layers(batches=(1, 8)):
        p = s.problem
        w.writerow([p.N, p.C, p.H, p.W, p.K, p.R, p.S, p.stride, p.pad, p.dilation, s.source.split(":", 1)[1]])
PY
run() {  # $1 GPU, $2 family, $3 shard
  local left=$(( deadline - $(date +%s) )); [ "$left" -gt 20 ] || return 0
  CUDA_VISIBLE_DEVICES=$1 python3 -m predictor.collect --quiet --family "$2" --layers /tmp/nets_b1_b8.csv \
    --sm-count 16 --done-from sweeps/h200-sm16.parquet --build-dir $B --out "$out/h200-sm16-$2-$1.parquet" \
    --parts "/tmp/$2-$1.parts" --shard "$3" --time-limit "$left" >> "/tmp/gpu$1.log" 2>&1 || [ $? -eq 3 ]
}
{ run 0 f16nhwc 0/2; run 0 i8nc32 0/2; } &
{ run 1 f16nhwc 1/2; run 1 i8nc32 1/2; } &
wait
cat /tmp/gpu0.log /tmp/gpu1.log | grep -v "emit INFO building\|nvcc sm_90" > "$out/collect.log"
grep -h "sweep stats\|wrote\|rror\|left\|partition" "$out/collect.log" | tail -20

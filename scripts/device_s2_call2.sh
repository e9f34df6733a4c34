#!/usr/bin/env bash
# Session 2, call 2 (nvidia-h200-x2), from the repo root:  bash scripts/device_s2_call2.sh OUTDIR
# The catalog's network layers (predictor/data/networks, all batches, no work bound) for the four
# families, timing method 2, prebuilt libraries carried in .dev/build.  Each family's problems are
# the first COUNT of its default set (= its network layers) less those the shipped sweeps hold.
#   GPU 0: f16nhwc90, i8nhwc90, then f16nhwc shard 0/2;  GPU 1: i8nc32, then f16nhwc shard 1/2.
# Every collector stops at the shared deadline (resumable: a later call continues from OUTDIR's files).
set -euo pipefail
out=${1:?OUTDIR}
source scripts/device_env.sh
B=.dev/build
deadline=$(( $(date +%s) + ${BUDGET_S:-540} ))
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv; } > "$out/env.txt" 2>&1
nets() { python3 -c "from predictor.shapes import default_shapes, network_layers; from predictor.config import Family; print(sum(s.source.startswith('net:') for s in default_shapes(Family('$1'), 3000)))"; }
run() {  # $1 GPU, $2 family, $3 output stem, $4 done-from sweep, [$5 shard]
  local left=$(( deadline - $(date +%s) )); [ "$left" -gt 20 ] || return 0
  CUDA_VISIBLE_DEVICES=$1 python3 -m predictor.collect --quiet --family "$2" --shapes "$(nets "$2")" \
    --done-from "$4" --build-dir $B --out "$out/$3.parquet" --parts "/tmp/$3.parts" --shard "${5:-0/1}" \
    --time-limit "$left" >> "/tmp/gpu$1.log" 2>&1 || [ $? -eq 3 ]
}
{ run 0 f16nhwc90 h200-sm90-nets sweeps/h200-sm90.parquet
  run 0 i8nhwc90 h200-sm90-i8-nets sweeps/h200-sm90-i8.parquet
  run 0 f16nhwc h200-nets-f16-0 sweeps/h200.parquet 0/2; } &
{ run 1 i8nc32 h200-nets-i8 sweeps/h200.parquet
  run 1 f16nhwc h200-nets-f16-1 sweeps/h200.parquet 1/2; } &
wait
cat /tmp/gpu0.log /tmp/gpu1.log | grep -v "emit INFO building\|nvcc sm_90" > "$out/collect.log"
grep -h "sweep stats\|wrote\|rror\|left" "$out/collect.log" | tail -20

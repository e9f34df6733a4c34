#!/usr/bin/env bash
# Fifth device session (nvidia-h200-x2), from the repo root:  bash scripts/device_call5.sh OUTDIR
# The SM90 int8 NHWC family over 600 problems on both GPUs, its model (network layers held out),
# and int8 network layers: SM80 NCxHWx<32> pick vs SM90 pick vs SM90 best vs cuBLASLt, graph-timed.
set -euo pipefail
# grep for a summary: no match is fine, a grep error (a missing log) stops the script
matches() { grep "$@" || [ $? -eq 1 ]; }
# the collector exits 3 when it stops at --time-limit (resumable by the same command): not an error
timed() { "$@" || [ $? -eq 3 ]; }
out=${1:?OUTDIR}
source scripts/device_env.sh
mkdir -p /tmp/logs /tmp/models
timed python3 -m predictor.collect --quiet --family i8nhwc90 --shapes 600 --gpus all --time-limit ${T90:-90} \
  --out "$out/h200-sm90-i8.parquet" --parts /tmp/i8 > /tmp/logs/sm90i8.log 2>&1
python3 -m predictor.train "$out/h200-sm90-i8.parquet" --family i8nhwc90 --models-dir models --export-dir /tmp/exp \
  --overwrite --quiet > /tmp/logs/train90i8.log 2>&1
cp models/h200-i8nhwc90.* /tmp/models/
python3 -m predictor.gpu_eval --sweep sweeps/h200.parquet --sm90-sweep "$out/h200-sm90-i8.parquet" \
  --base-family i8nc32 --sm90-family i8nhwc90 --out /tmp/cross > /tmp/logs/cross.log 2>&1
cp /tmp/cross/* "$out/"
matches -h "sweep stats\|chosen\|rror" /tmp/logs/*.log | matches -v predictor.emit | tail -8
cat /tmp/cross/CROSS_FAMILY_i8nhwc90.md; tail -3 /tmp/logs/cross.log
tar -czf "$out/logs_models.tgz" -C /tmp logs models

#!/usr/bin/env bash
# Fourth device session (nvidia-h200-x2), from the repo root:  bash scripts/device_call4.sh OUTDIR
# 1. the SM90 fp16 family over 600 problems (all fp16 network layers first), resumed from
#    sweeps/h200-sm90.parquet, on both GPUs;  2. its model, trained there (network layers held out);
# 3. fp16 network layers: SM80 pick vs SM90 pick vs SM90 best vs cuDNN, all graph-timed;
# 4. the fp16 on-GPU evaluation again, with the retrained SM80 model and its dispatcher.
set -euo pipefail
# grep for a summary: no match is fine, a grep error (a missing log) stops the script
matches() { grep "$@" || [ $? -eq 1 ]; }
# the collector exits 3 when it stops at --time-limit (resumable by the same command): not an error
timed() { "$@" || [ $? -eq 3 ]; }
out=${1:?OUTDIR}
source scripts/device_env.sh
mkdir -p /tmp/logs /tmp/models
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv; } > /tmp/logs/env.txt 2>&1
cp sweeps/h200-sm90.parquet "$out/"; chmod u+w "$out/h200-sm90.parquet"
timed python3 -m predictor.collect --quiet --family f16nhwc90 --shapes 600 --gpus all --time-limit ${T90:-120} \
  --out "$out/h200-sm90.parquet" --parts /tmp/sm90 > /tmp/logs/sm90.log 2>&1
python3 -m predictor.train "$out/h200-sm90.parquet" --family f16nhwc90 --models-dir models --export-dir /tmp/exp \
  --overwrite --quiet > /tmp/logs/train90.log 2>&1
cp models/h200-f16nhwc90.* /tmp/models/
CUDA_VISIBLE_DEVICES=0 python3 -m predictor.gpu_eval --sweep sweeps/h200.parquet --sm90-sweep "$out/h200-sm90.parquet" \
  --out /tmp/cross > /tmp/logs/cross.log 2>&1 &
cross=$!
CUDA_VISIBLE_DEVICES=1 python3 -m predictor.gpu_eval --sweep sweeps/h200.parquet --gpu h200 --family f16nhwc \
  --dispatcher build/dispatch/h200_dispatch_sm_90.so --out /tmp/ge > /tmp/logs/gpu_eval.log 2>&1 &
ge=$!
wait "$cross"; wait "$ge"
cp /tmp/cross/cross_family_f16nhwc90.csv /tmp/cross/CROSS_FAMILY_f16nhwc90.md /tmp/ge/layers.csv /tmp/ge/REPORT.md "$out/"
matches -h "sweep stats\|chosen\|rror" /tmp/logs/*.log | matches -v predictor.emit | tail -12
cat /tmp/cross/CROSS_FAMILY_f16nhwc90.md; tail -5 /tmp/logs/cross.log
tar -czf "$out/logs_models.tgz" -C /tmp logs models

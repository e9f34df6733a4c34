#!/usr/bin/env bash
# Second device session (nvidia-h200-x2), from the repo root:  bash scripts/device_call2.sh OUTDIR
# GPU 0: the int8 sweep on green-context partitions of 16 and 32 SMs (half of the default 2000
#        problems: --shard 0/2, the same problems as in sweeps/h200.parquet).
# GPU 1: the same half re-swept on the whole GPU (collector efficiency, run-to-run agreement),
#        then the on-GPU evaluation of held-out network layers + the dispatcher end to end.
set -euo pipefail
# grep for a summary: no match is fine, a grep error (a missing log) stops the script
matches() { grep "$@" || [ $? -eq 1 ]; }
# the collector exits 3 when it stops at --time-limit (resumable by the same command): not an error
timed() { "$@" || [ $? -eq 3 ]; }
out=${1:?OUTDIR}
source scripts/device_env.sh
mkdir -p /tmp/logs
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv; } > /tmp/logs/env.txt 2>&1
CUDA_VISIBLE_DEVICES=0 python3 -m pytest -q -p no:cacheprovider -s tests/test_gpu.py > /tmp/logs/gpu_tests.txt 2>&1
tail -3 /tmp/logs/gpu_tests.txt
C="python3 -m predictor.collect --quiet --family i8nc32 --shapes 2000 --shard 0/2"
(
  set -e
  timed env CUDA_VISIBLE_DEVICES=0 $C --sm-count 16 --time-limit ${T16:-230} --out "$out/h200-sm16.parquet" --parts /tmp/p16 > /tmp/logs/sm16.log 2>&1
  timed env CUDA_VISIBLE_DEVICES=0 $C --sm-count 32 --time-limit ${T32:-200} --out "$out/h200-sm32.parquet" --parts /tmp/p32 > /tmp/logs/sm32.log 2>&1
) &
gpu0=$!
(
  set -e
  timed env CUDA_VISIBLE_DEVICES=1 $C --time-limit 200 --out "$out/h200-repeat-shard0.parquet" --parts /tmp/prep > /tmp/logs/repeat.log 2>&1
  CUDA_VISIBLE_DEVICES=1 python3 -m predictor.gpu_eval --sweep sweeps/h200.parquet --gpu h200 --out /tmp/gpu_eval \
     --dispatcher build/dispatch/h200_dispatch_sm_90.so > /tmp/logs/gpu_eval.log 2>&1
  cp /tmp/gpu_eval/layers.csv "$out/gpu_eval_layers.csv"; cp /tmp/gpu_eval/REPORT.md "$out/gpu_eval_REPORT.md"
) &
gpu1=$!
wait "$gpu0"; wait "$gpu1"  # a failed step on either GPU stops here
matches -h "sweep stats\|wrote\|Error\|error" /tmp/logs/*.log | matches -v "INFO predictor.emit" | tail -20
tail -25 /tmp/logs/gpu_eval.log
tar -czf "$out/logs.tgz" -C /tmp logs

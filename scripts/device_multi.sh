#!/usr/bin/env bash
# On a multi-GPU device machine, from the repo root:  bash scripts/device_multi.sh OUTDIR SECONDS [collector args]
# 1) GPU tests; 2) scaling check: the same 48 problems on 1 GPU, then on all GPUs (rows of problems
# measured on GPU 1 in the second run are compared with GPU 0's in the first: cross-GPU spread);
# 3) the main sweep on all GPUs with a time limit (resumable).
set -euo pipefail
# grep for a summary: no match is fine, a grep error (a missing log) stops the script
matches() { grep "$@" || [ $? -eq 1 ]; }
# the collector exits 3 when it stops at --time-limit (resumable by the same command): not an error
timed() { "$@" || [ $? -eq 3 ]; }
out=${1:?OUTDIR}; secs=${2:?SECONDS}; shift 2
source scripts/device_env.sh
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv
  nvcc --version | tail -1; nproc; } 2>&1 | tee "$out/env.txt"
python3 -m pytest -q -p no:cacheprovider tests/test_gpu.py 2>&1 | tail -15 | tee "$out/gpu_tests.txt"  # stops if a test fails
if [ "${SCALING:-1}" = 1 ]; then
  s=$(date +%s.%N); CUDA_VISIBLE_DEVICES=0 python3 -m predictor.collect --quiet --family i8nc32 --shapes 48 \
    --out "$out/scale1.parquet" --parts /tmp/scale1 >"$out/scale.log" 2>&1; e=$(date +%s.%N)
  echo "one_gpu_wall_s $(awk "BEGIN{print $e - $s}")" | tee -a "$out/scale.log"
  s=$(date +%s.%N); python3 -m predictor.collect --quiet --family i8nc32 --shapes 48 --gpus all \
    --out "$out/scale2.parquet" --parts /tmp/scale2 >>"$out/scale.log" 2>&1; e=$(date +%s.%N)
  echo "all_gpus_wall_s $(awk "BEGIN{print $e - $s}")" | tee -a "$out/scale.log"
fi
timed python3 -m predictor.collect --quiet --jobs "$(nproc)" --gpus all --time-limit "$secs" "$@" 2>&1 \
  | tee "$out/collect.log" | matches -v "INFO predictor.emit" | tail -30

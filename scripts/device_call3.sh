#!/usr/bin/env bash
# Third device session (nvidia-h200-x2), from the repo root:  bash scripts/device_call3.sh OUTDIR
# A: GPU 0 finishes the 16- and 32-SM partition sweeps (resumed from the committed files);
#    GPU 1 sweeps 300 int8 problems alone (scaling baseline, collector efficiency).
# B: the same 300 problems on both GPUs (scaling; rows measured on GPU 0 vs GPU 1's in A: cross-GPU spread).
# C: 1000 more fp16 problems into h200.parquet on both GPUs (same --target-ms as the original run).
# D: the SM90 family, if its grid exists (SM90=1).
set -euo pipefail
# grep for a summary: no match is fine, a grep error (a missing log) stops the script
matches() { grep "$@" || [ $? -eq 1 ]; }
# the collector exits 3 when it stops at --time-limit (resumable by the same command): not an error
timed() { "$@" || [ $? -eq 3 ]; }
out=${1:?OUTDIR}
source scripts/device_env.sh
mkdir -p /tmp/logs
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv; } > /tmp/logs/env.txt 2>&1
cp sweeps/h200-sm16.parquet sweeps/h200-sm32.parquet sweeps/h200.parquet "$out/"
chmod u+w "$out"/*.parquet
C="python3 -m predictor.collect --quiet --family i8nc32 --shapes 2000 --shard 0/2"
(
  set -e
  CUDA_VISIBLE_DEVICES=0 $C --sm-count 16 --out "$out/h200-sm16.parquet" --parts /tmp/p16 > /tmp/logs/sm16.log 2>&1
  CUDA_VISIBLE_DEVICES=0 $C --sm-count 32 --out "$out/h200-sm32.parquet" --parts /tmp/p32 > /tmp/logs/sm32.log 2>&1
) &
gpu0=$!
s=$(date +%s.%N)
CUDA_VISIBLE_DEVICES=1 python3 -m predictor.collect --quiet --family i8nc32 --shapes 300 \
  --out "$out/scale-1gpu.parquet" --parts /tmp/s1 > /tmp/logs/scale1.log 2>&1
echo "one_gpu_wall_s $(awk "BEGIN{print $(date +%s.%N) - $s}")" | tee -a /tmp/logs/scale.txt
wait "$gpu0"
s=$(date +%s.%N)
python3 -m predictor.collect --quiet --family i8nc32 --shapes 300 --gpus all \
  --out "$out/scale-2gpu.parquet" --parts /tmp/s2 > /tmp/logs/scale2.log 2>&1
echo "two_gpu_wall_s $(awk "BEGIN{print $(date +%s.%N) - $s}")" | tee -a /tmp/logs/scale.txt
python3 -m predictor.collect --quiet --family f16nhwc --shapes 2000 --target-ms 0.1 --gpus all \
  --out "$out/h200.parquet" --parts /tmp/f16 > /tmp/logs/f16ext.log 2>&1
if [ "${SM90:-0}" = 1 ]; then
  python3 -m pytest -q -p no:cacheprovider tests/test_sm90.py > /tmp/logs/sm90_tests.txt 2>&1; tail -3 /tmp/logs/sm90_tests.txt
  timed python3 -m predictor.collect --quiet --family f16nhwc90 --family i8nhwc90 --shapes 1000 --gpus all --time-limit ${T90:-200} \
    --out "$out/h200-sm90.parquet" --parts /tmp/sm90 > /tmp/logs/sm90.log 2>&1
fi
matches -h "sweep stats\|wrote /root\|rror" /tmp/logs/*.log | matches -v "predictor.emit" | tail -24
cat /tmp/logs/scale.txt
tar -czf "$out/logs.tgz" -C /tmp logs

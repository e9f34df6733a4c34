#!/usr/bin/env bash
# Session 6, device call 3 (nvidia-h200, one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s6_call3.sh OUTDIR
# The regenerated routed fp16 choice dispatcher (export/dispatch_f16_choice3: new candidates, fallback to the
# leaf's next candidate) built for sm_90a; its GPU tests (tests/test_tuning_gpu.py, the fallback included);
# then the held-out networks' fp16 layers (bench/holdout/layers, never trained on), static pick vs first-call
# tuned vs cuDNN, all CUDA-graph replays (bench/vendor_layers.py --layers-dir bench/holdout/layers --tune).
set -uo pipefail
out=${1:?OUTDIR}
source scripts/device_env.sh
mkdir -p /tmp/logs "$out"
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$out/env.txt" 2>&1
L=/tmp/h200_choice3_sm_90a.so
F=f16nhwc+f16nhwc90+f16gemm90
echo "start $(date +%T)"
timeout 200 python3 -m predictor.dispatcher build export/dispatch_f16_choice3/h200_dispatch.cu --arch sm_90a --jobs 16 \
  --out $L > /tmp/logs/build.log 2>&1; echo "build rc=$? at $(date +%T)"
[ -f $L ] || { tail -30 /tmp/logs/build.log; tar -czf "$out/logs.tgz" -C /tmp logs; exit 1; }
PREDICTOR_DISPATCHER=$L timeout 100 python3 -m pytest -q -p no:cacheprovider -rs tests/test_tuning_gpu.py \
  > "$out/tuning_tests.txt" 2>&1; echo "tests rc=$? at $(date +%T)"
tail -8 "$out/tuning_tests.txt"
timeout ${BENCH_S:-300} python3 bench/vendor_layers.py --library $L --family $F --tune --layers-dir bench/holdout/layers \
  --shard ${SHARD:-0/2} --out "$out/holdout-choice3-tuned" > /tmp/logs/vendor.log 2>&1 || echo "vendor_layers exit $?"
echo "end $(date +%T)"
tail -25 /tmp/logs/vendor.log
tar -czf "$out/logs.tgz" -C /tmp logs

#!/usr/bin/env bash
# Session 4, device call 1 (nvidia-h200 or -x2), from the repo root; carry [".whl"]:
#   bash scripts/device_s4_call1.sh OUTDIR
# GPUs: the f16gemm90 family (scripts/device_gemm90.sh: build, GPU tests, sweep into h200-gemm90.parquet).
# CPU, meanwhile: the two shipped dispatchers built in parallel parts (dispatcher build --jobs).
set -euo pipefail
out=${1:?OUTDIR}
source scripts/device_env.sh
mkdir -p /tmp/g /tmp/disp
(
  nice -n 10 python3 -m predictor.dispatcher build export/dispatch/h200_dispatch.cu --arch sm_90 --jobs 8 \
    --out /tmp/disp/h200_sm80_sm_90.so > /tmp/disp/build80.log 2>&1 && echo "sm80 dispatcher built at $(date +%T)" >> /tmp/disp/build80.log
  nice -n 10 python3 -m predictor.dispatcher build export/dispatch_sm90/h200_dispatch.cu --arch sm_90a --jobs 8 \
    --out /tmp/disp/h200_sm90_sm_90a.so > /tmp/disp/build90.log 2>&1 && echo "sm90 dispatcher built at $(date +%T)" >> /tmp/disp/build90.log
) &
bg=$!
echo "start $(date +%T)"
BUDGET_S=${BUDGET_S:-470} bash scripts/device_gemm90.sh /tmp/g || echo "device_gemm90 exit $?"
wait $bg || echo "dispatcher builds failed"
echo "end $(date +%T)"
cat /tmp/disp/build80.log /tmp/disp/build90.log | tail -8
cp /tmp/g/h200-gemm90.parquet "$out/" 2>/dev/null || true
cp /tmp/g/summary.txt "$out/" 2>/dev/null || true
cp /tmp/disp/*.so "$out/" 2>/dev/null || true
tar -czf "$out/logs.tgz" -C /tmp g/env.txt g/build.log g/gpu_tests.txt g/gpu_tests_conv90.txt g/collect.log disp/build80.log disp/build90.log 2>/dev/null || true
ls -la "$out"

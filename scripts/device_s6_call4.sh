#!/usr/bin/env bash
# Session 6, device call 4 (nvidia-h200, one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s6_call4.sh OUTDIR
# ResNet-50 (fp16, channels_last, N = 1, 8, 32) through the routed fp16 choice dispatcher, static and first-call
# tuned, vs cuDNN, CUDA-graph timed; three separate processes (5 rounds each), so the figures' spread between
# runs is measured, not assumed (bench/networks.py --tune).
set -uo pipefail
out=${1:?OUTDIR}
source scripts/device_env.sh
mkdir -p /tmp/logs "$out"
L=/tmp/h200_choice3_sm_90a.so
F=f16nhwc+f16nhwc90+f16gemm90
echo "start $(date +%T)"
if [ ! -f $L ]; then
  timeout 200 python3 -m predictor.dispatcher build export/dispatch_f16_choice3/h200_dispatch.cu --arch sm_90a --jobs 16 \
    --out $L > /tmp/logs/build.log 2>&1; echo "build rc=$? at $(date +%T)"
fi
for i in 1 2 3; do
  timeout 110 python3 bench/networks.py --library $L --family $F --tune --nets resnet50 --rounds 5 \
    --out "$out/networks-resnet50-tuned-run$i" > /tmp/logs/networks$i.log 2>&1 || echo "run $i exit $?"
  grep "resnet50 |" "$out/networks-resnet50-tuned-run$i.md" 2>/dev/null
done
echo "end $(date +%T)"
tar -czf "$out/logs.tgz" -C /tmp logs

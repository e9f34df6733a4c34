#!/usr/bin/env bash
# Session 4, device call 5 (nvidia-h200, ~4 device minutes left), from the repo root; carry [".whl"]:
#   bash scripts/device_s4_call5.sh OUTDIR
# The shipped fp16 choice dispatcher of the current models (45 features) built as 16 parallel parts,
# then ResNet-50 / YOLOv8m-like / U-Net (N = 1, 8, 32) through it vs cuDNN.
set -uo pipefail
out=${1:?OUTDIR}
source scripts/device_env.sh
mkdir -p /tmp/logs
LC=/tmp/h200_choice_sm_90a.so
echo "start $(date +%T)"
timeout 140 python3 -m predictor.dispatcher build export/dispatch_f16_choice/h200_dispatch.cu --arch sm_90a --jobs 16 \
  --out $LC > /tmp/logs/build_choice.log 2>&1; echo "choice build rc=$? at $(date +%T)"
timeout 110 python3 bench/networks.py --library $LC --family f16nhwc+f16nhwc90 --rounds 2 \
  --out "$out/networks_choice" > /tmp/logs/networks_choice.log 2>&1 || echo "networks exit $?"
echo "end $(date +%T)"
tail -24 /tmp/logs/networks_choice.log
tar -czf "$out/logs.tgz" -C /tmp logs

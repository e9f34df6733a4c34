#!/usr/bin/env bash
# Session 3, device call 1 (nvidia-h200-x2), from the repo root:  bash scripts/device_s3_call1.sh OUTDIR
# Carries .dev/disp/ (the shipped dispatchers, built on the CPU machine: export/dispatch -> sm_90,
# export/dispatch_sm90 -> sm_90a) and .whl/ (nvidia-cutlass).
# GPU 0: the PyTorch custom op's GPU test, then whole networks (ResNet-50, YOLOv8m-like, U-Net;
#        N = 1, 8, 32) through the shipped SM80 (f16nhwc) and SM90 (f16nhwc90) dispatchers vs cuDNN.
# GPU 1: every distinct fp16 catalog layer, layer by layer, the same two dispatchers vs cuDNN.
set -euo pipefail
out=${1:?OUTDIR}
source scripts/device_env.sh
mkdir -p /tmp/logs
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv; } > /tmp/logs/env.txt 2>&1
L80=.dev/disp/h200_sm80_sm_90.so
L90=.dev/disp/h200_sm90_sm_90a.so
(
  set -e
  CUDA_VISIBLE_DEVICES=0 PREDICTOR_DISPATCHER=$L90 python3 -m pytest -q -p no:cacheprovider tests/test_torch_conv.py > /tmp/logs/torch_tests.txt 2>&1 || true
  CUDA_VISIBLE_DEVICES=0 timeout 330 python3 bench/networks.py --library $L80 --library $L90 --family f16nhwc --family f16nhwc90 \
    --out "$out/networks" > /tmp/logs/networks.log 2>&1 || true
) &
g0=$!
(
  set -e
  CUDA_VISIBLE_DEVICES=1 timeout 330 python3 bench/vendor_layers.py --library $L80 --library $L90 --family f16nhwc --family f16nhwc90 \
    --out "$out/vendor_layers" > /tmp/logs/vendor_layers.log 2>&1 || true
) &
g1=$!
wait $g0; wait $g1
tail -5 /tmp/logs/torch_tests.txt
tail -30 /tmp/logs/networks.log
tail -12 /tmp/logs/vendor_layers.log
tar -czf "$out/logs.tgz" -C /tmp logs

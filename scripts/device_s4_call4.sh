#!/usr/bin/env bash
# Ran once (s4call4): the choice3 dispatcher did not compile (SM90 conv + GEMM kernels in one TU); generate now refuses it.
# Session 4, device call 4 (nvidia-h200, ~5 device minutes left), from the repo root; carry [".whl"]:
#   bash scripts/device_s4_call4.sh OUTDIR
# The routed fp16 choice (f16nhwc+f16nhwc90+f16gemm90: SM80 + SM90 conv kernels, SM90 GEMM kernels for
# pointwise layers) built as parallel parts, then ResNet-50 / YOLOv8m-like / U-Net through it vs cuDNN,
# then the first 448 layers of the fp16 catalog's shard 0/2 (the layers of bench/vendor_layers/h200-choice-shard0).
set -uo pipefail
out=${1:?OUTDIR}
source scripts/device_env.sh
mkdir -p /tmp/logs
LC=/tmp/h200_choice3_sm_90a.so
echo "start $(date +%T)"
timeout 150 python3 -m predictor.dispatcher build export/dispatch_f16_choice3/h200_dispatch.cu --arch sm_90a --jobs 16 \
  --out $LC > /tmp/logs/build_choice3.log 2>&1; echo "choice3 build rc=$? at $(date +%T)"
timeout 100 python3 bench/networks.py --library $LC --family f16nhwc+f16nhwc90+f16gemm90 --rounds 2 \
  --out "$out/networks_choice3" > /tmp/logs/networks_choice3.log 2>&1 || echo "networks exit $?"
timeout 80 python3 bench/vendor_layers.py --library $LC --family f16nhwc+f16nhwc90+f16gemm90 --shard 0/2 --limit 448 \
  --out "$out/vendor_layers_choice3" > /tmp/logs/vendor_choice3.log 2>&1 || echo "vendor exit $?"
echo "end $(date +%T)"
tail -25 /tmp/logs/networks_choice3.log; tail -6 /tmp/logs/vendor_choice3.log
tar -czf "$out/logs.tgz" -C /tmp logs

#!/usr/bin/env bash
# Session 5, device call 1 (nvidia-h200), from the repo root; carry [".whl"]:
#   bash scripts/device_s5_call1.sh OUTDIR
# The routed fp16 choice (f16nhwc+f16nhwc90+f16gemm90: SM80 + SM90 conv kernels, SM90 GEMM kernels for
# pointwise layers; the GEMM kernels in their own translation units) and the two-family choice, both
# built as parallel parts, then in one run each: ResNet-50 / YOLOv8m-like / U-Net (N = 1, 8, 32) and
# the first 448 layers of the fp16 catalog's shard 0/2, through both dispatchers vs cuDNN.
set -uo pipefail
out=${1:?OUTDIR}
source scripts/device_env.sh
mkdir -p /tmp/logs
L3=/tmp/h200_choice3_sm_90a.so
L2=/tmp/h200_choice_sm_90a.so
echo "start $(date +%T)"
timeout 240 python3 -m predictor.dispatcher build export/dispatch_f16_choice3/h200_dispatch.cu --arch sm_90a --jobs 9 \
  --out $L3 > /tmp/logs/build_choice3.log 2>&1 &
timeout 240 python3 -m predictor.dispatcher build export/dispatch_f16_choice/h200_dispatch.cu --arch sm_90a --jobs 7 \
  --out $L2 > /tmp/logs/build_choice.log 2>&1 &
wait
echo "builds done at $(date +%T)"; ls -la $L3 $L2
libs=(); fams=()
[ -f $L3 ] && libs+=(--library $L3) && fams+=(--family f16nhwc+f16nhwc90+f16gemm90)
[ -f $L2 ] && libs+=(--library $L2) && fams+=(--family f16nhwc+f16nhwc90)
timeout 150 python3 bench/networks.py "${libs[@]}" "${fams[@]}" --rounds 2 \
  --out "$out/networks_choice3" > /tmp/logs/networks.log 2>&1 || echo "networks exit $?"
echo "networks done at $(date +%T)"
timeout 150 python3 bench/vendor_layers.py "${libs[@]}" "${fams[@]}" --shard 0/2 --limit 448 \
  --out "$out/vendor_layers_choice3" > /tmp/logs/vendor.log 2>&1 || echo "vendor exit $?"
echo "end $(date +%T)"
tail -30 /tmp/logs/networks.log; tail -8 /tmp/logs/vendor.log
tail -5 /tmp/logs/build_choice3.log /tmp/logs/build_choice.log
tar -czf "$out/logs.tgz" -C /tmp logs

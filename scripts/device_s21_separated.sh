#!/usr/bin/env bash
# Session 21, on nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s21_separated.sh OUTDIR
# Is the per-layer comparison with cuDNN (CUDA graphs of one conv call back to back) fair to kernels that overlap
# with themselves?  The shipped routed fp16 dispatcher built as shipped and with PDL for its SM90 GEMM kernels
# (pdl_patch, -DCUTLASS_ENABLE_GDC_FOR_SM90; scripts/device_s21_pdl.sh), each in its own process:
# 1. bench/separated_layers.py on the conv layers of ResNet-50, the YOLOv8m-like and the U-Net at N = 8, 32;
# 2. ResNet-50 whole at N = 1, 8, 32 against cuDNN's heuristic (bench/networks.py, 3 rounds).
set -uo pipefail
out=${1:?usage: device_s21_separated.sh OUTDIR}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
device_start "$out" 560
mkdir -p /tmp/bench /tmp/netlayers
cp predictor/data/networks/{resnet50,yolov8m_csp,unet_skip}.csv /tmp/netlayers/
F=f16nhwc+f16nhwc90+f16gemm90
L0=build/f16c3/h200_choice3_sm_90a.so
L1=build/f16c3pdl/h200_choice3_sm_90a.so
ensure_dispatcher export/dispatch_f16_choice3/h200_dispatch.cu $L0 200 || { tail -20 /tmp/logs/build.log; exit 1; }
mv /tmp/logs/build.log /tmp/logs/build0.log
P=export/dispatch_f16_choice3_pdl  # a sibling: the source includes ../h200_conv_heuristics.hpp
mkdir -p $P && cp export/dispatch_f16_choice3/* $P/ && pdl_patch $P/pk_runtime_gemm90.h
NVCC_APPEND_FLAGS="-DCUTLASS_ENABLE_GDC_FOR_SM90" ensure_dispatcher $P/h200_dispatch.cu $L1 200 \
  || { tail -20 /tmp/logs/build.log; exit 1; }
for v in 0 1; do
  L=$L0; [ $v = 1 ] && L=$L1
  step sep$v 100 python3 bench/separated_layers.py --library $L --family $F --layers-dir /tmp/netlayers \
    --batches 8,32 --out /tmp/bench/separated-pdl$v
  grep "^| " /tmp/bench/separated-pdl$v.md
  step net$v 60 python3 bench/networks.py --cudnn heuristic --library $L --family $F --rounds 3 --nets resnet50 \
    --out /tmp/bench/networks-resnet50-pdl$v
  grep "^| resnet50" /tmp/bench/networks-resnet50-pdl$v.md
  echo "left $(left) s"
done
tar -czf "$out/bench.tgz" -C /tmp bench logs
ls -la "$out"

#!/usr/bin/env bash
# Session 14, on nvidia-h200 (one GPU), from the repo root; carry [".whl"]:   bash scripts/device_s14_eval2.sh OUTDIR
# The routed fp16 choice's dispatcher as shipped at the end of session 14 (f16nhwc90's tile-K-32 configs and
# f16gemm90's fixed epilogue subtiles), against cuDNN's heuristic, within about 200 s of device time:
# 1. build it (all cores); 2. ResNet-50 at N = 1, 8, 32, static, 3 rounds; 3. the fp16 layers of ResNet-50, the
# YOLOv8m-like and the U-Net at N = 8 and 32, layer by layer (--cudnn-kernels); 4. the held-out layers, shard 0/2,
# if time is left.  The bench outputs come back as one bench.tgz.
set -uo pipefail
out=${1:?usage: device_s14_eval2.sh OUTDIR}
t0=$(date +%s)
left() { echo $(( 200 - ($(date +%s) - t0) )); }
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs /tmp/netlayers /tmp/bench
record_env "$out/env.txt"
L=build/f16c3e/h200_choice3_sm_90a.so
F=f16nhwc+f16nhwc90+f16gemm90
ensure_dispatcher export/dispatch_f16_choice3/h200_dispatch.cu $L 120 || { tail -20 /tmp/logs/build.log; exit 1; }
timeout 40 python3 bench/networks.py --cudnn heuristic --library $L --family $F --rounds 3 --nets resnet50 \
  --out /tmp/bench/networks-heuristic-resnet50 > /tmp/logs/net-resnet50.log 2>&1
echo "networks resnet50 rc=$? at $(date +%T)"; grep "^| " /tmp/bench/networks-heuristic-resnet50.md
cp predictor/data/networks/{resnet50,yolov8m_csp,unet_skip}.csv /tmp/netlayers/
timeout 30 python3 bench/vendor_layers.py --cudnn heuristic --cudnn-kernels --library $L --family $F \
  --layers-dir /tmp/netlayers --batches 8,32 --out /tmp/bench/netlayers-heuristic > /tmp/logs/netlayers.log 2>&1
echo "network layers rc=$? at $(date +%T)"; grep -A3 "^| variant" /tmp/bench/netlayers-heuristic.md
if [ "$(left)" -gt 35 ]; then
  timeout $(( $(left) - 3 )) python3 bench/vendor_layers.py --cudnn heuristic --library $L --family $F \
    --layers-dir bench/holdout/layers --shard 0/2 --out /tmp/bench/holdout-heuristic-shard0 > /tmp/logs/heur0.log 2>&1
  echo "held-out shard 0 rc=$? at $(date +%T)"; grep -A3 "^| variant" /tmp/bench/holdout-heuristic-shard0.md
fi
tar -czf "$out/bench.tgz" -C /tmp bench logs
ls -la "$out"

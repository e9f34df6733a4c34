#!/usr/bin/env bash
# Session 13, on nvidia-h200 (one GPU), from the repo root; carry [".whl"]:   bash scripts/device_s13_eval.sh OUTDIR
# The routed fp16 choice's dispatcher retrained with graph labels up to 10 µs and for the network layers of
# 10-30 µs (sweeps/h200-graph-f16.parquet), against cuDNN's heuristic (PyTorch's default), in this order:
# 1. build it (all cores);
# 2. ResNet-50 at N = 1, 8, 32, static and with first-call tuning (--tune), 3 rounds;
# 3. the held-out networks' fp16 layers, static picks, 2 shards (one process each);
# 4. the fp16 layers of ResNet-50, the YOLOv8m-like and the U-Net at N = 8 and 32, layer by layer, with the
#    kernels cuDNN launches (--cudnn-kernels): where whole networks lose;
# 5. the YOLOv8m-like and the U-Net at N = 1, 8, 32, static, 3 rounds (if time is left).
set -uo pipefail
out=${1:?usage: device_s13_eval.sh OUTDIR}
t0=$(date +%s)
left() { echo $(( 575 - ($(date +%s) - t0) )); }
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs /tmp/netlayers
record_env "$out/env.txt"
L=build/f16c3n/h200_choice3_sm_90a.so
F=f16nhwc+f16nhwc90+f16gemm90
ensure_dispatcher export/dispatch_f16_choice3/h200_dispatch.cu $L 200 || { tail -20 /tmp/logs/build.log; exit 1; }
timeout 150 python3 bench/networks.py --cudnn heuristic --library $L --family $F --rounds 3 --tune --nets resnet50 \
  --out "$out/networks-tuned-heuristic-resnet50" > /tmp/logs/net-resnet50.log 2>&1
echo "networks resnet50 (static and tuned) rc=$? at $(date +%T)"; grep "^| " "$out/networks-tuned-heuristic-resnet50.md"
for i in 0 1; do
  [ "$(left)" -lt 80 ] && { echo "held-out shard $i: no time left"; continue; }
  timeout 75 python3 bench/vendor_layers.py --cudnn heuristic --library $L --family $F \
    --layers-dir bench/holdout/layers --shard $i/2 --out "$out/holdout-heuristic-shard$i" > /tmp/logs/heur$i.log 2>&1
  echo "held-out shard $i rc=$? at $(date +%T)"; grep -A3 "^| variant" "$out/holdout-heuristic-shard$i.md"
done
cp predictor/data/networks/{resnet50,yolov8m_csp,unet_skip}.csv /tmp/netlayers/
if [ "$(left)" -gt 70 ]; then
  timeout $(( $(left) - 10 )) python3 bench/vendor_layers.py --cudnn heuristic --cudnn-kernels --library $L --family $F \
    --layers-dir /tmp/netlayers --batches 8,32 --out "$out/netlayers-heuristic" > /tmp/logs/netlayers.log 2>&1
  echo "network layers rc=$? at $(date +%T)"; grep -A3 "^| variant" "$out/netlayers-heuristic.md"
fi
if [ "$(left)" -gt 100 ]; then
  timeout $(( $(left) - 5 )) python3 bench/networks.py --cudnn heuristic --library $L --family $F --rounds 3 \
    --nets yolov8m_csp,unet_skip --out "$out/networks-heuristic-yolo" > /tmp/logs/net-yolo.log 2>&1
  echo "networks yolo, unet rc=$? at $(date +%T)"; grep "^| " "$out/networks-heuristic-yolo.md"
fi
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

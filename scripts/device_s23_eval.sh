#!/usr/bin/env bash
# Session 23, on nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s23_eval.sh OUTDIR
# The routed fp16 choice retrained with f16gemm90's source-less twins (scripts/device_s23_nosrc.sh) against cuDNN:
# 1. its dispatcher (export/dispatch_f16_choice3/, regenerated) built on all cores;
# 2. ResNet-50 whole at N = 1, 8, 32, 5 rounds, against cuDNN's heuristic, then (another process) its autotuner;
# 3. the held-out networks' fp16 layers against cuDNN's heuristic, 2 shards (bench/vendor_layers.py);
# 4. the YOLOv8m-like and the U-Net at N = 1, 8, 32 against the heuristic, 3 rounds, if time is left.
set -uo pipefail
out=${1:?usage: device_s23_eval.sh OUTDIR}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
device_start "$out" 565
F=f16nhwc+f16nhwc90+f16gemm90
L=build/s23/h200_choice3_sm_90a.so
ensure_dispatcher export/dispatch_f16_choice3/h200_dispatch.cu $L 240 || { tail -20 /tmp/logs/build.log; exit 1; }
echo "left $(left) s"
for mode in heuristic autotuner; do
  step net-$mode 80 python3 bench/networks.py --cudnn $mode --library $L --family $F --rounds 5 --nets resnet50 \
    --out "$out/networks-resnet50-$mode"
  grep "^| resnet50" "$out/networks-resnet50-$mode.md"
done
for i in 0 1; do
  [ "$(left)" -lt 80 ] && { echo "held-out shard $i: no time left"; continue; }
  step holdout$i 75 python3 bench/vendor_layers.py --cudnn heuristic --library $L --family $F \
    --layers-dir bench/holdout/layers --shard $i/2 --out "$out/holdout-heuristic-shard$i"
  grep -A3 "^| variant" "$out/holdout-heuristic-shard$i.md"
done
if [ "$(left)" -gt 90 ]; then
  step nets $(( $(left) - 10 )) python3 bench/networks.py --cudnn heuristic --library $L --family $F --rounds 3 \
    --nets yolov8m_csp,unet_skip --out "$out/networks-yolo-unet-heuristic"
  grep "^| " "$out/networks-yolo-unet-heuristic.md"
fi
tar -czf "$out/logs.tgz" -C /tmp logs
echo "end ($(( $(date +%s) - DEVICE_T0 )) s)"
ls -la "$out"

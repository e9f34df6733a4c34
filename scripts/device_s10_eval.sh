#!/usr/bin/env bash
# Session 10: the routed fp16 choice's dispatcher regenerated with f16gemm90's transposed kernels, against cuDNN's
# heuristic (the faster and steadier of its modes: bench/vendor_layers/h200-holdout-reference.md), on nvidia-h200
# (one GPU), from the repo root; carry [".whl"] (and "build/f16c3s" if built off the GPU):
#   STEP=layers|networks|repeat bash scripts/device_s10_eval.sh OUTDIR
# layers: builds the dispatcher (all cores) unless carried; the held-out networks' fp16 layers, static and tuned,
#         one process per shard with cuDNN's heuristic; then the small layers' kernel and graph times;
# networks: ResNet-50, the YOLOv8m-like and the U-Net at N = 1, 8, 32 with cuDNN's heuristic (3 rounds), then
#         ResNet-50 with cuDNN's autotuner (another process);
# repeat: another process of each, on another machine: the YOLOv8m-like and the U-Net with cuDNN's autotuner, the
#         three networks with its heuristic, then the held-out layers (static) with its heuristic.
set -uo pipefail
out=${1:?usage: STEP=layers|networks device_s10_eval.sh OUTDIR}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs
record_env "$out/env-${STEP:-layers}.txt"
L=build/f16c3s/h200_choice3_sm_90a.so
F=f16nhwc+f16nhwc90+f16gemm90
ensure_dispatcher export/dispatch_f16_choice3/h200_dispatch.cu $L 420 || { tail -20 /tmp/logs/build.log; exit 1; }
if [ "${STEP:-layers}" = layers ]; then
  for i in 0 1; do
    timeout 150 python3 bench/vendor_layers.py --cudnn heuristic --library $L --family $F --tune \
      --layers-dir bench/holdout/layers --shard $i/2 --out "$out/holdout-heuristic-shard$i" > /tmp/logs/heur$i.log 2>&1
    echo "heuristic shard $i rc=$? at $(date +%T)"; grep -A4 "^| variant" "$out/holdout-heuristic-shard$i.md"
  done
  timeout 100 python3 bench/small_layers.py --cudnn heuristic --library $L --family $F \
    --from "$out/holdout-heuristic-shard0.csv" --from "$out/holdout-heuristic-shard1.csv" --max-cudnn-us 5 \
    --out "$out/small-heuristic" > /tmp/logs/small.log 2>&1; echo "small layers rc=$? at $(date +%T)"
  grep -A7 "^| median" "$out/small-heuristic.md"
elif [ "${STEP}" = repeat ]; then
  timeout 150 python3 bench/networks.py --cudnn autotuner --library $L --family $F --nets yolov8m_csp,unet_skip --tune \
    --rounds 3 --out "$out/networks-autotuner" > /tmp/logs/net-autotuner.log 2>&1
  echo "networks autotuner rc=$? at $(date +%T)"; grep "^| " "$out/networks-autotuner.md" | grep -v "^| network"
  timeout 180 python3 bench/networks.py --cudnn heuristic --library $L --family $F --tune --rounds 3 \
    --out "$out/networks-heuristic" > /tmp/logs/net-heuristic.log 2>&1
  echo "networks heuristic rc=$? at $(date +%T)"; grep "^| " "$out/networks-heuristic.md" | grep -v "^| network"
  for i in 0 1; do
    timeout 60 python3 bench/vendor_layers.py --cudnn heuristic --library $L --family $F \
      --layers-dir bench/holdout/layers --shard $i/2 --out "$out/holdout-heuristic-shard$i" > /tmp/logs/heur$i.log 2>&1
    echo "heuristic shard $i rc=$? at $(date +%T)"; grep -A3 "^| variant" "$out/holdout-heuristic-shard$i.md"
  done
else
  timeout 330 python3 bench/networks.py --cudnn heuristic --library $L --family $F --tune --rounds 3 \
    --out "$out/networks-heuristic" > /tmp/logs/net-heuristic.log 2>&1
  echo "networks heuristic rc=$? at $(date +%T)"; grep "^| " "$out/networks-heuristic.md"
  timeout 120 python3 bench/networks.py --cudnn autotuner --library $L --family $F --nets resnet50 --tune --rounds 3 \
    --out "$out/networks-resnet50-autotuner" > /tmp/logs/net-autotuner.log 2>&1
  echo "networks autotuner rc=$? at $(date +%T)"; grep "^| resnet50" "$out/networks-resnet50-autotuner.md"
fi
tar -czf "$out/logs-${STEP:-layers}.tgz" -C /tmp logs
ls -la "$out"

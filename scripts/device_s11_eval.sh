#!/usr/bin/env bash
# Session 11: the routed fp16 choice's dispatcher retrained on graph-timed labels (sweeps/h200-graph-f16.parquet)
# against cuDNN's heuristic, on nvidia-h200 (one GPU), from the repo root; carry [".whl"]:
#   bash scripts/device_s11_eval.sh OUTDIR
# Builds the dispatcher (all cores), then the held-out networks' fp16 layers (static picks, 2 shards, one process
# each, cuDNN's heuristic), then ResNet-50, the YOLOv8m-like and the U-Net at N = 1, 8, 32 (3 rounds, heuristic).
set -uo pipefail
out=${1:?usage: device_s11_eval.sh OUTDIR}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs
record_env "$out/env.txt"
L=build/f16c3g/h200_choice3_sm_90a.so
F=f16nhwc+f16nhwc90+f16gemm90
ensure_dispatcher export/dispatch_f16_choice3/h200_dispatch.cu $L 330 || { tail -20 /tmp/logs/build.log; exit 1; }
for i in 0 1; do
  timeout 75 python3 bench/vendor_layers.py --cudnn heuristic --library $L --family $F \
    --layers-dir bench/holdout/layers --shard $i/2 --out "$out/holdout-heuristic-shard$i" > /tmp/logs/heur$i.log 2>&1
  echo "heuristic shard $i rc=$? at $(date +%T)"; grep -A3 "^| variant" "$out/holdout-heuristic-shard$i.md"
done
timeout 170 python3 bench/networks.py --cudnn heuristic --library $L --family $F --rounds 3 \
  --out "$out/networks-heuristic" > /tmp/logs/net-heuristic.log 2>&1
echo "networks heuristic rc=$? at $(date +%T)"; grep "^| " "$out/networks-heuristic.md"
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

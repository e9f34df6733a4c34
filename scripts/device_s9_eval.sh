#!/usr/bin/env bash
# Session 9: the routed fp16 choice's dispatcher regenerated with f16gemm90's small tiles, against cuDNN, on
# nvidia-h200 (one GPU), from the repo root; carry [".whl", "build/f16c3"] (the dispatcher, built off the GPU:
# `python -m predictor.dispatcher build export/dispatch_f16_choice3/h200_dispatch.cu --arch sm_90a --jobs 2
# --out build/f16c3/h200_choice3_sm_90a.so`; built here when absent):
#   STEP=layers|networks bash scripts/device_s9_eval.sh OUTDIR
# layers: the held-out networks' fp16 layers, static and tuned vs cuDNN (bench/vendor_layers.py, both shards),
#         then the small layers' kernel and graph times (bench/small_layers.py);
# networks: ResNet-50, the YOLOv8m-like and the U-Net at N = 1, 8, 32 vs cuDNN (bench/networks.py, 5 rounds).
set -uo pipefail
out=${1:?usage: STEP=layers|networks device_s9_eval.sh OUTDIR}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs
record_env "$out/env.txt"
L=build/f16c3/h200_choice3_sm_90a.so
F=f16nhwc+f16nhwc90+f16gemm90
ensure_dispatcher export/dispatch_f16_choice3/h200_dispatch.cu $L
if [ "${STEP:-layers}" = layers ]; then
  for i in 0 1; do
    timeout 240 python3 bench/vendor_layers.py --library $L --family $F --tune --layers-dir bench/holdout/layers \
      --shard $i/2 --out "$out/holdout-choice3-tuned-shard$i" > /tmp/logs/vendor$i.log 2>&1 || echo "vendor_layers $i exit $?"
    grep -A4 "^| variant" "$out/holdout-choice3-tuned-shard$i.md"
  done
  timeout 120 python3 bench/small_layers.py --library $L --family $F \
    --from "$out/holdout-choice3-tuned-shard0.csv" --from "$out/holdout-choice3-tuned-shard1.csv" --max-cudnn-us 5 \
    --out "$out/small-layers" > /tmp/logs/small.log 2>&1; echo "small layers rc=$? at $(date +%T)"
  grep -A7 "^| median" "$out/small-layers.md"
else
  timeout 300 python3 bench/networks.py --library $L --family $F --rounds 5 --out "$out/networks" \
    > /tmp/logs/networks.log 2>&1 || echo "networks exit $?"
  grep "^| " "$out/networks.md"
fi
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

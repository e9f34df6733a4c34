#!/usr/bin/env bash
# Session 10: a cuDNN reference that is not one process's draw, on nvidia-h200 (one GPU), from the repo root;
# carry [".whl", "build/f16c3"] (the shipped fp16 choice's dispatcher, built off the GPU; built here when absent):
#   STEP=layers|networks bash scripts/device_s10_reference.sh OUTDIR
# layers: the held-out networks' fp16 layers, cuDNN's heuristic (one process per shard, with our dispatcher and
#         the kernels cuDNN ran) and cuDNN's autotuner alone (one process, all layers, its kernels);
# networks: ResNet-50 at N = 1, 8, 32 with cuDNN's heuristic, then its autotuner (one process each, ours static
#         and tuned), then the small layers' kernel and graph times with cuDNN's heuristic.
set -uo pipefail
out=${1:?usage: STEP=layers|networks device_s10_reference.sh OUTDIR}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs
record_env "$out/env-${STEP:-layers}.txt"
L=build/f16c3/h200_choice3_sm_90a.so
F=f16nhwc+f16nhwc90+f16gemm90
ensure_dispatcher export/dispatch_f16_choice3/h200_dispatch.cu $L
if [ "${STEP:-layers}" = layers ]; then
  for i in 0 1; do
    timeout 185 python3 bench/vendor_layers.py --cudnn heuristic --cudnn-kernels --library $L --family $F \
      --layers-dir bench/holdout/layers --shard $i/2 --out "$out/ref-heuristic-shard$i" > /tmp/logs/heur$i.log 2>&1
    echo "heuristic shard $i rc=$? at $(date +%T)"; grep -A3 "^| variant" "$out/ref-heuristic-shard$i.md"
  done
  timeout 150 python3 bench/vendor_layers.py --cudnn autotuner --cudnn-kernels --layers-dir bench/holdout/layers \
    --out "$out/ref-autotuner-all" > /tmp/logs/auto.log 2>&1
  echo "autotuner rc=$? at $(date +%T)"; grep "interrupted\|layers:" "$out/ref-autotuner-all.md"
else
  for m in heuristic autotuner; do
    timeout 170 python3 bench/networks.py --cudnn $m --library $L --family $F --nets resnet50 --tune --rounds 3 \
      --out "$out/net-resnet50-$m" > /tmp/logs/net-$m.log 2>&1
    echo "networks $m rc=$? at $(date +%T)"; grep "^| resnet50" "$out/net-resnet50-$m.md"
  done
  timeout 150 python3 bench/small_layers.py --cudnn heuristic --library $L --family $F \
    --from bench/vendor_layers/h200-holdout-ref-heuristic-shard0.csv --from bench/vendor_layers/h200-holdout-ref-heuristic-shard1.csv --max-cudnn-us 5 \
    --out "$out/small-heuristic" > /tmp/logs/small.log 2>&1; echo "small layers rc=$? at $(date +%T)"
  grep -A7 "^| median" "$out/small-heuristic.md"
fi
tar -czf "$out/logs-${STEP:-layers}.tgz" -C /tmp logs
ls -la "$out"

#!/usr/bin/env bash
# Session 24, on nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s24_eval.sh OUTDIR
# The routed fp16 choice retrained with f16nhwc90's source-less twins (scripts/device_s24_conv_nosrc.sh) against
# both cuDNN modes, each in processes of its own, for bench/median_runs.py and bench/cudnn_reference.py:
# 1. its dispatcher (export/dispatch_f16_choice3/, regenerated) built on all cores;
# 2. ResNet-50 whole at N = 1, 8, 32, 5 rounds: heuristic, autotuner, heuristic, autotuner (4 processes);
# 3. the held-out networks' fp16 layers against cuDNN's autotuner, then its heuristic, 2 shards each;
# 4. the YOLOv8m-like and the U-Net at N = 1, 8, 32 against the autotuner, 3 rounds, if time is left.
# Everything it writes goes into OUTDIR/bench.tgz (the device tool returns a few files per call).
set -uo pipefail
out=${1:?usage: device_s24_eval.sh OUTDIR}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
device_start "$out" 430
b=/tmp/bench; mkdir -p $b
F=f16nhwc+f16nhwc90+f16gemm90
L=build/s24/h200_choice3_sm_90a.so
ensure_dispatcher export/dispatch_f16_choice3/h200_dispatch.cu $L 240 || { tail -20 /tmp/logs/build.log; exit 1; }
echo "left $(left) s"
for run in 1 2; do
  for mode in heuristic autotuner; do
    step net-$mode-run$run 80 python3 bench/networks.py --cudnn $mode --library $L --family $F --rounds 5 \
      --nets resnet50 --out "$b/networks-resnet50-s24-$mode-run$run"
    grep "^| resnet50" "$b/networks-resnet50-s24-$mode-run$run.md"
  done
done
for mode in autotuner heuristic; do
  for i in 0 1; do
    [ "$(left)" -lt 70 ] && { echo "held-out $mode shard $i: no time left"; continue; }
    step holdout-$mode$i 70 python3 bench/vendor_layers.py --cudnn $mode --library $L --family $F \
      --layers-dir bench/holdout/layers --shard $i/2 --out "$b/holdout-s24-$mode-shard$i"
    grep -A3 "^| variant" "$b/holdout-s24-$mode-shard$i.md"
  done
done
if [ "$(left)" -gt 90 ]; then
  step nets $(( $(left) - 15 )) python3 bench/networks.py --cudnn autotuner --library $L --family $F --rounds 3 \
    --nets yolov8m_csp,unet_skip --out "$b/networks-yolo-unet-s24-autotuner"
  grep "^| " "$b/networks-yolo-unet-s24-autotuner.md"
fi
tar -czf "$out/bench.tgz" -C /tmp bench logs
echo "end ($(( $(date +%s) - DEVICE_T0 )) s)"
ls -la "$out"

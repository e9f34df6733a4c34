#!/usr/bin/env bash
# Session 15, on nvidia-h200 (one GPU), from the repo root; carry [".whl"]:   bash scripts/device_s15_eval.sh OUTDIR
# The routed fp16 choice's dispatcher retrained with the `cost` model kind (predictor.cost_teacher), against
# cuDNN's heuristic (PyTorch's default), within about 540 s:
# 1. build it (all cores); 2. the GPU tests of the first-call tuning through it;
# 3. ResNet-50, the YOLOv8m-like and the U-Net at N = 1, 8, 32, static, 3 rounds;
# 4. the fp16 layers of the three networks at N = 8 and 32, layer by layer (--cudnn-kernels);
# 5. the held-out networks' fp16 layers, static picks, 2 shards (one process each).
# The bench outputs come back as one bench.tgz.
set -uo pipefail
out=${1:?usage: device_s15_eval.sh OUTDIR}
t0=$(date +%s)
left() { echo $(( 560 - ($(date +%s) - t0) )); }  # the steps after the build give way to the tar at the end
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs /tmp/netlayers /tmp/bench
record_env "$out/env.txt"
L=build/f16c3c/h200_choice3_sm_90a.so
F=f16nhwc+f16nhwc90+f16gemm90
ensure_dispatcher export/dispatch_f16_choice3/h200_dispatch.cu $L 200 || { tail -20 /tmp/logs/build.log; exit 1; }
PREDICTOR_DISPATCHER=$L step gputests 60 python3 -m pytest -q -p no:cacheprovider -rs tests/test_tuning_gpu.py; tail -2 /tmp/logs/gputests.log
step net-resnet50 60 python3 bench/networks.py --cudnn heuristic --library $L --family $F --rounds 3 --nets resnet50 \
  --out /tmp/bench/networks-heuristic-resnet50; grep "^| " /tmp/bench/networks-heuristic-resnet50.md
step net-yolo 100 python3 bench/networks.py --cudnn heuristic --library $L --family $F --rounds 3 \
  --nets yolov8m_csp,unet_skip --out /tmp/bench/networks-heuristic-yolo; grep "^| " /tmp/bench/networks-heuristic-yolo.md
cp predictor/data/networks/{resnet50,yolov8m_csp,unet_skip}.csv /tmp/netlayers/
step netlayers 60 python3 bench/vendor_layers.py --cudnn heuristic --cudnn-kernels --library $L --family $F \
  --layers-dir /tmp/netlayers --batches 8,32 --out /tmp/bench/netlayers-heuristic
grep -A3 "^| variant" /tmp/bench/netlayers-heuristic.md
for i in 0 1; do
  [ "$(left)" -gt 40 ] || break
  step heur$i $(( $(left) < 90 ? $(left) - 10 : 80 )) python3 bench/vendor_layers.py --cudnn heuristic --library $L --family $F \
    --layers-dir bench/holdout/layers --shard $i/2 --out /tmp/bench/holdout-heuristic-shard$i
  grep -A3 "^| variant" /tmp/bench/holdout-heuristic-shard$i.md
done
tar -czf "$out/bench.tgz" -C /tmp bench logs
ls -la "$out"

#!/usr/bin/env bash
# Session 12, on nvidia-h200 (one GPU), from the repo root; carry [".whl"]:   bash scripts/device_s12_eval.sh OUTDIR
# 1. tests/test_gpu.py (the graph/eager test measuring one family per call; pk_runtime.h's timed_batches);
# 2. the routed fp16 choice's dispatcher retrained with the 8-10 µs graph labels, built (all cores);
# 3. tests/test_tuning_gpu.py through it (first-call tuning now times graph replays);
# 4. ResNet-50, then the YOLOv8m-like and the U-Net, at N = 1, 8, 32 through it, static and with first-call tuning (--tune), against
#    cuDNN's heuristic, 3 rounds.
set -uo pipefail
out=${1:?usage: device_s12_eval.sh OUTDIR}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs
record_env "$out/env.txt"
timeout 90 python3 -m pytest -q -p no:cacheprovider -rs tests/test_gpu.py > "$out/test_gpu.txt" 2>&1
echo "test_gpu rc=$? at $(date +%T)"; tail -2 "$out/test_gpu.txt"
L=build/f16c3g/h200_choice3_sm_90a.so
F=f16nhwc+f16nhwc90+f16gemm90
ensure_dispatcher export/dispatch_f16_choice3/h200_dispatch.cu $L 260 || { tail -20 /tmp/logs/build.log; exit 1; }
PREDICTOR_DISPATCHER=$L timeout 90 python3 -m pytest -q -p no:cacheprovider -rs tests/test_tuning_gpu.py \
  > "$out/test_tuning_gpu.txt" 2>&1
echo "test_tuning_gpu rc=$? at $(date +%T)"; tail -2 "$out/test_tuning_gpu.txt"
for nets in resnet50 yolov8m_csp,unet_skip; do
  timeout 150 python3 bench/networks.py --cudnn heuristic --library $L --family $F --rounds 3 --tune --nets $nets \
    --out "$out/networks-tuned-heuristic-${nets%%,*}" > "/tmp/logs/net-tuned-${nets%%,*}.log" 2>&1
  echo "networks $nets (static and tuned) rc=$? at $(date +%T)"; grep "^| " "$out/networks-tuned-heuristic-${nets%%,*}.md"
done
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

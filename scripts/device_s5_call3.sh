#!/usr/bin/env bash
# Session 5, device call 3 (nvidia-h200, one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s5_call3.sh OUTDIR
# The routed fp16 choice's dispatcher (export/dispatch_f16_choice3, now with first-call tuning:
# pkd_conv2d_tuned_*) built as 16 parallel parts; the tuning GPU tests through it
# (tests/test_tuning_gpu.py, tests/test_torch_conv.py); ResNet-50 at N = 1, 8, 32 again (5 rounds) vs
# cuDNN; then the 448 catalog layers of s5call1 static vs first-call tuned vs cuDNN (CUDA-graph replays).
set -uo pipefail
out=${1:?OUTDIR}
source scripts/device_env.sh
mkdir -p /tmp/logs "$out"
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$out/env.txt" 2>&1
L3=/tmp/h200_choice3_sm_90a.so
F=f16nhwc+f16nhwc90+f16gemm90
echo "start $(date +%T)"
timeout 200 python3 -m predictor.dispatcher build export/dispatch_f16_choice3/h200_dispatch.cu --arch sm_90a --jobs 16 \
  --out $L3 > /tmp/logs/build_choice3.log 2>&1; echo "choice3 build rc=$? at $(date +%T)"
[ -f $L3 ] || { tail -30 /tmp/logs/build_choice3.log; tar -czf "$out/logs.tgz" -C /tmp logs; exit 1; }
PREDICTOR_DISPATCHER=$L3 timeout 100 python3 -m pytest -q -p no:cacheprovider -rs tests/test_tuning_gpu.py \
  tests/test_torch_conv.py > "$out/tuning_tests.txt" 2>&1; echo "tests rc=$? at $(date +%T)"
tail -8 "$out/tuning_tests.txt"
timeout 100 python3 bench/networks.py --library $L3 --family $F --nets resnet50 --rounds 5 \
  --out "$out/networks_resnet50" > /tmp/logs/networks.log 2>&1 || echo "networks exit $?"
echo "networks done at $(date +%T)"
timeout 170 python3 bench/vendor_layers.py --library $L3 --family $F --tune --shard 0/2 --limit 448 \
  --out "$out/vendor_layers_tuned" > /tmp/logs/vendor_tuned.log 2>&1 || echo "vendor_layers exit $?"
echo "end $(date +%T)"
grep "resnet50" "$out/networks_resnet50.md" | head -12
tail -16 /tmp/logs/vendor_tuned.log
tar -czf "$out/logs.tgz" -C /tmp logs

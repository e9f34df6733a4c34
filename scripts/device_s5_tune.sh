#!/usr/bin/env bash
# Session 5, first-call tuning (nvidia-h200, one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s5_tune.sh OUTDIR
# Builds the regenerated SM80 dispatcher (export/dispatch: i8nc32 + f16nhwc, with pkd_conv2d_tuned_*)
# for sm_90 as 16 parallel parts, runs the tuning GPU tests (tests/test_tuning_gpu.py: tuned == static,
# the cached winner is a candidate, beta != 0, capture never tunes; tests/test_torch_conv.py: the op's
# tuned flag), then times catalog fp16 layers static vs tuned vs cuDNN (bench/vendor_layers.py --tune,
# CUDA-graph replays). Under 8 minutes: every step has a timeout.
set -uo pipefail
out=${1:?OUTDIR}
source scripts/device_env.sh
mkdir -p /tmp/logs "$out"
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$out/env.txt" 2>&1
L80=/tmp/h200_sm80_sm_90.so
echo "start $(date +%T)"
timeout 230 python3 -m predictor.dispatcher build export/dispatch/h200_dispatch.cu --arch sm_90 --jobs 16 \
  --out $L80 > /tmp/logs/build_sm80.log 2>&1; echo "sm80 build rc=$? at $(date +%T)"
[ -f $L80 ] || { tail -30 /tmp/logs/build_sm80.log; tar -czf "$out/logs.tgz" -C /tmp logs; exit 1; }
PREDICTOR_DISPATCHER=$L80 timeout 90 python3 -m pytest -q -p no:cacheprovider -rs tests/test_tuning_gpu.py \
  tests/test_torch_conv.py > "$out/tuning_tests.txt" 2>&1; echo "tests rc=$? at $(date +%T)"
tail -15 "$out/tuning_tests.txt"
timeout 150 python3 bench/vendor_layers.py --library $L80 --family f16nhwc --tune --shard 0/4 --limit 200 \
  --out "$out/vendor_layers_tuned" > /tmp/logs/vendor_tuned.log 2>&1 || echo "vendor_layers exit $?"
echo "end $(date +%T)"
tail -16 /tmp/logs/vendor_tuned.log
tar -czf "$out/logs.tgz" -C /tmp logs

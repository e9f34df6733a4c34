#!/usr/bin/env bash
# Session 5, device call 4 (nvidia-h200, one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s5_call4.sh OUTDIR
# First-call tuning v2 (candidates timed as the collector does: sized batches, 3 interleaved rounds) in
# the routed fp16 choice's dispatcher (export/dispatch_f16_choice3) built as 16 parallel parts; the
# tuning GPU tests through it; then every layer of the fp16 catalog's shard 0/2 (896, the first 448
# are s5call1's and s5call3's) static vs tuned vs cuDNN (CUDA-graph replays).
set -uo pipefail
out=${1:?OUTDIR}
source scripts/device_env.sh
mkdir -p /tmp/logs "$out"
L3=/tmp/h200_choice3_sm_90a.so
F=f16nhwc+f16nhwc90+f16gemm90
echo "start $(date +%T)"
timeout 200 python3 -m predictor.dispatcher build export/dispatch_f16_choice3/h200_dispatch.cu --arch sm_90a --jobs 16 \
  --out $L3 > /tmp/logs/build_choice3.log 2>&1; echo "choice3 build rc=$? at $(date +%T)"
[ -f $L3 ] || { tail -30 /tmp/logs/build_choice3.log; tar -czf "$out/logs.tgz" -C /tmp logs; exit 1; }
PREDICTOR_DISPATCHER=$L3 timeout 100 python3 -m pytest -q -p no:cacheprovider -rs tests/test_tuning_gpu.py \
  tests/test_torch_conv.py > "$out/tuning_tests.txt" 2>&1; echo "tests rc=$? at $(date +%T)"
tail -4 "$out/tuning_tests.txt"
timeout 200 python3 bench/vendor_layers.py --library $L3 --family $F --tune --shard 0/2 \
  --out "$out/vendor_layers_tuned" > /tmp/logs/vendor_tuned.log 2>&1 || echo "vendor_layers exit $?"
echo "end $(date +%T)"
tail -14 /tmp/logs/vendor_tuned.log
tar -czf "$out/logs.tgz" -C /tmp logs

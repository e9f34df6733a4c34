#!/usr/bin/env bash
# Session 38, one device call: the int8 choice's dispatcher, regenerated from the routed model (export/dispatch_i8_choice3,
# predictor.route), on every int8 layer of the 14 held-out networks (bench/holdout/layers): every output checked
# against a reference, CUDA-graph timed, cuBLASLt int8 on the 1x1 ones (bench/vendor_layers.py --every-layer, two
# shards), then the dispatcher GPU tests (tests/test_tuning_gpu.py, tests/test_torch_conv.py; they skip what an
# int8-only dispatcher does not hold). Files are named for the GPU that ran them (h100-* or h200-*).
#   KEEP="export/dispatch_i8_choice3 bench" bash scripts/device_tree.sh slim
#   bash scripts/device_s38.sh      (carry the nvidia-cutlass wheel and build/i8c3, built here with
#   python -m predictor.dispatcher build export/dispatch_i8_choice3/h200_dispatch.cu --arch sm_90a --out
#   build/i8c3/h200_i8choice3_sm_90a.so; built there when absent); results in $OUT
set -uo pipefail
source scripts/device_env.sh || { echo "wheel install failed"; exit 1; }
device_start "$OUT" 585
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case $gpu in *H200*) tag=h200 ;; *H100*) tag=h100 ;; *) tag=gpu ;; esac
echo "GPU: $gpu ($tag)"
L8=build/i8c3/h200_i8choice3_sm_90a.so
ensure_dispatcher export/dispatch_i8_choice3/h200_dispatch.cu $L8 300 || { tail -20 /tmp/logs/build.log; exit 1; }
for sh in 0/2 1/2; do
  step "i8_${sh%/2}" 200 python3 bench/vendor_layers.py --vendor cublaslt_int8 --library $L8 \
    --family i8nhwc+i8nhwc90+i8gemm90 --layers-dir bench/holdout/layers --every-layer --shard $sh \
    --out "$OUT/$tag-holdout-i8choice3-routed-shard${sh%/2}"
  tail -8 "/tmp/logs/i8_${sh%/2}.log"
done
PREDICTOR_DISPATCHER=$L8 step gputests $(( $(left) - 10 )) python3 -m pytest -q -p no:cacheprovider -rs \
  tests/test_tuning_gpu.py tests/test_torch_conv.py
tail -4 /tmp/logs/gputests.log
tar -czf "$OUT/logs.tgz" -C /tmp logs
echo "$(left) s left"

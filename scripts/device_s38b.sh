#!/usr/bin/env bash
# Session 38, second device call: the routed fp16 choice's dispatcher, regenerated from the model routed over f16nhwc
# and f16nhwc90 (export/dispatch_f16_choice3, predictor.route): its GPU tests (tests/test_tuning_gpu.py first-call
# tuning, tests/test_torch_conv.py the PyTorch op against cuDNN), then every fp16 layer of the 14 held-out networks
# (bench/holdout/layers) through it, outputs checked, against cuDNN, CUDA-graph replays, in two shards
# (bench/vendor_layers.py; SKIP_TESTS=1: the layers only). Files are named for the GPU that ran them (h100-* or h200-*).
#   KEEP="export/dispatch_f16_choice3 export/h200_conv_heuristics.hpp models/h200-f16*.tree.json" \
#     bash scripts/device_tree.sh slim
#   bash scripts/device_s38b.sh   (carry the nvidia-cutlass wheel and build/f16c3, built here with
#   python -m predictor.dispatcher build export/dispatch_f16_choice3/h200_dispatch.cu --arch sm_90a --out
#   build/f16c3/h200_choice3_sm_90a.so; built there when absent); results in $OUT
set -uo pipefail
source scripts/device_env.sh || { echo "wheel install failed"; exit 1; }
device_start "$OUT" 585
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case $gpu in *H200*) tag=h200 ;; *H100*) tag=h100 ;; *) tag=gpu ;; esac
echo "GPU: $gpu ($tag)"
# another fp16 dispatcher: SRC=export/dispatch_f16_choice/h200_dispatch.cu LIB=build/f16c/h200_choice_sm_90a.so
# FAMILY=f16nhwc+f16nhwc90 NAME=choice
SRC=${SRC:-export/dispatch_f16_choice3/h200_dispatch.cu}; L=${LIB:-build/f16c3/h200_choice3_sm_90a.so}
F=${FAMILY:-f16nhwc+f16nhwc90+f16gemm90}; name=${NAME:-choice3}
ensure_dispatcher "$SRC" "$L" 300 || { tail -20 /tmp/logs/build.log; exit 1; }
[ -n "${SKIP_TESTS:-}" ] || PREDICTOR_DISPATCHER="$L" step gputests 150 python3 -m pytest -q -p no:cacheprovider -rs \
  tests/test_tuning_gpu.py tests/test_torch_conv.py
[ -n "${SKIP_TESTS:-}" ] || { tail -4 /tmp/logs/gputests.log; cp /tmp/logs/gputests.log "$OUT/gputests.log"; }
for sh in 0/2 1/2; do
  secs=$(( ($(left) - 15) / (${sh%/2} == 0 ? 2 : 1) ))
  step "f16_${sh%/2}" "$secs" python3 bench/vendor_layers.py --library "$L" --family "$F" \
    --layers-dir bench/holdout/layers --shard $sh --out "$OUT/$tag-holdout-$name-routed-shard${sh%/2}"
  tail -6 "/tmp/logs/f16_${sh%/2}.log"
done
tar -czf "$OUT/logs.tgz" -C /tmp logs
echo "$(left) s left"

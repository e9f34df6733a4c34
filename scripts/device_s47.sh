#!/usr/bin/env bash
# Session 47, one device call that does what the GPU it is given can do (the tool gives an H100 or an H200 for the
# `nvidia-h200` kind; data is named for the GPU that measured it):
#   H200: the 400 dilated problems of session 31 (sweeps/runs/s31/dilated.csv) over every f16nhwc90 and f16nhwc
#         config, graph batches (scripts/device_s36.sh): training data for the H200 models.
#   else (CHECK=1): the three choice dispatchers regenerated in session 47 (a pick that cannot run a problem falls
#         back to the members' own picks before the table): each built there, then their GPU tests
#         (tests/test_tuning_gpu.py, tests/test_torch_conv.py; the fall-back test runs the 2 GiB layer no SM80 fp16
#         kernel takes), then, with the time left, the held-out fp16 layers of deeplabv3_mobilenet_v3_large (the
#         network of that layer) through dispatch_f16_choice and dispatch_f16_choice3 against cuDNN, outputs checked
#         (bench/vendor_layers.py). Files are named for the GPU that ran them.
#   else: only says which GPU came and stops (every other H100 measurement is committed: sweeps/runs/s31, s36, s45, s46).
#   KEEP="sweeps/runs/s31/dilated.csv models/__init__.py export/__init__.py export/dispatch_f16_choice
#     export/dispatch_f16_choice3 export/dispatch_i8_choice3
#     export/h200_conv_heuristics.hpp $(ls models/h200-f16*.tree.json models/h200-i8nhwc*.tree.json)
#     bench/holdout/layers/deeplabv3_mobilenet_v3_large.csv" bash scripts/device_tree.sh slim; then this (carry
#   [".whl/nvidia_cutlass-4.2.0.0-py3-none-any.whl"]); bash scripts/device_tree.sh restore; results in $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
if [[ $gpu == *H200* ]]; then
  exec bash scripts/device_s36.sh
fi
if [ -z "${CHECK:-}" ]; then
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt"
  echo "not an H200: nothing measured"; exit 0
fi
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
device_start "$OUT" "${BUDGET:-570}"
case $gpu in *H100*) tag=h100 ;; *) tag=gpu ;; esac
specs=("dispatch_f16_choice f16nhwc+f16nhwc90 choice" "dispatch_f16_choice3 f16nhwc+f16nhwc90+f16gemm90 choice3"
       "dispatch_i8_choice3 i8nhwc+i8nhwc90+i8gemm90 i8choice3")
for spec in "${specs[@]}"; do
  set -- $spec
  ensure_dispatcher "export/$1/h200_dispatch.cu" "build/$1/h200_dispatch_sm_90a.so" $(( $(left) - 60 )) \
    || tail -20 /tmp/logs/build.log
done
for spec in "${specs[@]}"; do
  set -- $spec; lib=build/$1/h200_dispatch_sm_90a.so
  [ -f "$lib" ] || continue
  PREDICTOR_DISPATCHER=$lib step "gputests_$3" 90 python3 -m pytest -q -p no:cacheprovider -rs \
    tests/test_tuning_gpu.py tests/test_torch_conv.py
  tail -3 "/tmp/logs/gputests_$3.log"; cp "/tmp/logs/gputests_$3.log" "$OUT/"
done
mkdir -p /tmp/deeplab && cp bench/holdout/layers/deeplabv3_mobilenet_v3_large.csv /tmp/deeplab/
for spec in "${specs[@]:0:2}"; do
  set -- $spec; lib=build/$1/h200_dispatch_sm_90a.so
  secs=$(( $(left) - 20 )); [ "$secs" -lt 30 ] && { echo "no time left for $3's layers"; break; }
  [ -f "$lib" ] && step "layers_$3" "$secs" python3 bench/vendor_layers.py --library "$lib" --family "$2" \
    --layers-dir /tmp/deeplab --out "$OUT/$tag-deeplab-$3"
  tail -4 "/tmp/logs/layers_$3.log"
done
tar -czf "$OUT/logs.tgz" -C /tmp logs
echo "$(left) s left"

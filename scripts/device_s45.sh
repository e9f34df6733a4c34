#!/usr/bin/env bash
# Session 45, one device call that does what the GPU it is given can do (the tool gives an H100 or an H200 for the
# `nvidia-h200` kind; data is named for the GPU that measured it):
#   H200: the 400 dilated problems of session 31 (sweeps/runs/s31/dilated.csv), every f16nhwc90 and f16nhwc config,
#         graph batches: training data for the H200 models (scripts/device_s36.sh).
#   else: the two other fp16 dispatchers regenerated in session 43 with the `tiles` f16nhwc90 tree and not run on a
#         GPU since (export/dispatch_sm90: f16nhwc90 alone; export/dispatch_f16_choice: the routed f16nhwc+f16nhwc90),
#         each built there, its GPU tests (tests/test_tuning_gpu.py, tests/test_torch_conv.py) run, and every fp16
#         layer of the 14 held-out networks through it against cuDNN, outputs checked (bench/vendor_layers.py, as
#         scripts/device_s38b.sh). Files are named for the GPU that ran them (h100-* or h200-*).
#   KEEP="sweeps/runs/s31/dilated.csv export/dispatch_sm90 export/dispatch_f16_choice export/h200_conv_heuristics.hpp \
#     $(ls models/h200-f16*.tree.json)" bash scripts/device_tree.sh slim; then this (carry the nvidia-cutlass wheel);
#   results in $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
if [[ $gpu == *H200* ]]; then
  exec bash scripts/device_s36.sh
fi
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
device_start "$OUT" "${BUDGET:-580}"
case $gpu in *H100*) tag=h100 ;; *) tag=gpu ;; esac
# SPECS: the dispatchers to check, "DIR FAMILY NAME" a line (scripts/device_s46.sh passes its own)
mapfile -t specs <<< "${SPECS:-dispatch_sm90 f16nhwc90 sm90
dispatch_f16_choice f16nhwc+f16nhwc90 choice}"
for spec in "${specs[@]}"; do
  set -- $spec; dir=$1; fam=$2; name=$3
  lib=build/$dir/h200_dispatch_sm_90a.so
  ensure_dispatcher "export/$dir/h200_dispatch.cu" "$lib" $(( $(left) - 60 )) || { tail -20 /tmp/logs/build.log; continue; }
  PREDICTOR_DISPATCHER=$lib step "gputests_$name" 60 python3 -m pytest -q -p no:cacheprovider -rs \
    tests/test_tuning_gpu.py tests/test_torch_conv.py
  tail -3 "/tmp/logs/gputests_$name.log"; cp "/tmp/logs/gputests_$name.log" "$OUT/"
  for sh in 0/2 1/2; do
    secs=$(( $(left) - 20 )); [ "$secs" -lt 30 ] && { echo "no time left for $name shard $sh"; break; }
    step "f16_${name}_${sh%/2}" "$secs" python3 bench/vendor_layers.py --library "$lib" --family "$fam" \
      --layers-dir bench/holdout/layers --shard "$sh" --out "$OUT/$tag-holdout-$name-shard${sh%/2}"
    tail -4 "/tmp/logs/f16_${name}_${sh%/2}.log"
  done
done
tar -czf "$OUT/logs.tgz" -C /tmp logs
echo "$(left) s left"

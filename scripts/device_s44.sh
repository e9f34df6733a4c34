#!/usr/bin/env bash
# Session 44, one device call that does what the GPU it is given can do (the tool gives an H100 or an H200 for the
# `nvidia-h200` kind; data is named for the GPU that measured it):
#   H200: the 400 dilated problems of session 31 (sweeps/runs/s31/dilated.csv), every f16nhwc90 and f16nhwc config,
#         graph batches: training data for the H200 models (scripts/device_s36.sh).
#   else: the routed fp16 choice's dispatcher (export/dispatch_f16_choice3; its header's f16nhwc90 tree changed to the
#         `tiles` features in session 43 and has not run on a GPU since) built and its GPU tests run
#         (scripts/device_dispatch_test.sh). ONLY_H200=1: nothing.
#   KEEP="sweeps/runs/s31/dilated.csv export/dispatch_f16_choice3 export/h200_conv_heuristics.hpp $(ls models/*.tree.json)" \
#     bash scripts/device_tree.sh slim; then bash scripts/device_s44.sh (carry the nvidia-cutlass wheel); results in $OUT
set -uo pipefail
exec bash scripts/device_s37.sh env BUDGET=575 bash scripts/device_dispatch_test.sh "$OUT" \
  export/dispatch_f16_choice3/h200_dispatch.cu 330

#!/usr/bin/env bash
# Session 42, one device call that does what the GPU it is given can do (the tool gives an H100 or an H200 for the
# `nvidia-h200` kind; data is named for the GPU that measured it):
#   H200: the 400 dilated problems of session 31 (sweeps/runs/s31/dilated.csv), every f16nhwc90 and f16nhwc config,
#         graph batches: training data for the H200 models (scripts/device_s36.sh).
#   else: the int8 choice's dispatcher (export/dispatch_i8_choice3, regenerated in session 41 with the `tiles`
#         i8nhwc90 tree, not run on a GPU since): every output of the held-out int8 layers checked and timed, then the
#         dispatcher GPU tests (scripts/device_s38.sh). The branching is scripts/device_s37.sh's.
#   ONLY_H200=1 makes the second branch do nothing (a retry for an H200 after the dispatcher was checked).
#   KEEP="sweeps/runs/s31/dilated.csv export/dispatch_i8_choice3 bench" bash scripts/device_tree.sh slim; then this
#   (carry .whl/nvidia_cutlass-4.2.0.0-py3-none-any.whl and build/i8c3, built here from the current
#   export/dispatch_i8_choice3); results in $OUT
exec bash scripts/device_s37.sh bash scripts/device_s38.sh

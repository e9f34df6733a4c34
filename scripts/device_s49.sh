#!/usr/bin/env bash
# Session 49, one device call that does what the GPU it is given can do (the tool gives an H100 or an H200 for the
# `nvidia-h200` kind; data is named for the GPU that measured it):
#   H200: the band sweep of session 47 (sweeps/runs/s47/band.csv: 400 problems where f16nhwc90's leave-out picks miss
#         most) over every f16nhwc90 and f16nhwc config, graph batches (scripts/device_s36.sh): H200 training data.
#   else: the layers of the 16 networks this project does not hold (bench/newnets/layers) over every f16nhwc90
#         config: the shipped H200 models scored in that GPU's time (session 36 found the H200's labels hold on an H100,
#         sweeps/runs/s36/README.md), named for that GPU, until an H200 measures them.
#   KEEP="sweeps/runs/s47/band.csv models/__init__.py export/__init__.py" bash scripts/device_tree.sh slim; then this
#   (kind nvidia-h200, carry [".whl/nvidia_cutlass-4.2.0.0-py3-none-any.whl"]); bash scripts/device_tree.sh restore
set -uo pipefail
export LAYERS=sweeps/runs/s47/band.csv TAG=band
export OTHER_LAYERS="$(ls bench/newnets/layers/*.csv)" OTHER_TAG=newnets
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
[[ $gpu == *H200* ]] || export FAMILIES=${OTHER_FAMILIES:-f16nhwc90}
exec bash scripts/device_s36.sh

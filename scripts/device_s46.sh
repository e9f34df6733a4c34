#!/usr/bin/env bash
# Session 46, one device call that does what the machine it is given can do (the tool gives an H100 or an H200 for
# the `nvidia-h200` kind; data is named for the GPU that measured it):
#   H200: the 400 dilated problems of session 31 (sweeps/runs/s31/dilated.csv), every f16nhwc90 and f16nhwc config,
#         graph batches: training data for the H200 models (scripts/device_s36.sh).
#   else (LONO=1): its CPU cores run two leave-out experiments on the pointwise side of the routed fp16 choice
#         f16nhwc+f16nhwc90+f16gemm90 (scripts/device_lono.sh: `soft` with its inner CV grouped by network, as the
#         shipped `f16nhwc90`, and `blend`; the shipped side is `cost`), resumable across calls;
#   else: the two fp16 choice dispatchers regenerated in session 46 (their 1x1 answers handed to the members), as
#         scripts/device_s45.sh checks dispatchers: built there, GPU tests, every fp16 layer of the 14 held-out
#         networks through it against cuDNN, outputs checked. Files are named for the GPU that ran them.
#   KEEP="sweeps/runs/s31/dilated.csv export/dispatch_f16_choice3 export/dispatch_f16_choice \
#     export/h200_conv_heuristics.hpp $(ls models/h200-f16*.tree.json)" bash scripts/device_tree.sh slim (LONO=1: KEEP
#   the choice's sweeps instead); then this (carry [".whl/nvidia_cutlass-4.2.0.0-py3-none-any.whl"], with LONO=1
#   also ".whl/sk" and, once it holds folds, "lono-parts"); results in $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
if [[ $gpu == *H200* ]]; then
  exec bash scripts/device_s36.sh
fi
if [ -z "${LONO:-}" ]; then  # the dispatcher check of scripts/device_s45.sh, on this session's two dispatchers
  SPECS="dispatch_f16_choice3 f16nhwc+f16nhwc90+f16gemm90 choice3
dispatch_f16_choice f16nhwc+f16nhwc90 choice" exec bash scripts/device_s45.sh
fi
sweeps="sweeps/h200.parquet sweeps/h200-nets.parquet sweeps/h200-sm90.parquet sweeps/h200-sm90-nets.parquet
  sweeps/h200-gemm90.parquet sweeps/h200-gemm90-small.parquet sweeps/h200-gemm90-swap.parquet
  sweeps/h200-gemm90-wave.parquet sweeps/h200-graph-gemm90-wave.parquet sweeps/h200-gemm90-epi.parquet
  sweeps/h200-graph-gemm90-epi.parquet sweeps/h200-gemm90-nosrc.parquet sweeps/h200-graph-gemm90-nosrc.parquet
  sweeps/h200-graph-f16.parquet sweeps/h200-sm90-k32.parquet sweeps/h200-graph-sm90-k32.parquet
  sweeps/h200-sm90-nosrc.parquet sweeps/h200-graph-sm90-nosrc.parquet"
common="$(echo $sweeps) --family f16nhwc+f16nhwc90+f16gemm90 --groups 6 --max-portfolio 24 --k-grid 24 --jobs 3"
THREADS=${THREADS:-2} OMP=${OMP:-1} exec bash scripts/device_lono.sh "$OUT" \
  choice3-soft-network "$common --kind soft --cv-groups network" choice3-blend "$common --kind blend"

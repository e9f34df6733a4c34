#!/usr/bin/env bash
# Session 36, one device call that measures what the GPU it is given can answer (the tool gives an H100 or an H200
# for the `nvidia-h200` kind; data is named for the GPU that measured it):
#   H200: the 400 dilated problems of session 31 (sweeps/runs/s31/dilated.csv), every f16nhwc90 and f16nhwc config,
#         graph batches: training data for the H200 models (session 31 measured them on an H100).
#   else: the held-out network layers (bench/holdout/layers, 14 networks) with every f16nhwc90 and f16nhwc config:
#         the H200-trained models scored in that GPU's time on layers whose H200 scores are known, which tells
#         "another GPU" from "dilation" in session 31's H100 result (sweeps/runs/s31/README.md).
#   [BUDGET=SECONDS] [LAYERS=CSV TAG=NAME] bash scripts/device_s36.sh   (default 575 s and, on an H200, the dilated
#   CSV; e.g. LAYERS=sweeps/runs/s47/band.csv TAG=band; carry [".whl/nvidia_cutlass-4.2.0.0-py3-none-any.whl"];
#   results in $OUT)
set -uo pipefail
source scripts/device_env.sh || { echo "wheel install failed"; exit 1; }
device_start "$OUT" "${BUDGET:-575}"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
if [[ $gpu == *H200* ]]; then
  set -- --layers "${LAYERS:-sweeps/runs/s31/dilated.csv}"; tag=${TAG:-dilated}
else
  set --; for f in bench/holdout/layers/*.csv; do set -- "$@" --layers "$f"; done; tag=holdout
fi
collect_run "$tag-f16nhwc90" 330 "$OUT/raw-$tag-f16nhwc90.parquet" --family f16nhwc90 --build-dir build/s36 "$@"
collect_run "$tag-f16nhwc" 600 "$OUT/raw-$tag-f16nhwc.parquet" --family f16nhwc --build-dir build/s36 "$@"
tar -czf "$OUT/logs.tgz" -C /tmp logs
echo "$(left) s left"

#!/usr/bin/env bash
# Session 36, one device call that measures what the GPU it is given can answer (the tool gives an H100 or an H200
# for the `nvidia-h200` kind; data is named for the GPU that measured it):
#   H200: the 400 dilated problems of session 31 (sweeps/runs/s31/dilated.csv), every f16nhwc90 and f16nhwc config,
#         graph batches: training data for the H200 models (session 31 measured them on an H100).
#   else: the held-out network layers (bench/holdout/layers, 14 networks) with every f16nhwc90 and f16nhwc config:
#         the H200-trained models scored in that GPU's time on layers whose H200 scores are known, which tells
#         "another GPU" from "dilation" in session 31's H100 result (sweeps/runs/s31/README.md).
#   [BUDGET=SECONDS] [LAYERS="CSV ..." TAG=NAME] [FAMILIES="F ..."] bash scripts/device_s36.sh   (default 575 s and,
#   on an H200, the dilated CSV, families f16nhwc90 f16nhwc; e.g. LAYERS=sweeps/runs/s47/band.csv TAG=band, or
#   LAYERS="$(ls bench/newnets/layers/*.csv)" TAG=newnets FAMILIES="f16nhwc90 f16nhwc f16gemm90"; [OTHER_LAYERS="CSV ..."
#   OTHER_TAG=NAME]: what a GPU other than an H200 measures instead of the held-out networks; carry
#   [".whl/nvidia_cutlass-4.2.0.0-py3-none-any.whl"]; results in $OUT; each family's run resumes on a warm machine)
set -uo pipefail
source scripts/device_env.sh || { echo "wheel install failed"; exit 1; }
device_start "$OUT" "${BUDGET:-575}"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
if [[ $gpu == *H200* ]]; then
  set --; for f in ${LAYERS:-sweeps/runs/s31/dilated.csv}; do set -- "$@" --layers "$f"; done; tag=${TAG:-dilated}
else  # OTHER_LAYERS / OTHER_TAG: what another GPU measures instead (default the 14 held-out networks, holdout)
  set --; for f in ${OTHER_LAYERS:-bench/holdout/layers/*.csv}; do set -- "$@" --layers "$f"; done
  tag=${OTHER_TAG:-holdout}
fi
read -ra fams <<< "${FAMILIES:-f16nhwc90 f16nhwc}"
for i in "${!fams[@]}"; do  # of several families the first runs at most 330 s, so that the next gets a share
  lim=600; [ "$i" -eq 0 ] && [ "${#fams[@]}" -gt 1 ] && lim=330
  collect_run "$tag-${fams[$i]}" "$lim" "$OUT/raw-$tag-${fams[$i]}.parquet" --family "${fams[$i]}" --build-dir build/s36 "$@"
done
tar -czf "$OUT/logs.tgz" -C /tmp logs
echo "$(left) s left"

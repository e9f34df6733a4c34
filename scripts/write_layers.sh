#!/usr/bin/env bash
# Writes the conv layers of each "MODEL INPUT" line on stdin (MODEL: torchvision:NAME, timm:NAME; INPUT: 224 or
# 800x1088) to OUTDIR/<NAME>.csv at batch 1, 8, 32, through the user's own path, `python -m predictor.layers`
# (torch + torchvision, `pip install '.[layers]'`, and timm). Called by make_holdout_layers.sh and
# make_newnets_layers.sh with their lists.
#   bash scripts/write_layers.sh OUTDIR < list
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: write_layers.sh OUTDIR < list}
mkdir -p "$out"
while read -r model input; do
  python -m predictor.layers "$model" --batch 1 8 32 --input "$input" --out "$out/${model#*:}.csv"
done

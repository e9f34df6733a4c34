#!/usr/bin/env bash
# Session 21, on nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s21_swap.sh OUTDIR [SECONDS]
# An experiment outside the f16gemm90 grid: the 18 transposed large-tile configs of scripts/gemm_swap_tiles.py next
# to the 11 grid configs most often fastest on these layers (sweeps/runs/s14/epi.md), on every 1x1 layer of
# ResNet-50, the YOLOv8m-like and the U-Net at N = 8 and 32, graph-timed (method 3), outputs checked.
# Resumable (--parts).  Report: python scripts/gemm_swap_tiles.py --report ... --cudnn ...
set -uo pipefail
out=${1:?usage: device_s21_swap.sh OUTDIR [SECONDS]}
budget=${2:-420}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" build/s21 /tmp/logs
record_env "$out/env-swap.txt"
refs=("${GEMM90_1X1_BEST[@]}")
mapfile -t new < <(python3 scripts/gemm_swap_tiles.py)
echo "${#refs[@]} grid configs, ${#new[@]} outside it; start $(date +%T)"
timeout "$budget" python3 -m predictor.collect --quiet --family f16gemm90 --configs "${refs[@]}" \
  --extra-configs "${new[@]}" --layers predictor/data/networks/resnet50.csv \
  --layers predictor/data/networks/yolov8m_csp.csv --layers predictor/data/networks/unet_skip.csv \
  --batch-sizes 8,32 --timing graph --jobs 16 --build-dir build/swap --out build/s21/swap.parquet \
  --parts build/s21/swap.parts --time-limit $(( budget - 20 )) >> /tmp/logs/swap.log 2>&1
echo "swap rc=$? at $(date +%T)"; grep -v "cannot run" /tmp/logs/swap.log | tail -4
[ -f build/s21/swap.parquet ] && cp build/s21/swap.parquet "$out/"
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

#!/usr/bin/env bash
# Session 14, on nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s14_call1.sh OUTDIR [SECONDS]
# 1. scripts/device_s13_check.sh: the shipped routed fp16 dispatcher built and checked on the GPU.
# 2. An experiment outside the f16nhwc90 grid: the 24 configs of scripts/conv90_tiles.py (tile K 32, tile N 32 / 96)
#    next to the 12 grid configs most often fastest on these layers' labels, on every conv layer of ResNet-50, the
#    YOLOv8m-like and the U-Net at N = 8 and 32, graph-timed (method 3), outputs checked.  Resumable (--parts).
set -uo pipefail
out=${1:?usage: device_s14_call1.sh OUTDIR [SECONDS]}
budget=${2:-330}
bash scripts/device_s13_check.sh "$out/check"
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" build/s14 /tmp/logs
record_env "$out/env-conv90.txt"
refs=(f16nhwc90_t64x128x64_c1x1x1_s4_kws_etma_a8x8x8_lincomb
      f16nhwc90_t128x64x64_c1x1x1_s4_kws_etma_a8x8x8_lincomb
      f16nhwc90_t64x64x64_c1x1x1_s4_kws_etma_a8x8x8_lincomb
      f16nhwc90_t128x192x64_c1x1x1_sauto_kws_etma_a8x8x8_lincomb
      f16nhwc90_t128x192x64_c2x1x1_sauto_kws_etma_a8x8x8_lincomb
      f16nhwc90_t64x256x64_c1x1x1_sauto_kws_etma_a8x8x8_lincomb
      f16nhwc90_t128x128x64_c1x1x1_sauto_kws_etma_a8x8x8_lincomb
      f16nhwc90_t64x128x64_c1x1x1_sauto_kws_etma_a8x8x8_lincomb
      f16nhwc90_t256x64x64_c1x1x1_sauto_kws_etma_a8x8x8_lincomb
      f16nhwc90_t64x64x64_c1x1x1_sauto_kws_etma_a8x8x8_lincomb
      f16nhwc90_t64x64x64_c1x2x1_sauto_kws_etma_a8x8x8_lincomb
      f16nhwc90_t256x96x64_c2x1x1_sauto_kws_etma_a8x8x8_lincomb)
mapfile -t new < <(python3 scripts/conv90_tiles.py)
echo "${#refs[@]} grid configs, ${#new[@]} outside it; start $(date +%T)"
timeout "$budget" python3 -m predictor.collect --quiet --family f16nhwc90 --configs "${refs[@]}" \
  --extra-configs "${new[@]}" --layers predictor/data/networks/resnet50.csv \
  --layers predictor/data/networks/yolov8m_csp.csv --layers predictor/data/networks/unet_skip.csv \
  --batch-sizes 8,32 --timing graph --jobs 16 --build-dir build/conv90 --out build/s14/conv90.parquet \
  --parts build/s14/conv90.parts --time-limit $(( budget - 20 )) >> /tmp/logs/conv90.log 2>&1
echo "conv90 rc=$? at $(date +%T)"; grep -v "cannot run" /tmp/logs/conv90.log | tail -4
[ -f build/s14/conv90.parquet ] && cp build/s14/conv90.parquet "$out/"
tar -czf "$out/logs.tgz" -C /tmp logs -C "$out" check
ls -la "$out"

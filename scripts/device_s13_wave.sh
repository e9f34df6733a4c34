#!/usr/bin/env bash
# Session 13, on nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]; right after
# device_s13_eval.sh on the same warm machine:   bash scripts/device_s13_wave.sh OUTDIR [SECONDS]
# An experiment outside the f16gemm90 grid: the 20 configs of scripts/gemm_wave_tiles.py (N tiles of 96/160/224,
# 2x2 and 4x1 clusters) next to 12 of the grid's (the GEMM configs most often among the 3 fastest on these layers'
# graph labels), on the 1x1 layers of ResNet-50, the YOLOv8m-like and the U-Net at N = 8 and 32, timing method 3,
# outputs checked; compared with cuDNN on the same layers (device_s13_eval.sh's netlayers run).
set -uo pipefail
out=${1:?usage: device_s13_wave.sh OUTDIR [SECONDS]}
budget=${2:-300}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" build/s13 /tmp/logs
record_env "$out/env-wave.txt"
refs=(f16gemm90_t128x64x64_c1x1x1_sauto_kpingpong_etma_tsdefault_a8x8x8_lincomb
      f16gemm90_t128x128x64_c1x1x1_sauto_kpingpong_etma_tsdefault_a8x8x8_lincomb
      f16gemm90_t256x64x64_c1x1x1_sauto_kcoop_etmacoop_tsdefault_a8x8x8_lincomb
      f16gemm90_t64x128x64_c1x1x1_sauto_kpingpong_etma_tsdefault_a8x8x8_lincomb
      f16gemm90_t128x128x64_c1x1x1_s4_kcoop_etmacoop_tsdefault_a8x8x8_lincomb
      f16gemm90_t128x128x64_c1x1x1_sauto_kcoop_etmacoop_tsdefault_a8x8x8_lincomb
      f16gemm90_t256x64x64_c1x1x1_sauto_kpingpong_etma_tsdefault_a8x8x8_lincomb
      f16gemm90_t128x64x64_c1x2x1_sauto_kpingpong_etma_tsdefault_a8x8x8_lincomb
      f16gemm90_t256x128x64_c1x1x1_sauto_kcoop_etmacoop_tsdefault_a8x8x8_lincomb
      f16gemm90_t128x256x64_c1x1x1_sauto_kcoop_etmacoop_tsdefault_a8x8x8_lincomb
      f16gemm90_t64x256x64_c1x1x1_sauto_kpingpong_etma_tsdefault_a8x8x8_lincomb
      f16gemm90_t128x64x64_c2x1x1_sauto_kpingpong_etma_tsdefault_a8x8x8_lincomb)
mapfile -t wave < <(python3 scripts/gemm_wave_tiles.py)
echo "${#refs[@]} grid configs, ${#wave[@]} outside it; start $(date +%T)"
timeout "$budget" python3 -m predictor.collect --quiet --family f16gemm90 --configs "${refs[@]}" \
  --extra-configs "${wave[@]}" --layers predictor/data/networks/resnet50.csv \
  --layers predictor/data/networks/yolov8m_csp.csv --layers predictor/data/networks/unet_skip.csv \
  --batch-sizes 8,32 --timing graph --jobs 16 --build-dir build/wave --out build/s13/wave.parquet \
  --parts build/s13/wave.parts --time-limit $(( budget - 20 )) >> /tmp/logs/wave.log 2>&1
echo "wave rc=$? at $(date +%T)"; grep -v "cannot run" /tmp/logs/wave.log | tail -4
[ -f build/s13/wave.parquet ] && cp build/s13/wave.parquet "$out/"
tar -czf "$out/logs-wave.tgz" -C /tmp logs
ls -la "$out"

#!/usr/bin/env bash
# Session 22, on nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s22_sched.sh OUTDIR
# Does the persistent tile scheduler's rasterisation close part of the 1x1 gap to cuDNN's nvjet GEMMs?  The SM90
# GEMM kernels' persistent scheduler takes max_swizzle_size and raster_order at run time (the package leaves both
# at CUTLASS's defaults: 1 and its heuristic, which rasters along N when M has more tiles).  sched_patch
# (scripts/device_env.sh) makes the device copy of csrc/pk_runtime_gemm90.h read them from PK_SWIZZLE / PK_RASTER;
# the kernels are built once, then the grid's 11 fastest f16gemm90 configs on the 1x1 layers (as
# scripts/device_s21_pdl.sh's) are graph-timed (method 3) on the 1x1 layers of ResNet-50, the YOLOv8m-like and
# the U-Net at N = 8, 32 under each setting, the default twice (first and last: the run-to-run spread).
set -uo pipefail
out=${1:?usage: device_s22_sched.sh OUTDIR}
t0=$(date +%s)
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
remaining() { echo $(( 560 - ($(date +%s) - t0) )); }  # (device_env.sh has its own left())
mkdir -p "$out" build/s22 /tmp/logs
record_env "$out/env-sched.txt"
cfgs=("${GEMM90_1X1_BEST[@]}")
sched_patch predictor/csrc/pk_runtime_gemm90.h || exit 1
# name, PK_SWIZZLE, PK_RASTER ("" = unset)
runs=("default 1 0" "sw2 2 0" "sw4 4 0" "sw8 8 0" "alongm 1 1" "default2 1 0")
for r in "${runs[@]}"; do
  read -r name sw ra <<< "$r"
  [ "$(remaining)" -gt 60 ] || { echo "$name: no time left"; break; }
  echo "$name start $(date +%T)"
  PK_SWIZZLE=$sw PK_RASTER=$ra timeout $(( $(remaining) - 10 )) python3 -m predictor.collect --quiet --family f16gemm90 \
    --configs "${cfgs[@]}" --layers predictor/data/networks/resnet50.csv \
    --layers predictor/data/networks/yolov8m_csp.csv --layers predictor/data/networks/unet_skip.csv \
    --batch-sizes 8,32 --timing graph --jobs 16 --build-dir build/sched --out "build/s22/sched-$name.parquet" \
    --parts "build/s22/sched-$name.parts" --time-limit 150 >> "/tmp/logs/sched-$name.log" 2>&1
  echo "$name (PK_SWIZZLE=$sw PK_RASTER=$ra) rc=$? at $(date +%T)"; grep -v "cannot run\|nvcc sm_90" "/tmp/logs/sched-$name.log" | tail -2
  [ -f "build/s22/sched-$name.parquet" ] && cp "build/s22/sched-$name.parquet" "$out/"
done
tar -czf "$out/logs-sched.tgz" -C /tmp logs
echo "end $(date +%T) ($(( $(date +%s) - t0 )) s)"
ls -la "$out"

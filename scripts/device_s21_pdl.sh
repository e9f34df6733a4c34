#!/usr/bin/env bash
# Session 21, on nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s21_pdl.sh OUTDIR
# Does programmatic dependent launch (PDL) close the gap to cuDNN's nvjet GEMMs on 1x1 layers?  CUTLASS 4.2's SM90
# GEMM kernels (not its SM90 conv kernels) call griddepcontrol.wait / launch_dependents when compiled with
# -DCUTLASS_ENABLE_GDC_FOR_SM90 (NVCC_APPEND_FLAGS, a separate build folder); pdl_patch (below) makes the device copy
# of csrc/pk_runtime_gemm90.h launch them with PDL (GemmUniversalAdapter::run's launch_with_pdl).  The run of
# 2026-12-03 20:35 UTC had the same switch as a PK_GEMM90_PDL macro of the header (not kept).
# 1. 15 f16gemm90 configs (scripts/device_s21_swap.sh's grid configs and the best transposed ones), built without
#    and with PDL, graph-timed (method 3) on the 1x1 layers of ResNet-50, the YOLOv8m-like and the U-Net at N = 8, 32.
# 2. The shipped routed fp16 dispatcher built with PDL (its copy of the runtime header replaced by the package's),
#    then ResNet-50 / YOLO / U-Net whole networks at N = 1, 8, 32 and their layers one by one, against cuDNN's
#    heuristic in the same process (as scripts/device_s15_eval.sh).
set -uo pipefail
out=${1:?usage: device_s21_pdl.sh OUTDIR}
t0=$(date +%s)
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
remaining() { echo $(( 560 - ($(date +%s) - t0) )); }  # (device_env.sh has its own left())
mkdir -p "$out" build/s21 /tmp/logs /tmp/bench /tmp/netlayers
record_env "$out/env-pdl.txt"
cfgs=("${GEMM90_1X1_BEST[@]}")
swap=(f16gemm90_t128x128x64_c1x1x1_sauto_kpingpong_etma_ep64x64_tsdefault_swapab_a8x8x8_lincomb
      f16gemm90_t64x256x64_c1x1x1_sauto_kpingpong_etma_tsdefault_swapab_a8x8x8_lincomb
      f16gemm90_t128x64x64_c1x1x1_sauto_kpingpong_etma_tsdefault_swapab_a8x8x8_lincomb
      f16gemm90_t64x192x64_c1x1x1_sauto_kpingpong_etma_tsdefault_swapab_a8x8x8_lincomb)
PDLFLAGS="-DCUTLASS_ENABLE_GDC_FOR_SM90"
for v in 0 1; do
  flags=""; [ $v = 1 ] && { flags=$PDLFLAGS; pdl_patch predictor/csrc/pk_runtime_gemm90.h; }
  echo "pdl$v start $(date +%T)"
  NVCC_APPEND_FLAGS="$flags" timeout 200 python3 -m predictor.collect --quiet --family f16gemm90 --configs "${cfgs[@]}" \
    --extra-configs "${swap[@]}" --layers predictor/data/networks/resnet50.csv \
    --layers predictor/data/networks/yolov8m_csp.csv --layers predictor/data/networks/unet_skip.csv \
    --batch-sizes 8,32 --timing graph --jobs 16 --build-dir build/pdl$v --out build/s21/pdl$v.parquet \
    --parts build/s21/pdl$v.parts --time-limit 180 >> /tmp/logs/pdl$v.log 2>&1
  echo "pdl$v rc=$? at $(date +%T)"; grep -v "cannot run\|nvcc sm_90" /tmp/logs/pdl$v.log | tail -2
  [ -f build/s21/pdl$v.parquet ] && cp build/s21/pdl$v.parquet "$out/"
done
L=build/f16c3pdl/h200_choice3_sm_90a.so
F=f16nhwc+f16nhwc90+f16gemm90
cp predictor/csrc/pk_runtime_gemm90.h export/dispatch_f16_choice3/  # the patched copy
NVCC_APPEND_FLAGS="$PDLFLAGS" ensure_dispatcher export/dispatch_f16_choice3/h200_dispatch.cu $L 220 \
  || { tail -20 /tmp/logs/build.log; tar -czf "$out/logs.tgz" -C /tmp logs; exit 1; }
step net-resnet50 60 python3 bench/networks.py --cudnn heuristic --library $L --family $F --rounds 3 --nets resnet50 \
  --out /tmp/bench/networks-heuristic-resnet50-pdl; grep "^| " /tmp/bench/networks-heuristic-resnet50-pdl.md
cp predictor/data/networks/{resnet50,yolov8m_csp,unet_skip}.csv /tmp/netlayers/
[ "$(remaining)" -gt 80 ] && step netlayers 70 python3 bench/vendor_layers.py --cudnn heuristic --cudnn-kernels --library $L \
  --family $F --layers-dir /tmp/netlayers --batches 8,32 --out /tmp/bench/netlayers-heuristic-pdl
[ "$(remaining)" -gt 110 ] && step net-yolo 100 python3 bench/networks.py --cudnn heuristic --library $L --family $F --rounds 3 \
  --nets yolov8m_csp,unet_skip --out /tmp/bench/networks-heuristic-yolo-pdl
tar -czf "$out/bench.tgz" -C /tmp bench logs
echo "end $(date +%T) ($(( $(date +%s) - t0 )) s)"
ls -la "$out"

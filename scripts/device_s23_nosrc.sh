#!/usr/bin/env bash
# Session 23, on nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s23_nosrc.sh OUTDIR
# Does an epilogue without a source tensor close part of the 1x1 gap to cuDNN's nvjet GEMMs?  Every SM90 kernel of
# the grids reads C as fp16 (ElementC = half_t, beta = 0 at run time), which makes CUTLASS 4.2's TMA epilogue share
# its shared memory between C and D (ReuseSmemC) and issue each subtile's TMA store at once; with ElementC = void
# (KernelConfig.no_source, `_nosrc`) the builder delays each store by one subtile (DelayTmaStore) and reserves no
# shared memory for C.  Each run graph- or eager-timed in one process, the twins next to their sourced configs:
# 1. layers: GEMM90_1X1_BEST and their `_nosrc` twins on the 1x1 layers of ResNet-50, the YOLOv8m-like and the U-Net
#    at N = 8, 32 (graph; as device_s22_sched.sh);
# 2-5. the same 22 configs on the four problem sets of f16gemm90's grid additions (as device_s14_epi_grid.sh: the
#    1x1 problems of the graph-labelled set, graph; the 1200 training problems, eager; the held-out networks' 1x1
#    layers, graph and eager): the 11 sourced configs are the anchors against the shipped sweeps;
# 6. conv: 6 f16nhwc90 configs (the most frequent winners on the networks' 3x3 layers) and their twins on the
#    3x3 and larger layers of the same three networks at N = 8, 32 (graph), if time is left.
set -uo pipefail
out=${1:?usage: device_s23_nosrc.sh OUTDIR}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
device_start "$out" 560
twins() { python3 -c "import dataclasses, sys; from predictor.config import KernelConfig as K
print(' '.join(dataclasses.replace(K.from_name(n), no_source=True).name for n in sys.argv[1:]))" "$@"; }
gemm=("${GEMM90_1X1_BEST[@]}")
read -r -a gemm_twins <<< "$(twins "${gemm[@]}")"
conv=(f16nhwc90_t64x256x64_c1x1x1_sauto_kws_etma_a8x8x8_lincomb f16nhwc90_t128x128x64_c1x1x1_sauto_kws_etma_a8x8x8_lincomb
      f16nhwc90_t128x128x64_c1x2x1_sauto_kws_etma_a8x8x8_lincomb f16nhwc90_t64x64x64_c2x1x1_sauto_kws_etma_a8x8x8_lincomb
      f16nhwc90_t128x64x64_c1x1x1_s4_kws_etma_a8x8x8_lincomb f16nhwc90_t128x192x64_c1x1x1_sauto_kws_etma_a8x8x8_lincomb)
read -r -a conv_twins <<< "$(twins "${conv[@]}")"
nets=(--layers predictor/data/networks/resnet50.csv --layers predictor/data/networks/yolov8m_csp.csv
      --layers predictor/data/networks/unet_skip.csv --batch-sizes 8,32)
hold=(); for f in bench/holdout/layers/*.csv; do hold+=(--layers "$f"); done
run() {  # run NAME FAMILY TIMING LIMIT ARGS...: one collector run, its file to OUTDIR
  local name=$1 fam=$2 timing=$3 lim=$4; shift 4
  local l; l=$(left); [ "$lim" -gt $(( l - 15 )) ] && lim=$(( l - 15 ))
  if [ "$lim" -lt 20 ]; then echo "$name: no time left"; return 0; fi
  echo "$name ($timing) start $(date +%T), limit $lim s"
  timeout $(( lim + 10 )) python3 -m predictor.collect --quiet --family "$fam" --timing "$timing" --jobs 16 \
    --build-dir build/s23 --out "$out/$name.parquet" --parts "/tmp/$name.parts" --time-limit "$lim" "$@" \
    > "/tmp/logs/$name.log" 2>&1
  echo "$name exit $? at $(date +%T)"; grep -v "nvcc sm_90\|cannot run" "/tmp/logs/$name.log" | tail -2
}
g=(--configs "${gemm[@]}" --extra-configs "${gemm_twins[@]}")
run layers f16gemm90 graph 300 "${g[@]}" "${nets[@]}"
run train-graph f16gemm90 graph 110 "${g[@]}" --problems-from sweeps/h200-graph-f16.parquet
run train-eager f16gemm90 eager 80 "${g[@]}" --shapes 1200
run holdout-graph f16gemm90 graph 70 "${g[@]}" --problems-from sweeps/h200-holdout-graph-f16.parquet
run holdout-eager f16gemm90 eager 50 "${g[@]}" "${hold[@]}"
[ "$(left)" -gt 200 ] && run conv f16nhwc90 graph 400 --configs "${conv[@]}" --extra-configs "${conv_twins[@]}" "${nets[@]}"
tar -czf "$out/logs.tgz" -C /tmp logs
echo "end $(date +%T) ($(( $(date +%s) - DEVICE_T0 )) s)"
ls -la "$out"

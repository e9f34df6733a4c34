#!/usr/bin/env bash
# Session 14: f16gemm90's 8 configs with a fixed epilogue subtile added to its grid (predictor.space,
# GemmGrid.epi_tiles, KernelConfig.epi_tile) swept next to 4 anchors (the anchors of device_s10_gemm_swap.sh), on
# nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]:   bash scripts/device_s14_epi_grid.sh OUTDIR
# Each problem set in the timing method that labels it (portfolio.one_method_per_problem), outputs checked:
# 1. train-graph: the 1x1 problems of sweeps/h200-graph-f16.parquet, graph batches (method 3);
# 2. train-eager: the 1200 training problems of sweeps/h200-gemm90.parquet (--shapes 1200), eager batches (method 2);
# 3. holdout-graph: the 1x1 layers of sweeps/h200-holdout-graph-f16.parquet, graph batches;
# 4. holdout-eager: the held-out networks' 1x1 layers (bench/holdout/layers), eager batches.
# The anchors compare this run with the earlier ones before the new rows join them (scripts/split_anchors.py).
set -uo pipefail
out=${1:?usage: device_s14_epi_grid.sh OUTDIR}
t0=$(date +%s)
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs
record_env "$out/env.txt"
head -3 "$out/env.txt"
cfgs=$(python3 - <<'PY'
from predictor.config import Family
from predictor.space import family_grid, grid_spec
fam = Family.F16_GEMM_SM90
knobs = grid_spec(fam)
new = [c.name for c in family_grid(fam) if c.epi_tile != (0, 0)]
anchors = ["f16gemm90_t128x64x64_c1x1x1_sauto_kcoop_etmacoop_tsdefault_a8x8x8_lincomb",
           "f16gemm90_t128x64x64_c1x1x1_sauto_kpingpong_etma_tsdefault_a8x8x8_lincomb",
           "f16gemm90_t128x64x64_c1x1x1_sauto_ktmaws_enosmem_tsdefault_a8x8x8_lincomb",
           "f16gemm90_t64x128x64_c1x1x1_sauto_kpingpong_etma_tsdefault_a8x8x8_lincomb"]
print(" ".join(dict.fromkeys(new + anchors)))
PY
)
echo "configs: $(echo $cfgs | wc -w)"
layers=(); for f in bench/holdout/layers/*.csv; do layers+=(--layers "$f"); done
run() {  # run NAME TIMING LIMIT ARGS...
  local name=$1 timing=$2 lim=$3; shift 3
  local left=$(( 470 - ($(date +%s) - t0) )); [ "$lim" -gt "$left" ] && lim=$left
  if [ "$lim" -lt 20 ]; then echo "$name: no time left"; return 0; fi
  echo "$name ($timing) start $(date +%T), limit $lim s"
  timeout $(( lim + 15 )) python3 -m predictor.collect --quiet --family f16gemm90 --configs $cfgs --timing "$timing" \
    --jobs 16 --build-dir build --out "$out/$name.parquet" --parts "/tmp/$name.parts" --time-limit "$lim" "$@" \
    > "/tmp/logs/$name.log" 2>&1
  echo "$name exit $? at $(date +%T)"; grep -v "nvcc sm_90\|cannot run" "/tmp/logs/$name.log" | tail -2
}
run train-graph graph 240 --problems-from sweeps/h200-graph-f16.parquet
run train-eager eager 120 --shapes 1200
run holdout-graph graph 80 --problems-from sweeps/h200-holdout-graph-f16.parquet
run holdout-eager eager 80 "${layers[@]}"
echo "end $(date +%T) ($(( $(date +%s) - t0 )) s)"
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

#!/usr/bin/env bash
# Session 10: f16gemm90's transposed kernels (predictor.space.GemmGrid.swap_tiles, KernelConfig.swap_ab: 18 configs) swept on
# nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s10_gemm_swap.sh OUTDIR
# One collector run per problem set, each over the 18 new configs and 4 anchors (the 4 configs of the first
# 50 that win most of sweeps/h200-gemm90.parquet's problems), every output checked:
# 1. the 1200 training problems of sweeps/h200-gemm90.parquet (--shapes 1200) -> OUTDIR/h200-gemm90-swap.parquet
# 2. the held-out networks' 1x1 layers -> OUTDIR/h200-holdout-f16gemm90-swap.parquet
# The anchors' rows compare this run with the first (same configs, same problems) before the new configs'
# rows join the old ones as labels; they are split off into sweeps/runs/ afterwards.
set -uo pipefail
out=${1:?usage: device_s10_gemm_swap.sh OUTDIR}
t0=$(date +%s)
source scripts/device_env.sh || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs
record_env "$out/env.txt"
cat "$out/env.txt"
cfgs=$(python3 - <<'PY'
from predictor.config import Family
from predictor.space import family_grid
fam = Family.F16_GEMM_SM90
new = [c.name for c in family_grid(fam) if c.swap_ab]
anchors = ["f16gemm90_t128x64x64_c1x1x1_sauto_kcoop_etmacoop_tsdefault_a8x8x8_lincomb",
           "f16gemm90_t128x64x64_c1x1x1_sauto_kpingpong_etma_tsdefault_a8x8x8_lincomb",
           "f16gemm90_t128x64x64_c1x1x1_sauto_ktmaws_enosmem_tsdefault_a8x8x8_lincomb",
           "f16gemm90_t64x128x64_c1x1x1_sauto_kpingpong_etma_tsdefault_a8x8x8_lincomb"]
print(" ".join(dict.fromkeys(new + anchors)))
PY
)
echo "configs: $(echo $cfgs | wc -w)"
layers=(); for f in bench/holdout/layers/*.csv; do layers+=(--layers "$f"); done
echo "1. build + training problems $(date +%T)"
timeout 420 python3 -m predictor.collect --quiet --family f16gemm90 --shapes 1200 --configs $cfgs --jobs 16 \
  --build-dir build --out "$out/h200-gemm90-swap.parquet" --parts /tmp/gs.parts --time-limit 380 \
  > /tmp/logs/collect_train.log 2>&1 || echo "collect exit $? (3: time limit, resumable)"
grep -v "nvcc sm_90" /tmp/logs/collect_train.log | tail -4
echo "2. held-out layers $(date +%T)"
lim=$(( 560 - ($(date +%s) - t0) ))
timeout $(( lim + 20 )) python3 -m predictor.collect --quiet --family f16gemm90 "${layers[@]}" --configs $cfgs --jobs 16 \
  --build-dir build --out "$out/h200-holdout-f16gemm90-swap.parquet" --parts /tmp/gh.parts --time-limit $lim \
  > /tmp/logs/collect_holdout.log 2>&1 || echo "collect exit $? (3: time limit, resumable)"
grep -v "nvcc sm_90" /tmp/logs/collect_holdout.log | tail -4
echo "end $(date +%T) ($(( $(date +%s) - t0 )) s)"
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

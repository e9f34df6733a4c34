#!/usr/bin/env bash
# Session 14: f16nhwc90's 9 explicit configs (tile K 32, tile N 32 / 96: predictor.space.F16_NHWC90_EXPLICIT) swept
# next to 4 anchors of the grid, on nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s14_conv90_grid.sh OUTDIR
# Each problem set in the timing method that labels it (portfolio.one_method_per_problem), outputs checked:
# 1. train-graph: the problems of sweeps/h200-graph-f16.parquet (graph batches, method 3);
# 2. train-eager: f16nhwc90's other training problems (sweeps/runs/s14/problems-train-eager.parquet: those of
#    h200-sm90 and h200-sm90-nets not graph-labelled), eager batches (method 2);
# 3. holdout-graph: the problems of sweeps/h200-holdout-graph-f16.parquet, graph batches;
# 4. holdout-eager: the held-out layers not graph-labelled (sweeps/runs/s14/problems-holdout-eager.parquet), eager.
# The anchors compare this run with the earlier ones before the new rows join them (scripts/split_anchors.py).
set -uo pipefail
out=${1:?usage: device_s14_conv90_grid.sh OUTDIR}
t0=$(date +%s)
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs
record_env "$out/env.txt"
head -3 "$out/env.txt"
cfgs=$(python3 - <<'PY'
from predictor.config import Family, KernelConfig
from predictor.space import grid_spec
fam = Family.F16_NHWC_SM90
new = [KernelConfig.sm90(fam, tb, (cm, 1, 1), st).name for tb, cm, st in grid_spec(fam).explicit]
anchors = ["f16nhwc90_t64x128x64_c1x1x1_s4_kws_etma_a8x8x8_lincomb",
           "f16nhwc90_t128x64x64_c1x1x1_s4_kws_etma_a8x8x8_lincomb",
           "f16nhwc90_t128x192x64_c1x1x1_sauto_kws_etma_a8x8x8_lincomb",
           "f16nhwc90_t256x96x64_c2x1x1_sauto_kws_etma_a8x8x8_lincomb"]
print(" ".join(dict.fromkeys(new + anchors)))
PY
)
echo "configs: $(echo $cfgs | wc -w)"
run() {  # run NAME TIMING LIMIT ARGS...
  local name=$1 timing=$2 lim=$3; shift 3
  local left=$(( 540 - ($(date +%s) - t0) )); [ "$lim" -gt "$left" ] && lim=$left
  if [ "$lim" -lt 20 ]; then echo "$name: no time left"; return 0; fi
  echo "$name ($timing) start $(date +%T), limit $lim s"
  timeout $(( lim + 15 )) python3 -m predictor.collect --quiet --family f16nhwc90 --configs $cfgs --timing "$timing" \
    --jobs 16 --build-dir build --out "$out/$name.parquet" --parts "/tmp/$name.parts" --time-limit "$lim" "$@" \
    > "/tmp/logs/$name.log" 2>&1
  echo "$name exit $? at $(date +%T)"; grep -v "nvcc sm_90\|cannot run" "/tmp/logs/$name.log" | tail -2
}
run train-graph graph 260 --problems-from sweeps/h200-graph-f16.parquet
run train-eager eager 110 --problems-from sweeps/runs/s14/problems-train-eager.parquet
run holdout-graph graph 80 --problems-from sweeps/h200-holdout-graph-f16.parquet
run holdout-eager eager 50 --problems-from sweeps/runs/s14/problems-holdout-eager.parquet
echo "end $(date +%T) ($(( $(date +%s) - t0 )) s)"
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

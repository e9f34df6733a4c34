#!/usr/bin/env bash
# Session 7: the SM80-family int8 NHWC family `i8nhwc` (CUTLASS 2.x kernels, what an Orin runs) on nvidia-h200
# (one GPU, 16 cores), from the repo root; carry [".whl"] (the nvidia-cutlass wheel):
#   BUDGET_S=560 bash scripts/device_s7_i8nhwc.sh OUTDIR
# 1. builds the i8nhwc grid (94 kernels) into build/ with every core (the collector's own build);
# 2. sweeps it over i8nhwc90's problems (`--problems-from sweeps/h200-sm90-i8*.parquet`: the same problems with
#    the same sources, so that the two families form a choice) into OUTDIR/h200-i8nhwc.parquet, then over the
#    held-out network layers (bench/holdout/layers) into OUTDIR/h200-holdout-i8nhwc.parquet.  --time-limit keeps
#    the run inside BUDGET_S; a partial file left in sweeps/ by an earlier call is copied to OUTDIR first and
#    resumed (no row lost or repeated).
set -uo pipefail
out=${1:?usage: device_s7_i8nhwc.sh OUTDIR}
t0=$(date +%s)
deadline=$(( t0 + ${BUDGET_S:-560} ))
left() { echo $(( deadline - $(date +%s) )); }
source scripts/device_env.sh || { echo "wheel install failed"; exit 1; }
mkdir -p "$out"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv
  nvcc --version | tail -1
  nproc
} > "$out/env.txt" 2>&1
cat "$out/env.txt"
layers=(); for f in bench/holdout/layers/*.csv; do layers+=(--layers "$f"); done
for name in h200-i8nhwc h200-holdout-i8nhwc; do
  [ -f "sweeps/$name.parquet" ] && cp "sweeps/$name.parquet" "$out/" && echo "resuming $name"
done
sweep() {  # sweep NAME ARGS...: one collector run into OUTDIR/NAME.parquet within the time left
  local name=$1; shift
  local lim=$(( $(left) - 20 ))
  [ "$lim" -gt 30 ] || { echo "no time left for $name"; return; }
  echo "sweep $name $(date +%T) (time limit $lim s)"
  timeout $(( lim + 15 )) python3 -m predictor.collect --quiet --family i8nhwc "$@" --jobs "$(nproc)" \
    --build-dir build --out "$out/$name.parquet" --parts "/tmp/$name.parts" --time-limit "$lim" \
    > "$out/collect_$name.log" 2>&1 || echo "collect $name exit $? (3: time limit, resumable)"
  grep -v " INFO predictor.emit\|nvcc sm_" "$out/collect_$name.log" | tail -3
}
sweep h200-i8nhwc --problems-from sweeps/h200-sm90-i8.parquet --problems-from sweeps/h200-sm90-i8-nets.parquet
sweep h200-holdout-i8nhwc "${layers[@]}"
echo "end $(date +%T) ($(( $(date +%s) - t0 )) s)"
ls -la "$out"

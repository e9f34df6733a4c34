#!/usr/bin/env bash
# Session 6: the held-out network layers (bench/holdout/layers/*.csv, 14 networks in no catalog and no training
# set) swept over the whole grid of each named family on nvidia-h200-x2 (2 GPUs, 32 cores), from the repo root;
# carry [".whl"] (the nvidia-cutlass wheel):
#   BUDGET_S=560 bash scripts/device_s6_holdout.sh OUTDIR FAMILY [FAMILY ...]
# 1. builds the families' grids in parallel (all cores split between them) into build/;
# 2. sweeps each family over the held-out layers on both GPUs (--gpus 2), every output checked, into
#    OUTDIR/h200-holdout-<family>.parquet (--time-limit keeps the whole run inside BUDGET_S; a stopped sweep
#    resumes when re-run with that file as --out).
set -uo pipefail
out=${1:?usage: device_s6_holdout.sh OUTDIR FAMILY...}; shift
t0=$(date +%s)
deadline=$(( t0 + ${BUDGET_S:-560} ))
left() { echo $(( deadline - $(date +%s) )); }
source scripts/device_env.sh || { echo "wheel install failed"; exit 1; }
w=/tmp/s6
mkdir -p "$w" "$out"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv
  nvcc --version | tail -1
  nproc
} > "$w/env.txt" 2>&1
cat "$w/env.txt"
layers=(); for f in bench/holdout/layers/*.csv; do layers+=(--layers "$f"); done
cat > "$w/build_grid.py" <<'PY'
# python3 build_grid.py FAMILY JOBS: the family's sweep grid compiled into build/sm_90/lib<family>.so
import logging, sys
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
from predictor.config import Family
from predictor.emit import build_library
from predictor.space import family_grid
fam, jobs = Family(sys.argv[1]), int(sys.argv[2])
res = build_library(family_grid(fam), "sm_90", "build", jobs=jobs, name=fam.value)
print(f"{fam.value}: built {len(res.compiled)} kernels, {len(res.errors)} compile errors, {res.seconds:.0f} s")
PY
jobs=$(( $(nproc) / $# + 1 ))
echo "1. build $* with $jobs jobs each $(date +%T)"
for fam in "$@"; do
  timeout $(( $(left) - 60 )) python3 "$w/build_grid.py" "$fam" "$jobs" > "$w/build_$fam.log" 2>&1 &
done
wait
for fam in "$@"; do grep "built" "$w/build_$fam.log" | tail -1 || echo "$fam: build incomplete"; done
n=$#
for fam in "$@"; do
  lim=$(( ($(left) - 15) / n )); n=$(( n - 1 ))
  echo "2. sweep $fam $(date +%T) (time limit $lim s)"
  [ "$lim" -gt 20 ] || { echo "no time left for $fam"; continue; }
  timeout $(( lim + 40 )) python3 -m predictor.collect --quiet --family "$fam" "${layers[@]}" --gpus 2 --jobs 16 \
    --build-dir build --out "$out/h200-holdout-$fam.parquet" --parts "/tmp/holdout-$fam.parts" --time-limit "$lim" \
    > "$w/collect_$fam.log" 2>&1 || echo "collect $fam exit $? (3: time limit, resumable)"
  grep -v " INFO predictor.emit\|nvcc sm_90" "$w/collect_$fam.log" | tail -3
done
echo "end $(date +%T) ($(( $(date +%s) - t0 )) s)"
tar -czf "$out/logs-$(echo "$*" | tr ' ' '-').tgz" -C /tmp s6 2>/dev/null || true
ls -la "$out"

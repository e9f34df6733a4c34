#!/usr/bin/env bash
# Session 8: the SM80-family int8 NHWC family `i8nhwc` on 16- and 32-SM green-context partitions of one H200
# (nvidia-h200, 16 cores), the Orin-sized proxy, so that the Orin-sized model `h200-sm87-i8nhwc` learns the SM
# count; from the repo root, carry [".whl"] (the nvidia-cutlass wheel):
#   BUDGET_S=560 bash scripts/device_s8_partitions.sh OUTDIR [SMS...]     (SMS default: 16 32)
# 1. builds the i8nhwc grid (94 kernels) into build/ with every core (the collector's own build);
# 2. per SM count, sweeps the batch-1..8 problems of sweeps/h200-i8nhwc.parquet (what a small GPU runs; every
#    second one, --shard 0/2) into OUTDIR/h200-sm<SMS>-i8nhwc.parquet, the time left split between the SM counts
#    (--time-limit); a partial file left in sweeps/ by an earlier call is copied to OUTDIR first and resumed.
set -uo pipefail
out=${1:?usage: device_s8_partitions.sh OUTDIR [SMS...]}; shift
sms=("$@"); [ ${#sms[@]} -gt 0 ] || sms=(16 32)
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
echo "build $(date +%T)"
python3 - > "$out/build.log" 2>&1 <<'PY'
import logging
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
from predictor.config import Family
from predictor.emit import build_library
from predictor.space import family_grid
import os
res = build_library(family_grid(Family.INT8_NHWC), "sm_90", "build", jobs=os.cpu_count(), name="i8nhwc")
print(f"i8nhwc: built {len(res.compiled)} kernels, {len(res.errors)} compile errors, {res.seconds:.0f} s")
PY
tail -1 "$out/build.log"
n=${#sms[@]}
for s in "${sms[@]}"; do
  name=h200-sm$s-i8nhwc
  [ -f "sweeps/$name.parquet" ] && cp "sweeps/$name.parquet" "$out/" && echo "resuming $name"
  lim=$(( ($(left) - 15) / n )); n=$(( n - 1 ))
  [ "$lim" -gt 30 ] || { echo "no time left for $name"; continue; }
  echo "sweep $name $(date +%T) (time limit $lim s)"
  timeout $(( lim + 30 )) python3 -m predictor.collect --quiet --family i8nhwc --sm-count "$s" \
    --problems-from sweeps/h200-i8nhwc.parquet --batch-sizes 1,2,4,8 --shard 0/2 --jobs "$(nproc)" \
    --build-dir build --out "$out/$name.parquet" --parts "/tmp/$name.parts" --time-limit "$lim" \
    > "$out/collect_$name.log" 2>&1 || echo "collect $name exit $? (3: time limit, resumable)"
  grep -v " INFO predictor.emit\|nvcc sm_" "$out/collect_$name.log" | tail -3
done
echo "end $(date +%T) ($(( $(date +%s) - t0 )) s)"
gzip -f "$out"/collect_*.log
ls -la "$out"

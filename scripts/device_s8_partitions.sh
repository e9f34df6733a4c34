#!/usr/bin/env bash
# Session 8: an SM80-family grid on green-context partitions of one H200 (nvidia-h200, 16 cores), the Orin-sized
# proxy, so that the Orin-sized models (`h200-sm87-*`) learn the SM count; from the repo root, carry [".whl"]:
#   [FAMILY=i8nhwc FROM=sweeps/h200-i8nhwc.parquet BATCHES=1,2,4,8 SHARD=0/2] BUDGET_S=560 \
#     bash scripts/device_s8_partitions.sh OUTDIR [SMS...]     (SMS default: 16 32)
# 1. builds FAMILY's grid into build/ with every core (the collector's own build);
# 2. per SM count, sweeps the problems of FROM with batch sizes BATCHES (what a small GPU runs), --shard SHARD,
#    into OUTDIR/h200-sm<SMS>-FAMILY.parquet, the time left split between the SM counts (--time-limit); a
#    partial file left in sweeps/ by an earlier call is copied to OUTDIR first and resumed.
# Run: i8nhwc at 16 and 32 SMs, shards 0/2 and 1/2 (merged with `python -m predictor.collect merge`); f16nhwc at
# 32 SMs: FAMILY=f16nhwc FROM=sweeps/h200-sm16-nets.parquet BATCHES=1,8 SHARD=0/1 (the 16-SM sweep's layers).
set -uo pipefail
out=${1:?usage: device_s8_partitions.sh OUTDIR [SMS...]}; shift
sms=("$@"); [ ${#sms[@]} -gt 0 ] || sms=(16 32)
fam=${FAMILY:-i8nhwc}
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
python3 - "$fam" > "$out/build-$fam.log" 2>&1 <<'PY'
import logging, os, sys
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
from predictor.config import Family
from predictor.emit import build_library
from predictor.space import family_grid
fam = Family(sys.argv[1])
res = build_library(family_grid(fam), "sm_90", "build", jobs=os.cpu_count(), name=fam.value)
print(f"{fam.value}: built {len(res.compiled)} kernels, {len(res.errors)} compile errors, {res.seconds:.0f} s")
PY
tail -1 "$out/build-$fam.log"
n=${#sms[@]}
for s in "${sms[@]}"; do
  name=h200-sm$s-$fam
  [ -f "sweeps/$name.parquet" ] && cp "sweeps/$name.parquet" "$out/" && echo "resuming $name"
  lim=$(( ($(left) - 15) / n )); n=$(( n - 1 ))
  [ "$lim" -gt 30 ] || { echo "no time left for $name"; continue; }
  echo "sweep $name $(date +%T) (time limit $lim s)"
  timeout $(( lim + 30 )) python3 -m predictor.collect --quiet --family "$fam" --sm-count "$s" \
    --problems-from "${FROM:-sweeps/h200-i8nhwc.parquet}" --batch-sizes "${BATCHES:-1,2,4,8}" --shard "${SHARD:-0/2}" \
    --jobs "$(nproc)" \
    --build-dir build --out "$out/$name.parquet" --parts "/tmp/$name.parts" --time-limit "$lim" \
    > "$out/collect_$name.log" 2>&1 || echo "collect $name exit $? (3: time limit, resumable)"
  grep -v " INFO predictor.emit\|nvcc sm_" "$out/collect_$name.log" | tail -3
done
echo "end $(date +%T) ($(( $(date +%s) - t0 )) s)"
gzip -f "$out"/collect_*.log
ls -la "$out"

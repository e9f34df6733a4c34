#!/usr/bin/env bash
# Session 16, on the device machine's CPU cores only (no GPU): leave-network-group-out of the cost kind for
# more families ($1: a or b), results and logs under $OUT; from the repo root: bash scripts/device_s16_lono.sh a
export PYTHONUNBUFFERED=1
S=sweeps
lono() {  # lono NAME OMP JOBS ARGS...: one leave-network-group-out run in the background
  local name=$1 omp=$2 jobs=$3; shift 3
  OMP_NUM_THREADS=$omp python3 -m predictor.lono "$@" --groups 6 --kind cost --max-portfolio 24 --jobs "$jobs" \
    --out "$OUT/lono-$name-cost" > "$OUT/$name.log" 2>&1 &
}
case $1 in
  a) lono f16nhwc 2 6 $S/h200.parquet $S/h200-nets.parquet $S/h200-graph-f16.parquet --family f16nhwc
     lono i8nhwc90 1 6 $S/h200-sm90-i8.parquet $S/h200-sm90-i8-nets.parquet --family i8nhwc90 ;;
  b) lono i8nc32 2 6 $S/h200.parquet $S/h200-nets.parquet --family i8nc32
     lono i8nhwc 1 6 $S/h200-i8nhwc.parquet --family i8nhwc ;;
esac
wait
for d in "$OUT"/lono-*; do grep -A3 "^| family | model" "$d/REPORT.md" | tail -1; done

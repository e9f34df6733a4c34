#!/usr/bin/env bash
# Session 15, on the device machine's CPU cores only (no GPU): leave-network-group-out of the cost kind for the
# int8 routed choice across generations, i8nhwc90 and f16nhwc, three at once; from the repo root: bash scripts/device_s15_lono.sh
export OMP_NUM_THREADS=1
S=sweeps
python3 -m predictor.lono $S/h200-i8nhwc.parquet $S/h200-sm90-i8.parquet $S/h200-sm90-i8-nets.parquet $S/h200-i8gemm90.parquet --family i8nhwc+i8nhwc90+i8gemm90 --groups 6 --kind cost --max-portfolio 24 --jobs 6 --out $OUT/lono-i8choice3-cost > /tmp/a.log 2>&1 &
python3 -m predictor.lono $S/h200-sm90-i8.parquet $S/h200-sm90-i8-nets.parquet --family i8nhwc90 --groups 6 --kind cost --max-portfolio 24 --jobs 4 --out $OUT/lono-i8nhwc90-cost > /tmp/b.log 2>&1 &
python3 -m predictor.lono $S/h200.parquet $S/h200-nets.parquet $S/h200-graph-f16.parquet --family f16nhwc --groups 6 --kind cost --max-portfolio 24 --jobs 6 --out $OUT/lono-f16nhwc-cost > /tmp/c.log 2>&1 &
wait
grep -h "wrote\|Error" /tmp/a.log /tmp/b.log /tmp/c.log
for d in $OUT/lono-*; do grep -A3 "^| family | model" $d/REPORT.md | tail -1; done

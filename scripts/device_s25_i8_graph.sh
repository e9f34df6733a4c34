#!/usr/bin/env bash
# Session 25, on nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s25_i8_graph.sh OUTDIR
# The int8 NHWC choice's small problems re-swept with graph batches (timing method 3), as sessions 11-13 did for
# fp16 (sweeps/runs/s11/eager-vs-graph.md: there eager labels under 10 µs named a config 0.78x as fast as the
# graph winner): every config of i8nhwc, i8nhwc90 and i8gemm90 (the GEMM kernels on the 1x1 problems), outputs
# checked, on
# 1. train-graph: sweeps/runs/s25/problems-train.parquet, the 1418 training problems of i8nhwc+i8nhwc90+i8gemm90
#    whose label ran under 10 µs (scripts/small_problems.py ... --max-us 10), fastest first;
# 2. holdout-graph: sweeps/runs/s25/problems-holdout.parquet, the 538 held-out layers alike.
set -uo pipefail
out=${1:?usage: device_s25_i8_graph.sh OUTDIR}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
device_start "$out" 575
fams=(--family i8nhwc --family i8nhwc90 --family i8gemm90 --timing graph --build-dir build/s25)
collect_run train-graph 420 "$out/raw-train-graph.parquet" "${fams[@]}" --problems-from sweeps/runs/s25/problems-train.parquet
collect_run holdout-graph 200 "$out/raw-holdout-graph.parquet" "${fams[@]}" --problems-from sweeps/runs/s25/problems-holdout.parquet
tar -czf "$out/logs.tgz" -C /tmp logs
echo "end $(date +%T) ($(( $(date +%s) - DEVICE_T0 )) s)"
ls -la "$out"

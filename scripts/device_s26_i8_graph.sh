#!/usr/bin/env bash
# Session 26 (nvidia-h200, one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s26_i8_graph.sh OUTDIR [BUDGET_S]
# Completes session 25's graph re-sweep of the int8 NHWC families (sweeps/runs/s25/README.md):
#   holdout-sm90  i8nhwc90 and i8gemm90 on the 538 held-out layers under 10 us (sweeps/runs/s25/problems-holdout.parquet;
#                 session 25 timed i8nhwc alone there, so the SM90 models were scored on eager labels)
#   rest-sm90     i8nhwc90 and i8gemm90 on the 768 training problems of 5.1-10 us (sweeps/runs/s26/problems-train-rest.parquet:
#                 sweeps/runs/s25/problems-train.parquet less the 650 timed in session 25)
#   rest-i8nhwc   i8nhwc on the same 768
# graph batches (timing method 3), every output checked.  Each run resumes where the call before stopped (parts in
# build/parts/, kept on a warm machine); a run already complete is skipped by the collector.
set -uo pipefail
out=${1:?usage: device_s26_i8_graph.sh OUTDIR [BUDGET_S]}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
device_start "$out" "${2:-560}"
opts=(--timing graph --build-dir build/s26)
collect_run holdout-sm90 600 "$out/raw-holdout-graph-sm90.parquet" --family i8nhwc90 --family i8gemm90 "${opts[@]}" \
  --problems-from sweeps/runs/s25/problems-holdout.parquet
collect_run rest-sm90 600 "$out/raw-rest-graph-sm90.parquet" --family i8nhwc90 --family i8gemm90 "${opts[@]}" \
  --problems-from sweeps/runs/s26/problems-train-rest.parquet
collect_run rest-i8nhwc 600 "$out/raw-rest-graph-i8nhwc.parquet" --family i8nhwc "${opts[@]}" \
  --problems-from sweeps/runs/s26/problems-train-rest.parquet
tar -czf "$out/logs.tgz" -C /tmp logs
echo "end $(date +%T) ($(( $(date +%s) - DEVICE_T0 )) s)"
ls -la "$out"

#!/usr/bin/env bash
# Session 25, second call (nvidia-h200, one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s25_i8_graph2.sh OUTDIR
# The first call (device_s25_i8_graph.sh, sweeps/runs/s25/call1/) ran the collector family by family and timed
# only i8nhwc (650 training problems, 500 held-out layers) before its time was up.  This call completes the
# held-out layers (i8nhwc on the 38 left, sweeps/runs/s25/problems-holdout-rest.parquet; i8nhwc90 and i8gemm90 on
# all 538) and then the 650 training problems timed so far (problems-train-done.parquet) with i8nhwc90 and
# i8gemm90, graph batches, outputs checked.
set -uo pipefail
out=${1:?usage: device_s25_i8_graph2.sh OUTDIR}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
device_start "$out" 540
opts=(--timing graph --build-dir build/s25)
collect_run holdout-i8nhwc 60 "$out/raw-holdout-graph-i8nhwc.parquet" --family i8nhwc "${opts[@]}" \
  --problems-from sweeps/runs/s25/problems-holdout-rest.parquet
collect_run holdout-sm90 240 "$out/raw-holdout-graph-sm90.parquet" --family i8nhwc90 --family i8gemm90 "${opts[@]}" \
  --problems-from sweeps/runs/s25/problems-holdout.parquet
collect_run train-sm90 400 "$out/raw-train-graph-sm90.parquet" --family i8nhwc90 --family i8gemm90 "${opts[@]}" \
  --problems-from sweeps/runs/s25/problems-train-done.parquet
tar -czf "$out/logs.tgz" -C /tmp logs
echo "end $(date +%T) ($(( $(date +%s) - DEVICE_T0 )) s)"
ls -la "$out"

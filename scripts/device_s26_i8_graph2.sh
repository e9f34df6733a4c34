#!/usr/bin/env bash
# Session 26, calls 3-4 (nvidia-h200, one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s26_i8_graph2.sh OUTDIR [BUDGET_S]
# The int8 NHWC choice's problems whose label ran in 10-30 us as graph replays, every config of its three families,
# as sessions 12-13 did for fp16 (sweeps/runs/s26/README.md):
#   problems-holdout-10-30.parquet  the 139 int8 held-out layers of 10-30 us (first-pass times)
#   problems-train-10-30.parquet    the 443 training problems of 10-30 us not in h200-graph-i8*.parquet
# written by (no GPU):
#   python scripts/small_problems.py sweeps/h200-sm90-i8.parquet sweeps/h200-sm90-i8-nets.parquet \
#     sweeps/h200-i8gemm90.parquet sweeps/h200-i8nhwc.parquet --family i8nhwc --family i8nhwc90 --family i8gemm90 \
#     --min-us 10 --max-us 30 --exclude sweeps/h200-graph-i8.parquet --exclude sweeps/h200-graph-i8-rest.parquet \
#     --out sweeps/runs/s26/problems-train-10-30.parquet
#   python scripts/small_problems.py sweeps/h200-holdout-i8nhwc.parquet sweeps/h200-holdout-i8nhwc90.parquet \
#     sweeps/h200-holdout-i8gemm90.parquet --family i8nhwc --family i8nhwc90 --family i8gemm90 --min-us 10 \
#     --max-us 30 --times first-pass --out sweeps/runs/s26/problems-holdout-10-30.parquet
# SM90 families first (their build is the long one), then i8nhwc; each run resumes on a warm machine.
set -uo pipefail
out=${1:?usage: device_s26_i8_graph2.sh OUTDIR [BUDGET_S]}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
device_start "$out" "${2:-560}"
opts=(--timing graph --build-dir build/s26)
p=sweeps/runs/s26
collect_run h30-sm90 600 "$out/raw-holdout30-graph-sm90.parquet" --family i8nhwc90 --family i8gemm90 "${opts[@]}" \
  --problems-from $p/problems-holdout-10-30.parquet
collect_run t30-sm90 600 "$out/raw-train30-graph-sm90.parquet" --family i8nhwc90 --family i8gemm90 "${opts[@]}" \
  --problems-from $p/problems-train-10-30.parquet
collect_run h30-i8nhwc 600 "$out/raw-holdout30-graph-i8nhwc.parquet" --family i8nhwc "${opts[@]}" \
  --problems-from $p/problems-holdout-10-30.parquet
collect_run t30-i8nhwc 600 "$out/raw-train30-graph-i8nhwc.parquet" --family i8nhwc "${opts[@]}" \
  --problems-from $p/problems-train-10-30.parquet
tar -czf "$out/logs.tgz" -C /tmp logs
echo "end $(date +%T) ($(( $(date +%s) - DEVICE_T0 )) s)"
ls -la "$out"

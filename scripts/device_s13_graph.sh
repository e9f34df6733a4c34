#!/usr/bin/env bash
# Session 13, on nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]; run again on the same warm
# machine to go on:   bash scripts/device_s13_graph.sh OUTDIR [SECONDS]
# Graph labels from 10 to 30 µs (timing method 3), every config of the three fp16 families (230), outputs checked:
# 1. graph-nets: the fp16 choice's 317 training problems from network layers whose label ran in [10, 30) µs
#    (sweeps/runs/s13/problems-nets.parquet, scripts/small_problems.py --source net);
# 2. graph-holdout2: the 179 held-out network layers whose label ran in [10, 30) µs
#    (sweeps/runs/s13/problems-holdout.parquet).
# Work and parts live under build/s13 (kept between calls on a warm machine); each call resumes, stops within
# SECONDS (default 560) and copies what is done to OUTDIR.
set -uo pipefail
out=${1:?usage: device_s13_graph.sh OUTDIR [SECONDS]}
budget=${2:-560}
t0=$(date +%s)
source scripts/device_env.sh || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" build/s13 /tmp/logs
record_env "$out/env.txt"
head -3 "$out/env.txt"
fams=(--family f16nhwc --family f16nhwc90 --family f16gemm90)
left() { echo $(( budget - ($(date +%s) - t0) - 15 )); }
run() {  # run NAME PROBLEMS
  local l; l=$(left)
  if [ "$l" -lt 30 ]; then echo "$1: no time left"; return 0; fi
  echo "$1 start $(date +%T), $l s left"
  timeout $(( l + 10 )) python3 -m predictor.collect --quiet "${fams[@]}" --problems-from "$2" --timing graph \
    --jobs 16 --build-dir build --out "build/s13/$1.parquet" --parts "build/s13/$1.parts" --time-limit "$l" \
    >> "/tmp/logs/$1.log" 2>&1
  local rc=$?
  grep -v "nvcc sm_90\|cannot run" "/tmp/logs/$1.log" | tail -3
  echo "$1 exit $rc at $(date +%T)"
  [ -f "build/s13/$1.parquet" ] && cp "build/s13/$1.parquet" "$out/"
}
run graph-nets sweeps/runs/s13/problems-nets.parquet
run graph-holdout2 sweeps/runs/s13/problems-holdout.parquet
echo "end $(date +%T) ($(( $(date +%s) - t0 )) s)"
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

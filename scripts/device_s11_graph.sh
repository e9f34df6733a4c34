#!/usr/bin/env bash
# Session 11: the fp16 choice's small problems re-swept with graph batches (timing method 3), on nvidia-h200
# (one GPU, 16 cores), from the repo root; carry [".whl"]; run again on the same warm machine to go on:
#   bash scripts/device_s11_graph.sh OUTDIR [SECONDS]
# The problems (sweeps/runs/s11/problems-{a,b,c}.parquet, written from the shipped sweeps): the 1271 problems of
# the routed fp16 choice f16nhwc+f16nhwc90+f16gemm90 whose fastest config ran in under 10 µs (a: < 5 µs,
# b: 5-8, c: 8-10), fastest first, each timed with every config of all three families (230), outputs checked.
# After a, problems-check.parquet (every 6th problem of a) again with eager batches (method 2) on the same GPU:
# what the method changes, config by config.  Work and chunks live under build/s11 (kept between calls on a warm machine);
# each call resumes, stops within SECONDS (default 560) and copies what is done to OUTDIR.
set -uo pipefail
out=${1:?usage: device_s11_graph.sh OUTDIR [SECONDS]}
budget=${2:-560}
t0=$(date +%s)
source scripts/device_env.sh || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" build/s11 /tmp/logs
record_env "$out/env.txt"
head -3 "$out/env.txt"
fams=(--family f16nhwc --family f16nhwc90 --family f16gemm90)
run() {  # run NAME PROBLEMS TIMING
  local left=$(( budget - ($(date +%s) - t0) - 15 ))
  if [ "$left" -lt 30 ]; then echo "$1: no time left"; return 0; fi
  echo "$1 ($3) start $(date +%T), $left s left"
  timeout $(( left + 10 )) python3 -m predictor.collect --quiet "${fams[@]}" --problems-from "$2" --timing "$3" \
    --jobs 16 --build-dir build --out "build/s11/$1.parquet" --parts "build/s11/$1.parts" --time-limit "$left" \
    >> "/tmp/logs/$1.log" 2>&1
  local rc=$?
  grep -v "nvcc sm_90\|cannot run" "/tmp/logs/$1.log" | tail -3
  echo "$1 exit $rc at $(date +%T)"
  [ -f "build/s11/$1.parquet" ] && cp "build/s11/$1.parquet" "$out/"
}
run graph-a sweeps/runs/s11/problems-a.parquet graph
run eager-check sweeps/runs/s11/problems-check.parquet eager
run graph-b sweeps/runs/s11/problems-b.parquet graph
run graph-c sweeps/runs/s11/problems-c.parquet graph
echo "end $(date +%T) ($(( $(date +%s) - t0 )) s)"
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

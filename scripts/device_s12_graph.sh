#!/usr/bin/env bash
# Session 12, on nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]; run again on the same warm
# machine to go on:   bash scripts/device_s12_graph.sh OUTDIR [SECONDS]
# 1. graph-holdout: the 652 held-out fp16 layers whose fastest config ran under 10 µs in the eager held-out sweeps
#    (sweeps/runs/s12/problems-holdout.parquet, scripts/small_problems.py), fastest first, every config of the three
#    fp16 families (230), timing method 3 (graph batches), outputs checked;
# 2. tests/test_gpu.py once (the graph and eager modes after pk_runtime.h's timed_batches refactor);
# 3. graph-c: the fp16 choice's 173 training problems of 8-10 µs (sweeps/runs/s11/problems-c.parquet).
# Work and parts live under build/s12 (kept between calls on a warm machine); each call resumes, stops within
# SECONDS (default 560) and copies what is done to OUTDIR.
set -uo pipefail
out=${1:?usage: device_s12_graph.sh OUTDIR [SECONDS]}
budget=${2:-560}
t0=$(date +%s)
source scripts/device_env.sh || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" build/s12 /tmp/logs
record_env "$out/env.txt"
head -3 "$out/env.txt"
fams=(--family f16nhwc --family f16nhwc90 --family f16gemm90)
left() { echo $(( budget - ($(date +%s) - t0) - 15 )); }
run() {  # run NAME PROBLEMS TIMING
  local l; l=$(left)
  if [ "$l" -lt 30 ]; then echo "$1: no time left"; return 0; fi
  echo "$1 ($3) start $(date +%T), $l s left"
  timeout $(( l + 10 )) python3 -m predictor.collect --quiet "${fams[@]}" --problems-from "$2" --timing "$3" \
    --jobs 16 --build-dir build --out "build/s12/$1.parquet" --parts "build/s12/$1.parts" --time-limit "$l" \
    >> "/tmp/logs/$1.log" 2>&1
  local rc=$?
  grep -v "nvcc sm_90\|cannot run" "/tmp/logs/$1.log" | tail -3
  echo "$1 exit $rc at $(date +%T)"
  [ -f "build/s12/$1.parquet" ] && cp "build/s12/$1.parquet" "$out/"
}
run graph-holdout sweeps/runs/s12/problems-holdout.parquet graph
if [ ! -f build/s12/test_gpu.done ] && [ "$(left)" -gt 120 ]; then
  echo "test_gpu start $(date +%T)"
  timeout $(( $(left) - 20 )) python3 -m pytest -q -p no:cacheprovider -rs tests/test_gpu.py > "$out/test_gpu.txt" 2>&1
  rc=$?; tail -3 "$out/test_gpu.txt"; echo "test_gpu exit $rc at $(date +%T)"
  [ $rc = 0 ] && touch build/s12/test_gpu.done
fi
run graph-c sweeps/runs/s11/problems-c.parquet graph
echo "end $(date +%T) ($(( $(date +%s) - t0 )) s)"
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

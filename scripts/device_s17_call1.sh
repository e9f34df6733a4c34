#!/usr/bin/env bash
# Session 17, on nvidia-h200-x2 (32 CPU cores; one GPU used), from the repo root; carry [".whl"]:
#   bash scripts/device_s17_call1.sh OUTDIR
# 1. in the background, at low priority: the cost kind's leave-network-group-out runs of i8nc32 and i8nhwc;
# 2. build the SM80 dispatcher (export/dispatch, i8nc32 + f16nhwc) and run its GPU tests
#    (tests/test_tuning_gpu.py: the refusal of a problem no kernel of it can run is now a test of its own);
# 3. wait for 1 within the call's time; logs come back as logs.tgz.
set -uo pipefail
out=${1:?usage: device_s17_call1.sh OUTDIR}
t0=$(date +%s)
left() { echo $(( 585 - ($(date +%s) - t0) )); }
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs
record_env "$out/env.txt"
S=sweeps
lono() {  # lono NAME OMP ARGS...
  local name=$1 omp=$2; shift 2
  OMP_NUM_THREADS=$omp nice -n 19 timeout $(( $(left) - 10 )) python3 -m predictor.lono "$@" --groups 6 --kind cost \
    --max-portfolio 24 --jobs 6 --out "$out/lono-$name-cost" > "/tmp/logs/lono-$name.log" 2>&1 &
}
lono i8nc32 3 $S/h200.parquet $S/h200-nets.parquet --family i8nc32
lono i8nhwc 2 $S/h200-i8nhwc.parquet --family i8nhwc
L80=build/sm80/h200_dispatch_sm_90a.so
ensure_dispatcher export/dispatch/h200_dispatch.cu $L80 300 || tail -20 /tmp/logs/build.log
PREDICTOR_DISPATCHER=$L80 step gputests 90 python3 -m pytest -q -p no:cacheprovider -rs tests/test_tuning_gpu.py
tail -4 /tmp/logs/gputests.log
cp /tmp/logs/gputests.log "$out/gputests-sm80.log"
wait
echo "lonos done at $(date +%T), $(left) s left"
for d in "$out"/lono-*; do grep -A3 "^| family | model" "$d/REPORT.md" | tail -1; done
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

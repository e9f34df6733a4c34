#!/usr/bin/env bash
# Session 17, on nvidia-h200 (16 CPU cores, one GPU), from the repo root; carry [".whl"]:
#   bash scripts/device_s17_call2.sh OUTDIR
# 1. on 12 threads: the `dense` kind's leave-network-group-out run of i8nhwc90 (as long as the call lasts);
# 2. meanwhile, at lower priority on every core: build the SM80 dispatcher (export/dispatch, i8nc32 + f16nhwc)
#    and run its GPU tests (tests/test_tuning_gpu.py: the refusal of a problem no kernel of it can run is now a
#    test of its own); logs come back as logs.tgz.
set -uo pipefail
out=${1:?usage: device_s17_call2.sh OUTDIR}
t0=$(date +%s)
left() { echo $(( 580 - ($(date +%s) - t0) )); }
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs
record_env "$out/env.txt"
S=sweeps
OMP_NUM_THREADS=2 timeout $(( $(left) - 5 )) python3 -m predictor.lono $S/h200-sm90-i8.parquet $S/h200-sm90-i8-nets.parquet \
  --family i8nhwc90 --groups 6 --kind dense --max-portfolio 24 --jobs 6 --out "$out/lono-i8nhwc90-dense" \
  > /tmp/logs/lono-i8nhwc90.log 2>&1 &
L80=build/sm80/h200_dispatch_sm_90a.so
mkdir -p build/sm80
nice -n 10 timeout 400 python3 -m predictor.dispatcher build export/dispatch/h200_dispatch.cu --arch sm_90a --jobs 16 \
  --out $L80 > /tmp/logs/build.log 2>&1; echo "build rc=$? at $(date +%T)"
PREDICTOR_DISPATCHER=$L80 step gputests 90 python3 -m pytest -q -p no:cacheprovider -rs tests/test_tuning_gpu.py
tail -4 /tmp/logs/gputests.log
cp /tmp/logs/gputests.log "$out/gputests-sm80.log"
wait
echo "lono done at $(date +%T), $(left) s left"
grep -A3 "^| family | model" "$out/lono-i8nhwc90-dense/REPORT.md" | tail -1
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

#!/usr/bin/env bash
# Session 16, on nvidia-h200 (one GPU), from the repo root; carry [".whl"]:   bash scripts/device_s16_eval.sh OUTDIR
# The int8 choice across generations retrained with the `cost` model kind, within about 540 s:
# 1. build export/dispatch_i8_choice3 (all cores); [SM80=1: also export/dispatch, i8nc32 + f16nhwc]
# 2. every int8 layer of the 14 held-out networks through it (bench/holdout/layers, C and K multiples of 16):
#    every output checked, CUDA-graph timed, cuBLASLt int8 on the 1x1 ones, two shards as time allows;
# 3. [SM80=1] the GPU tests of the SM80 dispatcher (tests/test_tuning_gpu.py, fp16 NHWC through it);
# 4. meanwhile, on the CPU cores, i8nc32's leave-network-group-out run of the cost kind.
# The logs come back as logs.tgz.
set -uo pipefail
out=${1:?usage: device_s16_eval.sh OUTDIR}
t0=$(date +%s)
left() { echo $(( 550 - ($(date +%s) - t0) )); }
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs
record_env "$out/env.txt"
L8=build/i8c3/h200_i8choice3_sm_90a.so
ensure_dispatcher export/dispatch_i8_choice3/h200_dispatch.cu $L8 240 || { tail -20 /tmp/logs/build.log; exit 1; }
if [ "${SM80:-0}" = 1 ]; then
  L80=build/sm80/h200_dispatch_sm_90a.so
  mv /tmp/logs/build.log /tmp/logs/build_i8.log
  ensure_dispatcher export/dispatch/h200_dispatch.cu $L80 200 || tail -20 /tmp/logs/build.log
  PREDICTOR_DISPATCHER=$L80 step gputests 60 python3 -m pytest -q -p no:cacheprovider -rs tests/test_tuning_gpu.py
  tail -3 /tmp/logs/gputests.log
fi
# on the CPU cores the timing leaves free: the cost kind's leave-network-group-out run of i8nc32 (as long as time allows)
OMP_NUM_THREADS=2 timeout $(( $(left) - 20 )) python3 -m predictor.lono sweeps/h200.parquet sweeps/h200-nets.parquet \
  --family i8nc32 --groups 6 --kind cost --max-portfolio 24 --jobs 6 --out "$out/lono-i8nc32-cost" > /tmp/logs/lono.log 2>&1 &
for i in 0 1; do
  [ "$(left)" -gt 60 ] || break
  step i8shard$i $(( $(left) < 240 ? $(left) - 15 : 225 )) python3 bench/vendor_layers.py --vendor cublaslt_int8 \
    --library $L8 --family i8nhwc+i8nhwc90+i8gemm90 --layers-dir bench/holdout/layers --every-layer --shard $i/2 \
    --out "$out/holdout-i8choice3-shard$i"
  grep -A3 "^| variant" "$out/holdout-i8choice3-shard$i.md"
done
wait
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

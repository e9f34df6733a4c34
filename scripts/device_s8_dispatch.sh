#!/usr/bin/env bash
# Session 8: the int8 choice's dispatcher on the GPU, and where a small fp16 layer's time goes (nvidia-h200, one
# GPU), from the repo root; carry [".whl", "build/i8c3", "build/f16c3"] (the wheel and the two dispatchers, built
# off the GPU with `python -m predictor.dispatcher build export/dispatch_{i8,f16}_choice3/h200_dispatch.cu
# --arch sm_90a --jobs 2 --out build/{i8c3/h200_i8choice3,f16c3/h200_choice3}_sm_90a.so`; built here when absent):
#   [I8=0] bash scripts/device_s8_dispatch.sh OUTDIR      (I8=0: step 2 only)
# 1. export/dispatch_i8_choice3 (i8nhwc + i8nhwc90 + i8gemm90 behind one C ABI) on every int8 layer of the 14
#    held-out networks (bench/holdout/layers, C and K multiples of 16): every output checked, CUDA-graph timed,
#    cuBLASLt int8 on the 1x1 ones (bench/vendor_layers.py --every-layer), in two shards;
# 2. bench/small_layers.py: the held-out fp16 layers cuDNN runs in at most 5 µs, cuDNN vs the routed fp16
#    choice's pick: graph time, CUPTI kernel time and the kernels each launches.
set -uo pipefail
out=${1:?usage: device_s8_dispatch.sh OUTDIR}
t0=$(date +%s)
source scripts/device_env.sh || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv
  nvcc --version | tail -1
  python3 -c "import torch; print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version())"
} > "$out/env.txt" 2>&1
cat "$out/env.txt"
L8=build/i8c3/h200_i8choice3_sm_90a.so
L16=build/f16c3/h200_choice3_sm_90a.so
if [ "${I8:-1}" = 1 ] && [ ! -f $L8 ]; then
  mkdir -p build/i8c3
  timeout 300 python3 -m predictor.dispatcher build export/dispatch_i8_choice3/h200_dispatch.cu --arch sm_90a \
    --jobs 16 --out $L8 > /tmp/logs/build_i8.log 2>&1; echo "i8 build rc=$? at $(date +%T)"
fi
F8=i8nhwc+i8nhwc90+i8gemm90
[ "${I8:-1}" = 1 ] && shards="0/2 1/2" || shards=""
for sh in $shards; do
  timeout ${SHARD_S:-230} python3 bench/vendor_layers.py --vendor cublaslt_int8 --library $L8 --family $F8 \
    --layers-dir bench/holdout/layers --every-layer --shard $sh --out "$out/holdout-i8choice3-shard${sh%/2}" \
    > /tmp/logs/i8_${sh%/2}.log 2>&1; echo "i8 shard $sh rc=$? at $(date +%T)"
  tail -6 /tmp/logs/i8_${sh%/2}.log
done
if [ -f $L16 ]; then
  timeout 150 python3 bench/small_layers.py --library $L16 --family f16nhwc+f16nhwc90+f16gemm90 \
    --from bench/vendor_layers/h200-holdout-choice3-tuned-shard0.csv \
    --from bench/vendor_layers/h200-holdout-choice3-tuned-shard1.csv --max-cudnn-us 5 --out "$out/small-layers" \
    > /tmp/logs/small.log 2>&1; echo "small layers rc=$? at $(date +%T)"
  tail -30 /tmp/logs/small.log
fi
echo "end $(date +%T) ($(( $(date +%s) - t0 )) s)"
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

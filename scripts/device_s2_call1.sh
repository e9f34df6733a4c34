#!/usr/bin/env bash
# Session 2, call 1 (nvidia-h200-x2), from the repo root:  bash scripts/device_s2_call1.sh OUTDIR
# Kernel libraries are carried prebuilt in .dev/build (built with the same nvcc 13.0 and
# nvidia-cutlass 4.2 on the CPU machine; the collector reuses a library whose manifest matches).
# The timing-method check: the same problems timed on GPU 1 with the earlier method
# (--warmup-batches 0) and with method 2, and on GPU 0 with method 2 (cross-GPU agreement); then the
# GPU tests on GPU 0 (new timing path, output checks; they compile, so they run after the timings).
set -euo pipefail
out=${1:?OUTDIR}
source scripts/device_env.sh
B=.dev/build
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv
  python3 -c "import torch; print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version(), 'gpus', torch.cuda.device_count())"; } > "$out/env.txt" 2>&1
check() {  # $1 = file stem, $2 = warm-up batches, $3 = GPU
  for fam in f16nhwc i8nc32 f16nhwc90; do
    CUDA_VISIBLE_DEVICES=$3 python3 -m predictor.collect --quiet --family $fam --shapes 120 --warmup-batches "$2" \
      --build-dir $B --out "/tmp/$1.parquet" --parts "/tmp/$1.parts" --time-limit 150 || [ $? -eq 3 ]
  done
}
{ check m2b 1 0 > /tmp/check0.log 2>&1
  CUDA_VISIBLE_DEVICES=0 python3 -m pytest -q -p no:cacheprovider tests/test_gpu.py tests/test_sm90.py tests/test_timing.py > "$out/gpu_tests.txt" 2>&1 || echo "pytest rc=$?" >> "$out/gpu_tests.txt"; } &
{ check m0 0 1; check m2a 1 1; } > /tmp/check.log 2>&1
wait
cat /tmp/check0.log >> /tmp/check.log
python3 scripts/timing_check.py /tmp/m0.parquet /tmp/m2a.parquet /tmp/m2b.parquet > "$out/TIMING_CHECK.md"
cp /tmp/m0.parquet /tmp/m2a.parquet /tmp/m2b.parquet "$out/"
grep -h "reusing\|building\|sweep stats\|rror" /tmp/check.log | head -20 > "$out/check_log.txt"
tail -3 "$out/gpu_tests.txt"; cat "$out/TIMING_CHECK.md"; cat "$out/check_log.txt"

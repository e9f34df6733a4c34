#!/usr/bin/env bash
# Runs on the GPU machine from the repo root:
#   bash scripts/device_sweep.sh OUTDIR [collector args...]
# Installs the carried nvidia-cutlass wheel (no network there), runs the GPU tests, then the
# collector with the given arguments; everything it writes goes to OUTDIR (the tool's $OUT).
set -euo pipefail
# grep for a summary: no match is fine, a grep error (a missing log) stops the script
matches() { grep "$@" || [ $? -eq 1 ]; }
out=${1:?usage: device_sweep.sh OUTDIR [collector args]}
shift
source scripts/device_env.sh
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
  nvcc --version | tail -1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
} 2>&1 | tee "$out/env.txt"
if [ "${RUN_GPU_TESTS:-1}" = 1 ]; then
  python3 -m pytest -q -p no:cacheprovider tests/test_gpu.py 2>&1 | tail -15 | tee "$out/gpu_tests.txt"
fi
python3 -m predictor.collect --jobs "$(nproc)" --quiet "$@" 2>&1 | tee "$out/collect.log" | matches -v " INFO predictor.emit" | tail -40

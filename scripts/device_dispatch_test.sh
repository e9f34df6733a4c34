#!/usr/bin/env bash
# Build one generated dispatcher on the device machine and run the GPU tests that load it:
#   bash scripts/device_dispatch_test.sh OUTDIR export/dispatch_sm90/h200_dispatch.cu [BUILD_SECONDS]
# (carry [".whl"]): tests/test_tuning_gpu.py (first-call tuning, fallback, refusal) and tests/test_torch_conv.py (the
# PyTorch op against cuDNN) with PREDICTOR_DISPATCHER set; their output in OUTDIR/gputests.log.
set -uo pipefail
out=${1:?usage: device_dispatch_test.sh OUTDIR SOURCE [BUILD_SECONDS]}; src=${2:?dispatcher source}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
device_start "$out" "${BUDGET:-580}"
lib=build/$(basename "$(dirname "$src")")/h200_dispatch_sm_90a.so
ensure_dispatcher "$src" "$lib" "${3:-300}" || { tail -20 /tmp/logs/build.log; cp /tmp/logs/build.log "$out/"; exit 1; }
PREDICTOR_DISPATCHER=$lib step gputests $(( $(left) - 5 )) python3 -m pytest -q -p no:cacheprovider -rs \
  tests/test_tuning_gpu.py tests/test_torch_conv.py
tail -6 /tmp/logs/gputests.log
cp /tmp/logs/gputests.log "$out/gputests.log"
echo "$(left) s left"

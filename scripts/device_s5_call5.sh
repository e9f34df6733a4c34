#!/usr/bin/env bash
# Session 5, device call 5 (nvidia-h200, one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s5_call5.sh OUTDIR
# The int8 routed choice (i8nhwc90+i8gemm90) scored leave-network-group-out on the GPU: its picks for
# every int8 1x1 catalog layer (reports/lono/h200-i8choice/layers.csv; a layer of several networks
# takes the pick of the last one listed) built through the collector's kernel libraries, each output
# checked, graph-timed against cuBLASLt int8 (torch._int_mm).
set -uo pipefail
out=${1:?OUTDIR}
source scripts/device_env.sh
mkdir -p /tmp/logs "$out"
echo "start $(date +%T)"
timeout 420 python3 bench/vendor_layers.py --vendor cublaslt_int8 --picks reports/lono/h200-i8choice/layers.csv \
  --picks-kind repick --build-dir build --out "$out/i8choice-lono-cublaslt" > /tmp/logs/vendor_i8.log 2>&1 \
  || echo "vendor_layers exit $?"
echo "end $(date +%T)"
grep -v "nvcc sm_90" /tmp/logs/vendor_i8.log | tail -12
tar -czf "$out/logs.tgz" -C /tmp logs

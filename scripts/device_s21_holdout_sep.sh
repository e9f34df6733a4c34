#!/usr/bin/env bash
# Session 21, on nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s21_holdout_sep.sh OUTDIR
# The held-out networks' fp16 layers (bench/holdout/layers: the set of the headline comparison with cuDNN) through
# the shipped routed fp16 dispatcher, against cuDNN's heuristic, back to back and separated
# (bench/separated_layers.py), one process, stopped by its time limit if need be (it writes the layers it measured).
set -uo pipefail
out=${1:?usage: device_s21_holdout_sep.sh OUTDIR}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
device_start "$out" 420
mkdir -p /tmp/bench
L=build/f16c3/h200_choice3_sm_90a.so
ensure_dispatcher export/dispatch_f16_choice3/h200_dispatch.cu $L 200 || { tail -20 /tmp/logs/build.log; exit 1; }
step sep $(( $(left) - 15 )) python3 bench/separated_layers.py --library $L --family f16nhwc+f16nhwc90+f16gemm90 \
  --layers-dir bench/holdout/layers --out /tmp/bench/holdout-sep
grep "^| \|^- layers" /tmp/bench/holdout-sep.md
tar -czf "$out/bench.tgz" -C /tmp bench logs
ls -la "$out"

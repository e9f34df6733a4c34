#!/usr/bin/env bash
# Prepared in session 8 for the next device session (not yet run): the fp16 comparisons against cuDNN again,
# with the fixed graph timing (predictor.gpu_eval.graph_time_us: graph sized from a graph's GPU time, timed
# replays queued behind a busy GPU), nvidia-h200 (one GPU), from the repo root; carry [".whl", "build/f16c3"]
# (the routed fp16 choice's dispatcher, built off the GPU with `python -m predictor.dispatcher build
# export/dispatch_f16_choice3/h200_dispatch.cu --arch sm_90a --jobs 2 --out build/f16c3/h200_choice3_sm_90a.so`,
# ~10 min on 2 cores; built here when absent):
#   [SHARD=0/2] bash scripts/device_s9_remeasure.sh OUTDIR
# 1. the timing test (tests/test_gpu.py::test_graph_timing_charges_no_host_overhead) -- if it fails, stop;
# 2. bench/small_layers.py on the held-out layers cuDNN runs in <= 5 µs (kernel time and graph time agree now?);
# 3. the held-out networks' fp16 layers, static and tuned vs cuDNN (bench/vendor_layers.py, one shard);
# 4. ResNet-50 at N = 1, 8, 32 vs cuDNN (bench/networks.py, 3 rounds).
set -uo pipefail
out=${1:?usage: device_s9_remeasure.sh OUTDIR}
source scripts/device_env.sh || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs
record_env "$out/env.txt"
cat "$out/env.txt"
L=build/f16c3/h200_choice3_sm_90a.so
F=f16nhwc+f16nhwc90+f16gemm90
ensure_dispatcher export/dispatch_f16_choice3/h200_dispatch.cu $L 240
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_gpu.py -k graph_timing > "$out/timing_test.txt" 2>&1
rc=$?; tail -3 "$out/timing_test.txt"; [ $rc = 0 ] || { echo "timing test failed: not measuring"; exit 1; }
timeout 120 python3 bench/small_layers.py --library $L --family $F \
  --from bench/vendor_layers/h200-holdout-choice3-tuned-shard0.csv \
  --from bench/vendor_layers/h200-holdout-choice3-tuned-shard1.csv --max-cudnn-us 5 --out "$out/small-layers" \
  > /tmp/logs/small.log 2>&1; echo "small layers rc=$? at $(date +%T)"
grep -A8 "^| median" "$out/small-layers.md"
timeout ${BENCH_S:-240} python3 bench/vendor_layers.py --library $L --family $F --tune --layers-dir bench/holdout/layers \
  --shard ${SHARD:-0/2} --out "$out/holdout-choice3-tuned" > /tmp/logs/vendor.log 2>&1 || echo "vendor_layers exit $?"
tail -12 /tmp/logs/vendor.log
timeout 150 python3 bench/networks.py --library $L --family $F --nets resnet50 --rounds 3 \
  --out "$out/networks-resnet50" > /tmp/logs/networks.log 2>&1 || echo "networks exit $?"
grep resnet50 "$out/networks-resnet50.md" | head -8
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

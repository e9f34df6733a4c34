#!/usr/bin/env bash
# Session 4, device call 3 (nvidia-h200), from the repo root; carry [".dev/disp90", ".whl"]:
#   bash scripts/device_s4_call3.sh OUTDIR
# .dev/disp90 holds the shipped SM90 dispatcher built in call 1 (from the same export/ source; the SM80
# one stays behind: the working tree plus carry must stay under 64 MiB).
# CPU: the fp16 choice dispatcher (export/dispatch_f16_choice) built in parallel parts, meanwhile the
#      GPU runs ResNet-50 / YOLOv8m-like / U-Net through the SM90 dispatcher vs cuDNN;
# then: the custom op's GPU test through the choice, every other fp16 catalog layer (shard 0/2) through
#      the SM90 and the choice dispatchers vs cuDNN (outputs compared), the networks through the choice.
set -euo pipefail
out=${1:?OUTDIR}
source scripts/device_env.sh
mkdir -p /tmp/logs
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv; } > /tmp/logs/env.txt 2>&1
L90=.dev/disp90/h200_sm90_sm_90a.so
LC=/tmp/h200_choice_sm_90a.so
echo "start $(date +%T)"
( python3 -m predictor.dispatcher build export/dispatch_f16_choice/h200_dispatch.cu --arch sm_90a --jobs 16 \
    --out $LC > /tmp/logs/build_choice.log 2>&1; echo "choice built rc=$? at $(date +%T)" >> /tmp/logs/build_choice.log ) &
bg=$!
timeout 200 python3 bench/networks.py --library $L90 --family f16nhwc90 \
  --out "$out/networks" > /tmp/logs/networks.log 2>&1 || echo "networks exit $?"
wait $bg; cat /tmp/logs/build_choice.log | tail -3
PREDICTOR_DISPATCHER=$LC timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_torch_conv.py > /tmp/logs/torch_tests.txt 2>&1 || true
tail -3 /tmp/logs/torch_tests.txt
timeout 200 python3 bench/vendor_layers.py --library $L90 --library $LC --family f16nhwc90 --family f16nhwc+f16nhwc90 \
  --shard 0/2 --out "$out/vendor_layers" > /tmp/logs/vendor_layers.log 2>&1 || echo "vendor_layers exit $?"
timeout 150 python3 bench/networks.py --library $LC --family f16nhwc+f16nhwc90 \
  --out "$out/networks_choice" > /tmp/logs/networks_choice.log 2>&1 || echo "networks_choice exit $?"
echo "end $(date +%T)"
tail -25 /tmp/logs/networks.log; tail -12 /tmp/logs/vendor_layers.log; tail -12 /tmp/logs/networks_choice.log
tar -czf "$out/logs.tgz" -C /tmp logs

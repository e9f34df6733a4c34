#!/usr/bin/env bash
# Session 14, on nvidia-h200 (one GPU), from the repo root; carry [".whl"]:   bash scripts/device_s14_eval.sh OUTDIR
# The routed fp16 choice's dispatcher retrained with f16nhwc90's 9 explicit configs (tile K 32, tile N 32 / 96),
# against cuDNN's heuristic (PyTorch's default), then an experiment, in this order:
# 1. build it (all cores);
# 2. ResNet-50, the YOLOv8m-like and the U-Net at N = 1, 8, 32, static, 3 rounds (ResNet-50 also with --tune);
# 3. the held-out networks' fp16 layers, static picks, 2 shards (one process each);
# 4. the fp16 layers of ResNet-50, the YOLOv8m-like and the U-Net at N = 8 and 32, layer by layer, with the
#    kernels cuDNN launches (--cudnn-kernels);
# 5. scripts/gemm_epi_tiles.py's configs (the epilogue subtile fixed; 15 when this ran, 3 of which did not compile) next to the 10 GEMM configs the dispatcher
#    picks most for network 1x1 layers, on the 1x1 layers of the three networks at N = 8 and 32, graph-timed.
# The device tool brings back at most 8 files: the bench outputs come back as one bench.tgz.
set -uo pipefail
out=${1:?usage: device_s14_eval.sh OUTDIR}
t0=$(date +%s)
left() { echo $(( 570 - ($(date +%s) - t0) )); }
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs /tmp/netlayers /tmp/bench
record_env "$out/env.txt"
L=build/f16c3k/h200_choice3_sm_90a.so
F=f16nhwc+f16nhwc90+f16gemm90
ensure_dispatcher export/dispatch_f16_choice3/h200_dispatch.cu $L 200 || { tail -20 /tmp/logs/build.log; exit 1; }
timeout 150 python3 bench/networks.py --cudnn heuristic --library $L --family $F --rounds 3 --tune --nets resnet50 \
  --out /tmp/bench/networks-tuned-heuristic-resnet50 > /tmp/logs/net-resnet50.log 2>&1
echo "networks resnet50 (static and tuned) rc=$? at $(date +%T)"; grep "^| " /tmp/bench/networks-tuned-heuristic-resnet50.md
timeout 120 python3 bench/networks.py --cudnn heuristic --library $L --family $F --rounds 3 \
  --nets yolov8m_csp,unet_skip --out /tmp/bench/networks-heuristic-yolo > /tmp/logs/net-yolo.log 2>&1
echo "networks yolo, unet rc=$? at $(date +%T)"; grep "^| " /tmp/bench/networks-heuristic-yolo.md
for i in 0 1; do
  timeout 75 python3 bench/vendor_layers.py --cudnn heuristic --library $L --family $F \
    --layers-dir bench/holdout/layers --shard $i/2 --out /tmp/bench/holdout-heuristic-shard$i > /tmp/logs/heur$i.log 2>&1
  echo "held-out shard $i rc=$? at $(date +%T)"; grep -A3 "^| variant" /tmp/bench/holdout-heuristic-shard$i.md
done
cp predictor/data/networks/{resnet50,yolov8m_csp,unet_skip}.csv /tmp/netlayers/
timeout 60 python3 bench/vendor_layers.py --cudnn heuristic --cudnn-kernels --library $L --family $F \
  --layers-dir /tmp/netlayers --batches 8,32 --out /tmp/bench/netlayers-heuristic > /tmp/logs/netlayers.log 2>&1
echo "network layers rc=$? at $(date +%T)"; grep -A3 "^| variant" /tmp/bench/netlayers-heuristic.md
tar -czf "$out/bench.tgz" -C /tmp bench
refs=(f16gemm90_t128x128x64_c1x1x1_sauto_kpingpong_etma_tsdefault_a8x8x8_lincomb
      f16gemm90_t256x64x64_c1x1x1_sauto_kpingpong_etma_tsdefault_a8x8x8_lincomb
      f16gemm90_t256x96x64_c1x1x1_sauto_kcoop_etmacoop_tsdefault_a8x8x8_lincomb
      f16gemm90_t256x64x64_c1x1x1_sauto_kcoop_etmacoop_tsdefault_a8x8x8_lincomb
      f16gemm90_t128x96x64_c1x1x1_sauto_kcoop_etmacoop_tsdefault_a8x8x8_lincomb
      f16gemm90_t64x128x64_c1x1x1_sauto_kpingpong_etma_tsdefault_a8x8x8_lincomb
      f16gemm90_t256x128x64_c1x1x1_sauto_kcoop_etmacoop_tsdefault_a8x8x8_lincomb
      f16gemm90_t128x64x64_c1x1x1_sauto_kpingpong_etma_tsdefault_a8x8x8_lincomb
      f16gemm90_t128x256x64_c1x1x1_sauto_kcoop_etmacoop_tsdefault_a8x8x8_lincomb
      f16gemm90_t128x128x64_c1x1x1_sauto_kcoop_etmacoop_tsdefault_a8x8x8_lincomb)
mapfile -t epi < <(python3 scripts/gemm_epi_tiles.py)
lim=$(( $(left) - 15 ))
echo "${#refs[@]} grid configs, ${#epi[@]} outside it; start $(date +%T), limit $lim s"
if [ "$lim" -gt 60 ]; then
  timeout $(( lim + 10 )) python3 -m predictor.collect --quiet --family f16gemm90 --configs "${refs[@]}" \
    --extra-configs "${epi[@]}" --layers predictor/data/networks/resnet50.csv \
    --layers predictor/data/networks/yolov8m_csp.csv --layers predictor/data/networks/unet_skip.csv \
    --batch-sizes 8,32 --timing graph --jobs 16 --build-dir build/epi --out build/s14/epi.parquet \
    --parts build/s14/epi.parts --time-limit "$lim" >> /tmp/logs/epi.log 2>&1
  echo "epi rc=$? at $(date +%T)"; grep -v "cannot run\|nvcc sm_90" /tmp/logs/epi.log | tail -4
  [ -f build/s14/epi.parquet ] && cp build/s14/epi.parquet "$out/"
fi
tar -czf "$out/logs.tgz" -C /tmp logs
ls -la "$out"

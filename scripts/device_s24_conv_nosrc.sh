#!/usr/bin/env bash
# Session 24, on nvidia-h200 (one GPU, 16 cores), from the repo root; carry [".whl"]:
#   bash scripts/device_s24_conv_nosrc.sh OUTDIR
# f16nhwc90's source-less twins (predictor.space.F16_NHWC90_NOSRC, `_nosrc`: session 23 measured six of them 1.037x
# as fast as their twins on the networks' layers) swept next to their 12 sourced twins, which are the anchors,
# on every training and held-out problem of the family in the method that labels it (as device_s14_conv90_grid.sh):
# 1. train-graph: the problems of sweeps/h200-graph-f16.parquet, graph batches;
# 2. train-eager: the family's other training problems (sweeps/runs/s14/problems-train-eager.parquet), eager;
# 3. holdout-graph: the problems of sweeps/h200-holdout-graph-f16.parquet, graph;
# 4. holdout-eager: the held-out layers not graph-labelled (sweeps/runs/s14/problems-holdout-eager.parquet), eager.
# Every output checked; scripts/split_anchors.py splits each file into new rows and the anchors' comparison.
set -uo pipefail
out=${1:?usage: device_s24_conv_nosrc.sh OUTDIR}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
device_start "$out" 570
read -r -a cfgs <<< "$(python3 -c "import dataclasses; from predictor.config import KernelConfig as K
from predictor.space import F16_NHWC90_NOSRC as b
print(' '.join(b + tuple(dataclasses.replace(K.from_name(n), no_source=True).name for n in b)))")"
echo "configs: ${#cfgs[@]}"
run() {  # run NAME TIMING LIMIT ARGS...: one collector run, its file to OUTDIR
  local name=$1 timing=$2 lim=$3; shift 3
  local l; l=$(left); [ "$lim" -gt $(( l - 15 )) ] && lim=$(( l - 15 ))
  if [ "$lim" -lt 20 ]; then echo "$name: no time left"; return 0; fi
  echo "$name ($timing) start $(date +%T), limit $lim s"
  timeout $(( lim + 10 )) python3 -m predictor.collect --quiet --family f16nhwc90 --configs "${cfgs[@]}" \
    --timing "$timing" --jobs 16 --build-dir build/s24 --out "$out/raw-$name.parquet" --parts "/tmp/$name.parts" \
    --time-limit "$lim" "$@" > "/tmp/logs/$name.log" 2>&1
  echo "$name exit $? at $(date +%T)"; grep -v "nvcc sm_90\|cannot run" "/tmp/logs/$name.log" | tail -2
}
run train-graph graph 330 --problems-from sweeps/h200-graph-f16.parquet
run train-eager eager 100 --problems-from sweeps/runs/s14/problems-train-eager.parquet
run holdout-graph graph 100 --problems-from sweeps/h200-holdout-graph-f16.parquet
run holdout-eager eager 30 --problems-from sweeps/runs/s14/problems-holdout-eager.parquet
tar -czf "$out/logs.tgz" -C /tmp logs
echo "end $(date +%T) ($(( $(date +%s) - DEVICE_T0 )) s)"
ls -la "$out"

#!/usr/bin/env bash
# Session 2, call 4 (nvidia-h200-x2), from the repo root:  bash scripts/device_s2_call4.sh OUTDIR
# Label noise of the big layers: the network layers above 8 GFLOP of h200-nets.parquet (f16nhwc)
# and h200-sm90-nets.parquet (f16nhwc90) measured again, each family on the GPU that measured
# fewer of them the first time; compared with scripts/timing_check.py.
set -euo pipefail
out=${1:?OUTDIR}
source scripts/device_env.sh
B=.dev/build
deadline=$(( $(date +%s) + ${BUDGET_S:-300} ))
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv; } > "$out/env.txt" 2>&1
big() {  # $1 sweep, $2 family, $3 csv
  python3 - "$1" "$2" "$3" <<'PY'
import sys
from predictor.features import ConvProblem
from predictor.schema import SHAPE_COLUMNS, read_sweep
df = read_sweep(sys.argv[1])
d = df[df["family"] == sys.argv[2]].drop_duplicates("shape_key")
d = d[[ConvProblem(*(int(r[c]) for c in SHAPE_COLUMNS)).flops > 8e9 for r in d.to_dict("records")]]
d = d.assign(network=d["source"].str.slice(4))
d[["N", "C", "H", "W", "K", "R", "S", "stride", "pad", "dilation", "network"]].to_csv(sys.argv[3], index=False)
print(sys.argv[2], len(d), "big layers")
PY
}
big sweeps/h200-nets.parquet f16nhwc /tmp/big_f16.csv
big sweeps/h200-sm90-nets.parquet f16nhwc90 /tmp/big_f16_90.csv
run() {  # $1 GPU, $2 family, $3 csv
  local left=$(( deadline - $(date +%s) )); [ "$left" -gt 20 ] || return 0
  CUDA_VISIBLE_DEVICES=$1 python3 -m predictor.collect --quiet --family "$2" --layers "$3" --build-dir $B \
    --out "$out/repeat-$2.parquet" --parts "/tmp/$2.parts" --time-limit "$left" >> "/tmp/gpu$1.log" 2>&1 || [ $? -eq 3 ]
}
run 0 f16nhwc /tmp/big_f16.csv &
run 1 f16nhwc90 /tmp/big_f16_90.csv &
wait
cat /tmp/gpu0.log /tmp/gpu1.log | grep -v "emit INFO building\|nvcc sm_90" > "$out/collect.log"
grep -h "sweep stats\|wrote\|rror" "$out/collect.log" | tail -8

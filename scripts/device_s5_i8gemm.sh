#!/usr/bin/env bash
# Session 5, the i8gemm90 family (int8 NHWC 1x1 convs as CUTLASS 3.x SM90 GEMMs) on one H200 (nvidia-h200:
# 1 GPU, 16 cores, no network), from the repo root; carry [".whl"] (the nvidia-cutlass wheel):
#   bash scripts/device_s5_i8gemm.sh OUTDIR          # BUDGET_S (default 520) bounds the whole run (< 9 min)
# 1. builds the family's grid (50 GEMM kernels, one nvcc per kernel, all cores) into build/;
# 2. GPU tests of i8gemm90 (tests/test_gemm90.py -m gpu -k i8gemm90: every config checked against the
#    float64 reference on five 1x1 problems, cannot_implement on 3x3 / stride 2);
# 3. sweeps its default problem set (the catalog's 996 int8 1x1 layers first, then grid and random 1x1
#    problems) into OUTDIR/h200-i8gemm90.parquet, every output checked (--time-limit: stops cleanly and
#    resumably; re-run with that parquet as --out to finish);
# 4. the sweep's fastest config per catalog 1x1 layer vs cuBLASLt int8 (torch._int_mm), both graph-timed
#    (bench/vendor_layers.py --vendor cublaslt_int8) -> OUTDIR/i8gemm-cublaslt.{md,csv};
# 5. if time is left: f16gemm90's GPU tests too (its grid built niced in the background during step 4,
#    which is graph-timed: host load does not enter CUDA-graph replays).
# Files back (<= 8): h200-i8gemm90.parquet, summary.txt, i8gemm-cublaslt.md/.csv, logs.tgz.
set -uo pipefail
out=${1:?usage: device_s5_i8gemm.sh OUTDIR}
t0=$(date +%s)
deadline=$(( t0 + ${BUDGET_S:-520} ))
left() { echo $(( deadline - $(date +%s) )); }
matches() { grep "$@" || [ $? -eq 1 ]; }
source scripts/device_env.sh || { echo "wheel install failed"; exit 1; }
w=/tmp/s5
mkdir -p "$w" "$out"
echo "start $(date +%T)"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv
  nvcc --version | tail -1
  nproc
  python3 -c 'import torch, cutlass_library, predictor; print("torch", torch.__version__, "cuda", torch.version.cuda, "predictor", predictor.__file__)'
} > "$w/env.txt" 2>&1
cat "$w/env.txt"

cat > "$w/build_grid.py" <<'PY'
# python3 build_grid.py FAMILY JOBS: the family's sweep grid compiled into build/sm_90/lib<family>.so
import logging, sys, time
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
from predictor.config import Family
from predictor.emit import build_library
from predictor.space import family_grid
fam, jobs = Family(sys.argv[1]), int(sys.argv[2])
res = build_library(family_grid(fam), "sm_90", "build", jobs=jobs, name=fam.value)
print(f"{fam.value}: built {len(res.compiled)} kernels, {len(res.errors)} compile errors, {res.seconds:.0f} s")
for k, msg in res.errors.items():
    print("compile_error", k, [ln for ln in msg.splitlines() if "error" in ln][:3])
PY

echo "1. build i8gemm90 grid $(date +%T)"
timeout 300 python3 "$w/build_grid.py" i8gemm90 "$(nproc)" > "$w/build_i8gemm90.log" 2>&1 || echo "build exit $?"
matches -v "^nvcc\|INFO" "$w/build_i8gemm90.log" | tail -8

echo "2. GPU tests i8gemm90 $(date +%T) (left $(left) s)"
timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm90.py -k i8gemm90 \
  > "$w/gpu_tests_i8gemm90.txt" 2>&1 || echo "gpu tests exit $?"
tail -8 "$w/gpu_tests_i8gemm90.txt"

lim=$(( $(left) - 130 ))  # keep ~2 min for step 4
echo "3. sweep i8gemm90 $(date +%T) (time limit $lim s)"
if [ "$lim" -gt 30 ]; then
  timeout $(( lim + 45 )) python3 -m predictor.collect --quiet --family i8gemm90 --shapes 1200 --jobs 16 \
    --build-dir build --out "$out/h200-i8gemm90.parquet" --parts /tmp/i8gemm90.parts --time-limit "$lim" \
    > "$w/collect.log" 2>&1 || echo "collect exit $? (3: time limit, resumable)"
  if [ ! -f "$out/h200-i8gemm90.parquet" ] && [ -d /tmp/i8gemm90.parts ]; then  # killed: keep the saved parts
    python3 -m predictor.collect merge /tmp/i8gemm90.parts --out "$out/h200-i8gemm90.parquet" >> "$w/collect.log" 2>&1 \
      || echo "merge of the parts failed"
  fi
  matches -v " INFO predictor.emit\|nvcc sm_90" "$w/collect.log" | tail -6
fi
python3 - "$out/h200-i8gemm90.parquet" <<'PY' 2>&1 | tee "$out/summary.txt"
import sys
import pandas as pd
df = pd.read_parquet(sys.argv[1])
print(len(df), "rows,", df["shape_key"].nunique(), "problems,", df["config"].nunique(), "configs")
print(df["status"].value_counts().to_string())
print("by source:", df.drop_duplicates("shape_key")["source"].str.split(":").str[0].value_counts().to_dict())
ok = df[df["status"] == "ok"]
best = ok.loc[ok.groupby("shape_key")["time_us"].idxmin(), "config"].value_counts()
print("winners:"); print(best.head(15).to_string())
PY

echo "4. best i8gemm90 config vs cuBLASLt int8 $(date +%T) (left $(left) s)"
( nice -n 10 timeout $(( $(left) > 60 ? $(left) - 20 : 1 )) python3 "$w/build_grid.py" f16gemm90 12 \
    > "$w/build_f16gemm90.log" 2>&1 || echo "f16 build exit $?" ) &
bg=$!
vlim=$(( $(left) - 15 )); [ "$vlim" -gt 150 ] && vlim=150
shard=0/1; [ "$vlim" -lt 100 ] && shard=0/2
if [ -f "$out/h200-i8gemm90.parquet" ] && [ "$vlim" -gt 20 ]; then
  timeout "$vlim" python3 bench/vendor_layers.py --vendor cublaslt_int8 --picks "$out/h200-i8gemm90.parquet" \
    --shard "$shard" --out "$out/i8gemm-cublaslt" > "$w/vendor_i8gemm.log" 2>&1 || echo "vendor_layers exit $?"
  tail -8 "$w/vendor_i8gemm.log"
fi

echo "5. f16gemm90 GPU tests if time is left $(date +%T) (left $(left) s)"
wait $bg
matches -v "^nvcc\|INFO" "$w/build_f16gemm90.log" 2>/dev/null | tail -3
if [ "$(left)" -gt 25 ] && grep -q "f16gemm90: built 50" "$w/build_f16gemm90.log" 2>/dev/null; then
  timeout $(( $(left) - 10 )) python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm90.py -k f16gemm90 \
    > "$w/gpu_tests_f16gemm90.txt" 2>&1 || echo "f16 gpu tests exit $?"
  tail -3 "$w/gpu_tests_f16gemm90.txt"
else
  echo "f16gemm90 GPU tests skipped (no time or no full build)"
fi
echo "end $(date +%T) ($(( $(date +%s) - t0 )) s)"
tar -czf "$out/logs.tgz" -C /tmp s5 2>/dev/null || true
ls -la "$out"

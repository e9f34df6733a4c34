#!/usr/bin/env bash
# The f16gemm90 family (1x1 convs as CUTLASS 3.x SM90 GEMMs) on an H200 host (nvidia-h200-x2: 2 GPUs,
# 32 cores, no network), from the repo root; carry [".whl"] (the nvidia-cutlass wheel):
#   bash scripts/device_gemm90.sh OUTDIR          # e.g. "$OUT"; BUDGET_S (default 450) bounds the whole run
# 1. installs the carried wheel (scripts/device_env.sh; the package runs from the checkout);
# 2. builds every kernel of the family's grid (50, one nvcc per kernel, all cores) into build/;
# 3. runs the family's GPU tests (tests/test_gemm90.py -m gpu: every config checked on 1x1
#    problems, cannot_implement on the others), then the conv SM90 family's as a control;
# 4. sweeps the family's default problem set (1x1 catalog layers first) over both GPUs into
#    OUTDIR/h200-gemm90.parquet, stopping cleanly at the deadline (re-running resumes).
set -euo pipefail
out=${1:?usage: device_gemm90.sh OUTDIR}
deadline=$(( $(date +%s) + ${BUDGET_S:-450} ))
matches() { grep "$@" || [ $? -eq 1 ]; }
source scripts/device_env.sh
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv
  nvcc --version | tail -1
  python3 -c 'import torch, cutlass_library, predictor; print("torch", torch.__version__, "cuda", torch.version.cuda, "predictor", predictor.__file__)'
} > "$out/env.txt" 2>&1
cat "$out/env.txt"
t0=$(date +%s)
python3 - > "$out/build.log" 2>&1 <<'PY'
import logging, os
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
from predictor.config import Family
from predictor.emit import build_library
from predictor.space import family_grid
res = build_library(family_grid(Family.F16_GEMM_SM90), "sm_90", "build", jobs=os.cpu_count(), name="f16gemm90")
print(f"built {len(res.compiled)} kernels, {len(res.errors)} compile errors, {res.seconds:.0f} s")
for k, msg in res.errors.items():
    print("compile_error", k, [ln for ln in msg.splitlines() if "error" in ln][:3])
PY
echo "build: $(( $(date +%s) - t0 )) s"; matches -v "^nvcc\|INFO" "$out/build.log" | tail -20
CUDA_VISIBLE_DEVICES=0 timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm90.py \
  > "$out/gpu_tests.txt" 2>&1 || true
CUDA_VISIBLE_DEVICES=1 timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_sm90.py \
  -k "f16nhwc90 and correct_and_timed" > "$out/gpu_tests_conv90.txt" 2>&1 || true
tail -15 "$out/gpu_tests.txt"; tail -3 "$out/gpu_tests_conv90.txt"
left=$(( deadline - $(date +%s) - 30 ))
if [ "$left" -gt 30 ]; then
  python3 -m predictor.collect --quiet --family f16gemm90 --shapes "${SHAPES:-1200}" --gpus all \
    --jobs "$(nproc)" --build-dir build --out "$out/h200-gemm90.parquet" --parts /tmp/gemm90.parts \
    --time-limit "$left" > "$out/collect.log" 2>&1 || echo "collect exit $?"
  matches -v " INFO predictor.emit\|nvcc sm_90" "$out/collect.log" | tail -25
fi
python3 - <<'PY' "$out/h200-gemm90.parquet" 2>&1 | tee "$out/summary.txt" || true
import sys
import pandas as pd
df = pd.read_parquet(sys.argv[1])
print(len(df), "rows,", df["shape_key"].nunique(), "problems,", df["config"].nunique(), "configs")
print(df["status"].value_counts().to_string())
ok = df[df["status"] == "ok"]
best = ok.loc[ok.groupby("shape_key")["time_us"].idxmin(), "config"].value_counts()
print("winners:"); print(best.head(15).to_string())
PY
tar -czf "$out/logs.tgz" -C "$out" env.txt build.log gpu_tests.txt gpu_tests_conv90.txt 2>/dev/null || true

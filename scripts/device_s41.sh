#!/usr/bin/env bash
# Session 41, one device call that does what the GPU it is given can do (the tool gives an H100 or an H200 for the
# `nvidia-h200` kind; data is named for the GPU that measured it):
#   H200: the 400 dilated problems of session 31 (sweeps/runs/s31/dilated.csv), every f16nhwc90 and f16nhwc config,
#         graph batches: training data for the H200 models (scripts/device_s36.sh).
#   else: no GPU work: the leave-out of i8nhwc90 (FAMILY) with the `tiles` feature set at its shipped report's protocol
#         (that report's command, --features tiles) on the machine's CPUs (scripts/device_lono.sh), resumable.
#   JOBS (6), THREADS (2 inner CV folds each), OMP (1) and FOLDS ("0 1 2": --only-folds, for a family whose folds do not
#   all finish in one call; session 42's f16nhwc90 at 6 x 2 finished none in 575 s) set how the leave-out runs.
#   KEEP="sweeps/runs/s31/dilated.csv <the family's leave-out sweeps>" bash scripts/device_tree.sh slim; then this
#   (carry .whl/nvidia_cutlass-4.2.0.0-py3-none-any.whl, .whl/sk, .whl/np; lono-parts when it holds folds); in $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
if [[ $gpu == *H200* ]]; then
  exec bash scripts/device_s36.sh
fi
fam=${FAMILY:-i8nhwc90}
# the shipped report's command less where it ran (jobs, threads, parts, out), plus the feature set
args=$(python3 -c "
import shlex, sys
from predictor.report_header import report_command
cmd, out, skip = report_command('reports/lono/h200-$fam', 'predictor.lono'), [], 0
for a in cmd:
    if skip: skip -= 1; continue
    if a in ('--jobs', '--threads', '--parts', '--out'): skip = 1; continue
    out.append(a)
print(shlex.join(out + ['--features', 'tiles', '--jobs', '${JOBS:-6}']))")
[ -n "${FOLDS:-}" ] && args="$args --only-folds $FOLDS"  # a subset of the folds, kept in lono-parts (carry it back)
echo "lono args: $args"
BUDGET=${BUDGET:-575} THREADS=${THREADS:-2} OMP=${OMP:-1} exec bash scripts/device_lono.sh "$OUT" "tiles-$fam" "$args"

#!/usr/bin/env bash
# Leave-network-group-out runs on the device machine's CPU cores, side by side, resumable across calls:
#   bash scripts/device_lono.sh OUTDIR NAME 'LONO ARGS' [NAME 'LONO ARGS' ...]
# (carry [".whl", "lono-parts"]; lono-parts/ is git-ignored). Each NAME runs
#   python -m predictor.lono LONO ARGS --out OUTDIR/NAME --parts lono-parts/NAME
# with OMP_NUM_THREADS=${OMP:-1} until the call's time is nearly up (THREADS, default 3, inner CV folds per process;
# the LONO ARGS give --jobs; OMP: OpenMP threads of each cost teacher, whose result does not depend on them, see
# tests/test_cost_teacher.py: raise it when jobs x THREADS leaves cores idle, e.g. one fold per call). Finished held-out folds are copied back to OUTDIR/parts-NAME (the device tool brings back
# files at most two folders below its output folder): put them in lono-parts/NAME here and call again to finish
# the run; the result does not depend on where it stopped. Do not carry lono-parts when it is empty here: a carried
# path replaces the device's copy. To share one run between the device and this machine, give each its folds
# (LONO ARGS '... --only-folds 0 1 2' there, '--only-folds 3 4 5' here, same --parts name), then run once more
# without --only-folds here to write the report from the kept folds.
set -uo pipefail
out=${1:?usage: device_lono.sh OUTDIR NAME 'LONO ARGS' ...}; shift
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
device_start "$out" "${BUDGET:-580}"
names=()
while [ $# -ge 2 ]; do
  name=$1 args=$2; shift 2; names+=("$name")
  mkdir -p "lono-parts/$name"
  # shellcheck disable=SC2086  # ARGS is a list of options
  OMP_NUM_THREADS=${OMP:-1} timeout $(( $(left) - 15 )) python3 -m predictor.lono $args --threads "${THREADS:-3}" \
    --out "$out/$name" --parts "lono-parts/$name" > "/tmp/logs/lono-$name.log" 2>&1 &
done
wait
for name in "${names[@]}"; do
  mkdir -p "$out/parts-$name"; cp lono-parts/"$name"/*.json "$out/parts-$name/" 2>/dev/null
  echo "$name: $(ls "$out/parts-$name" | wc -l) folds kept; $(tail -1 "/tmp/logs/lono-$name.log")"
  [ -f "$out/$name/REPORT.md" ] && grep -A2 "^| family | model | layers" "$out/$name/REPORT.md" | tail -1
done
echo "$(left) s left"
tar -czf "$out/logs.tgz" -C /tmp logs

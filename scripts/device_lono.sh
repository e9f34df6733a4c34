#!/usr/bin/env bash
# Leave-network-group-out runs on the device machine's CPU cores, side by side, resumable across calls:
#   bash scripts/device_lono.sh OUTDIR NAME 'LONO ARGS' [NAME 'LONO ARGS' ...]
# (carry [".whl", "lono-parts"]; lono-parts/ is git-ignored). Each NAME runs
#   python -m predictor.lono LONO ARGS --out OUTDIR/NAME --parts lono-parts/NAME
# with OMP_NUM_THREADS=${OMP:-1} until the call's time is nearly up (THREADS, default 3, inner CV folds per process;
# the LONO ARGS give --jobs; OMP: OpenMP threads of each cost teacher, whose result does not depend on them, see
# tests/test_cost_teacher.py: raise it when jobs x THREADS leaves cores idle, e.g. one fold per call). Finished held-out
# folds (lono-parts/NAME/), the reports and the logs come back as one tar, OUTDIR/lono.tgz (the device tool brings
# back at most 8 files): unpack its lono-parts here and call again to finish
# the run; the result does not depend on where it stopped. Do not carry lono-parts when it is empty here: a carried
# path replaces the device's copy. To share one run between the device and this machine, give each its folds
# (LONO ARGS '... --only-folds 0 1 2' there, '--only-folds 3 4 5' here, same --parts name), then run once more
# without --only-folds here to write the report from the kept folds.
set -uo pipefail
out=${1:?usage: device_lono.sh OUTDIR NAME 'LONO ARGS' ...}; shift
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
# this machine's scikit-learn (and numpy / pandas), carried as cp312 wheels under .whl/sk, .whl/np, if there
for w in .whl/sk .whl/np; do install_wheels "$w" || { echo "$w install failed"; exit 1; }; done
device_start "$out" "${BUDGET:-580}"
python3 -c "import sys, sklearn, numpy, pandas; print(sys.version.split()[0], 'sklearn', sklearn.__version__, 'numpy', numpy.__version__, 'pandas', pandas.__version__)" >> "$out/env.txt"
grep -m1 "model name" /proc/cpuinfo >> "$out/env.txt"; grep -m1 -o "avx512f" /proc/cpuinfo >> "$out/env.txt"
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
  echo "$name: $(ls lono-parts/"$name" | wc -l) folds kept; $(tail -1 "/tmp/logs/lono-$name.log")"
  [ -f "$out/$name/REPORT.md" ] && grep -A2 "^| family | model | layers" "$out/$name/REPORT.md" | tail -1
done
echo "$(left) s left"
# one file back (the tool returns at most 8): the kept folds (lono-parts/NAME/), the reports (NAME/) and the logs
rm -rf /tmp/back; mkdir -p /tmp/back; cp -r lono-parts /tmp/back/; cp -r /tmp/logs /tmp/back/  # a warm machine keeps /tmp
for name in "${names[@]}"; do [ -d "$out/$name" ] && mv "$out/$name" /tmp/back/; done
tar -czf "$out/lono.tgz" -C /tmp/back .

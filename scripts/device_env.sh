# Sourced by the device scripts (run from the repo root on the GPU machine, which has no network):
# installs the carried nvidia-cutlass wheel from .whl/ if present and puts it and the repo on PYTHONPATH.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD

# install_wheels DIR: the carried wheels in DIR (if any) installed into /tmp/site, which goes first on PYTHONPATH.
install_wheels() {
  ls "$1"/*.whl >/dev/null 2>&1 || return 0
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$1"/*.whl \
    || return 1
  export PYTHONPATH=/tmp/site:$PWD
}
install_wheels .whl || return 1

# record_env FILE: the machine a run measured on (date, GPU and clocks, nvcc, cores, torch and cuDNN) into FILE.
record_env() {
  {
    date -u +%FT%TZ
    nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv
    nvcc --version | tail -1
    nproc
    python3 -c "import torch; print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version())"
  } > "$1" 2>&1
}

# ensure_dispatcher SOURCE LIB [SECONDS]: build the generated dispatcher SOURCE (sm_90a, all cores) into LIB
# unless it was carried; logs to /tmp/logs/build.log.
ensure_dispatcher() {
  [ -f "$2" ] && return 0
  mkdir -p "$(dirname "$2")" /tmp/logs
  timeout "${3:-400}" python3 -m predictor.dispatcher build "$1" --arch sm_90a --jobs "$(nproc)" --out "$2" \
    > /tmp/logs/build.log 2>&1
  local rc=$?; echo "build $2 rc=$rc at $(date +%T)"; return $rc
}

# step NAME SECONDS CMD...: run CMD with a time limit, its output to /tmp/logs/NAME.log, then say how it ended.
step() {
  local name=$1 secs=$2; shift 2
  mkdir -p /tmp/logs
  timeout "$secs" "$@" > "/tmp/logs/$name.log" 2>&1
  local rc=$?; echo "$name rc=$rc at $(date +%T)"; return $rc
}

# device_start OUTDIR [SECONDS]: the common start of a device call: the call's clock (`left` prints the seconds
# left of SECONDS, default 580), OUTDIR and /tmp/logs made, the machine recorded in OUTDIR/env.txt.
device_start() {
  DEVICE_T0=$(date +%s); DEVICE_BUDGET=${2:-580}
  mkdir -p "$1" /tmp/logs
  record_env "$1/env.txt"
}
left() { echo $(( DEVICE_BUDGET - ($(date +%s) - DEVICE_T0) )); }

# collect_run NAME LIMIT OUTFILE ARGS...: one collector run (`python3 -m predictor.collect --quiet ARGS`, all
# cores) into OUTFILE, stopping within LIMIT seconds or the call's time left less 15 s (resumable: its parts in
# build/parts/NAME, which a warm machine keeps for the next call); log /tmp/logs/NAME.log; prints how it ended.
# The collector's --time-limit is checked between problems, so a build may run past LIMIT: only the call's time
# left (less 10 s) kills it, and a build that finished is cached (build dir) for the next run.  Needs device_start.
collect_run() {
  local name=$1 lim=$2 outfile=$3; shift 3
  local l; l=$(left); [ "$lim" -gt $(( l - 15 )) ] && lim=$(( l - 15 ))
  if [ "$lim" -lt 20 ]; then echo "$name: no time left"; return 0; fi
  echo "$name start $(date +%T), limit $lim s"
  mkdir -p build/parts
  timeout $(( $(left) - 10 )) python3 -m predictor.collect --quiet "$@" --jobs "$(nproc)" --out "$outfile" \
    --parts "build/parts/$name" --time-limit "$lim" > "/tmp/logs/$name.log" 2>&1
  echo "$name exit $? at $(date +%T)"; grep -v "nvcc sm_90\|cannot run" "/tmp/logs/$name.log" | tail -2
}

# GEMM90_1X1_BEST: the grid's 11 fastest f16gemm90 configs on the 1x1 layers of ResNet-50 / YOLOv8m-like / U-Net at
# N = 8, 32, the reference set of the 1x1 experiments (scripts/device_s21_*.sh, device_s22_sched.sh,
# device_s23_nosrc.sh): predictor.space.F16_GEMM90_1X1_BEST.
mapfile -t GEMM90_1X1_BEST < <(python3 -c "from predictor.space import F16_GEMM90_1X1_BEST as b; print(*b, sep=chr(10))")

# sched_patch HEADER: make the (device copy of the) GEMM runtime header take its persistent tile scheduler's
# rasterisation from the environment at each run: PK_SWIZZLE (max_swizzle_size: 1, 2, 4, 8) and PK_RASTER (0
# CUTLASS's heuristic, 1 along M, 2 along N); unset, the defaults the package uses (1, heuristic)
# (scripts/device_s22_sched.sh).  Fails if the line it follows is gone.
sched_patch() {
  grep -q "^    args.hw_info = hardware();" "$1" || { echo "sched_patch: $1 has no hw_info line"; return 1; }
  sed -i 's|^    args.hw_info = hardware();|&\
    if (const char* e = std::getenv("PK_SWIZZLE")) args.scheduler.max_swizzle_size = std::atoi(e);  // sched_patch\
    if (const char* e = std::getenv("PK_RASTER")) {\
      using RO = cutlass::gemm::kernel::detail::RasterOrderOptions;\
      const int v = std::atoi(e);\
      args.scheduler.raster_order = v == 1 ? RO::AlongM : v == 2 ? RO::AlongN : RO::Heuristic;\
    }|' "$1"
  sed -i 's|^#include "pk_runtime.h"  // PkProblem.*|#include <cstdlib>\n&|' "$1"
}

# pdl_patch HEADER: make the (device copy of the) GEMM runtime header launch with programmatic dependent launch
# (GemmUniversalAdapter::run(stream, nullptr, true)); only correct for kernels built with
# -DCUTLASS_ENABLE_GDC_FOR_SM90 (scripts/device_s21_pdl.sh).  Fails if the line it replaces is gone.
pdl_patch() {
  grep -q "    return op.run(stream);" "$1" || { echo "pdl_patch: $1 has no op.run(stream) line"; return 1; }
  sed -i 's/    return op.run(stream);/    return op.run(stream, nullptr, true);  \/\/ PDL (pdl_patch)/' "$1"
}

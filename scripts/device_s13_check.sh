#!/usr/bin/env bash
# Session 13, on nvidia-h200 (one GPU), from the repo root; carry [".whl"]:   bash scripts/device_s13_check.sh OUTDIR
# The shipped routed fp16 choice's dispatcher, retrained with f16gemm90's 12 session-13 configs (two of its kernels
# are 96-wide tiles): build it (all cores), run through the PyTorch op the 1x1 layers its model sends to those two
# kernels (checked against cuDNN's output), then tests/test_tuning_gpu.py through it.
set -uo pipefail
out=${1:?usage: device_s13_check.sh OUTDIR}
source scripts/device_env.sh > /dev/null || { echo "wheel install failed"; exit 1; }
mkdir -p "$out" /tmp/logs
record_env "$out/env-check.txt"
L=build/f16c3w/h200_choice3_sm_90a.so
ensure_dispatcher export/dispatch_f16_choice3/h200_dispatch.cu $L 150 || { tail -20 /tmp/logs/build.log; exit 1; }
python3 - "$L" <<'PY' 2>&1 | tee "$out/check.txt"
import sys, torch, torch.nn.functional as F
from predictor import select, torch_conv
fam = "f16nhwc+f16nhwc90+f16gemm90"
torch_conv.load(sys.argv[1], [fam])
for n, c, h, k in ((1, 64, 160, 80), (8, 96, 160, 96), (32, 192, 40, 80), (1, 256, 80, 160), (8, 384, 80, 192),
                   (32, 256, 20, 160)):
    s = select(n, c, h, h, k, 1, 1, stride=1, pad=0, gpu="h200", family=fam)
    x = torch.randn(n, c, h, h, device="cuda", dtype=torch.half).to(memory_format=torch.channels_last)
    w = torch.randn(k, c, 1, 1, device="cuda", dtype=torch.half).to(memory_format=torch.channels_last)
    y = torch.ops.predictor.conv2d(x, w, 1, 0, 1, fam, 132, False)
    ref = F.conv2d(x, w)
    err = float((y.float() - ref.float()).norm() / ref.float().norm())
    print(f"n{n} c{c} {h}x{h} k{k}: {s.name}: rel. error {err:.1e} {'ok' if err < 2e-2 else 'WRONG'}")
PY
PREDICTOR_DISPATCHER=$L timeout 60 python3 -m pytest -q -p no:cacheprovider -rs tests/test_tuning_gpu.py \
  > "$out/test_tuning_gpu.txt" 2>&1
echo "test_tuning_gpu rc=$? at $(date +%T)"; tail -2 "$out/test_tuning_gpu.txt"

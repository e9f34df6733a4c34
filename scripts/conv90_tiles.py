"""Print the names of an experiment's f16nhwc90 configs outside the grid (``collect --extra-configs``): tile K 32
(the grid's is 64) on the grid's most-chosen tiles, and tiles with N 32 or 96.  cuDNN's Hopper conv kernels run the
layers where we lose most -- 3x3 layers with 32-96 channels (U-Net at 256-512 px, YOLO's C = 96 / 288) and
ResNet-50's C = 128 3x3 -- with ``sm90_xmma_fprop_implicit_gemm_..._tilesize256x96x32``, ``128x128x32`` and N 32
tiles (``bench/vendor_layers/h200-netlayers-choice3n-sums.md``): with tile K 64 a layer of 32 or 96 input channels
loads and multiplies 1/2 or 1/4 zeros at each filter tap, and with tile N 64 a layer of 32 output channels wastes half
of every wgmma.

    python scripts/conv90_tiles.py        # one name a line
    python scripts/conv90_tiles.py --report sweeps/runs/s14/conv90.parquet \\
        --cudnn bench/vendor_layers/h200-netlayers-choice3n-heuristic.csv > sweeps/runs/s14/conv90.md
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from gemm_wave_tiles import main  # noqa: E402
from predictor.config import Family, KernelConfig  # noqa: E402
from predictor.space import runs_on  # noqa: E402

FAMILY = Family.F16_NHWC_SM90
#: (tile M, N, K, cluster M, stages; 0: automatic).
TILES = (
    # tile K 32 on the grid's tiles most often fastest on these layers
    (64, 128, 32, 1, 0), (128, 64, 32, 1, 0), (64, 64, 32, 1, 0), (128, 128, 32, 1, 0), (128, 192, 32, 1, 0),
    (64, 256, 32, 1, 0), (256, 64, 32, 1, 0), (256, 96, 32, 1, 0), (256, 128, 32, 1, 0), (128, 256, 32, 1, 0),
    (128, 192, 32, 2, 0), (256, 96, 32, 2, 0), (128, 128, 32, 2, 0),
    # the grid's shallow pipelines (4 stages of K 64, two blocks an SM) at K 32
    (64, 128, 32, 1, 8), (128, 64, 32, 1, 8), (64, 64, 32, 1, 8),
    # N 32 (32 output channels) and N 96
    (256, 32, 64, 1, 0), (128, 32, 64, 1, 0), (64, 32, 64, 1, 0), (256, 32, 32, 1, 0), (128, 32, 32, 1, 0),
    (128, 96, 64, 1, 0), (64, 96, 64, 1, 0), (128, 96, 32, 1, 0),
)


def configs() -> list[KernelConfig]:
    """The experiment's configs (:data:`TILES`), the warp-specialized implicit-GEMM kernel with the TMA epilogue."""
    out = [KernelConfig.sm90(FAMILY, (m, n, k), (cm, 1, 1), st) for m, n, k, cm, st in TILES]
    return [c for c in dict.fromkeys(out) if runs_on(c, "sm_90")]


if __name__ == "__main__":
    main(__doc__, configs, "f16nhwc90 configs outside the grid: tile K 32, tile N 32 and 96", "scripts/conv90_tiles.py")

"""Print the names of an experiment's f16gemm90 configs outside the grid (``collect --extra-configs``): the
transposed kernels (``KernelConfig.swap_ab``: D^T = filter x activations^T, so the tile's M runs over the output
channels and its N over the pixels) with the grid's large tiles.  The grid transposes only tiles with N of 8-32
(layers with few pixels).  cuDNN's nvjet kernels run ResNet-50's 1x1 layers at N = 32 in both orientations
(``..._TNT`` and ``..._TNN`` in ``bench/vendor_layers/h200-netlayers-choice3n-heuristic.csv``) with tiles such as
256x128, 128x256 and 64x384 and 1x2 / 2x1 clusters, 10-25% faster than the grid's fastest config: is the
orientation the difference?

    python scripts/gemm_swap_tiles.py        # one name a line
    python scripts/gemm_swap_tiles.py --report sweeps/runs/s21/swap.parquet \\
        --cudnn bench/vendor_layers/h200-netlayers-choice3n-heuristic.csv > sweeps/runs/s21/swap.md
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from gemm_wave_tiles import main  # noqa: E402
from predictor.config import EpilogueSchedule, Family, KernelConfig, KernelSchedule  # noqa: E402
from predictor.space import grid_spec, runs_on  # noqa: E402

FAMILY = Family.F16_GEMM_SM90
PP, COOP = KernelSchedule.TmaWarpSpecializedPingpong, KernelSchedule.TmaWarpSpecializedCooperative
#: (kernel schedule, tile M x N, cluster, epilogue subtile (0, 0): CUTLASS's automatic one), all transposed.
TILES = (
    (COOP, (128, 128), (1, 1, 1), (0, 0)), (COOP, (256, 128), (1, 1, 1), (0, 0)),
    (COOP, (128, 256), (1, 1, 1), (0, 0)), (COOP, (256, 64), (1, 1, 1), (0, 0)),
    (COOP, (128, 192), (1, 1, 1), (0, 0)), (COOP, (256, 96), (1, 1, 1), (0, 0)),
    (COOP, (256, 128), (1, 2, 1), (0, 0)), (COOP, (256, 128), (2, 1, 1), (0, 0)),
    (COOP, (128, 256), (1, 2, 1), (0, 0)), (COOP, (128, 256), (2, 1, 1), (0, 0)),
    (COOP, (256, 128), (1, 1, 1), (128, 64)), (COOP, (128, 256), (1, 1, 1), (128, 64)),
    (PP, (64, 128), (1, 1, 1), (0, 0)), (PP, (64, 256), (1, 1, 1), (0, 0)),
    (PP, (128, 128), (1, 1, 1), (0, 0)), (PP, (128, 64), (1, 1, 1), (0, 0)),
    (PP, (64, 192), (1, 1, 1), (0, 0)), (PP, (128, 128), (1, 1, 1), (64, 64)),
)


def configs() -> list[KernelConfig]:
    """The experiment's configs (:data:`TILES`): transposed, automatic stages, the persistent tile scheduler."""
    tile_k = grid_spec(FAMILY).tile_k
    out = []
    for ks, mn, cluster, epi in TILES:
        es = EpilogueSchedule.TmaWarpSpecializedCooperative if ks is COOP else EpilogueSchedule.TmaWarpSpecialized
        out.append(KernelConfig.sm90(FAMILY, (mn[0], mn[1], tile_k), cluster, kernel_schedule=ks,
                                     epilogue_schedule=es, swap_ab=True, epi_tile=epi))
    return [c for c in dict.fromkeys(out) if runs_on(c, "sm_90")]


if __name__ == "__main__":
    main(__doc__, configs, "f16gemm90 configs outside the grid: the transposed kernels with large tiles",
         "scripts/gemm_swap_tiles.py")

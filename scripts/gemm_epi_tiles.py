"""Print the names of an experiment's f16gemm90 configs outside the grid (``collect --extra-configs``): the grid's
GEMM tiles most often picked for network 1x1 layers with the epilogue's subtile fixed (``KernelConfig.epi_tile``)
instead of CUTLASS's ``EpilogueTileAuto`` (128x32 for the cooperative kernels, 64x32 for ping-pong: a 64-byte row
segment of fp16 output a store).  ResNet-50's 1x1 expansion layers at N = 32 write 25-51 MB for every 6-13 MB they
read, and cuDNN's nvjet kernels with the same tiles run them 15-25% faster than ours
(``bench/vendor_layers/h200-netlayers-choice3n-sums.md``): is the epilogue's store the difference?

    python scripts/gemm_epi_tiles.py        # one name a line
    python scripts/gemm_epi_tiles.py --report sweeps/runs/s14/epi.parquet \\
        --cudnn bench/vendor_layers/h200-netlayers-choice3n-heuristic.csv > sweeps/runs/s14/epi.md
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from gemm_wave_tiles import main  # noqa: E402
from predictor.config import EpilogueSchedule, Family, KernelConfig, KernelSchedule  # noqa: E402
from predictor.space import runs_on  # noqa: E402

FAMILY = Family.F16_GEMM_SM90
PP, COOP = KernelSchedule.TmaWarpSpecializedPingpong, KernelSchedule.TmaWarpSpecializedCooperative
#: (kernel schedule, tile M x N, epilogue subtiles).  The run (``sweeps/runs/s14/epi.parquet``) also held ping-pong
#: 128x128, 256x64 and 128x64 with a 128x64 subtile, which did not compile (CUTLASS's SM90 epilogue builder: M 64 for
#: one warp group, 128 for the cooperative kernel); ``KernelConfig`` now refuses them.
TILES = (
    (PP, (128, 128), ((64, 64), (64, 128))), (PP, (256, 64), ((64, 64),)),
    (PP, (128, 64), ((64, 64),)), (PP, (64, 128), ((64, 64), (64, 128))),
    (COOP, (256, 128), ((128, 64), (128, 128))), (COOP, (256, 64), ((128, 64),)), (COOP, (256, 96), ((128, 96),)),
    (COOP, (128, 96), ((128, 96),)), (COOP, (128, 256), ((128, 64),)),
)


def configs() -> list[KernelConfig]:
    """The experiment's configs (:data:`TILES`): cluster 1x1, automatic stages, the persistent tile scheduler."""
    out = []
    for ks, mn, epis in TILES:
        es = EpilogueSchedule.TmaWarpSpecializedCooperative if ks is COOP else EpilogueSchedule.TmaWarpSpecialized
        out += [KernelConfig.sm90(FAMILY, (mn[0], mn[1], 64), kernel_schedule=ks, epilogue_schedule=es, epi_tile=e)
                for e in epis]
    return [c for c in dict.fromkeys(out) if runs_on(c, "sm_90")]


if __name__ == "__main__":
    main(__doc__, configs, "f16gemm90 configs outside the grid: the epilogue's subtile fixed", "scripts/gemm_epi_tiles.py")

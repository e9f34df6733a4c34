"""Print the names of an experiment's f16gemm90 configs outside the grid (``collect --extra-configs``): tiles whose
N is a multiple of 32 but not a power of two (96, 160, 224), cluster 1x1, with the schedules ``space.gemm_grid``
gives a tile of their size (ping-pong and warp-specialized up to 128x128, cooperative and stream-K from tile M 128),
and the grid's 256x128 / 128x256 cooperative tiles with 2x2 and 4x1 clusters.  cuDNN's Hopper GEMM kernels
(nvjet) run ResNet-50's 1x1 layers with tiles such as 128x96, 128x224, 64x112 and 128x192 and clusters up to 4x2
(``bench/vendor_layers/*-ref-heuristic-*.csv``, column ``cudnn_kernels``), where the grid's powers of two leave a
partial last wave.

    python scripts/gemm_wave_tiles.py        # one name a line
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from predictor.config import EpilogueSchedule, Family, KernelConfig, KernelSchedule, TileScheduler  # noqa: E402
from predictor.space import grid_spec, runs_on  # noqa: E402

FAMILY = Family.F16_GEMM_SM90
WAVE_TILES = ((64, 96), (64, 160), (64, 224), (128, 96), (128, 160), (128, 224), (256, 96))
CLUSTER_TILES = (((256, 128), (2, 2, 1)), ((256, 128), (4, 1, 1)), ((128, 256), (2, 2, 1)), ((128, 256), (4, 1, 1)))


def configs() -> list[KernelConfig]:
    knobs = grid_spec(FAMILY)
    pp, coop, ws = (KernelSchedule.TmaWarpSpecializedPingpong, KernelSchedule.TmaWarpSpecializedCooperative,
                    KernelSchedule.TmaWarpSpecialized)
    out: list[KernelConfig] = []

    def add(mn, ks, es, cluster=(1, 1, 1), ts=TileScheduler.Default) -> None:  # type: ignore[no-untyped-def]
        c = KernelConfig.sm90(FAMILY, (mn[0], mn[1], knobs.tile_k), cluster, 0, ks, es, ts)
        if runs_on(c, "sm_90") and c not in out:
            out.append(c)

    for mn in WAVE_TILES:
        if mn[0] * mn[1] <= knobs.one_group_max_mn:
            add(mn, pp, EpilogueSchedule.TmaWarpSpecialized)
            add(mn, ws, EpilogueSchedule.NoSmemWarpSpecialized)
        if mn[0] >= 128:
            add(mn, coop, EpilogueSchedule.TmaWarpSpecializedCooperative)
            add(mn, coop, EpilogueSchedule.TmaWarpSpecializedCooperative, ts=TileScheduler.StreamK)
    for mn, cluster in CLUSTER_TILES:
        add(mn, coop, EpilogueSchedule.TmaWarpSpecializedCooperative, cluster)
    return out


if __name__ == "__main__":
    print("\n".join(c.name for c in configs()))

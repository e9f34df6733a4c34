"""A family's measurements ready to evaluate, the hyper-parameter grids and the run settings."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import Family, KernelConfig
from ..features import DEFAULT_FEATURE_SET, DEFAULT_SMS, FEATURE_SETS, LIMITS
from ..fitting import DEPTH_GRID, MIN_LEAF_GRID, WEIGHTINGS
from ..portfolio import ShapeTable, TrainError, build_table, eligible_rows

#: Shapes whose ``source`` starts with one of these are the held-out real-network layers.
HOLDOUT_PREFIXES = ("net:",)


@dataclass(frozen=True)
class HyperGrid:
    """Hyper-parameter grid handed to the trainer (``k_grid=None``: the trainer's default)."""

    name: str
    k_grid: tuple[int, ...] | None
    depth_grid: tuple[int, ...]
    min_leaf_grid: tuple[int, ...]
    weightings: tuple[str, ...]

    def describe(self) -> str:
        """One line for the report."""
        k = "trainer default (K_GRID up to --max-portfolio)" if self.k_grid is None else list(self.k_grid)
        return (f"`{self.name}`: k {k}, max_depth {list(self.depth_grid)}, min_samples_leaf "
                f"{list(self.min_leaf_grid)}, weighting {list(self.weightings)}")


GRIDS: dict[str, HyperGrid] = {
    "trainer": HyperGrid("trainer", None, tuple(DEPTH_GRID), tuple(MIN_LEAF_GRID), tuple(WEIGHTINGS)),
    "small": HyperGrid("small", (2, 4, 8, 12), (3, 5, 7, 10), (2, 8), ("uniform", "regret")),
}


@dataclass
class Settings:
    """The settings of one evaluation run (the sweep, its sha256 and the trainer's options)."""

    sweep: Path
    sha: str
    folds: int
    seed: int
    grid: HyperGrid
    k_max: int
    max_portfolio: int
    tolerance: float


def short_name(name: str) -> str:
    """Compact config name for tables/CSV: tile, warp, stages, swizzle, iterator, split-k (the
    family fixes instruction, alignment and epilogue)."""
    c = KernelConfig.from_name(name)
    sk = "" if c.split_k_slices == 1 else f"_sk{c.split_k_slices}"
    it = "" if c.iterator.value == "optimized" else f"_{c.iterator.value}"
    return (f"{'x'.join(map(str, c.tb))}_w{'x'.join(map(str, c.warp))}_s{c.stages}"
            f"{'' if c.swizzle.value == 1 else f'_sw{c.swizzle.value}'}{it}{sk}")


def tile_name(name: str) -> str:
    """The threadblock tile of a config name, e.g. ``"128x128x64"``."""
    return "x".join(map(str, KernelConfig.from_name(name).tb))


@dataclass
class FamilyData:
    """One family's measurements, ready to evaluate."""

    family: Family
    rows: pd.DataFrame  # all rows of the family (any status)
    table: ShapeTable  # eligible rows, every shape with at least one ok row
    dropped: int
    sms: int
    gpu: str
    configs: list[KernelConfig]
    gemm: np.ndarray  # (n, 3) implicit GEMM M, N, K
    X: np.ndarray  # (n, F) features
    net: np.ndarray  # (n,) bool: held-out real-network layer
    sweep_configs: int = 0  # configs of the family in the sweep (eligible or not)

    def gemm_of(self, i: int) -> tuple[int, int, int]:
        """Implicit GEMM (M, N, K) of shape ``i``."""
        m, n, k = (int(v) for v in self.gemm[i])
        return (m, n, k)

    def problems(self) -> list[tuple[int, int, int]]:
        """The distinct implicit GEMMs of the family, sorted."""
        return sorted({self.gemm_of(i) for i in range(self.table.n_shapes)})

    def index(self, name: str | None) -> int:
        """Column of config ``name`` in the family's table (-1: none or not eligible)."""
        if name is None:
            return -1
        j = self.table.config_index(name)
        return -1 if j is None else j


def load_family(df: pd.DataFrame, family: Family) -> FamilyData:
    """Eligible rows of ``family`` as a :class:`FamilyData` (raises ``TrainError`` if unusable)."""
    fam_rows = df[df["family"] == family.value]
    rows = eligible_rows(fam_rows)
    if rows.empty:
        raise TrainError(f"{family.value}: no rows with status == 'ok' and verified == True")
    gpus = sorted(set(rows["gpu"].astype(str)))
    if len(gpus) != 1:
        raise TrainError(f"{family.value}: the sweep mixes GPUs {gpus}")
    sms = int(rows["sms"].astype(int).value_counts().index[0])
    lo, hi = LIMITS["sms"]
    if not lo <= sms <= hi:
        sms = DEFAULT_SMS
    table, dropped = build_table(rows, sms)
    feats = table.features()
    gemm = feats[["gemm_m", "gemm_n", "gemm_k"]].to_numpy(dtype=np.int64)
    net = np.array([any(s.startswith(p) for p in HOLDOUT_PREFIXES) for s in table.sources], dtype=bool)
    return FamilyData(family, fam_rows, table, dropped, sms, gpus[0],
                      [KernelConfig.from_name(c) for c in table.configs], gemm,
                      feats.to_numpy(dtype=np.int64)[:, :len(FEATURE_SETS[DEFAULT_FEATURE_SET])], net,
                      int(fam_rows["config"].nunique()))

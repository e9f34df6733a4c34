"""The methods compared, their picks on a set of held-out shapes, and the scores: per method
(geomean, P10, worst, exact, missing, distribution buckets) and per shape."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..portfolio import ShapeTable, metrics, picked_times
from ..schema import SHAPE_COLUMNS
from .data import FamilyData, short_name
from .picks import missing_mask

#: Method key -> label, in report order.
METHODS: dict[str, str] = {
    "tree": "our tree (trained portfolio)",
    "portfolio_oracle": "portfolio oracle (best member)",
    "best_single": "best single config (training shapes)",
    "seed": "SEED_CONFIG",
    "generator_default": "cutlass_library generator default",
    "wave": "wave-quantisation heuristic",
    "nvmmh_top1": "nvMatmulHeuristics top-1 (snapped)",
    "nvmmh_topk": "nvMatmulHeuristics best of top-k (snapped)",
    "nvmmh_model": "nvMatmulHeuristics perf model over our grid",
    "nvmmh_top1_alt": "nvMatmulHeuristics top-1, alt. precision (sensitivity)",
}
#: The baselines our tree should beat (geomean and P10), per the evaluation issue.
TARGET_BASELINES = ("nvmmh_top1", "seed", "best_single")
TARGET_ORACLE_FRACTION = 0.98
BUCKETS = ((1.0, 1.0 + 1e-12, "exact"), (0.99, 1.0, "[0.99, 1)"), (0.95, 0.99, "[0.95, 0.99)"),
           (0.90, 0.95, "[0.90, 0.95)"), (0.80, 0.90, "[0.80, 0.90)"), (0.50, 0.80, "[0.50, 0.80)"),
           (0.0, 0.50, "< 0.50"))


@dataclass
class SetResult:
    """Picks of every method on one set of held-out shapes."""

    name: str
    table: ShapeTable
    idx: np.ndarray  # rows of the family's full table
    picks: dict[str, np.ndarray] = field(default_factory=dict)
    fold: np.ndarray | None = None

    def metrics(self) -> dict[str, dict[str, Any]]:
        """Per method (in :data:`METHODS` order): the summary metrics, ``missing`` and ``buckets``."""
        out = {}
        for m in METHODS:
            if m not in self.picks:
                continue
            t = picked_times(self.table, self.picks[m])
            base = metrics(self.table.oracle, t)
            if base is None:
                continue
            ratio = self.table.oracle / t
            out[m] = {**base, "missing": int(missing_mask(self.table, self.picks[m]).sum()),
                      "buckets": {label: float(np.mean((ratio >= lo) & (ratio < hi))) for lo, hi, label in BUCKETS}}
        return out


@dataclass
class FamilyEval:
    """Everything evaluated for one family: the two sets, the folds, the full model, the k curve."""

    data: FamilyData
    cv: SetResult
    net: SetResult
    folds: list[dict[str, Any]]
    shipped: dict[str, Any]  # summary of the model trained on all training shapes
    kcurve: dict[str, Any]
    nvmmh: dict[str, Any] | None
    seconds: dict[str, float]


def metrics_frame(evals: Sequence[FamilyEval]) -> pd.DataFrame:
    """One row per (family, set, method) with the summary metrics."""
    out = []
    for ev in evals:
        for res in (ev.cv, ev.net):
            for m, r in res.metrics().items():
                out.append({"family": ev.data.family.value, "set": res.name, "method": m,
                            **{k: r[k] for k in ("shapes", "geomean", "p10", "worst", "exact", "missing")},
                            **{f"share {b}": v for b, v in r["buckets"].items()}})
    return pd.DataFrame(out)


def per_shape_frame(evals: Sequence[FamilyEval]) -> pd.DataFrame:
    """One row per (family, set, shape): shape, implicit GEMM, oracle, every method's pick."""
    frames = []
    for ev in evals:
        d = ev.data
        for res in (ev.cv, ev.net):
            t = res.table
            if t.n_shapes == 0:
                continue
            f = pd.DataFrame({"family": d.family.value, "set": res.name,
                              "fold": res.fold if res.fold is not None else -1,
                              "shape_key": t.keys, "source": t.sources})
            for c in SHAPE_COLUMNS:
                f[c] = t.shapes[c].to_numpy()
            f["gemm_m"], f["gemm_n"], f["gemm_k"] = d.gemm[res.idx, 0], d.gemm[res.idx, 1], d.gemm[res.idx, 2]
            orc = np.nanargmin(t.times, axis=1)
            f["oracle_config"] = [short_name(t.configs[j]) for j in orc]
            f["oracle_us"] = np.round(t.oracle, 4)
            f["worst_us"] = np.round(t.worst, 4)
            for m in METHODS:
                if m not in res.picks:
                    continue
                p = res.picks[m]
                pt = picked_times(t, p)
                f[f"{m}_config"] = [short_name(t.configs[j]) if j >= 0 else "" for j in p]
                f[f"{m}_ratio"] = np.round(t.oracle / pt, 5)
                f[f"{m}_missing"] = missing_mask(t, p).astype(int)
            frames.append(f)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

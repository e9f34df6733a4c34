"""A cost model over (problem, config) pairs: the teacher of the ``cost`` model kind
(:mod:`predictor.fitting`).

One gradient-boosted regressor (scikit-learn's ``HistGradientBoostingRegressor``) learns the log-regret
``log(time / fastest time)`` of every (problem, config) pair from the problem's features
(:data:`predictor.features.FEATURE_NAMES`), the config's fields (:meth:`KernelConfig.to_dict`) and the tile
quantisation of the pair (CTAs, waves on the problem's SM count, the share of the padded GEMM extents and of
the last wave that does work).  A config is then described by what it *is*, not by its name: what the model
learns on one config's problems carries over to configs of similar tiles, which a tree over problem
features alone (one class per config) cannot do.  It is never exported; a tree learns its choices
(:func:`predictor.fitting._teacher_predictions`).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .config import KernelConfig
from .features import FEATURE_NAMES
from .portfolio import scalar_exp

#: The regressor's parameters (no early stopping: its validation split would depend on the row order).
PARAMS: dict[str, Any] = {"max_iter": 1000, "learning_rate": 0.1, "max_leaf_nodes": 63, "min_samples_leaf": 20,
                          "l2_regularization": 1.0, "early_stopping": False}

#: A weighted teacher's floor: pair weight ``exp(-log-regret / near) + NEAR_FLOOR`` (:class:`CostTeacher`).
NEAR_FLOOR = 0.1

_F = {f: i for i, f in enumerate(FEATURE_NAMES)}


def config_matrix(configs: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """(configs x fields) numeric description of ``configs`` (enums and flags as their rank among the
    values present, fields equal for all left out) and the field names."""
    import pandas as pd

    d = pd.DataFrame([KernelConfig.from_name(c).to_dict() for c in configs]).drop(columns=["name", "kernel_name"])
    for col in d.columns:
        if not pd.api.types.is_numeric_dtype(d[col]) or d[col].dtype == bool:
            d[col] = pd.factorize(d[col].astype(str), sort=True)[0]
    d = d.loc[:, d.nunique() > 1]
    return d.to_numpy(np.float64), list(d.columns)


def pair_matrix(X: np.ndarray, C: np.ndarray, fields: Sequence[str]) -> np.ndarray:
    """Rows (problem, config), problem-major: the problem's features, the config's fields and the pair's
    tile quantisation (log2 CTAs, log2 waves, last-wave and padding efficiency, log2 K iterations, and the
    log2 of the padded work)."""
    n, m = len(X), len(C)
    Xp = np.repeat(np.asarray(X, np.float64), m, axis=0)
    Cp = np.tile(C, (n, 1))
    col = {f: Cp[:, i] for i, f in enumerate(fields)}
    gm, gn, gk = Xp[:, _F["gemm_m"]], Xp[:, _F["gemm_n"]], Xp[:, _F["gemm_k"]]
    tm, tn, tk = (col.get(f, np.full(len(Xp), v)) for f, v in (("tb_m", 128.0), ("tb_n", 128.0), ("tb_k", 64.0)))
    if "swap_ab" in col:  # the transposed GEMM kernels tile the conv's K by tile M
        swap = col["swap_ab"] > 0
        gm, gn = np.where(swap, gn, gm), np.where(swap, gm, gn)
    ctas = np.ceil(gm / tm) * np.ceil(gn / tn) * col.get("split_k_slices", 1.0)
    sms = Xp[:, _F["sms"]]
    last_wave = ctas / (np.ceil(ctas / sms) * sms)
    pad = [g / (np.ceil(g / t) * t) for g, t in ((gm, tm), (gn, tn), (gk, tk))]
    useful = pad[0] * pad[1] * pad[2] * last_wave
    extra = np.stack([np.log2(ctas), np.log2(ctas / sms), last_wave, *pad, np.log2(np.ceil(gk / tk)), useful,
                      np.log2(gm * gn * gk / useful)], axis=1)
    return np.hstack([Xp, Cp, extra])


class CostTeacher:
    """The fitted cost model of ``configs``: :meth:`predict` gives every problem's predicted log-regret of
    each of them.  ``near`` > 0 weights each training pair ``exp(-log-regret / near) + NEAR_FLOOR``, so the
    pairs close to their problem's fastest config count more (0: every pair alike, the ``cost`` kinds)."""

    def __init__(self, configs: Sequence[str], seed: int = 0, near: float = 0.0):
        if near < 0:
            raise ValueError(f"near must be >= 0, got {near}")
        self.configs = tuple(configs)
        self.C, self.fields = config_matrix(self.configs)
        self.seed = seed
        self.near = near
        self.model: Any = None

    def fit(self, X: np.ndarray, regret: np.ndarray) -> "CostTeacher":
        """Learn from problems ``X`` (integer features) and their ``regret`` (problems x configs; a missing
        config counted at the problem's worst, as :func:`predictor.fitting.regret_matrix` does; large values
        clipped by the caller, :data:`predictor.fitting.REGRET_CLIP`)."""
        from sklearn.ensemble import HistGradientBoostingRegressor

        if regret.shape != (len(X), len(self.configs)):
            raise ValueError(f"regret is {regret.shape}, expected ({len(X)}, {len(self.configs)})")
        y = regret.ravel()
        weight = scalar_exp(-y / self.near) + NEAR_FLOOR if self.near > 0 else None
        self.model = HistGradientBoostingRegressor(random_state=self.seed, **PARAMS)
        self.model.fit(pair_matrix(X, self.C, self.fields), y, sample_weight=weight)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        """(problems x configs) predicted log-regret."""
        if self.model is None:
            raise ValueError("CostTeacher.predict before fit")
        return self.model.predict(pair_matrix(X, self.C, self.fields)).reshape(len(X), len(self.configs))


__all__ = ["CostTeacher", "config_matrix", "pair_matrix", "PARAMS", "NEAR_FLOOR"]

"""Perturbed copies of training problems: what the teacher kinds' students learn besides the problems
themselves (:mod:`predictor.fitting`)."""
from __future__ import annotations

import math

import numpy as np

from .features import ARGS, FEATURE_NAMES, frame
from .portfolio import scalar_exp, scalar_pow2


def synthetic_neighbours(X: np.ndarray, copies: int, seed: int) -> np.ndarray:
    """Feature rows of ``copies`` perturbed copies of every problem of ``X``: N, C, H, W and K scaled
    by log-uniform factors (N in 1..64; C and K keep the largest power of two up to 32 that divides
    both, so they stay runnable; H, W by up to 2x either way), the filter, stride, padding,
    dilation and SM count kept (so ``pointwise`` and the SM count stay as they were)."""
    import pandas as pd

    if copies <= 0 or not len(X):
        return np.zeros((0, X.shape[1]), dtype=np.int64)
    rng = np.random.default_rng(seed)
    raw = {a: np.repeat(X[:, FEATURE_NAMES.index(a)].astype(np.int64), copies) for a in ARGS}
    n = len(raw["N"])
    mult = np.gcd(np.gcd(raw["C"], raw["K"]), 32)
    # exp and 2**x from the C library, not numpy's SIMD loops (their last bit depends on the CPU: scalar_exp)
    scale = lambda lo, hi: scalar_exp(rng.uniform(math.log(lo), math.log(hi), n))  # noqa: E731
    raw["N"] = np.clip(np.rint(scalar_pow2(rng.uniform(0, 6, n))), 1, 64).astype(np.int64)
    for a in ("C", "K"):
        raw[a] = np.maximum(mult, np.rint(raw[a] * scale(0.5, 2.0) / mult).astype(np.int64) * mult)
    for a in ("H", "W"):
        raw[a] = np.maximum(np.rint(raw[a] * scale(0.5, 2.0)).astype(np.int64), 1)
    eff = (raw["R"] - 1) * raw["dilation"] + 1  # the output must keep at least one pixel
    raw["H"] = np.maximum(raw["H"], eff - 2 * raw["pad"])
    raw["W"] = np.maximum(raw["W"], (raw["S"] - 1) * raw["dilation"] + 1 - 2 * raw["pad"])
    return frame(pd.DataFrame(raw)).to_numpy(dtype=np.int64)[:, :X.shape[1]]  # X's features (its feature set)

"""Storage order of the int8 interleaved filter, as numpy index maps (no GPU needed).

CUTLASS's NCxHWx<32> kernels read the filter in ``TensorCxRSKx<32>`` order, **reordered** along K
by ``cutlass::reorder_convK<32>`` (cutlass/util/host_reorder.h): within each group of 32 output
channels, channel k is stored at ``reorder_perm32(k)``.  A dispatcher's users must store filters
this way; tests check this map against CUTLASS's own host function.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def reorder_perm32(k: int, xp: Any = np, **arange_kw: Any) -> Any:
    """Storage position of each output channel under ``reorder_convK<32>`` (``reorder_column<32>``:
    4 threads per quad, 2 elements each, 8 reordered elements per thread)."""
    if k % 32:
        raise ValueError(f"K={k} must be a multiple of 32")
    n = xp.arange(k, **arange_kw)
    return (n // 32) * 32 + ((n % 8) // 2) * 8 + ((n % 32) // 8) * 2 + (n % 2)


def filter_offsets(K: int, C: int, R: int, S: int, reorder: bool = True, xp: Any = np, **arange_kw: Any) -> Any:
    """int64 array of shape (K, C, R, S): where logical filter element [k, c, r, s] lives in the
    ``TensorCxRSKx<32>`` buffer (offset = c%32 + 32*(k' + K*(s + S*(r + R*(c//32))))), with
    k' = reorder_perm32(K)[k] when ``reorder``."""
    if C % 32:
        raise ValueError(f"C={C} must be a multiple of 32")
    i64 = xp.int64
    k = (reorder_perm32(K, xp, **arange_kw) if reorder else xp.arange(K, **arange_kw)).reshape(K, 1, 1, 1)
    c = xp.arange(C, dtype=i64, **arange_kw).reshape(1, C, 1, 1)
    r = xp.arange(R, dtype=i64, **arange_kw).reshape(1, 1, R, 1)
    s = xp.arange(S, dtype=i64, **arange_kw).reshape(1, 1, 1, S)
    return c % 32 + 32 * (k + K * (s + S * (r + R * (c // 32))))

"""Choose the fastest CUTLASS conv2d kernel configuration from real measurements.

``predictor.select(N, C, H, W, K, R, S, ...)`` returns the :class:`KernelConfig` the shipped model
picks; it needs neither scikit-learn nor a GPU.  Importing this package has no side effects.
"""
from __future__ import annotations

from typing import Any

from .config import SEED_CONFIG, Family, KernelConfig

__all__ = ["select", "KernelConfig", "Family", "SEED_CONFIG"]
__version__ = "0.1.0"


def select(*args: Any, **kwargs: Any) -> Any:
    """Pick a kernel config for a conv2d problem (see :func:`predictor.selector.select`)."""
    from .selector import select as _select

    return _select(*args, **kwargs)

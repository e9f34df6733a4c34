"""Choose the fastest CUTLASS conv2d kernel configuration from real measurements.

``predictor.candidates(...)`` (same arguments) gives the configs worth timing once on a first call,
the pick first.  ``predictor.select(N, C, H, W, K, R, S, ...)`` returns the :class:`~predictor.selector.Selection`
(config, index, fallback) the shipped model picks; it needs neither scikit-learn nor a GPU.  The
default family is ``i8nc32`` (int8 NCxHWx<32>): pass ``family="f16nhwc"`` for fp16 NHWC.

Importing this package has no side effects and is cheap: :mod:`predictor.selector` is imported on
the first use of ``predictor.select`` (then ``predictor.select`` *is*
:func:`predictor.selector.select`, with its signature), and each model is loaded on its first use.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .config import SEED_CONFIG, Family, KernelConfig

if TYPE_CHECKING:  # pragma: no cover
    from .selector import candidates, select

__all__ = ["select", "candidates", "KernelConfig", "Family", "SEED_CONFIG"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """``predictor.select``: imported on first access, then bound in this module (no indirection)."""
    if name in ("select", "candidates"):
        from . import selector

        fn = globals()[name] = getattr(selector, name)
        return fn
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

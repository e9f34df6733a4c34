"""What the collector and the on-GPU evaluation need of a backend that measures kernels.

:class:`predictor.cuda_backend.CudaBackend` runs real kernels on a GPU; ``tests/synthetic_backend.py``
makes timings up for CPU-only tests of the bookkeeping.  ``predictor.collect --backend
module:factory`` loads any object with these members.
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from .config import KernelConfig
from .features import ConvProblem
from .schema import Row


@runtime_checkable
class Backend(Protocol):
    """Builds kernels for a set of configs, then checks and times configs on one problem at a time."""

    #: Short name recorded in the sweep's metadata (``cuda``, ``synthetic``).
    name: str
    #: The nvcc architecture the kernels are built for (``sm_90``).
    arch: str
    #: The device: at least ``gpu`` (name) and ``sms`` (SMs the kernels can use); ``gpu_uuid`` if known.
    info: dict[str, Any]
    #: Total time spent inside timed batches, ms (efficiency accounting).
    timed_ms: float

    def prepare(self, configs: list[KernelConfig]) -> dict[str, Any]:
        """Build (or load cached) kernels of ``configs``; build statistics for the metadata."""
        ...

    def warm_up(self, seconds: float = 1.0) -> dict[str, Any]:
        """Bring the device out of idle before timing; the clocks read afterwards (may be empty)."""
        ...

    def measure(self, prob: ConvProblem, configs: list[KernelConfig]) -> list[Row]:
        """Check and time every config (all of one family) on ``prob``: one :class:`Row` each, with
        the measurement filled in (the caller adds the problem and the device)."""
        ...

    def close(self) -> None:
        """Release the device's memory."""
        ...


__all__ = ["Backend"]

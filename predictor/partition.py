"""SM partitions of one GPU through CUDA green contexts (``cuda.bindings.driver``).

``SmPartition(16)`` splits the device's SMs, creates a green context holding one group of at least
16 SMs and a stream in it.  The split rounds to the hardware's granularity, so :attr:`sms` holds the
count actually obtained: record that, not the request.  While :meth:`active` is entered the green
context is current, so CUDA runtime calls made by the CUTLASS runner (attribute setting, launches
on :attr:`stream_ptr`) run on the partition's SMs; memory allocated in the primary context is
visible to it (same device address space).
"""
from __future__ import annotations

import contextlib
import logging
from typing import Any, Iterator

_LOG = logging.getLogger(__name__)


def _check(result: Any, what: str) -> Any:
    from cuda.bindings import driver as cu

    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{what} failed: {err}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


class SmPartition:
    """A green context with (at least) ``sm_count`` SMs of device ``device`` and a stream in it."""

    def __init__(self, sm_count: int, device: int = 0) -> None:
        from cuda.bindings import driver as cu

        if sm_count < 1:
            raise ValueError(f"sm_count must be >= 1, got {sm_count}")
        self._cu = cu
        _check(cu.cuInit(0), "cuInit")
        dev = _check(cu.cuDeviceGet(device), "cuDeviceGet")
        res = _check(cu.cuDeviceGetDevResource(dev, cu.CUdevResourceType.CU_DEV_RESOURCE_TYPE_SM),
                     "cuDeviceGetDevResource")
        self.device_sms = int(res.sm.smCount)
        if sm_count >= self.device_sms:
            raise ValueError(f"sm_count={sm_count} is not below the device's {self.device_sms} SMs")
        groups, nb, _remaining = _check(cu.cuDevSmResourceSplitByCount(1, res, 0, sm_count),
                                        "cuDevSmResourceSplitByCount")
        if nb < 1:
            raise RuntimeError(f"could not split {self.device_sms} SMs into a group of {sm_count}")
        group = groups[0]
        self.requested = sm_count
        self.sms = int(group.sm.smCount)
        desc = _check(cu.cuDevResourceGenerateDesc([group], 1), "cuDevResourceGenerateDesc")
        self._gctx = _check(cu.cuGreenCtxCreate(desc, dev, cu.CUgreenCtxCreate_flags.CU_GREEN_CTX_DEFAULT_STREAM),
                            "cuGreenCtxCreate")
        self._ctx = _check(cu.cuCtxFromGreenCtx(self._gctx), "cuCtxFromGreenCtx")
        self._stream = _check(cu.cuGreenCtxStreamCreate(self._gctx, cu.CUstream_flags.CU_STREAM_NON_BLOCKING, 0),
                              "cuGreenCtxStreamCreate")
        _LOG.info("green context: asked for %d SMs, got %d of %d", sm_count, self.sms, self.device_sms)

    @property
    def stream_ptr(self) -> int:
        return int(self._stream)

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """Make the green context current for the duration (runtime API calls go to it)."""
        _check(self._cu.cuCtxPushCurrent(self._ctx), "cuCtxPushCurrent")
        try:
            yield
        finally:
            _check(self._cu.cuCtxPopCurrent(), "cuCtxPopCurrent")

    def synchronize(self) -> None:
        _check(self._cu.cuStreamSynchronize(self._stream), "cuStreamSynchronize")

    def info(self) -> dict[str, int]:
        return {"sms_requested": self.requested, "sms": self.sms, "device_sms": self.device_sms}

"""Runs real CUTLASS kernels on an NVIDIA GPU: correctness check against a float64 reference and
timing between CUDA events.  Needs torch with CUDA (the extra ``[gpu]``); imported only by the
collector.  The layouts (``to_nc32hw32``, ``to_cxrskx32``) and the checks (``check_int8``,
``check_fp16``, ``poison``) also take numpy arrays and need no GPU (``tests/test_check_cpu.py``).

Per problem: random inputs (small integers for int8, so the float64 reference is exact; uniform
fp16 otherwise), the reference computed once with ``torch.nn.functional.conv2d`` in float64, then
for each config:

1. ``can_implement`` (else ``cannot_implement``);
2. the output is poisoned, one launch, and the output compared with the reference
   (``wrong_result`` if any element is out of tolerance or unwritten);
3. the launch is timed once (it sizes the batches), then timed as :mod:`predictor.timing` says
   (batches of back-to-back launches between CUDA events, a warm-up batch dropped at the start
   of every call; median, p20, p80, min).

Then the fastest ``retime_top`` configs are timed again, interleaved, with the same method, and
their median stored in ``retime_us``: the winner is decided on the re-timing.

The L2 cache is left warm: launches run back-to-back on the same buffers, as an inference engine
runs a layer whose input the previous layer has just written.  Problems whose tensors exceed the
L2 (60 MB on the H200) are unaffected.

int8 NCxHWx<32> contract: the filter is stored CxRSKx<32> **and reordered** with
``cutlass::reorder_convK<32>`` (see :mod:`predictor.layouts`); kernels given an un-reordered
filter compute wrong results, which the check reports as ``wrong_result``.
"""
from __future__ import annotations

import ctypes
import logging
import math
import os
import subprocess
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import timing
from .config import Family, KernelConfig
from .features import ConvProblem
from .layouts import filter_offsets
from .schema import Row

_LOG = logging.getLogger(__name__)

PK_STATUS = {0: "ok", 1: "cannot_implement", 2: "launch_error", 3: "launch_error", 4: "launch_error"}
INT8_POISON = 85
INT8_TOL = 1  # clamp epilogue: float alpha*acc rounded to int8 may differ by one step
FP16_ATOL = 1e-2  # outputs are scaled to unit variance
FP16_RTOL = 1e-2


#: The C ABI's problem (``PkProblem`` of ``csrc/pk_runtime.h``), field by field: the
#: :class:`~predictor.features.ConvProblem` attribute it holds (stride, padding and dilation are
#: square); the split-k slices follow.
PK_PROBLEM_FIELDS: dict[str, str] = {
    "n": "N", "h": "H", "w": "W", "c": "C", "k": "K", "r": "R", "s": "S", "p": "P", "q": "Q",
    "pad_h": "pad", "pad_w": "pad", "stride_h": "stride", "stride_w": "stride", "dil_h": "dilation",
    "dil_w": "dilation"}


class PkProblem(ctypes.Structure):
    """``PkProblem`` of the kernels' C ABI."""

    _fields_ = [(n, ctypes.c_int64) for n in (*PK_PROBLEM_FIELDS, "split_k_slices")]

    @classmethod
    def of(cls, prob: ConvProblem, split_k_slices: int = 1) -> "PkProblem":
        """The struct of ``prob`` launched with ``split_k_slices``."""
        return cls(*(getattr(prob, a) for a in PK_PROBLEM_FIELDS.values()), split_k_slices)


def _torch():  # type: ignore[no-untyped-def]
    from .cli import require

    return require("torch", "gpu", "running kernels on a GPU")


# ----------------------------------------------------------------------------- array namespaces
# The layouts and the checks below are written once against these few operations and work on
# numpy arrays (CPU, tested in CI without torch) and on torch tensors (the GPU path: everything
# stays on the device, one synchronisation per check).
def _is_torch(x: Any) -> bool:
    return type(x).__module__.split(".", 1)[0] == "torch"


class _NumpyOps:
    @staticmethod
    def int32(x: Any) -> Any:
        return x.astype(np.int32)

    @staticmethod
    def float64(x: Any) -> Any:
        return x.astype(np.float64)

    @staticmethod
    def permute(x: Any, dims: tuple[int, ...]) -> Any:
        return np.ascontiguousarray(x.transpose(dims))

    @staticmethod
    def scatter(src: Any, idx: Any) -> Any:
        out = np.empty(src.size, dtype=src.dtype)
        out[idx] = src.reshape(-1)
        return out

    @staticmethod
    def offsets(x: Any, K: int, C: int, R: int, S: int, reorder: bool) -> Any:
        return filter_offsets(K, C, R, S, reorder).reshape(-1)

    @staticmethod
    def abs_(x: Any) -> Any:
        return np.abs(x, out=x)

    @staticmethod
    def maxima(*xs: Any) -> list[float]:
        return [float(x.max()) for x in xs]

    @staticmethod
    def fraction(mask: Any) -> float:
        return float(mask.mean())


class _TorchOps:
    @staticmethod
    def int32(x: Any) -> Any:
        return x.to(_torch().int32)

    @staticmethod
    def float64(x: Any) -> Any:
        return x.double()

    @staticmethod
    def permute(x: Any, dims: tuple[int, ...]) -> Any:
        return x.permute(*dims).contiguous()

    @staticmethod
    def scatter(src: Any, idx: Any) -> Any:
        out = _torch().empty(src.numel(), dtype=src.dtype, device=src.device)
        out[idx] = src.reshape(-1)
        return out

    @staticmethod
    def offsets(x: Any, K: int, C: int, R: int, S: int, reorder: bool) -> Any:
        return filter_offsets(K, C, R, S, reorder, xp=_torch(), device=x.device).reshape(-1)

    @staticmethod
    def abs_(x: Any) -> Any:
        return x.abs_()

    @staticmethod
    def maxima(*xs: Any) -> list[float]:
        return _torch().stack([x.max() for x in xs]).tolist()  # one synchronisation

    @staticmethod
    def fraction(mask: Any) -> float:
        return float(mask.double().mean().item())


def _ops(x: Any) -> type[_NumpyOps] | type[_TorchOps]:
    return _TorchOps if _is_torch(x) else _NumpyOps


# ----------------------------------------------------------------------------- layouts
def to_nc32hw32(x: Any) -> Any:
    """NCHW -> ``TensorNCxHWx<32>`` storage, shape (N, C/32, H, W, 32) (numpy array or torch tensor)."""
    n, c, h, w = x.shape
    return _ops(x).permute(x.reshape(n, c // 32, 32, h, w), (0, 1, 3, 4, 2))


def from_nc32hw32(y: Any, n: int, k: int, p: int, q: int) -> Any:
    """``TensorNCxHWx<32>`` storage -> NCHW (N, K, P, Q)."""
    return _ops(y).permute(y.reshape(n, k // 32, p, q, 32), (0, 1, 4, 2, 3)).reshape(n, k, p, q)


def to_cxrskx32(wt: Any, reorder: bool = True) -> Any:
    """KCRS int8 filter -> flat ``TensorCxRSKx<32>`` buffer, reordered by
    ``cutlass::reorder_convK<32>`` unless ``reorder`` is False (see :mod:`predictor.layouts`)."""
    ops = _ops(wt)
    k, c, r, s = wt.shape
    return ops.scatter(wt, ops.offsets(wt, k, c, r, s, reorder))


# ----------------------------------------------------------------------------- families
def poison(out: Any, family: Family) -> None:
    """Fill an output buffer so unwritten elements fail the check (int8: 85, fp16: NaN)."""
    out[...] = INT8_POISON if tensor_kind(family).startswith("int8") else float("nan")


def check_output(out: Any, ref: Any, family: Family) -> "Verdict":
    """The family's correctness check of ``out`` against its reference."""
    return check_int8(out, ref) if tensor_kind(family).startswith("int8") else check_fp16(out, ref)


#: The tensor kinds this backend builds, references and checks (``FamilySpec.tensor_kind``):
#:
#: * ``"int8_nc32"``: int8 NCxHWx<32> activations/output, filter CxRSKx<32> reordered with
#:   ``cutlass::reorder_convK<32>``, float clamp epilogue (``check_int8``);
#: * ``"fp16_nhwc"``: fp16 NHWC activations, KRSC filter, NPQK fp16 output (``check_fp16``) -- both
#:   the CUTLASS 2.x ``f16nhwc`` and the SM90 ``f16nhwc90`` families, and the GEMM family ``f16gemm90``;
#: * ``"int8_nhwc"``: int8 NHWC activations, KRSC filter, NPQK int8 output, float epilogue rounded
#:   to nearest and saturated (``check_int8``; the SM90 ``i8nhwc90`` family and its GEMM twin ``i8gemm90``).
TENSOR_KINDS = ("int8_nc32", "fp16_nhwc", "int8_nhwc")


def tensor_kind(family: Family) -> str:
    """How a family's tensors are built, referenced and checked (:data:`TENSOR_KINDS`), read from
    its ``FamilySpec`` (element type and layout; the CUTLASS API and architecture do not matter)."""
    s = family.spec
    kind = s.tensor_kind
    if kind not in TENSOR_KINDS:
        raise NotImplementedError(f"cuda_backend has no tensors/reference/check for family {family.value} "
                                  f"({s.element_a} {s.layout_a} -> {s.element_c} {s.layout_c}: {kind})")
    return kind


# ----------------------------------------------------------------------------- checks
@dataclass
class Verdict:
    ok: bool
    max_abs_err: float
    bad_frac: float


def check_int8(out: Any, ref: Any) -> Verdict:
    """int8 output vs the reference already quantised (clamp(round(alpha*acc))), both in the same
    layout: every element within one rounding step.  An un-reordered filter or an unwritten
    output gives errors of tens."""
    ops = _ops(out)
    d = ops.abs_(ops.int32(out) - ref)
    mx = int(ops.maxima(d)[0])
    bad = 0.0 if mx <= INT8_TOL else ops.fraction(d > INT8_TOL)
    return Verdict(mx <= INT8_TOL, float(mx), bad)


def check_fp16(out: Any, ref: Any) -> Verdict:
    """fp16 output (poisoned with NaN before the launch) vs float64 reference: every element within
    ``FP16_ATOL + FP16_RTOL*|ref|``; NaN (unwritten) fails."""
    ops = _ops(out)
    d = ops.abs_(ops.float64(out) - ref)
    scaled = d / (FP16_ATOL + FP16_RTOL * abs(ref))
    mx_d, mx_s = ops.maxima(d, scaled)  # max propagates NaN
    ok = mx_s <= 1.0  # False for NaN
    bad = 0.0 if ok else ops.fraction(~(scaled <= 1.0))
    return Verdict(ok, float(mx_d) if mx_d == mx_d else math.inf, bad)


# ----------------------------------------------------------------------------- device info
def device_info(device: int = 0) -> dict[str, Any]:
    torch = _torch()
    p = torch.cuda.get_device_properties(device)
    info: dict[str, Any] = {
        "gpu": p.name, "sms": p.multi_processor_count, "cc": f"{p.major}.{p.minor}",
        "l2_bytes": getattr(p, "L2_cache_size", None), "total_memory": p.total_memory,
        "torch": torch.__version__, "cuda_runtime": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
    }
    uuid = getattr(p, "uuid", None)
    info["gpu_uuid"] = f"GPU-{uuid}" if uuid is not None and not str(uuid).startswith("GPU-") else str(uuid)
    try:
        q = subprocess.run(
            ["nvidia-smi", f"--id={info['gpu_uuid'] if uuid is not None else device}", "--query-gpu=driver_version,clocks.sm,clocks.mem,clocks.max.sm,"
             "clocks.max.mem,power.limit,temperature.gpu", "--format=csv,noheader"],
            check=True, capture_output=True, text=True, timeout=30).stdout.strip()
        keys = ["driver", "clock_sm", "clock_mem", "clock_max_sm", "clock_max_mem", "power_limit", "temp_c"]
        info.update(dict(zip(keys, [v.strip() for v in q.split(",")])))
    except (OSError, subprocess.SubprocessError) as exc:
        info["nvidia_smi_error"] = str(exc)
    return info


def warm_up(seconds: float = 1.0) -> None:
    """Keep the GPU busy for ``seconds`` so its clocks leave idle (345 MHz on the H200)."""
    torch = _torch()
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    t0 = time.time()
    while time.time() - t0 < seconds:
        for _ in range(20):
            a @ a
        torch.cuda.synchronize()


# ----------------------------------------------------------------------------- backend
class CudaBackend:
    """Compiles (via :mod:`predictor.emit`, cached) and runs the kernels on the current GPU."""

    name = "cuda"

    def __init__(self, arch: str | None = None, build_dir: str | Path = "build", jobs: int | None = None,
                 target_ms: float = timing.TARGET_MS, reps: int = timing.REPS, retime_top: int = timing.RETIME_TOP,
                 seed: int = 0,
                 skip_reorder: bool = False, sm_count: int | None = None,
                 warmup_batches: int | None = None, timing_mode: str = timing.DEFAULT_TIMING) -> None:
        timing.method(warmup_batches, timing_mode)  # a bad mode fails before the GPU is touched
        torch = _torch()
        if not torch.cuda.is_available():
            raise RuntimeError("no CUDA GPU visible: the cuda backend needs one")
        major, minor = torch.cuda.get_device_capability()
        self.arch = arch or f"sm_{major}{minor}"
        self.build_dir = Path(build_dir)
        self.jobs = jobs
        self.target_ms = target_ms
        self.reps = reps
        self.retime_top = retime_top
        self.warmup_batches = warmup_batches  # None: predictor.timing's default
        self.timing_mode = timing_mode  # predictor.timing.TIMING_MODES
        self.seed = seed
        self.skip_reorder = skip_reorder  # for tests: proves the check catches a missing reorder
        self.timed_ms = 0.0  # total time inside timed batches (efficiency accounting)
        self._fns: dict[str, tuple[Any, Any]] = {}
        self._errors: dict[str, str] = {}
        self._libs: list[ctypes.CDLL] = []
        self._ws = None
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        self.info = device_info()
        self.info["arch"] = self.arch
        self.partition = None
        if sm_count:
            from .partition import SmPartition

            self.partition = SmPartition(sm_count)
            self.info.update(self.partition.info())  # "sms" becomes the partition's SM count

    # -- build / load
    def prepare(self, configs: list[KernelConfig]) -> dict[str, Any]:
        """Build (or load cached) kernels for ``configs``; returns build statistics."""
        from .emit import build_library

        stats: dict[str, Any] = {"compile_seconds": 0.0, "compiled": 0, "compile_errors": 0}
        by_family: dict[Family, list[KernelConfig]] = {}
        for c in configs:
            by_family.setdefault(c.family, []).append(c)
        for fam, cfgs in by_family.items():
            res = build_library(cfgs, self.arch, self.build_dir, self.jobs, name=fam.value)
            stats["compile_seconds"] += res.seconds
            stats["compiled"] += len(res.compiled)
            stats["compile_errors"] += len(res.errors)
            self._errors.update(res.errors)
            if res.library is None:
                continue
            lib = ctypes.CDLL(str(res.library.resolve()))
            self._libs.append(lib)
            for k in res.compiled:
                run = getattr(lib, f"pk_run_{k}")
                run.restype = ctypes.c_int
                run.argtypes = [ctypes.POINTER(PkProblem)] + [ctypes.c_void_p] * 4 + [ctypes.c_float] * 2 + [
                    ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                    ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
                info = getattr(lib, f"pk_info_{k}")
                info.restype = ctypes.c_int64
                info.argtypes = [ctypes.c_int]
                self._fns[k] = (run, info)
        return stats

    def warm_up(self, seconds: float = 1.0) -> dict[str, Any]:
        """Raise the GPU's clocks from idle; returns the clocks read afterwards."""
        warm_up(seconds)
        return {k: v for k, v in device_info().items() if k.startswith("clock")}

    def smem_bytes(self, cfg: KernelConfig) -> int | None:
        fns = self._fns.get(cfg.kernel_name)
        return int(fns[1](0)) if fns else None

    def compile_error(self, cfg: KernelConfig) -> str | None:
        if cfg.kernel_name in self._fns:
            return None
        return self._errors.get(cfg.kernel_name, "kernel missing from the library")

    # -- tensors
    def tensors(self, prob: ConvProblem, family: Family) -> dict[str, Any]:
        """Random inputs of ``prob`` in ``family``'s layouts, the output buffer and the float64
        reference: ``{"a", "b", "d", "ref", "alpha"}`` (device tensors; ``alpha`` the epilogue's)."""
        torch = _torch()
        g = torch.Generator(device="cuda")
        g.manual_seed(zlib.crc32(f"{self.seed}/{prob.key}/{family.value}".encode()))
        N, C, H, W, K, R, S = prob.N, prob.C, prob.H, prob.W, prob.K, prob.R, prob.S
        P, Q = prob.P, prob.Q
        crs = C * R * S
        kind = tensor_kind(family)
        if kind.startswith("int8"):
            # small integers: the float64 reference is exact; the epilogue computes alpha*acc in
            # float32 and rounds to nearest even, then clamps
            x = torch.randint(-8, 9, (N, C, H, W), device="cuda", dtype=torch.int8, generator=g)
            w = torch.randint(-8, 9, (K, C, R, S), device="cuda", dtype=torch.int8, generator=g)
            acc = torch.nn.functional.conv2d(x.double(), w.double(), stride=prob.stride, padding=prob.pad,
                                             dilation=prob.dilation)
            alpha = 32.0 / (24.0 * math.sqrt(crs))
            ref = torch.round(acc.float() * torch.tensor(alpha, dtype=torch.float32)).clamp_(-128, 127).to(torch.int32)
        if kind == "int8_nc32":  # compared in the kernel's own layout
            ref = to_nc32hw32(ref)
            b = to_cxrskx32(w, reorder=not self.skip_reorder)
            a = to_nc32hw32(x)
            d = torch.empty((N, K // 32, P, Q, 32), device="cuda", dtype=torch.int8)
        elif kind == "int8_nhwc":  # the same data and reference, NHWC / KRSC / NPQK
            ref = ref.permute(0, 2, 3, 1).contiguous()  # NPQK
            a = x.permute(0, 2, 3, 1).contiguous()
            b = w.permute(0, 2, 3, 1).contiguous()
            d = torch.empty((N, P, Q, K), device="cuda", dtype=torch.int8)
        else:
            x = (torch.rand((N, C, H, W), device="cuda", generator=g) * 2 - 1).half()
            w = (torch.rand((K, C, R, S), device="cuda", generator=g) * 2 - 1).half()
            acc = torch.nn.functional.conv2d(x.double(), w.double(), stride=prob.stride, padding=prob.pad,
                                             dilation=prob.dilation)
            alpha = 3.0 / math.sqrt(crs)
            ref = (acc * alpha).permute(0, 2, 3, 1).contiguous()  # NPQK
            a = x.permute(0, 2, 3, 1).contiguous()
            b = w.permute(0, 2, 3, 1).contiguous()
            d = torch.empty((N, P, Q, K), device="cuda", dtype=torch.float16)
        del acc
        return {"a": a, "b": b, "d": d, "ref": ref, "alpha": alpha}

    def workspace(self, nbytes: int) -> tuple[int, int]:
        """(pointer, size) of a device workspace of at least ``nbytes`` (kept and grown; (0, 0) for 0)."""
        torch = _torch()
        if nbytes == 0:
            return 0, 0
        if self._ws is None or self._ws.numel() < nbytes:
            self._ws = torch.zeros(max(nbytes, 1 << 20), device="cuda", dtype=torch.uint8)
        return self._ws.data_ptr(), self._ws.numel()

    def _call(self, cfg: KernelConfig, pr: PkProblem, t: dict[str, Any], mode: int, iters: int = 1,
              reps: int = 1, ws_need: int = 0, timed_one: bool = False) -> tuple[int, list[float], int]:
        """One call into the kernel's C ABI (mode 0: query, 1: one launch -- timed if
        ``timed_one`` --, 2: timed batches of stream launches, 3: timed graph replays)."""
        torch = _torch()
        run, _ = self._fns[cfg.kernel_name]
        times = (ctypes.c_float * max(reps, 1))()
        need = ctypes.c_size_t(0)
        ws_ptr, ws_bytes = self.workspace(ws_need) if mode > 0 else (0, 0)
        part = self.partition
        stream = part.stream_ptr if part is not None else torch.cuda.current_stream().cuda_stream
        times_arg = times if (mode >= 2 or timed_one) else None
        args = (ctypes.byref(pr), t["a"].data_ptr(), t["b"].data_ptr(), t["d"].data_ptr(), t["d"].data_ptr(),
                t["alpha"], 0.0, ws_ptr or None, ws_bytes, stream, mode, iters, reps, times_arg, ctypes.byref(need))
        if part is not None and mode > 0:
            torch.cuda.current_stream().synchronize()  # inputs/poison written on torch's stream
            with part.active():
                st = run(*args)
                if mode == 1:
                    part.synchronize()
        else:
            st = run(*args)
        return st, [times[i] for i in range(reps)], int(need.value)

    def query(self, cfg: KernelConfig, prob: ConvProblem, t: dict[str, Any]) -> tuple[int, int]:
        """(status, workspace bytes) of ``cfg`` on ``prob`` (``can_implement``; 0 = ok, see
        :data:`PK_STATUS`), with the workspace allocated (so a graph capture may follow)."""
        st, _, ws_need = self._call(cfg, PkProblem.of(prob, cfg.split_k_slices), t, 0)
        if st == 0:
            self.workspace(ws_need)
        return st, ws_need

    def launch(self, cfg: KernelConfig, prob: ConvProblem, t: dict[str, Any], ws_need: int = 0) -> int:
        """One launch of ``cfg`` on the tensors ``t`` of ``prob`` (:meth:`tensors`); its status."""
        st, _, _ = self._call(cfg, PkProblem.of(prob, cfg.split_k_slices), t, 1, ws_need=ws_need)
        return st

    def _batch_call(self, cfg: KernelConfig, pr: PkProblem, t: dict[str, Any], ws_need: int) -> timing.BatchCall:
        """``call(batches, iters)``: one call into the kernel's timing loop; per-launch µs per batch."""

        def call(batches: int, iters: int) -> tuple[int, list[float]]:
            st, ms, _ = self._call(cfg, pr, t, timing.ABI_MODE[self.timing_mode], iters=iters, reps=batches,
                                   ws_need=ws_need)
            self.timed_ms += sum(ms)
            return st, [b * 1000.0 / iters for b in ms]

        return call

    def measure(self, prob: ConvProblem, configs: list[KernelConfig]) -> list[Row]:
        """Check and time every config on one problem (:mod:`predictor.timing`); one row per config.  The configs
        are of one family (:func:`predictor.timing.one_family`, else ``ValueError``)."""
        family = timing.one_family(configs)
        t = self.tensors(prob, family)
        rows: list[Row] = []
        tp = timing.Problem(self.target_ms, self.reps, self.warmup_batches, self.timing_mode)
        method = timing.method(self.warmup_batches, self.timing_mode)
        for cfg in configs:
            row = Row(cfg.name, cfg.kernel_name, smem_bytes=self.smem_bytes(cfg) or -1, timing_method=method)
            rows.append(row)
            err = self.compile_error(cfg)
            if err is not None:
                row.status, row.error = "compile_error", err[-500:]
                continue
            pr = PkProblem.of(prob, cfg.split_k_slices)
            st, _, ws_need = self._call(cfg, pr, t, 0)
            if st != 0:
                row.status = PK_STATUS.get(st, "launch_error")
                continue
            poison(t["d"], family)
            # one launch, timed (it sizes the batches), then the check (which synchronises)
            st, one, _ = self._call(cfg, pr, t, 1, ws_need=ws_need, timed_one=True)
            if st != 0:
                row.status = PK_STATUS.get(st, "launch_error")
                continue
            try:
                v = check_output(t["d"], t["ref"], family)
            except RuntimeError as exc:  # sticky errors cannot be recovered in this process
                raise RuntimeError(f"CUDA error in {cfg.name} on {prob.key}: {exc}") from exc
            row.max_abs_err, row.bad_frac, row.verified = v.max_abs_err, v.bad_frac, v.ok
            if not v.ok:
                row.status = "wrong_result"
                continue
            st = tp.first_pass(row, self._batch_call(cfg, pr, t, ws_need), one[0])
            if st != 0:
                row.status = PK_STATUS.get(st, "launch_error")
        # re-time the fastest few, interleaved, to decide the winner on fresh samples
        tp.retime_fastest(rows, self.retime_top)
        del t
        return rows

    def close(self) -> None:
        """Release the workspace and torch's cached device memory."""
        self._ws = None
        _torch().cuda.empty_cache()


def default_arch() -> str:
    """``sm_XY`` of GPU 0 if torch sees one, else ``sm_90``."""
    try:
        import torch

        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability()
            return f"sm_{major}{minor}"
    except ImportError:
        pass
    return os.environ.get("PREDICTOR_ARCH", "sm_90")

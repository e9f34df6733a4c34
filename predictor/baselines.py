"""Baseline kernel pickers the trained tree is compared against (used by :mod:`predictor.evaluate`).

Every picker maps conv problems to configs of *our* grid (the sweep's configs), so that every
pick can be scored from the measured sweep:

* fixed configs: ``SEED_CONFIG`` (int8 only) and ``cutlass_library``'s generator default
  (:func:`predictor.space.default_config`); the best single config is
  :func:`predictor.portfolio.best_single` on the training shapes;
* :func:`wave_pick`: a hand-written wave-quantisation heuristic of the kind TensorRT-LLM's CUTLASS
  heuristic and PyTorch's rowwise-scaled-mm use (formula in :data:`WAVE_FORMULA`);
* NVIDIA nvMatmulHeuristics (pip ``nvidia-matmul-heuristics``): the conv's implicit GEMM is given
  to the library, which answers with CUTLASS configs; each answer is snapped to the nearest grid
  config (:func:`snap_distance`).  The library runs in a subprocess (:func:`run_nvmmh`): its
  Python wrapper has been seen crashing at interpreter exit after printing good results.

Implicit GEMM of a conv2d fprop: ``M = N*P*Q``, ``N = K``, ``K = C*R*S``
(:data:`predictor.features.DERIVED`).
"""
from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from .config import Family, IteratorAlgorithm, KernelConfig, SplitKMode, Swizzle
from .resources import source_root

_LOG = logging.getLogger(__name__)

# --------------------------------------------------------------------------- tie-breaking
def generator_rank(family: Family) -> dict[tuple[tuple[int, int, int], int, tuple[int, int, int]], int]:
    """Position of each (tile, stages, warp count) in ``cutlass_library``'s generator list (the
    tie-break of the heuristics below: what CUTLASS itself would emit first wins); empty if
    ``cutlass_library`` is not installed."""
    try:
        from .space import generator_tiles

        return {t: i for i, t in enumerate(generator_tiles(family))}
    except ImportError:  # pragma: no cover - nvidia-cutlass is a test dependency
        _LOG.warning("cutlass_library is not installed: heuristic ties are broken by name only")
        return {}


def tie_key(cfg: KernelConfig, rank: Mapping[Any, int]) -> tuple[Any, ...]:
    """Deterministic preference among configs a heuristic scores equally: the optimized iterator,
    then the generator's own (tile, stages, warps) (in its order), identity swizzle, no split-k,
    stages closest to 4, fewer stages, name."""
    r = rank.get((cfg.tb, cfg.stages, cfg.warp_count), len(rank))
    return (cfg.iterator is not IteratorAlgorithm.Optimized, r, cfg.swizzle.value, cfg.split_k_slices,
            abs(cfg.stages - 4), cfg.stages, cfg.name)


# --------------------------------------------------------------------------- wave heuristic
#: Arithmetic intensity ``tm*tn/(tm+tn)`` (MACs per element loaded per k step) at which a tile is
#: taken to run at full speed: the 128x128 tile's (64).
WAVE_REF_INTENSITY = 64.0

WAVE_FORMULA = (
    "candidates: grid configs with split-k 1, optimized iterator, identity swizzle. For a GEMM "
    "M x N x K and a tile tm x tn x tk: ctas = ceil(M/tm)*ceil(N/tn); waves = ceil(ctas/SMs) (one "
    "CTA per SM at a time); last-wave utilisation u = (ctas - (waves-1)*SMs)/SMs; per-CTA work = "
    "tm*tn*ceil(K/tk)*tk MACs; tile efficiency e = min(1, (tm*tn/(tm+tn)) / 64) (arithmetic "
    "intensity relative to a 128x128 tile); estimated time = waves * work / e. Pick the minimum "
    "estimated time, then the higher u, then the generator's own tile/stages (stages and warp "
    "shape do not enter the estimate)."
)


def wave_estimate(cfg: KernelConfig, m: int, n: int, k: int, sms: int) -> tuple[float, float]:
    """(estimated time in arbitrary units, last-wave SM utilisation) of ``cfg`` on GEMM m x n x k."""
    tm, tn, tk = cfg.tb
    ctas = -(-m // tm) * -(-n // tn)
    waves = -(-ctas // sms)
    util = (ctas - (waves - 1) * sms) / sms
    eff = min(1.0, (tm * tn / (tm + tn)) / WAVE_REF_INTENSITY)
    work = tm * tn * (-(-k // tk) * tk)
    return waves * work / eff, util


def wave_candidates(configs: Iterable[KernelConfig]) -> list[KernelConfig]:
    """The configs the wave heuristic chooses among."""
    return [c for c in configs if c.split_k_mode is SplitKMode.NoSplit
            and c.iterator is IteratorAlgorithm.Optimized and c.swizzle is Swizzle.Identity1]


def wave_pick(m: int, n: int, k: int, configs: Sequence[KernelConfig], sms: int,
              rank: Mapping[Any, int] | None = None) -> KernelConfig:
    """The wave heuristic's config for GEMM m x n x k (:data:`WAVE_FORMULA`)."""
    cands = wave_candidates(configs)
    if not cands:
        raise ValueError("no split-k-1 / optimized / identity-swizzle config to choose from")
    rank = rank or {}

    def key(c: KernelConfig) -> tuple[Any, ...]:
        est, util = wave_estimate(c, m, n, k, sms)
        return (est, -util, tie_key(c, rank))

    return min(cands, key=key)


# --------------------------------------------------------------------------- snapping
#: Weights of :func:`snap_distance` (per unit of |log2 ratio|).
SNAP_WEIGHTS: dict[str, float] = {
    "tile_mn": 4.0, "tile_k": 2.0, "warp": 1.0, "split_k": 2.0, "stages": 0.5, "swizzle": 0.25,
}
#: Added for the analytic iterator (nvMatmulHeuristics has no iterator notion; CUTLASS's default,
#: the optimized iterator, is what it describes).
SNAP_ANALYTIC_PENALTY = 100.0

SNAP_FORMULA = (
    "d = 4*(|log2 tm/tm'| + |log2 tn/tn'|) + 2*|log2 tk/tk'| + (|log2 wm/wm'| + |log2 wn/wn'| + "
    "|log2 wk/wk'|) + 2*|log2 splitk/splitk'| + 0.5*|log2 stages/stages'| + 0.25*|log2 swizzle/"
    "swizzle'| + (100 if the grid config uses the analytic iterator); t = threadblock tile, "
    "w = warp tile, primed = the grid config; ties go to the generator's own tile/stages, then "
    "name. The output tile dominates (it sets the CTA count and the waves), then the K tile and "
    "split-k (the K loop), then the warp tile; stages and swizzle matter least. cta_order and "
    "cluster (CUTLASS 3 notions) are ignored."
)


@dataclass(frozen=True)
class GemmConfig:
    """A CUTLASS GEMM config as nvMatmulHeuristics describes it."""

    cta: tuple[int, int, int]
    warp: tuple[int, int, int]
    instr: tuple[int, int, int]
    stages: int
    split_k: int = 1
    swizzle: int = 1
    cta_order: int = 0
    runtime_s: float = float("nan")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "GemmConfig":
        def t3(v: Sequence[Any]) -> tuple[int, int, int]:
            a, b, c = (int(x) for x in v)
            return (a, b, c)

        return cls(t3(d["cta"]), t3(d["warp"]), t3(d["instr"]), int(d["stages"]), int(d.get("split_k", 1)),
                   int(d.get("swizzle", 1)), int(d.get("cta_order", 0)), float(d.get("runtime_s", float("nan"))))

    def __str__(self) -> str:
        return (f"cta{'x'.join(map(str, self.cta))}_warp{'x'.join(map(str, self.warp))}_s{self.stages}"
                f"_sk{self.split_k}_sw{self.swizzle}")


def _lr(a: float, b: float) -> float:
    return abs(math.log2(max(a, 1) / max(b, 1)))


def snap_distance(g: GemmConfig, cfg: KernelConfig) -> float:
    """Distance from an nvMatmulHeuristics config to a grid config (:data:`SNAP_FORMULA`)."""
    w = SNAP_WEIGHTS
    d = w["tile_mn"] * (_lr(g.cta[0], cfg.tb[0]) + _lr(g.cta[1], cfg.tb[1]))
    d += w["tile_k"] * _lr(g.cta[2], cfg.tb[2])
    d += w["warp"] * sum(_lr(g.warp[i], cfg.warp[i]) for i in range(3))
    d += w["split_k"] * _lr(g.split_k, cfg.split_k_slices)
    d += w["stages"] * _lr(g.stages, cfg.stages)
    d += w["swizzle"] * _lr(g.swizzle, cfg.swizzle.value)
    if cfg.iterator is IteratorAlgorithm.Analytic:
        d += SNAP_ANALYTIC_PENALTY
    return d


def snap(g: GemmConfig, configs: Sequence[KernelConfig], rank: Mapping[Any, int] | None = None) -> KernelConfig:
    """The grid config nearest to ``g`` (:func:`snap_distance`; ties by :func:`tie_key`)."""
    if not configs:
        raise ValueError("empty grid")
    rank = rank or {}
    return min(configs, key=lambda c: (round(snap_distance(g, c), 9), tie_key(c, rank)))


# --------------------------------------------------------------------------- nvMatmulHeuristics
#: Precision strings (nvMatmulHeuristics' A/B, compute, C/D letters): int8 in/out with the float
#: epilogue of our int8 kernels ("BSB", documented, answers with the SM80 int8 instruction
#: 16x8x32 our kernels use); fp16 in/out with fp32 accumulation ("HSH").
NVMMH_PRECISION = {Family.INT8_NC32HW32: "BSB", Family.FP16_NHWC: "HSH"}
#: Alternative precision reported as a sensitivity check: what cutlass_library's own
#: ``heuristics_provider`` would build (A + accumulator + D letters).
NVMMH_ALT_PRECISION = {Family.INT8_NC32HW32: "BIB"}
#: A row-major (NHWC / NC32HW32 activations, K contiguous), B column-major (filter, K
#: contiguous), D row-major: "TN_ROW_MAJOR" in cutlass_library.heuristics_provider's mapping.
NVMMH_LAYOUT = "TN_ROW_MAJOR"
#: CUTLASS 2.x kernels (SM80 mma.sync + cp.async), not CUTLASS 3 (TMA / warp-specialised).
NVMMH_TARGET = "CUTLASS"
NVMMH_FLAGS = "PERF_MODEL_BASED_AUTO_TUNING"  # as cutlass_library.heuristics_provider
#: nvMatmulHeuristics' "runtime tuned for relative comparison" silicon metric.
NVMMH_RELATIVE_METRIC = 14
#: GPU name (as the driver reports it) -> nvMatmulHeuristics preset.
NVMMH_GPU_PRESETS = {
    "NVIDIA H200": "H200_SXM", "NVIDIA H100 80GB HBM3": "H100_SXM", "NVIDIA H100 PCIe": "H100_PCIE",
    "NVIDIA H100 NVL": "H100_NVL", "NVIDIA A100-SXM4-80GB": "A100_SXM_80GB", "NVIDIA L40S": "L40S",
}


class NvmmhError(RuntimeError):
    """nvMatmulHeuristics could not be run (not installed, crashed before answering, ...)."""


@dataclass
class NvmmhBatch:
    """The library's answers for one family: per problem, top-1 and top-k configs, and its
    relative runtime estimate of every grid config (``model``, aligned with the request's grid)."""

    family: str
    precision: str
    top1: list[list[GemmConfig]]
    topk: list[list[GemmConfig]]
    model: list[list[float]] | None = None
    alt_precision: str | None = None
    alt_top1: list[list[GemmConfig]] | None = None


@dataclass
class NvmmhResult:
    """What :func:`run_nvmmh` returns."""

    batches: dict[str, NvmmhBatch]
    info: dict[str, Any] = field(default_factory=dict)


def _kc_fields(cfg: KernelConfig) -> dict[str, Any]:
    return {"cta": list(cfg.tb), "warp": list(cfg.warp), "instr": list(cfg.inst), "stages": cfg.stages,
            "split_k": cfg.split_k_slices, "swizzle": cfg.swizzle.value}


def nvmmh_request(problems: Mapping[str, Sequence[tuple[int, int, int]]], grids: Mapping[str, Sequence[KernelConfig]],
                  gpu_preset: str, count: int) -> dict[str, Any]:
    """The JSON request of one worker run (all families)."""
    batches = []
    for fam, probs in problems.items():
        f = Family(fam)
        batches.append({"family": fam, "precision": NVMMH_PRECISION[f], "alt_precision": NVMMH_ALT_PRECISION.get(f),
                        "problems": [list(map(int, p)) for p in probs],
                        "grid": [_kc_fields(c) for c in grids.get(fam, [])]})
    return {"gpu": gpu_preset, "target": NVMMH_TARGET, "flags": NVMMH_FLAGS, "layout": NVMMH_LAYOUT,
            "count": int(count), "metric": NVMMH_RELATIVE_METRIC, "batches": batches}


def _worker(request: Mapping[str, Any]) -> dict[str, Any]:
    """Runs inside the subprocess: query nvMatmulHeuristics for every problem of the request."""
    import ctypes

    import nvMatmulHeuristics as nv  # type: ignore[import-not-found]

    target = nv.NvMatmulHeuristicsTarget[request["target"]]
    flags = nv.NvMatmulHeuristicsFlags[request["flags"]]
    layout = nv.NvMatmulHeuristicsMatmulLayout[request["layout"]]
    lh = nv.NvMatmulHeuristicsInterfaceEx(backend=target, flags=flags, load_discovery_implicitly=True,
                                          gpu=nv.NvMatmulHeuristicsNvidiaGpu[request["gpu"]])
    backend = lh.createBackend(target)

    def conf(k: Any, runtime: float) -> dict[str, Any]:
        return {"cta": [k.cta_tile_m, k.cta_tile_n, k.cta_tile_k],
                "warp": [k.warp_tile_m, k.warp_tile_n, k.warp_tile_k],
                "instr": [k.instr_tile_m, k.instr_tile_n, k.instr_tile_k], "stages": k.stages, "split_k": k.split_k,
                "swizzle": k.swizzle_factor, "cta_order": k.cta_order, "runtime_s": runtime}

    def query(prob: Any, count: int, precision: str) -> list[dict[str, Any]]:
        return [conf(r["kernel"], float(r["runtime"])) for r in lh.get(prob, count, precision=precision)]

    out: dict[str, Any] = {"batches": []}
    for b in request["batches"]:
        prec = b["precision"]
        grid = (lh.nvmmhKernelConfiguration * max(1, len(b["grid"])))()
        for i, g in enumerate(b["grid"]):
            grid[i].cta[:] = g["cta"]
            grid[i].warp[:] = g["warp"]
            grid[i].instr[:] = g["instr"]
            grid[i].splitK = g["split_k"]
            grid[i].loadStages = g["stages"]
            grid[i].gridSwizzle = g["swizzle"]
            grid[i].ctaOrder = 0
            grid[i].cluster[:] = [1, 1]
        top1, topk, model, alt = [], [], [], []
        for m, n, k in b["problems"]:
            prob = lh.makeNvMatmulHeuristicsProblem(int(m), int(n), int(k), layout)
            top1.append(query(prob, 1, prec))
            topk.append(query(prob, int(request["count"]), prec))
            if b.get("alt_precision"):
                alt.append(query(prob, 1, b["alt_precision"]))
            est = lh.nvMatmulHeuristicsEstimateSiliconMetricEx
            model.append([float(est(lh.handle, prec.encode("ascii"), backend, ctypes.byref(prob), ctypes.byref(grid[i]),
                                    ctypes.c_int(int(request["metric"])), lh.hardware_descriptor))
                          for i in range(len(b["grid"]))])
        out["batches"].append({"family": b["family"], "precision": prec, "top1": top1, "topk": topk, "model": model,
                               "alt_precision": b.get("alt_precision"), "alt_top1": alt or None})
    try:
        from importlib.metadata import version

        out["version"] = version("nvidia-matmul-heuristics")
    except Exception:  # noqa: BLE001 - informational only
        out["version"] = "unknown"
    out["complete"] = True
    return out


def run_nvmmh(problems: Mapping[str, Sequence[tuple[int, int, int]]], grids: Mapping[str, Sequence[KernelConfig]],
              gpu_preset: str, count: int = 8, timeout_s: float = 600.0) -> NvmmhResult:
    """Query nvMatmulHeuristics for every family's GEMM problems in ONE subprocess.

    A non-zero exit after complete JSON output is accepted (and logged): the wrapper has been seen
    crashing at interpreter exit after answering.  Raises :class:`NvmmhError` otherwise."""
    req = nvmmh_request(problems, grids, gpu_preset, count)
    env = dict(os.environ)
    root = str(source_root())
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [sys.executable, "-m", "predictor.baselines", "nvmmh-worker"]
    try:
        proc = subprocess.run(cmd, input=json.dumps(req), capture_output=True, text=True, timeout=timeout_s,
                              env=env, check=False)
    except subprocess.TimeoutExpired as exc:
        raise NvmmhError(f"nvMatmulHeuristics worker timed out after {timeout_s:.0f}s") from exc
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    try:
        out = json.loads(last) if last else {}
    except json.JSONDecodeError:
        out = {}
    tail = proc.stderr.strip()[-2000:]
    if not out.get("complete"):
        raise NvmmhError(f"nvMatmulHeuristics worker exited with rc={proc.returncode} without complete output; "
                         f"stderr tail: {tail or '(empty)'}")
    if proc.returncode != 0:
        _LOG.warning("nvMatmulHeuristics worker exited with rc=%d AFTER complete JSON output (the known crash at "
                     "interpreter exit); its results are used. stderr tail: %s", proc.returncode, tail[-300:])
    batches = {}
    for b in out["batches"]:
        batches[b["family"]] = NvmmhBatch(
            b["family"], b["precision"], [[GemmConfig.from_dict(c) for c in r] for r in b["top1"]],
            [[GemmConfig.from_dict(c) for c in r] for r in b["topk"]], b.get("model"), b.get("alt_precision"),
            [[GemmConfig.from_dict(c) for c in r] for r in b["alt_top1"]] if b.get("alt_top1") else None)
    info = {"version": out.get("version"), "returncode": proc.returncode, "gpu": gpu_preset, "target": NVMMH_TARGET,
            "flags": NVMMH_FLAGS, "layout": NVMMH_LAYOUT, "count": count, "metric": "RUNTIME_RELATIVE_FAST_S"}
    return NvmmhResult(batches, info)


def model_pick(estimates: Sequence[float], configs: Sequence[KernelConfig], rank: Mapping[Any, int] | None = None
               ) -> KernelConfig | None:
    """The grid config with the lowest nvMatmulHeuristics runtime estimate (``estimates`` aligned
    with ``configs``; non-positive or non-finite estimates, the library's error value, are
    skipped; ties by :func:`tie_key`).  None if no estimate is usable."""
    rank = rank or {}
    ok = [(float(e), tie_key(c, rank), c) for e, c in zip(estimates, configs, strict=True)
          if math.isfinite(e) and e > 0]
    if not ok:
        return None
    return min(ok, key=lambda t: (t[0], t[1]))[2]


def nvmmh_available() -> bool:
    """Whether the ``nvMatmulHeuristics`` module can be found (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("nvMatmulHeuristics") is not None


def _main(argv: Sequence[str] | None = None) -> int:
    """``python -m predictor.baselines nvmmh-worker``: JSON request on stdin, one JSON line out."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv != ["nvmmh-worker"]:
        sys.stderr.write("usage: python -m predictor.baselines nvmmh-worker  (JSON request on stdin)\n")
        return 2
    out = _worker(json.loads(sys.stdin.read()))
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # skip interpreter teardown, where the wrapper's destructors have been seen crashing


if __name__ == "__main__":  # pragma: no cover - subprocess entry point
    sys.exit(_main())


__all__ = ["wave_pick", "wave_estimate", "wave_candidates", "WAVE_FORMULA", "snap", "snap_distance", "SNAP_FORMULA",
           "GemmConfig", "run_nvmmh", "model_pick", "NvmmhResult", "NvmmhBatch", "NvmmhError", "nvmmh_available",
           "tie_key", "generator_rank", "NVMMH_GPU_PRESETS", "NVMMH_PRECISION"]

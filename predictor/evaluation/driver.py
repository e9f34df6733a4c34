"""The whole evaluation of a sweep: load the families, run the baselines, evaluate, write the files."""
from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Sequence

from .. import baselines, train
from ..config import Family
from ..schema import file_sha256, read_metadata, read_sweep
from .data import GRIDS, FamilyData, Settings, load_family
from .metrics import FamilyEval, metrics_frame, per_shape_frame
from .nested import evaluate_family
from .picks import nvmmh_picks, static_picks
from .plots import write_plots
from .report import report_markdown

_LOG = logging.getLogger(__name__)

#: The files :func:`run` writes under ``out`` (plots: ``*.png`` besides).
OUTPUTS = ("REPORT.md", "metrics.csv", "per_shape.csv")


def run_nvmmh(datas: Sequence[FamilyData], problems: dict[str, list[tuple[int, int, int]]], nvmmh_gpu: str | None,
              nvmmh_k: int) -> tuple[baselines.NvmmhResult | None, str | None]:
    """nvMatmulHeuristics on every family's GEMM problems in one subprocess: the result, or why not."""
    nv_result: baselines.NvmmhResult | None = None
    nv_error: str | None = None
    gpu = datas[0].gpu if datas else ""
    preset = nvmmh_gpu or baselines.NVMMH_GPU_PRESETS.get(gpu)
    unknown = [f for f in problems if Family(f) not in baselines.NVMMH_PRECISION]
    if unknown:
        _LOG.warning("no nvMatmulHeuristics precision for %s (baselines.NVMMH_PRECISION): no such baseline for it",
                     ", ".join(unknown))
        problems = {f: p for f, p in problems.items() if f not in unknown}
    if not problems:
        nv_error = f"no family of the evaluation has an nvMatmulHeuristics precision ({', '.join(unknown)})"
    elif not baselines.nvmmh_available():
        nv_error = "the `nvMatmulHeuristics` module is not installed (pip install nvidia-matmul-heuristics)"
    elif preset is None:
        nv_error = f"no nvMatmulHeuristics GPU preset for {gpu!r} (pass --nvmmh-gpu)"
    else:
        t0 = time.time()
        try:
            nv_result = baselines.run_nvmmh(problems, {d.family.value: d.configs for d in datas}, preset, nvmmh_k)
            _LOG.info("nvMatmulHeuristics: %d GEMM problems in %.1fs", sum(map(len, problems.values())),
                      time.time() - t0)
        except baselines.NvmmhError as exc:
            nv_error = str(exc)
    if nv_error:
        _LOG.error("nvMatmulHeuristics baseline skipped: %s", nv_error)
    return nv_result, nv_error


def run(sweep: Path, out: Path, *, families: Sequence[str] | None = None, folds: int = 5, seed: int = 0,
        grid: str = "trainer", k_max: int = 16, nvmmh: bool = True, nvmmh_gpu: str | None = None,
        nvmmh_k: int = 8, plots: bool = True, command: str = "") -> list[FamilyEval]:
    """The whole evaluation; writes the report under ``out`` and returns the per-family results."""
    t_start = time.time()
    df = read_sweep(sweep)
    sha = file_sha256(sweep)
    meta = read_metadata(sweep)
    if meta.get("synthetic"):
        _LOG.warning("%s is a SYNTHETIC sweep: the report describes no real GPU", sweep)
    present = sorted(set(df["family"].astype(str)))
    fams = list(families or present)
    missing = [f for f in fams if f not in present]
    if missing:
        raise train.TrainError(f"{sweep}: no rows of family {missing} (present: {present})")
    parser = train.build_parser()
    s = Settings(sweep, sha, folds, seed, GRIDS[grid], k_max, int(parser.get_default("max_portfolio")),
                 float(parser.get_default("cv_tolerance")))
    datas = [load_family(df, Family(f)) for f in fams]

    problems = {d.family.value: d.problems() for d in datas}
    nv_result, nv_error = run_nvmmh(datas, problems, nvmmh_gpu, nvmmh_k) if nvmmh else (None, None)
    evals = []
    for d in datas:
        nv = (nvmmh_picks(d, nv_result.batches[d.family.value], problems[d.family.value])
              if nv_result and d.family.value in nv_result.batches else None)
        static = static_picks(d, nv)
        evals.append(evaluate_family(d, s, static, nv.stats if nv else None))

    out.mkdir(parents=True, exist_ok=True)
    per_shape_frame(evals).to_csv(out / "per_shape.csv", index=False)
    metrics_frame(evals).to_csv(out / "metrics.csv", index=False, float_format="%.6g")
    files: list[Path] = []
    if plots:
        try:
            files = write_plots(evals, out, seed)
        except ImportError as exc:
            _LOG.error("no plots: %s (pip install matplotlib)", exc)
    report = report_markdown(evals, command=command, sweep=sweep, sha=sha, meta=meta, s=s,
                             nvmmh_info=nv_result.info if nv_result else None, nvmmh_error=nv_error,
                             seconds=time.time() - t_start, files=files)
    (out / "REPORT.md").write_text(report)
    _LOG.info("wrote %s (%.0f s)", out / "REPORT.md", time.time() - t_start)
    return evals

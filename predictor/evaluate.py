"""``python -m predictor.evaluate``: the offline evaluation of the kernel picker against baselines.

The code lives in the :mod:`predictor.evaluation` package (method: :mod:`predictor.evaluation.cli`);
this module is the command's entry point and keeps the names it has always offered.
"""
from __future__ import annotations

import sys

from .evaluation.cli import DEFAULTS, build_parser, main
from .evaluation.data import GRIDS, HOLDOUT_PREFIXES, FamilyData, HyperGrid, Settings, load_family, short_name
from .evaluation.driver import OUTPUTS, run, run_nvmmh
from .evaluation.metrics import (
    BUCKETS, METHODS, TARGET_BASELINES, TARGET_ORACLE_FRACTION, FamilyEval, SetResult, metrics_frame, per_shape_frame,
)
from .evaluation.nested import compare_repository_model, evaluate_family, nested_cv, portfolio_curve
from .evaluation.picks import NvmmhPicks, best_of, missing_mask, nvmmh_picks, static_picks
from .evaluation.plots import write_plots
from .evaluation.report import headline_markdown, report_markdown, targets_lines

__all__ = [
    "BUCKETS", "DEFAULTS", "GRIDS", "HOLDOUT_PREFIXES", "METHODS", "OUTPUTS", "TARGET_BASELINES",
    "TARGET_ORACLE_FRACTION", "FamilyData", "FamilyEval", "HyperGrid", "NvmmhPicks", "SetResult", "Settings",
    "best_of", "build_parser", "compare_repository_model", "evaluate_family", "headline_markdown", "load_family",
    "main", "metrics_frame", "missing_mask", "nested_cv", "nvmmh_picks", "per_shape_frame", "portfolio_curve",
    "report_markdown", "run", "run_nvmmh", "short_name", "static_picks", "targets_lines", "write_plots",
]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""Offline evaluation of the kernel picker against baselines, from a measured sweep (CPU only).

    python -m predictor.evaluate SWEEP.parquet [--family F] [--out reports/offline] [--folds 5] [--seed 0]
        [--grid trainer|small] [--k-max 16] [--no-nvmmh] [--nvmmh-gpu PRESET] [--nvmmh-k 8] [--no-plots]

Per family, two sets of held-out shapes:

* **CV** -- nested, grouped cross-validation over the training shapes (every ``source`` not starting
  with ``net:``): the folds are the trainer's own ``GroupKFold`` splits by ``shape_key``
  (:func:`predictor.fitting._folds`, same ``--folds`` and ``--seed``); for every fold the whole
  trainer (:func:`predictor.train.train_family`: its own inner cross-validation of the
  hyper-parameters, greedy portfolio, decision tree, integer tree IR) runs on the other folds (with
  the configs the whole sweep leaves eligible) and the resulting tree IR picks on the fold;
* **net** -- the real-network layers (``source`` starts with ``net:``), never trained on: the
  trainer runs on all training shapes (what ``python -m predictor.train`` ships) and picks on them.

Methods (:data:`predictor.evaluation.metrics.METHODS`): our tree, the oracle of its portfolio, the best single config of the
training shapes, ``SEED_CONFIG`` (int8), the ``cutlass_library`` generator default, a
wave-quantisation heuristic and NVIDIA nvMatmulHeuristics (top-1, best of top-k, and its perf
model ranking our grid) -- see :mod:`predictor.baselines`.

Scoring (:mod:`predictor.portfolio`): only ``status == "ok"`` and verified rows count; a row's time
is :func:`predictor.portfolio.effective_times`; the score of a pick is ``oracle_time /
picked_time``; a pick with no such row for the shape is scored with the shape's worst ok time
(counted per method as "missing").  Writes ``REPORT.md``, PNG figures, ``per_shape.csv`` and
``metrics.csv`` under ``--out``.
"""
from __future__ import annotations

import argparse
import inspect
import shlex
import sys
from pathlib import Path
from typing import Sequence

from .. import baselines
from ..cli import MissingDependencyError, display_path, install_hint, refuse_overwrite, require, run_main
from ..config import Family
from .data import GRIDS
from .driver import OUTPUTS, run
from .report import headline_markdown, targets_lines


#: The defaults of :func:`run`, which the options share.
DEFAULTS = {k: v.default for k, v in inspect.signature(run).parameters.items()
            if v.default is not inspect.Parameter.empty}


def build_parser() -> argparse.ArgumentParser:
    """The options of ``python -m predictor.evaluate``."""
    p = argparse.ArgumentParser(prog="python -m predictor.evaluate", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sweep", type=Path, help="sweep parquet file (predictor.schema format)")
    p.add_argument("--family", choices=[f.value for f in Family], action="append",
                   help="evaluate only this family (repeatable; default: every family in the sweep)")
    p.add_argument("--out", type=Path, default=Path("reports/offline"),
                   help="folder of REPORT.md, metrics.csv, per_shape.csv and the plots; existing files there are "
                        "replaced only with --overwrite")
    p.add_argument("--overwrite", action="store_true", help="replace the report files already in --out")
    p.add_argument("--folds", type=int, default=DEFAULTS["folds"], help="GroupKFold splits (outer and the trainer's inner CV)")
    p.add_argument("--seed", type=int, default=DEFAULTS["seed"], help="seed of the folds and the trees")
    p.add_argument("--grid", choices=sorted(GRIDS), default=DEFAULTS["grid"],
                   help="hyper-parameter grid handed to the trainer (small: for quick runs and tests)")
    p.add_argument("--k-max", type=int, default=DEFAULTS["k_max"], help="largest portfolio size of the k-vs-quality curve")
    p.add_argument("--no-nvmmh", action="store_true",
                   help="skip the nvMatmulHeuristics baseline (otherwise it must be installed: the [eval] extra)")
    p.add_argument("--nvmmh-gpu", default=DEFAULTS["nvmmh_gpu"],
                   help="nvMatmulHeuristics GPU preset (default: from the sweep's GPU name, e.g. H200_SXM)")
    p.add_argument("--nvmmh-k", type=int, default=DEFAULTS["nvmmh_k"], help="top-k of nvMatmulHeuristics")
    p.add_argument("--no-plots", action="store_true", help="do not draw the plots (no matplotlib needed)")
    return p


def _main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    if args.folds < 2:
        raise ValueError("--folds must be >= 2")
    if args.sweep.is_dir():
        raise ValueError(f"{args.sweep} is a folder: pass a sweep parquet file, e.g. sweeps/h200.parquet")
    # the baselines are part of the figures: a missing one is an error, not a silently shorter table
    require("cutlass_library", "eval", "the generator-default baseline of predictor.evaluate")
    if not args.no_nvmmh and not baselines.nvmmh_available():
        raise MissingDependencyError("the nvMatmulHeuristics baseline needs the 'nvMatmulHeuristics' module: "
                                     f"{install_hint('eval')} (or pass --no-nvmmh)")
    if not args.no_plots:
        require("matplotlib", "eval", "the plots of predictor.evaluate (or pass --no-plots)")
    refuse_overwrite([args.out / f for f in OUTPUTS] + sorted(args.out.glob("*.png")), [args.out], args.overwrite,
                     f"pass --overwrite to replace the report in {display_path(args.out)}, or --out DIR")
    command = "python -m predictor.evaluate " + " ".join(shlex.quote(a) for a in argv)
    evals = run(args.sweep, args.out, families=args.family, folds=args.folds, seed=args.seed, grid=args.grid,
                k_max=args.k_max, nvmmh=not args.no_nvmmh, nvmmh_gpu=args.nvmmh_gpu, nvmmh_k=args.nvmmh_k,
                plots=not args.no_plots, command=command)
    print(headline_markdown(evals))
    print("\n".join(targets_lines(evals)))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point: runs the evaluation and prints the headline tables; unusable input ends in
    one line on stderr (exit 2)."""
    return run_main("predictor.evaluate", _main, argv)

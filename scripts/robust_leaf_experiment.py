"""Experiment (session 46; not shipped): ``repick`` leaves ranked by a hinge-penalised log-regret,
``r + MU * max(0, r - TAU)`` per training problem, instead of the plain total log-regret, to trade a little geomean
for fewer large misses.  Runs ``predictor.lono`` or ``predictor.train`` with that rule patched in (leaf answers and
leaf candidates of ``repick`` trees; nothing else changes):

    python scripts/robust_leaf_experiment.py MU TAU lono  <predictor.lono arguments>
    python scripts/robust_leaf_experiment.py MU TAU train <predictor.train arguments, with --models-dir>

Session 46 (``reports/lono/experiments/README.md``): MU 2, TAU log(1/0.95) = 0.0513 and MU 5, TAU log(1/0.9) = 0.1054
on ``i8nhwc90+i8gemm90``; MU 0 reproduces the shipped report.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from predictor import fitting, lono, train  # noqa: E402

MU, TAU = float(sys.argv[1]), float(sys.argv[2])
_plain = fitting._node_costs


def _hinged(kind, tree, classes, port, X, all_regret, n_configs, path=None, prior=None):  # type: ignore[no-untyped-def]
    if kind == "repick" and all_regret is not None:
        r = np.asarray(all_regret)
        all_regret = r + MU * np.maximum(0.0, r - TAU)
    return _plain(kind, tree, classes, port, X, all_regret, n_configs, path, prior)


fitting._node_costs = _hinged
sys.exit({"lono": lono.main, "train": train.main}[sys.argv[3]](sys.argv[4:]))

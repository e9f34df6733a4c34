"""The trained methods of one family: nested grouped CV over the training shapes (the whole
trainer per fold), the model trained on all training shapes on the held-out network layers, and
the portfolio-size curve."""
from __future__ import annotations

import logging
import time
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .. import train
from ..config import Family
from ..fitting import _folds, cross_validate
from ..portfolio import ShapeTable, best_single, greedy_portfolio, picked_times
from .data import HOLDOUT_PREFIXES, FamilyData, Settings
from .metrics import FamilyEval, SetResult
from .picks import best_of

_LOG = logging.getLogger(__name__)


def _train(rows: pd.DataFrame, family: Family, s: Settings, note: str) -> train.FamilyModel:
    g = s.grid
    return train.train_family(rows, family, sweep=s.sweep, sweep_sha=s.sha, target=None,
                              max_portfolio=s.max_portfolio, seed=s.seed, holdout_prefixes=HOLDOUT_PREFIXES,
                              folds=s.folds, tolerance=s.tolerance, k_grid=g.k_grid, depth_grid=g.depth_grid,
                              min_leaf_grid=g.min_leaf_grid, weightings=g.weightings,
                              command=f"predictor.evaluate ({note})")


def _model_picks(data: FamilyData, m: train.FamilyModel, rows: np.ndarray) -> tuple[np.ndarray, list[int]]:
    names = m.ir.predict_many(data.X[rows].tolist())
    port = [data.index(n) for n in m.summary["portfolio"]]
    return np.array([data.index(n) for n in names], dtype=np.int64), port


def nested_cv(data: FamilyData, cv: SetResult, s: Settings) -> tuple[list[tuple[np.ndarray, np.ndarray]],
                                                                    list[dict[str, Any]]]:
    """Fill ``cv``'s tree, portfolio-oracle and best-single picks and its ``fold``: the trainer's own
    folds, the whole trainer run on the other folds; returns the splits and a summary per fold."""
    fam = data.family
    cv_idx = cv.idx
    splits = _folds(cv.table, s.folds, s.seed)  # the trainer's own folds
    for k in ("tree", "portfolio_oracle", "best_single"):
        cv.picks[k] = np.full(len(cv_idx), -1, dtype=np.int64)
    fold_of = np.full(len(cv_idx), -1, dtype=np.int64)
    folds: list[dict[str, Any]] = []
    for f, (tr, te) in enumerate(splits):
        _LOG.info("%s: CV fold %d/%d (%d training, %d test shapes)", fam.value, f + 1, len(splits), len(tr), len(te))
        sub = cv.table.subset(tr)
        keys = set(sub.keys)
        # the fold's training shapes, with the configs the whole sweep leaves eligible (a config that
        # computed a wrong result on any shape -- maybe a test shape -- is excluded, as for the shipped model)
        fold_rows = data.rows[data.rows["shape_key"].isin(keys) & data.rows["config"].isin(data.table.configs)]
        m = _train(fold_rows, fam, s, f"fold {f + 1}/{len(splits)}")
        tree, port = _model_picks(data, m, cv_idx[te])
        cv.picks["tree"][te] = tree
        cv.picks["portfolio_oracle"][te] = best_of(cv.table.subset(te), [port] * len(te))
        cv.picks["best_single"][te] = best_single(sub)
        fold_of[te] = f
        folds.append({"fold": f, "train": int(len(tr)), "test": int(len(te)), **m.summary["hyperparameters"],
                      "leaves": m.summary["tree"]["leaves"], "depth": m.summary["tree"]["depth"],
                      "inner_cv_geomean": m.summary["cv"]["model"]["geomean"]})
    cv.fold = fold_of
    return splits, folds


def evaluate_family(data: FamilyData, s: Settings, static: Mapping[str, np.ndarray],
                    nv_stats: dict[str, Any] | None) -> FamilyEval:
    """Nested CV, the held-out network layers and the portfolio-size curve of one family."""
    fam = data.family
    secs: dict[str, float] = {}
    cv_idx, net_idx = np.nonzero(~data.net)[0], np.nonzero(data.net)[0]
    cv = SetResult("cv", data.table.subset(cv_idx), cv_idx)
    net = SetResult("net", data.table.subset(net_idx), net_idx)
    for res in (cv, net):
        for k, v in static.items():
            res.picks[k] = v[res.idx]

    # ---- (a) nested grouped CV over the training shapes
    t0 = time.time()
    splits, folds = nested_cv(data, cv, s)
    secs["nested_cv"] = time.time() - t0

    # ---- (b) held-out network layers: the model trained on all training shapes
    t0 = time.time()
    full = _train(data.rows, fam, s, "all training shapes")
    if len(net_idx):
        tree, port = _model_picks(data, full, net_idx)
        net.picks["tree"] = tree
        net.picks["portfolio_oracle"] = best_of(net.table, [port] * len(net_idx))
        net.picks["best_single"] = np.full(len(net_idx), best_single(cv.table), dtype=np.int64)
    secs["full_model"] = time.time() - t0
    shipped = {k: full.summary[k] for k in ("portfolio", "hyperparameters", "tree", "cv", "holdout")}
    shipped["repository_model"] = compare_repository_model(data, full, s.sha)

    # ---- portfolio size k vs quality (same folds)
    t0 = time.time()
    kcurve = portfolio_curve(cv.table, data.X[cv_idx], s, splits)
    kcurve["chosen_k"] = int(full.summary["hyperparameters"]["k"])
    secs["k_curve"] = time.time() - t0
    return FamilyEval(data, cv, net, folds, shipped, kcurve, nv_stats, secs)


def compare_repository_model(data: FamilyData, model: train.FamilyModel, sha: str) -> dict[str, Any] | None:
    """Compare the model trained here with the repository's ``models/<gpu>-<family>.tree.json``
    (what ``predictor.select`` loads), when there is one for this sweep: same portfolio, and the
    share of all shapes on which the two pick the same config."""
    from ..resources import models_dir
    from ..tree_ir import TreeIR

    path = models_dir() / f"{train.gpu_slug(data.gpu)}-{data.family.value}.tree.json"
    if not path.exists():
        return None
    try:
        ir = TreeIR.load(path)
    except (OSError, ValueError) as exc:
        return {"path": path.name, "error": str(exc)}
    if ir.meta.get("sweep_sha256") != sha:
        return {"path": path.name, "same_sweep": False}
    rows = data.X.tolist()
    a, b = ir.predict_many(rows), model.ir.predict_many(rows)
    return {"path": path.name, "same_sweep": True, "same_portfolio": list(ir.classes) == list(model.ir.classes),
            "agreement": float(np.mean([x == y for x, y in zip(a, b, strict=True)])), "shapes": len(rows)}


def portfolio_curve(table: ShapeTable, X: np.ndarray, s: Settings,
                    splits: Sequence[tuple[np.ndarray, np.ndarray]]) -> dict[str, Any]:
    """CV geomean against portfolio size k = 1..k_max: the tree (best over the other
    hyper-parameters of the grid, the trainer's :func:`predictor.fitting.cross_validate`) and the
    portfolio's oracle (greedy portfolio of the training folds, best member on the test fold)."""
    ks = list(range(1, s.k_max + 1))
    g = s.grid
    res = cross_validate(table, X, k_grid=ks, depth_grid=g.depth_grid, min_leaf_grid=g.min_leaf_grid,
                         weightings=g.weightings, folds=s.folds, seed=s.seed, tolerance=s.tolerance)
    tree = {k: max((v for c, v in res.scores.items() if c[0] == k), default=float("nan")) for k in ks}
    oracle = {}
    for k in ks:
        picks = np.full(table.n_shapes, -1, dtype=np.int64)
        for tr, te in splits:
            port = greedy_portfolio(table.subset(tr), k)
            picks[te] = best_of(table.subset(te), [port] * len(te))
        oracle[k] = float(np.exp(np.mean(np.log(table.oracle / picked_times(table, picks)))))
    return {"k": ks, "tree": [tree[k] for k in ks], "portfolio_oracle": [oracle[k] for k in ks]}

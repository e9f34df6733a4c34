"""A choice routed over its members' own models.

A choice model (``f16nhwc+f16nhwc90``) is one tree over all its families' configs.  A *router* is a small
classifier tree that sends each problem to one member family instead, whose own model then picks the config; one
exported model holds the router's splits with each member's tree shared under every router leaf that names it
(:func:`predictor.tree_ir.graft`, a DAG that the printers write once per member).

The router learns, per training problem of the choice's table, which member's portfolio holds the faster config
(weighted by how much faster, ``|log ratio|``); its depth and minimum leaf are those of the best grouped-CV score
(:func:`predictor.cv_folds._folds`), where a fold's problems are scored by the best config of the member its
router sends them to.  Measured on the leave-out groups and the held-out networks in
``reports/lono/experiments/router/`` (``scripts/router_experiment.py``).
"""
from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from .cv_folds import _folds
from .features import FEATURE_NAMES
from .portfolio import ShapeTable
from .tree_ir import Leaf, TreeIR, graft

#: The router's hyper-parameter grid: depth, minimum samples per leaf.  Leaves of 32 problems or more: with leaves
#: down to 1 the leave-out figures above 8 GFLOP moved by 0.012 geomean between router seeds (the CV folds' shuffle,
#: the tree's feature order); from 32 up they did not (``reports/lono/experiments/router/``).
ROUTER_DEPTHS = (2, 3, 4, 5, 6, 8, 10)
ROUTER_MIN_LEAF = (32, 64, 128, 256)
#: Added to every training problem's weight, so a tie still counts a little.
WEIGHT_FLOOR = 1e-3


class RouterFit(NamedTuple):
    """A fitted router: the classifier (classes: member keys), its (depth, min leaf) and every grid point's CV
    score (mean log of best-member time over routed-member time, <= 0)."""

    clf: Any
    chosen: tuple[int, int]
    scores: dict[tuple[int, int], float]


def fit_router(table: ShapeTable, X: np.ndarray, best: np.ndarray, members: Sequence[str], *, folds: int = 5,
               seed: int = 0, cv_groups: str = "network") -> RouterFit:
    """The router over ``members`` (``best``: problems x members, :func:`predictor.portfolio.best_of` each member
    model's portfolio) with the (depth, min leaf) of the best ``cv_groups``-grouped CV score, ties to the smaller tree,
    fitted on all of ``table``."""
    from sklearn.tree import DecisionTreeClassifier

    best = np.asarray(best, np.float64)
    if best.shape != (table.n_shapes, len(members)) or len(members) < 2:
        raise ValueError(f"best is {best.shape}: need one column per member ({len(members)} >= 2), a row a problem")
    names = np.array(list(members))
    y = names[np.argmin(best, axis=1)]
    top = np.sort(best, axis=1)
    w = np.log(top[:, 1] / top[:, 0]) + WEIGHT_FLOOR
    low = best.min(axis=1)

    def fit(rows: np.ndarray, depth: int, leaf: int) -> Any:
        return DecisionTreeClassifier(max_depth=depth, min_samples_leaf=leaf, random_state=seed).fit(
            X[rows], y[rows], sample_weight=w[rows])

    splits = _folds(table, folds, seed, cv_groups)
    col = {m: j for j, m in enumerate(members)}
    scores: dict[tuple[int, int], float] = {}
    for depth in ROUTER_DEPTHS:
        for leaf in ROUTER_MIN_LEAF:
            logs = []
            for tr, te in splits:
                sent = np.array([col[m] for m in fit(tr, depth, leaf).predict(X[te])])
                logs.append(np.log(low[te] / best[te, sent]))
            scores[(depth, leaf)] = float(np.concatenate(logs).mean())
    chosen = max(scores, key=lambda h: (round(scores[h], 9), -h[0], h[1]))
    return RouterFit(fit(np.arange(table.n_shapes), *chosen), chosen, scores)


def route_ir(clf: Any, members: Mapping[str, TreeIR], classes: Sequence[str],
             meta: Mapping[str, Any] | None = None) -> TreeIR:
    """One model of the router ``clf`` (its classes: keys of ``members``) and the member models' trees
    (:func:`predictor.tree_ir.graft`); a router of one leaf is its member's tree alone."""
    router = TreeIR.from_sklearn(clf, FEATURE_NAMES, classes=[str(c) for c in clf.classes_])
    root = router.nodes[0]
    if isinstance(root, Leaf):
        m = members[root.label]
        return TreeIR(m.feature_names, tuple(classes), m.nodes, dict(meta or {})).validate()
    return graft(router, members, classes=classes, meta=meta)


__all__ = ["RouterFit", "fit_router", "route_ir", "ROUTER_DEPTHS", "ROUTER_MIN_LEAF", "WEIGHT_FLOOR"]

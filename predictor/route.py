"""A choice routed over its members' own models.

A choice model (``f16nhwc+f16nhwc90``) is one tree over all its families' configs.  A *router* is a small
classifier tree that sends each problem to one member family instead, whose own model then picks the config; one
exported model holds the router's splits with each member's tree shared under every router leaf that names it
(:func:`predictor.tree_ir.graft`, a DAG that the printers write once per member).

A choice's own tree on the pointwise problems (a choice holding a GEMM family, which runs only those, or one
trained with ``--keep-pointwise``) decides the family there; where it answers a config of a member family, that
member's model picks the config (it learned that family on all of its problems, the choice only on those every
family measured): ``reports/lono/experiments/README.md``, session 46.

The router learns, per training problem of the choice's table, which member family's configs hold the faster time
(weighted by how much faster, ``|log ratio|``); its depth and minimum leaf are those of the best grouped-CV score
(:func:`predictor.cv_folds._folds`), where a fold's problems are scored by the best config of the member its
router sends them to.  First measured in ``reports/lono/experiments/router/`` (``scripts/router_experiment.py``);
trained by ``python -m predictor.train --route MEMBER ...`` (:func:`fit_routed`), scored on networks it never saw
by :mod:`predictor.route_lono`.
"""
from __future__ import annotations

import math
import time
from typing import Any, Collection, Mapping, NamedTuple, Sequence

import numpy as np

from .config import Family, KernelConfig
from .cv_folds import _folds
from .features import FEATURE_NAMES, feature_names
from .fitting import POINTWISE, CVResult, Fitted, LeafTree, _columns, fit_key, fit_side, set_candidates
from .portfolio import ShapeTable, TrainError, best_of, best_single, geomean_score, log_ratio, picked_times
from .tree_ir import Leaf, TreeIR, compose, graft

#: The router's hyper-parameter grid: depth, minimum samples per leaf.  Leaves of 32 problems or more: with leaves
#: down to 1 the leave-out figures above 8 GFLOP moved by 0.012 geomean between router seeds (the CV folds' shuffle,
#: the tree's feature order); from 32 up they did not (``reports/lono/experiments/router/``).
ROUTER_DEPTHS = (2, 3, 4, 5, 6, 8, 10)
ROUTER_MIN_LEAF = (32, 64, 128, 256)
#: What the router's CV keeps in one fold: each network's layers (it is chosen for networks it has not seen).
ROUTER_CV_GROUPS = "network"
#: Added to every training problem's weight, so a tie still counts a little.
WEIGHT_FLOOR = 1e-3


def can_route(key: Any, members: Sequence[str]) -> bool:
    """Whether choice ``key`` can be routed over ``members``: two or more of its members that run every convolution,
    or one where it holds a GEMM family (its pointwise problems then get the choice's own tree)."""
    conv = {f.value for f in key.families if f not in key.partial}
    return len(key.families) > 1 and set(members) <= conv and len(set(members)) >= (1 if key.partial else 2)


def handed_to(label: str, members: Collection[str]) -> str | None:
    """The member a routed choice's pointwise answer ``label`` (a config name) is handed to: its family, if that is
    one of ``members``; else ``None`` (the answer stands)."""
    family = KernelConfig.from_name(label).family.value
    return family if family in members else None


class RouterFit(NamedTuple):
    """A fitted router: the classifier (classes: member keys), its (depth, min leaf) and every grid point's CV
    score (mean log of best-member time over routed-member time, <= 0)."""

    clf: Any
    chosen: tuple[int, int]
    scores: dict[tuple[int, int], float]
    #: the member (column of ``best``) the chosen grid point's CV sends each problem to, out of fold
    sent: np.ndarray


def fit_router(table: ShapeTable, X: np.ndarray, best: np.ndarray, members: Sequence[str], *, folds: int = 5,
               seed: int = 0, cv_groups: str = "network") -> RouterFit:
    """The router over ``members`` (``best``: problems x members, :func:`predictor.portfolio.best_of` each member's
    configs) with the (depth, min leaf) of the best ``cv_groups``-grouped CV score, ties to the smaller tree,
    fitted on all of ``table``.  One member (a choice whose only conv member is routed, its GEMM family on the
    pointwise side): a router of one leaf, depth and min leaf 0."""
    from sklearn.tree import DecisionTreeClassifier

    best = np.asarray(best, np.float64)
    if best.shape != (table.n_shapes, len(members)) or not members:
        raise ValueError(f"best is {best.shape}: need one column per member ({len(members)} >= 1), a row a problem")
    names = np.array(list(members))
    if len(members) == 1:
        one = DecisionTreeClassifier(max_depth=1, random_state=seed).fit(X, np.full(table.n_shapes, names[0]))
        return RouterFit(one, (0, 0), {(0, 0): 0.0}, np.zeros(table.n_shapes, np.int64))
    y = names[np.argmin(best, axis=1)]
    top = np.sort(best, axis=1)
    # log ratios from the C library, on the 2**-24 grid (portfolio.LOG_BITS): the same fit on every CPU
    w = log_ratio(top[:, 1], top[:, 0]) + WEIGHT_FLOOR
    low = best.min(axis=1)

    def fit(rows: np.ndarray, depth: int, leaf: int) -> Any:
        return DecisionTreeClassifier(max_depth=depth, min_samples_leaf=leaf, random_state=seed).fit(
            X[rows], y[rows], sample_weight=w[rows])

    splits = _folds(table, folds, seed, cv_groups)
    col = {m: j for j, m in enumerate(members)}
    scores: dict[tuple[int, int], float] = {}
    sent_by: dict[tuple[int, int], np.ndarray] = {}
    for depth in ROUTER_DEPTHS:
        for leaf in ROUTER_MIN_LEAF:
            sent = np.zeros(table.n_shapes, np.int64)
            for tr, te in splits:
                sent[te] = [col[m] for m in fit(tr, depth, leaf).predict(X[te])]
            # the mean log of best / routed member time, summed exactly (the same choice on every CPU)
            scores[(depth, leaf)] = math.fsum(log_ratio(low, best[np.arange(len(low)), sent])) / len(low)
            sent_by[(depth, leaf)] = sent
    chosen = max(scores, key=lambda h: (round(scores[h], 9), -h[0], h[1]))
    return RouterFit(fit(np.arange(table.n_shapes), *chosen), chosen, scores, sent_by[chosen])


def route_ir(clf: Any, members: Mapping[str, TreeIR], classes: Sequence[str],
             meta: Mapping[str, Any] | None = None) -> TreeIR:
    """One model of the router ``clf`` (its classes: keys of ``members``) and the member models' trees
    (:func:`predictor.tree_ir.graft`); a router of one leaf is its member's tree alone."""
    router = TreeIR.from_sklearn(clf, feature_names(clf.n_features_in_), classes=[str(c) for c in clf.classes_])
    root = router.nodes[0]
    if isinstance(root, Leaf):
        m = members[root.label]
        return TreeIR(m.feature_names, tuple(classes), m.nodes, dict(meta or {})).validate()
    return graft(router, members, classes=classes, meta=meta)


def family_best(table: ShapeTable, families: Sequence[str]) -> np.ndarray:
    """The router's labels: each problem's fastest time in each family's whole grid (problems x ``families``), which
    a leave-out fold can know too (:mod:`predictor.route_lono`), unlike the member models' fold portfolios."""
    grids = [[c for c in table.configs if KernelConfig.from_name(c).family.value == f] for f in families]
    return np.stack([best_of(table, g) for g in grids], axis=1)


class RoutedModel:
    """A fitted routed choice: ``router`` (a classifier over member keys) sends each problem to its member's tree
    (``members``); with ``pointwise`` (a choice holding a family that runs only pointwise problems, or one trained
    with ``--keep-pointwise``) the problems with ``pointwise > 0`` go to that tree instead, the choice's own over
    every config, and where it answers a config of a member family that member's tree picks the config
    (:meth:`member_of`: the choice's tree chooses the family, the family's own model, trained on all of that
    family's problems, the config).  Saved as such a choice's model; its IR is :func:`routed_ir`."""

    def __init__(self, router: Any, members: Mapping[str, TreeIR], pointwise: LeafTree | None, feature: int):
        self.router, self.members, self.pointwise, self.feature = router, dict(members), pointwise, feature
        self.kind = "route"

    def member_of(self, label: str) -> str | None:
        """The member a pointwise answer ``label`` (a config name) is handed to (:func:`handed_to`)."""
        return handed_to(label, self.members)

    def predict(self, X: Any) -> np.ndarray:
        """Config name of every row of the integer feature matrix ``X``."""
        X = np.asarray(X)
        out = np.empty(len(X), dtype=object)
        pw = X[:, self.feature] > 0 if self.pointwise is not None else np.zeros(len(X), bool)
        if pw.any():
            rows = X[pw]
            out[pw] = [label if (m := self.member_of(label)) is None else self.members[m].predict(x)
                       for label, x in zip(self.pointwise.predict(rows), rows.tolist())]  # type: ignore[union-attr]
        rest = np.nonzero(~pw)[0]
        if len(rest):
            sent = self.router.predict(X[rest][:, :self.router.n_features_in_])
            out[rest] = [self.members[str(m)].predict(x) for m, x in zip(sent, X[rest].tolist())]
        return out


def routed_ir(model: RoutedModel, classes: Sequence[str], meta: Mapping[str, Any] | None = None,
              check_X: Any = None) -> TreeIR:
    """The one exported model of ``model``: the router grafted onto its members (:func:`route_ir`), under a root
    split ``pointwise <= 0`` when it has a pointwise tree (:func:`predictor.tree_ir.compose`, that tree on the
    right, its leaves answering a member family's config grafted onto that member: each member's nodes once,
    shared by both sides).  With ``check_X``: checked against the model."""
    if model.pointwise is None:
        rest = route_ir(model.router, model.members, classes)
        ir = TreeIR(rest.feature_names, rest.classes, rest.nodes, dict(meta or {})).validate()
    else:
        router = TreeIR.from_sklearn(model.router, feature_names(model.router.n_features_in_),
                                     classes=[str(c) for c in model.router.classes_])
        answers = set(model.pointwise.node_labels) | {c for cs in model.pointwise.node_candidates or () for c in cs}
        pw = TreeIR.from_sklearn(model.pointwise, feature_names(model.pointwise.tree_.n_features),
                                 classes=sorted(answers))
        top = compose(router, pw, model.feature, 0, classes=(*router.classes, *pw.classes))
        ir = graft(top, model.members, classes=classes, meta=meta,
                   member_of=lambda label: label if label in model.members else model.member_of(label))
    if check_X is not None:
        ir.check_against(model, check_X)
    return ir


def fit_routed(table: ShapeTable, X: np.ndarray, kind: str, *, members: Mapping[str, TreeIR],
               partial: Sequence[Family] = (), k_grid: Sequence[int], depth_grid: Sequence[int],
               min_leaf_grid: Sequence[int], weightings: Sequence[str], folds: int, seed: int, tolerance: float,
               threads: int = 1, cv_groups: str = "problem", keep_pointwise: bool = False,
               features: int | None = None) -> tuple[CVResult, Fitted, RouterFit]:
    """A choice's model routed over its ``members``' own models (each a :class:`TreeIR` over configs of the
    choice's ``table``): the router (:func:`fit_router`) on the problems its members run; with ``partial``
    families, the pointwise problems get a tree of ``kind`` over every config as
    :func:`predictor.fitting.fit_key` fits that side (its CV grouped by ``cv_groups``; the router's always by
    network, :data:`ROUTER_CV_GROUPS`); with ``keep_pointwise`` (a choice without them), the pointwise problems
    keep the choice's own tree of ``kind``, fitted on all its problems, and the router sees the others.  Either
    pointwise tree's answer of a member family's config is handed to that member (:meth:`RoutedModel.member_of`).
    The CV result's out-of-fold picks: the member the router's CV sends a problem to, that (shipped, in-sample)
    member's pick; the pointwise side's own CV, handed on likewise.  ``features``: how many leading columns of ``X`` the router and the pointwise
    tree read (the choice's feature set, :data:`predictor.features.FEATURE_SETS`; default all), the members all of
    theirs."""
    t0 = time.time()
    names = list(members)
    index = {c: j for j, c in enumerate(table.configs)}
    absent = sorted({c for m in members.values() for c in m.classes if c not in index})
    if absent:
        raise TrainError(f"{len(absent)} config(s) of the members' models are not among the choice's configs, "
                         f"e.g. {absent[0]}")
    feature = FEATURE_NAMES.index(POINTWISE)
    pw = X[:, feature] > 0 if partial or keep_pointwise else np.zeros(len(X), bool)
    rest = np.nonzero(~pw)[0]
    rest_t = table.subset(rest)
    conv = np.array([j for j, c in enumerate(table.configs) if KernelConfig.from_name(c).family not in partial])
    Xc = X[:, :features] if features else X  # what the choice's own trees read
    rf = fit_router(rest_t, Xc[rest], family_best(rest_t, names), names, folds=folds, seed=seed,
                    cv_groups=ROUTER_CV_GROUPS)
    picks = np.full(table.n_shapes, -1, np.int64)
    single = np.full(table.n_shapes, -1, np.int64)
    picks[rest] = [index[members[names[s]].predict(x)] for s, x in zip(rf.sent, X[rest].tolist())]
    for tr, te in _folds(rest_t, folds, seed, ROUTER_CV_GROUPS):  # the router's CV folds
        single[rest[te]] = conv[best_single(_columns(rest_t.subset(tr), conv.tolist()))]
    depth, leaf = rf.chosen
    router_grid = {"kind": "router", "members": names, "max_depth": list(ROUTER_DEPTHS),
                   "min_samples_leaf": list(ROUTER_MIN_LEAF), "folds": folds, "cv_groups": ROUTER_CV_GROUPS}
    combo = (len(names), "router", leaf, depth)
    router_cv = CVResult({combo: geomean_score(rest_t.oracle, picked_times(rest_t, picks[rest]))}, combo,
                         picks[rest], single[rest], "router", time.time() - t0, router_grid)
    used = {c for m in members.values() for c in m.classes}
    pw_model = None
    parts: dict[str, CVResult] = {}
    settings = dict(k_grid=k_grid, depth_grid=depth_grid, min_leaf_grid=min_leaf_grid, weightings=weightings,
                    folds=folds, seed=seed, tolerance=tolerance, threads=threads, cv_groups=cv_groups)
    rows = np.nonzero(pw)[0]
    if partial:  # as predictor.fitting.fit_key fits the pointwise side of such a choice
        sub, pcv, pfit = fit_side(table, Xc, rows, range(len(table.configs)), POINTWISE, {**settings, "kind": kind})
        used |= {c for c in pfit.classes if handed_to(c, members) is None}
        if kind != "class":  # its candidates: any config of the model a pointwise problem can run
            set_candidates(pfit.model, sub, Xc[rows], sorted(used))
        picks[rows], single[rows] = pcv.model_picks, pcv.single_picks
        pw_model, parts = pfit.model, {"rest": router_cv, POINTWISE: pcv}
    elif keep_pointwise:  # the choice's own tree, as predictor.fitting.fit_key fits it, on its pointwise problems
        pcv, pfit = fit_key(table, Xc, kind, **settings)  # type: ignore[arg-type]
        used |= {c for c in pfit.classes if handed_to(c, members) is None}
        picks[rows], single[rows] = pcv.model_picks[rows], pcv.single_picks[rows]
        pw_model, parts = pfit.model, {"rest": router_cv, POINTWISE: pcv}
    for i in rows:  # out of fold too, a member family's answer is its (shipped, in-sample) member's pick
        m = handed_to(table.configs[picks[i]], members)
        if m is not None:
            picks[i] = index[members[m].predict(X[i].tolist())]
    classes = tuple(c for c in table.configs if c in used)
    score = geomean_score(table.oracle, picked_times(table, picks))
    if parts:
        cv = CVResult({parts[POINTWISE].chosen: score}, parts[POINTWISE].chosen, picks, single, kind,
                      time.time() - t0, {**parts[POINTWISE].grid, "routed_by": POINTWISE, "router": router_grid}, parts)
    else:
        cv = CVResult({combo: score}, combo, picks, single, "router", time.time() - t0, router_grid)
    grown = tuple(dict.fromkeys((*(c for m in names for c in members[m].classes),
                                 *(pfit.portfolio if parts else ()))))
    return cv, Fitted(RoutedModel(rf.clf, members, pw_model, feature), classes, grown), rf  # type: ignore[arg-type]


__all__ = ["RouterFit", "RoutedModel", "family_best", "can_route", "handed_to", "fit_router", "fit_routed", "route_ir", "routed_ir", "ROUTER_CV_GROUPS", "ROUTER_DEPTHS",
           "ROUTER_MIN_LEAF", "WEIGHT_FLOOR"]

"""Fitting and cross-validating the selection tree (shared by :mod:`predictor.train` and
:mod:`predictor.lono`).

A model is one scikit-learn decision tree over the integer features whose leaves each answer one
config name.  The kinds differ in how the tree is grown and what a leaf answers:

* ``class``: a ``DecisionTreeClassifier`` learns each problem's fastest member of a greedy portfolio
  of ``k`` configs (:func:`training_set` weights); a leaf answers its majority class (what shipped first).
* ``repick``: the same tree, but every leaf answers the config of the *whole grid* with the least total
  log-regret ``log(time / fastest time)`` over its training problems (a missing config counts the
  problem's worst time), i.e. the leaf's geomean-best config.
* ``regret``: a multi-output ``DecisionTreeRegressor`` learns the log-regret vector of the ``k`` portfolio
  members; leaves are re-picked over the whole grid as for ``repick``.
* ``distill``: a random forest (the teacher, :data:`TEACHER`) learns the members' log-regret vector (clipped
  at :data:`REGRET_CLIP`); its least-regret member labels the training problems and :data:`COPIES`
  perturbed copies of each (:func:`synthetic_neighbours`), and one ``DecisionTreeClassifier`` (the student,
  exported like the others) learns those labels; a leaf answers its majority label.
* ``cost``: as ``distill``, with :class:`predictor.cost_teacher.CostTeacher` as the teacher: one
  gradient-boosted cost model of every (problem, member) pair that describes a config by its fields and the
  pair's tile quantisation, so what it learns on one config carries over to similar ones; it learns
  :data:`TEACHER_CONFIGS` configs once per training set, a portfolio's labels are its members' argmin.
* ``dense``: ``cost`` with more perturbed copies (:data:`COPIES`), followed more closely between problems.
* ``blend``: ``dense``'s tree, but a node answers the portfolio member of least mean teacher-predicted
  log-regret over its samples plus :data:`BLEND` x its mean measured log-regret over its training problems
  (the teacher alone where it holds none): measurements, not a vote, settle each leaf.
* ``near``: ``blend`` with its teacher's pairs weighted towards each problem's fastest configs (:data:`NEAR`).
* ``soft``: ``dense``'s teacher and copies, but the student learns the teacher's soft answer, not its argmin: a
  multi-output ``DecisionTreeRegressor`` of ``softmax(-predicted log-regret / tau)`` over the portfolio
  (:data:`SOFT`; on one-hot targets its squared error is the Gini impurity, so this is Gini on soft labels); a
  node answers the member of largest mean, so near-ties between members no longer split the tree on noise.
  ``soft10``: the same at temperature 0.1 (softer labels; the paired screen preferred it for ``f16nhwc``).

Every leaf also records its *candidates* for first-call tuning (:func:`node_candidates`, at most
:data:`~predictor.tree_ir.MAX_CANDIDATES`): its answer, then exported configs (the model's ``classes``,
so a dispatcher holds no extra kernel), each the one that most lowers the leaf's total log-regret of the
best candidate so far, then by least total log-regret (``class``: by weight); they change no prediction.
All kinds export alike (:meth:`predictor.tree_ir.TreeIR.from_sklearn`): one tree, a leaf -> config index.

Hyper-parameters (``k``, sample weighting, ``min_samples_leaf``, ``max_depth``) are chosen by ``GroupKFold``
cross-validation grouped by problem (:func:`cross_validate`); depths are evaluated by truncating the
deepest fitted tree (a node's own answer at the cut), the chosen combination is then cross-validated exactly.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .config import Family, KernelConfig
from .cv_folds import CV_GROUPS, _folds, base_keys, cv_group_labels  # noqa: F401  (re-exported)
from .features import FEATURE_NAMES, feature_names
from .leaf_candidates import node_candidates
from .neighbours import synthetic_neighbours
from .portfolio import (ShapeTable, TrainError, best_single, dyadic, geomean_score, greedy_portfolio, log_ratio,
                        picked_times, portfolio_targets, scalar_exp)
from .tree_ir import MAX_CANDIDATES, TreeIR, compose

#: ``soft`` kinds: the temperature (in log-regret) of the soft labels the student learns.
SOFT = {"soft": 0.05, "soft10": 0.1}
#: Model kinds (module docstring); ``class`` is the first shipped method.
KINDS = ("class", "repick", "regret", "distill", "cost", "dense", "blend", "near", *SOFT)
#: Kinds whose leaves answer their majority class (the others re-pick over the whole grid).
MAJORITY_KINDS = frozenset({"class", "distill", "cost", "dense", *SOFT})
#: Kinds whose tree learns a teacher's labels of the training problems and perturbed copies of them.
TEACHER_KINDS = frozenset({"distill", "cost", "dense", "blend", "near", *SOFT})
COST_KINDS = frozenset({"cost", "dense", "blend", "near", *SOFT})  # CostTeacher
BLEND_KINDS = frozenset({"blend", "near"})
#: ``blend``: the weight of a node's mean measured log-regret next to its mean teacher-predicted one.
BLEND = 2.0
#: The cost teacher's pair weighting per kind (``CostTeacher(near=...)``; 0, every pair alike, elsewhere).
NEAR = {"near": 0.1}
#: ``distill``'s teacher: a scikit-learn random forest regressor's parameters.
TEACHER = {"n_estimators": 100, "min_samples_leaf": 2, "max_features": 0.5}
#: ``distill`` and ``cost``: log-regrets above this (a member 2.7x slower) are learned as this by the teacher.
REGRET_CLIP = 1.0
#: Perturbed copies of each training problem the teacher labels for the student, per teacher kind.
COPIES = {"distill": 8, "cost": 8, "dense": 16, "blend": 16, "near": 16, **dict.fromkeys(SOFT, 16)}
#: The kind :mod:`predictor.train` fits unless told otherwise.
DEFAULT_KIND = "repick"
#: Default hyper-parameter grid (k: :func:`portfolio_sizes`) and how much CV geomean a smaller model may lose and
#: still be chosen (0: the best; predictor.train and predictor.lono alike).
K_GRID = (2, 3, 4, 6, 8, 10, 12, 16, 24)
CV_TOLERANCE = 0.0
DEPTH_GRID = (2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 20)
MIN_LEAF_GRID = (1, 2, 4, 8, 16, 32)
WEIGHTINGS = ("regret", "expand", "uniform")
WEIGHT_EPS = 2.0 ** -7  # ~0.008, dyadic (portfolio.LOG_BITS)

Combo = tuple[int, str, int, int]  # (k, weighting, min_samples_leaf, max_depth)


# --------------------------------------------------------------------------- training sets
def training_set(X: np.ndarray, label: np.ndarray, regret: np.ndarray, weighting: str
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, sample_weight) for the classifier; ``y`` are positions in the portfolio; ``regret``:
    ``log(t / best portfolio t)`` per shape and portfolio member (missing -> worst). ``uniform``: one sample
    per shape, weight 1; ``regret``: one sample per shape (its fastest member), weight = mean log-regret of
    the other members + eps (a wrong pick that costs more counts more); ``expand``: one sample per (shape,
    member), weight ``max_c regret - regret_member`` (+ eps on the fastest): a leaf's majority class is then
    exactly the member with the least total log-regret over the leaf's shapes."""
    keep = label >= 0
    X, label, regret = X[keep], label[keep], regret[keep]
    k = regret.shape[1]
    if weighting == "uniform" or k == 1:
        return X, label, np.ones(len(label))
    if weighting == "regret":
        return X, label, dyadic(regret.sum(axis=1) / (k - 1)) + WEIGHT_EPS
    if weighting == "expand":
        w = regret.max(axis=1, keepdims=True) - regret
        w[np.arange(len(label)), label] += WEIGHT_EPS
        rows, cols = np.nonzero(w > 0)
        return X[rows], cols, w[rows, cols]
    raise ValueError(f"unknown weighting {weighting!r}")


def portfolio_sizes(k_grid: Sequence[int] | None, max_portfolio: int) -> list[int]:
    """The portfolio sizes to cross-validate: ``k_grid`` (default :data:`K_GRID` and ``max_portfolio``) in 1..max."""
    grid = sorted({k for k in K_GRID if k <= max_portfolio} | {max_portfolio}) if not k_grid else k_grid
    return [k for k in grid if 1 <= k <= max_portfolio] or [max_portfolio]


def regret_matrix(table: ShapeTable) -> np.ndarray:
    """``log(time / fastest time)`` of every (problem, config) of ``table``; a missing config
    counts the problem's worst time (the scoring rule of :mod:`predictor.portfolio`)."""
    eff = np.where(np.isnan(table.times), table.worst[:, None], table.times)
    return log_ratio(eff, table.oracle[:, None])


def _weightings(kind: str, weightings: Sequence[str]) -> list[str]:
    if kind not in KINDS:
        raise ValueError(f"unknown model kind {kind!r} (one of {KINDS})")
    return ["uniform"] if kind in ("regret", *TEACHER_KINDS) else list(weightings)


_TEACHER_CACHE: dict[str, tuple[np.ndarray, np.ndarray]] = {}

#: ``cost``: the teacher learns the configs of the greedy portfolio of this size (and the model's own
#: portfolio, if not among them), once per training set; each portfolio's labels are its members' argmin.
TEACHER_CONFIGS = 32


@dataclass(frozen=True)
class Teacher:
    """What the cost teacher learns: config names, their log-regret per training problem, and the
    positions of the model's portfolio among them."""
    configs: tuple[str, ...]
    regret: np.ndarray
    members: tuple[int, ...]


def cost_teacher_set(table: ShapeTable, port: Sequence[int], wide: Sequence[int], all_regret: np.ndarray) -> Teacher:
    """:class:`Teacher` of ``table`` for portfolio ``port``: the configs of ``wide`` (its greedy portfolio of
    :data:`TEACHER_CONFIGS`) and ``port``, in table order, their columns of ``all_regret``
    (:func:`regret_matrix` of ``table``)."""
    cols = sorted(set(wide) | set(port))
    return Teacher(tuple(table.configs[j] for j in cols), all_regret[:, cols], tuple(cols.index(j) for j in port))


def _teacher_predictions(X: np.ndarray, regret: np.ndarray, seed: int, copies: int, configs: Sequence[str] = (),
                         near: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(training problems + ``copies`` perturbed copies of each, the teacher's predicted log-regret of each
    config): ``distill``'s forest, or with the configs' names the cost model (``near``: its weighting); cached
    per (X, regret, seed, configs, copies, near), since a cross-validation fold refits only the student."""
    key = hashlib.sha256(X.tobytes() + regret.tobytes()
                         + str((X.shape, regret.shape, seed, tuple(configs), copies, near)).encode()).hexdigest()
    if key not in _TEACHER_CACHE:
        Z = np.vstack([X, synthetic_neighbours(X, copies, seed)])
        clipped = np.minimum(regret, REGRET_CLIP)
        if regret.shape[1] == 1:
            pred = np.zeros((len(Z), 1))
        elif configs:
            from .cost_teacher import CostTeacher

            pred = CostTeacher(configs, seed, near).fit(X, clipped).predict(Z)
        else:
            from sklearn.ensemble import RandomForestRegressor

            forest = RandomForestRegressor(random_state=seed, n_jobs=1, **TEACHER)
            forest.fit(X.astype(np.float32), clipped)
            pred = forest.predict(Z.astype(np.float32))
        if len(_TEACHER_CACHE) >= 64:
            _TEACHER_CACHE.clear()
        _TEACHER_CACHE[key] = (Z, pred)
        return Z, pred  # not a second lookup: another thread (``threads``) may clear the cache meanwhile
    return _TEACHER_CACHE[key]


def soft_labels(log_regret: np.ndarray, tau: float) -> np.ndarray:
    """``softmax(-log_regret / tau)`` of every row (``soft``'s student targets; ``exp``: :func:`scalar_exp`),
    :func:`dyadic`, so the student's split gains sum them exactly, in any order."""
    S = scalar_exp(-(log_regret - log_regret.min(axis=1, keepdims=True)) / tau)
    return dyadic(S / S.sum(axis=1, keepdims=True))


def _fit_tree(kind: str, X: np.ndarray, label: np.ndarray, regret: np.ndarray, weighting: str,
              depth: int | None, min_leaf: int, seed: int, teacher: Teacher | None = None
              ) -> tuple[Any, np.ndarray, np.ndarray | None]:
    """The grown sklearn tree, its classes (portfolio positions; empty for ``regret``) and (``blend``) each
    node's mean teacher-predicted log-regret of the portfolio members; ``teacher``: what the cost teacher
    learns (:func:`cost_teacher_set`)."""
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    if kind == "regret":
        keep = label >= 0
        reg = DecisionTreeRegressor(max_depth=depth, min_samples_leaf=min_leaf, random_state=seed)
        return reg.fit(X[keep], regret[keep]), np.zeros(0, np.int64), None
    if kind in TEACHER_KINDS:
        keep = label >= 0
        if kind in COST_KINDS:
            assert teacher is not None, "the cost kinds need their teacher's configs"
            Z, pred = _teacher_predictions(X[keep], teacher.regret[keep], seed, COPIES[kind], teacher.configs,
                                           NEAR.get(kind, 0.0))
            P = pred[:, list(teacher.members)]
            if kind in SOFT:
                reg = DecisionTreeRegressor(max_depth=depth, min_samples_leaf=min_leaf, random_state=seed)
                return reg.fit(Z.astype(np.float32), soft_labels(P, SOFT[kind])), np.arange(P.shape[1]), None
            labels = np.argmin(P, axis=1)
        else:
            Z, pred = _teacher_predictions(X[keep], regret[keep], seed, COPIES[kind])
            labels = np.argmin(pred, axis=1)
        clf = DecisionTreeClassifier(max_depth=depth, min_samples_leaf=min_leaf, random_state=seed)
        clf.fit(Z.astype(np.float32), labels)
        if kind not in BLEND_KINDS:
            return clf, np.asarray(clf.classes_), None
        assert teacher is not None
        path = _decision_path(clf, Z)
        prior = np.asarray(path.T @ pred[:, list(teacher.members)]) / np.asarray(path.sum(axis=0)).reshape(-1, 1)
        return clf, np.asarray(clf.classes_), prior
    Xw, yw, ww = training_set(X, label, regret, weighting)
    clf = DecisionTreeClassifier(max_depth=depth, min_samples_leaf=min_leaf, random_state=seed)
    clf.fit(Xw, yw, sample_weight=ww)
    return clf, np.asarray(clf.classes_), None


def _decision_path(tree: Any, X: np.ndarray) -> Any:
    """(problems, nodes) sparse indicator of the nodes each row of ``X`` passes through."""
    return tree.decision_path(X.astype(np.float32))


def _class_weights(tree: Any) -> np.ndarray:
    """(nodes, classes) weight of every class in every node: a classifier's class values, ``soft``'s
    regressor's mean soft label of each portfolio member."""
    value = tree.tree_.value
    return value.reshape(value.shape[0], -1)  # (nodes, 1, classes) or (nodes, members, 1)


def _node_costs(kind: str, tree: Any, classes: np.ndarray, port: Sequence[int], X: np.ndarray,
                all_regret: np.ndarray | None, n_configs: int, path: Any = None, prior: np.ndarray | None = None
                ) -> np.ndarray:
    """(nodes, configs of the table) cost by which every node of ``tree`` ranks the configs (less
    is better; ``inf``: not a choice): minus the class weight (``class``: the portfolio members), ``blend``'s
    mix of ``prior`` (:func:`_fit_tree`) and measured log-regret (the portfolio members), or
    the total log-regret over the training problems in the node (the other kinds, every config;
    ``path``: :func:`_decision_path` of ``X`` if already computed)."""
    if kind in MAJORITY_KINDS:
        value = _class_weights(tree)
        costs = np.full((value.shape[0], n_configs), np.inf)
        costs[:, np.asarray(port)[classes]] = -value
        return costs
    assert all_regret is not None
    if path is None:
        path = _decision_path(tree, X)
    if kind not in BLEND_KINDS:
        return np.asarray(path.T @ all_regret)  # (nodes, configs)
    assert prior is not None, "blend needs its teacher's node means"
    cols = np.asarray(port)
    costs = np.full((prior.shape[0], n_configs), np.inf)
    held = np.maximum(np.asarray(path.sum(axis=0)).reshape(-1, 1), 1)
    costs[:, cols] = prior + BLEND * np.asarray(path.T @ all_regret[:, cols]) / held
    return costs


def _node_answers(kind: str, tree: Any, classes: np.ndarray, port: Sequence[int],
                  costs: np.ndarray | None) -> np.ndarray:
    """Config index (into the table) that every node of ``tree`` answers: the majority class
    (``class``; ``costs`` unused) or the config of least ``costs`` (:func:`_node_costs`: the least
    total log-regret of the training problems in the node)."""
    if kind in MAJORITY_KINDS:
        return np.asarray(port)[classes[np.argmax(_class_weights(tree), axis=1)]]
    assert costs is not None
    return np.argmin(costs, axis=1)  # first minimum: configs are sorted by name


def _nodes_by_depth(tree: Any, X: np.ndarray, depths: Sequence[int]) -> dict[int, np.ndarray]:
    """Node each row of ``X`` reaches when the tree is cut at each depth."""
    t = tree.tree_
    left, right, feat, thr = t.children_left, t.children_right, t.feature, t.threshold
    X32 = X.astype(np.float32)
    node = np.zeros(len(X), dtype=np.int64)
    out: dict[int, np.ndarray] = {}
    rows = np.arange(len(X))
    for d in range(max(depths) + 1):
        if d in depths:
            out[d] = node.copy()
        internal = left[node] != -1
        go_left = X32[rows, np.maximum(feat[node], 0)] <= thr[node]
        node = np.where(internal, np.where(go_left, left[node], right[node]), node)
    return out


# --------------------------------------------------------------------------- the fitted model
class LeafTree:
    """A fitted scikit-learn tree whose leaves answer stored config names.

    ``predict(X)`` is ``labels[estimator.apply(X)]``; this is the object saved as the model and
    what the exported IR must agree with."""

    def __init__(self, estimator: Any, node_labels: Sequence[str], kind: str,
                 node_candidates: Sequence[tuple[str, ...]] | None = None):
        self.estimator = estimator
        self.node_labels = np.asarray(node_labels, dtype=object)
        self.kind = kind
        #: per sklearn node: the label, then the next configs by the same criterion (first-call tuning)
        self.node_candidates = None if node_candidates is None else [tuple(c) for c in node_candidates]

    @property
    def tree_(self) -> Any:
        return self.estimator.tree_

    @property
    def classes_(self) -> np.ndarray:
        leaves = self.estimator.tree_.children_left == -1
        return np.array(sorted(set(self.node_labels[leaves])), dtype=object)

    def predict(self, X: Any) -> np.ndarray:
        """Config name of every row of the integer feature matrix ``X`` (its leading columns: the features the
        tree was fitted on, :data:`predictor.features.FEATURE_SETS`)."""
        X = np.asarray(X)[:, :self.estimator.n_features_in_]
        return self.node_labels[self.estimator.apply(X.astype(np.float32))]


@dataclass(frozen=True)
class Fitted:
    """A fitted model: the tree, the configs its table exports (``classes``) and the greedy
    portfolio its tree was grown on."""

    model: LeafTree
    classes: tuple[str, ...]
    portfolio: tuple[str, ...]


def fit_model(table: ShapeTable, X: np.ndarray, kind: str, combo: Combo, seed: int) -> Fitted:
    """Fit one model of ``kind`` with hyper-parameters ``combo`` on all problems of ``table``.

    ``classes`` (the exported config table): the whole portfolio for ``class`` (as first shipped),
    the configs some leaf answers, in table order, for the re-picking kinds."""
    k, weighting, min_leaf, depth = combo
    port = greedy_portfolio(table, k)
    if not port:
        raise TrainError("no portfolio could be formed")
    label, regret = portfolio_targets(table, port)
    all_regret = None if kind == "class" else regret_matrix(table)
    teacher = cost_teacher_set(table, port, greedy_portfolio(table, TEACHER_CONFIGS), all_regret) \
        if kind in COST_KINDS else None
    tree, classes, prior = _fit_tree(kind, X, label, regret, weighting, depth, min_leaf, seed, teacher)
    path = None if kind == "class" else _decision_path(tree, X)
    costs = _node_costs(kind, tree, classes, port, X, all_regret, len(table.configs), path, prior)
    answers = _node_answers(kind, tree, classes, port, costs)
    labels = [table.configs[j] for j in answers]
    names = tuple(table.configs[j] for j in port)
    leaf = tree.tree_.children_left == -1
    exported = names if kind == "class" else tuple(table.configs[j] for j in sorted(set(answers[leaf].tolist())))
    model = LeafTree(tree, labels, kind, node_candidates(costs, answers, table.configs, exported,
                                                         path=path, regret=all_regret))
    return Fitted(model, exported, names)


def set_candidates(model: LeafTree, table: ShapeTable, X: np.ndarray, allowed: Sequence[str]) -> None:
    """Record again every node's candidates (:func:`node_candidates`) of a re-picking ``model``
    (``repick``, ``regret``) fitted on ``table`` (features ``X``), now among ``allowed`` (a routed
    model's sides: every config of the whole model)."""
    assert model.kind != "class", "a class model's candidates come from its class weights (fit_model)"
    all_regret = regret_matrix(table)
    path = _decision_path(model.estimator, X)
    # ranked by total log-regret (as ``repick`` ranks them) whatever the kind's own leaf answers
    costs = _node_costs("repick", model.estimator, np.zeros(0, np.int64), (), X, all_regret,
                        len(table.configs), path)
    index = {c: j for j, c in enumerate(table.configs)}
    answers = np.array([index[c] for c in model.node_labels])
    model.node_candidates = node_candidates(costs, answers, table.configs, [c for c in allowed if c in index],
                                            path=path, regret=all_regret)


# --------------------------------------------------------------------------- cross-validation
@dataclass
class CVResult:
    scores: dict[Combo, float]  # combination -> out-of-fold geomean
    chosen: Combo
    model_picks: np.ndarray  # out-of-fold picks (config index) of the chosen combination, exact
    single_picks: np.ndarray  # out-of-fold best single config
    kind: str = "class"
    seconds: float = 0.0
    grid: dict[str, Any] = field(default_factory=dict)
    #: a routed model (:func:`fit_key`): the cross-validation of each side ("rest", "pointwise")
    parts: dict[str, "CVResult"] = field(default_factory=dict)


def _map(fn: Any, items: Sequence[Any], threads: int) -> list[Any]:
    """``[fn(x) for x in items]`` on up to ``threads`` threads (scikit-learn fits release the GIL), each with one
    OpenMP thread (the cost teacher's): a pool of every core per thread crawls, oversubscribed."""
    if threads <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    def one(x: Any) -> Any:
        with threadpool_limits(limits=1, user_api="openmp"):  # this thread's OpenMP setting only
            return fn(x)
    with ThreadPoolExecutor(max_workers=min(threads, len(items))) as pool:
        return list(pool.map(one, items))


def cross_validate(table: ShapeTable, X: np.ndarray, *, k_grid: Sequence[int], depth_grid: Sequence[int],
                   min_leaf_grid: Sequence[int], weightings: Sequence[str], folds: int, seed: int,
                   tolerance: float, kind: str = "class", threads: int = 1, cv_groups: str = "problem") -> CVResult:
    """Grid search over (k, weighting, min_samples_leaf, max_depth) for a model of ``kind``.

    Among combinations within ``tolerance`` of the best out-of-fold geomean the smallest (k, depth,
    -min_samples_leaf, weighting order) wins; it is then cross-validated exactly (``threads``: folds at once;
    ``cv_groups``: what a fold keeps together, :data:`CV_GROUPS`)."""
    t0 = time.time()
    n = table.n_shapes
    weightings = _weightings(kind, weightings)
    splits = _folds(table, folds, seed, cv_groups)
    all_regret = regret_matrix(table) if kind != "class" else None
    depths = sorted(set(depth_grid))

    def split_picks(split: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, dict[Combo, np.ndarray]]:
        """(best single config, each combination's picks) of one fold's held-out problems."""
        tr, te = split
        sub = table.subset(tr)
        cache: dict[tuple[tuple[int, ...], str, int], dict[int, np.ndarray]] = {}
        out: dict[Combo, np.ndarray] = {}
        wide = greedy_portfolio(sub, TEACHER_CONFIGS) if kind in COST_KINDS else None
        for k in k_grid:
            port = tuple(greedy_portfolio(sub, k))
            if not port:
                continue
            label, regret = portfolio_targets(sub, port)
            for weighting in weightings:
                for min_leaf in min_leaf_grid:
                    key = (port, weighting, min_leaf)  # a larger k may give the same portfolio
                    if key not in cache:
                        teacher = cost_teacher_set(sub, port, wide, all_regret[tr]) if kind in COST_KINDS else None
                        tree, classes, prior = _fit_tree(kind, X[tr], label, regret, weighting, max(depths),
                                                         min_leaf, seed, teacher)
                        costs = None if all_regret is None else _node_costs(
                            kind, tree, classes, port, X[tr], all_regret[tr], all_regret.shape[1], prior=prior)
                        answers = _node_answers(kind, tree, classes, port, costs)
                        cache[key] = {d: answers[nodes] for d, nodes in _nodes_by_depth(tree, X[te], depths).items()}
                    for d in depths:
                        out[(k, weighting, min_leaf, d)] = cache[key][d]
        return best_single(sub), out

    picks: dict[Combo, np.ndarray] = {}
    single = np.full(n, -1, dtype=np.int64)
    for (_, te), (best, out) in zip(splits, _map(split_picks, splits, threads)):
        single[te] = best
        for combo, p in out.items():
            picks.setdefault(combo, np.full(n, -1, np.int64))[te] = p
    scores = {c: geomean_score(table.oracle, picked_times(table, p)) for c, p in picks.items()}
    if not scores:
        raise TrainError("cross-validation produced no candidate (no portfolio could be formed)")
    best = max(scores.values())
    near = [c for c, s in scores.items() if s >= best - tolerance]
    chosen = min(near, key=lambda c: (c[0], c[3], -c[2], weightings.index(c[1])))
    exact = np.full(n, -1, dtype=np.int64)
    index = {c: j for j, c in enumerate(table.configs)}

    def exact_picks(split: tuple[np.ndarray, np.ndarray]) -> list[int]:
        tr, te = split
        fitted = fit_model(table.subset(tr), X[tr], kind, chosen, seed)
        return [index[c] for c in fitted.model.predict(X[te])]

    for (_, te), p in zip(splits, _map(exact_picks, splits, threads)):
        exact[te] = p
    grid = {"kind": kind, "k": list(k_grid), "max_depth": depths, "min_samples_leaf": list(min_leaf_grid),
            "weighting": weightings, "folds": len(splits), "tolerance": tolerance}
    if cv_groups != "problem":  # recorded when not the default, so the shipped files stay as they were
        grid["cv_groups"] = cv_groups
    return CVResult(scores, chosen, exact, single, kind, time.time() - t0, grid)


# --------------------------------------------------------------------------- routed models
#: The feature that routes a choice with members that run only some convolutions (1: a GEMM family runs it).
POINTWISE = "pointwise"


class RoutedTree:
    """Two fitted trees routed by the ``pointwise`` feature: ``rest`` answers ``pointwise <= 0`` (configs of the
    members that run every convolution), ``pointwise`` the others (every member's configs).  Saved as the
    model of such a choice; its IR is :func:`predictor.tree_ir.compose` of both (:func:`model_ir`)."""

    def __init__(self, rest: LeafTree, pointwise: LeafTree, feature: int):
        self.rest, self.pointwise, self.feature, self.kind = rest, pointwise, feature, rest.kind

    @property
    def classes_(self) -> np.ndarray:
        return np.array(sorted(set(self.rest.classes_) | set(self.pointwise.classes_)), dtype=object)

    def predict(self, X: Any) -> np.ndarray:
        """Config name of every row of the integer feature matrix ``X``."""
        X = np.asarray(X)
        pw = X[:, self.feature] > 0
        out = np.empty(len(X), dtype=object)
        for side, rows in ((self.rest, ~pw), (self.pointwise, pw)):
            if rows.any():
                out[rows] = side.predict(X[rows])
        return out


def _columns(table: ShapeTable, cols: Sequence[int]) -> ShapeTable:
    return ShapeTable(table.keys, table.sources, table.shapes, tuple(table.configs[j] for j in cols),
                      table.times[:, list(cols)])


def fit_side(table: ShapeTable, X: np.ndarray, rows: np.ndarray, cols: Sequence[int], name: str,
             settings: dict[str, Any]) -> tuple[ShapeTable, CVResult, Fitted]:
    """One side of a model routed by ``pointwise`` (``name``): :func:`cross_validate` (``settings``: its keywords,
    ``kind`` and ``seed`` included) and :func:`fit_model` on the problems ``rows`` of ``table`` over the configs
    ``cols``; also that side's table."""
    sub = _columns(table.subset(rows), cols)
    if sub.n_shapes < 2:
        raise TrainError(f"{sub.n_shapes} {name} problem(s): a model routed by {POINTWISE} needs at least 2 each")
    try:
        cv = cross_validate(sub, X[rows], **settings)
    except TrainError as exc:
        raise TrainError(f"the {name} problems: {exc}") from None
    return sub, cv, fit_model(sub, X[rows], settings["kind"], cv.chosen, settings["seed"])


def fit_key(table: ShapeTable, X: np.ndarray, kind: str, *, partial: Sequence[Family] = (),
            k_grid: Sequence[int], depth_grid: Sequence[int], min_leaf_grid: Sequence[int],
            weightings: Sequence[str], folds: int, seed: int, tolerance: float, threads: int = 1,
            cv_groups: str = "problem") -> tuple[CVResult, Fitted]:
    """Hyper-parameters by :func:`cross_validate`, then :func:`fit_model` on all of ``table``.

    With ``partial`` members (a choice holding families that run only some convolutions, e.g. the
    GEMM family) two models are fitted that way: one on the pointwise problems over every config,
    one on the rest over the configs of the other members only; the model is their
    :class:`RoutedTree`, and the returned CV result holds the composed out-of-fold picks over all
    problems (``parts``: each side's own result; ``chosen``: the rest side's); ``threads``, ``cv_groups``:
    :func:`cross_validate`'s."""
    settings = dict(k_grid=k_grid, depth_grid=depth_grid, min_leaf_grid=min_leaf_grid, weightings=weightings,
                    folds=folds, seed=seed, tolerance=tolerance, kind=kind, threads=threads, cv_groups=cv_groups)
    if not partial:
        cv = cross_validate(table, X, **settings)  # type: ignore[arg-type]
        return cv, fit_model(table, X, kind, cv.chosen, seed)
    t0 = time.time()
    feature = FEATURE_NAMES.index(POINTWISE)
    pw = X[:, feature] > 0
    full = list(range(len(table.configs)))
    conv = [j for j, c in enumerate(table.configs) if KernelConfig.from_name(c).family not in partial]
    picks = np.full(table.n_shapes, -1, np.int64)
    single = np.full(table.n_shapes, -1, np.int64)
    parts: dict[str, CVResult] = {}
    fits: dict[str, Fitted] = {}
    sides = (("rest", np.nonzero(~pw)[0], conv), (POINTWISE, np.nonzero(pw)[0], full))
    for name, rows, cols in sides:
        _, parts[name], fits[name] = fit_side(table, X, rows, cols, name, settings)
        to_full = np.asarray(cols, np.int64)
        picks[rows] = to_full[parts[name].model_picks]
        single[rows] = np.where(parts[name].single_picks >= 0, to_full[np.maximum(parts[name].single_picks, 0)], -1)
    score = geomean_score(table.oracle, picked_times(table, picks))
    rest = parts["rest"]
    cv = CVResult({rest.chosen: score}, rest.chosen, picks, single, kind, time.time() - t0,
                  {**rest.grid, "routed_by": POINTWISE}, parts)
    used = set(fits["rest"].classes) | set(fits[POINTWISE].classes)
    if kind != "class":  # each side's candidates: any config of the model its problems can run
        for name, rows, cols in sides:
            set_candidates(fits[name].model, _columns(table.subset(rows), cols), X[rows], sorted(used))
    fitted = Fitted(RoutedTree(fits["rest"].model, fits[POINTWISE].model, feature),
                    tuple(c for c in table.configs if c in used),
                    tuple(dict.fromkeys((*fits["rest"].portfolio, *fits[POINTWISE].portfolio))))
    return cv, fitted


def model_ir(model: LeafTree | RoutedTree, classes: Sequence[str], meta: dict[str, Any] | None = None,
             check_X: Any = None) -> TreeIR:
    """The exact integer IR of a fitted model over the features it was fitted on (the leading
    :data:`~predictor.features.FEATURE_NAMES`, one of :data:`~predictor.features.FEATURE_SETS`); a
    :class:`RoutedTree` becomes a root split ``pointwise <= 0`` (rest tree left, pointwise tree
    right, :func:`predictor.tree_ir.compose`).  With ``check_X``: checked against the model."""
    if isinstance(model, RoutedTree):
        rest, pw = (TreeIR.from_sklearn(m, feature_names(m.tree_.n_features), classes=classes)
                    for m in (model.rest, model.pointwise))
        ir = compose(rest, pw, model.feature, 0, classes=classes, meta=meta)
        if check_X is not None:
            ir.check_against(model, check_X)
        return ir
    return TreeIR.from_sklearn(model, feature_names(model.tree_.n_features), classes=classes, meta=meta,
                               check_X=None if check_X is None else np.asarray(check_X)[:, :model.tree_.n_features])


__all__ = ["COPIES", "COST_KINDS", "MAX_CANDIDATES", "node_candidates", "set_candidates", "POINTWISE", "RoutedTree", "fit_key", "fit_side", "model_ir", "KINDS", "TEACHER_KINDS", "MAJORITY_KINDS", "DEFAULT_KIND", "K_GRID", "DEPTH_GRID", "MIN_LEAF_GRID", "WEIGHTINGS", "training_set",
           "regret_matrix", "LeafTree", "Fitted", "fit_model", "CVResult", "base_keys", "cross_validate"]

"""A fitted decision tree flattened into a small, exact, integer intermediate representation.

scikit-learn evaluates a split as ``float32(x) <= threshold`` (the input matrix is cast to
float32, ``tree_.threshold`` is a float64 midpoint of two float32 values, and the comparison
promotes the float32 to double).  All our features are integers, and rounding an integer to
float32 is monotonic, so the set of integers that go left is ``{x : x <= T}`` for one integer

    T = max { x integer : float(float32(x)) <= threshold }.

:func:`exact_int_threshold` computes ``T`` with exact rational arithmetic and checks it against
numpy's own int64 -> float32 cast (``T`` goes left, ``T + 1`` goes right).  The IR then compares
integers only (``f <= T``), in Python and in the generated C++, with no floating point anywhere.

:meth:`TreeIR.from_sklearn` also asserts that the IR predicts exactly what sklearn predicts on the
data it is given (the training features).
"""
from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

FORMAT = "predictor.tree_ir/1"
#: Most candidates a leaf records for first-call tuning (:attr:`Leaf.candidates`, the label first).
MAX_CANDIDATES = 3


class TreeIRError(ValueError):
    """An IR that breaks one of its invariants (or a threshold that cannot be made exact)."""


# --------------------------------------------------------------------------- exact thresholds
def sklearn_goes_left(x: int, threshold: float) -> bool:
    """What scikit-learn's tree does with integer feature value ``x``: cast the int64 to float32
    (numpy's cast, as ``check_array(dtype=float32)`` does) and compare ``<=`` in double."""
    x32 = np.array([x], dtype=np.int64).astype(np.float32)[0]
    return bool(float(x32) <= threshold)


def _f32_bits(v: np.float32) -> int:
    return int(np.array([v], dtype=np.float32).view(np.uint32)[0])


def exact_int_threshold(threshold: float) -> int:
    """The largest integer ``T`` with ``float32(T) <= threshold`` (see the module docstring).

    Raises :class:`TreeIRError` if the result does not satisfy the invariant against numpy's cast
    (``T`` goes left and ``T + 1`` goes right)."""
    thr = float(threshold)
    if not math.isfinite(thr):
        raise TreeIRError(f"threshold {threshold!r} is not finite")
    with np.errstate(over="ignore"):
        v = np.float32(thr)  # nearest float32
    if not math.isfinite(float(v)):
        raise TreeIRError(f"threshold {threshold!r} is outside the float32 range")
    if float(v) > thr:
        v = np.nextafter(v, np.float32(-np.inf))  # largest float32 <= thr
    u = np.nextafter(v, np.float32(np.inf))  # next float32 above it
    # integers x with float32(x) <= v are those below the midpoint of v and u, plus the midpoint
    # itself when round-half-to-even sends it to v (v's last mantissa bit is 0)
    mid = (Fraction(float(v)) + Fraction(float(u))) / 2
    t = math.floor(mid)
    if t == mid and _f32_bits(v) & 1:  # the tie rounds to u, the even neighbour
        t -= 1
    if not sklearn_goes_left(t, thr) or sklearn_goes_left(t + 1, thr):
        raise TreeIRError(f"integer threshold {t} does not reproduce float threshold {threshold!r}")
    return t


# --------------------------------------------------------------------------- IR
@dataclass(frozen=True)
class Split:
    """Internal node: go to ``left`` if ``features[feature] <= threshold`` else ``right``."""

    feature: int
    threshold: int
    left: int
    right: int


@dataclass(frozen=True)
class Leaf:
    """Terminal node: the class label (a config name), and the configs worth timing on a first call
    (``candidates``: the label first, then the next ones by the criterion that chose the label;
    empty: the label alone)."""

    label: str
    candidates: tuple[str, ...] = ()

    @property
    def choices(self) -> tuple[str, ...]:
        """The candidates, or the label alone where none are recorded."""
        return self.candidates or (self.label,)


Node = Split | Leaf


@dataclass(frozen=True, eq=False)
class TreeIR:
    """A flattened decision tree over integer features; node 0 is the root.  A subtree may hang under
    several parents (:func:`graft`: a router's leaves share their member's tree; :attr:`shared`).

    ``classes`` is the portfolio, in table order (the C++ header's config table and the index
    :meth:`predict_index` returns).  ``meta`` carries provenance (family, gpu, sms, hashes, ...).
    Instances compare and hash by identity (so they can key caches)."""

    feature_names: tuple[str, ...]
    classes: tuple[str, ...]
    nodes: tuple[Node, ...]
    meta: Mapping[str, Any] = field(default_factory=dict)

    # ---------------------------------------------------------------- queries
    def leaf(self, features: Sequence[int]) -> Leaf:
        """The leaf one feature vector reaches."""
        nodes = self.nodes
        node = nodes[0]
        while isinstance(node, Split):
            node = nodes[node.left if features[node.feature] <= node.threshold else node.right]
        return node

    def predict(self, features: Sequence[int]) -> str:
        """Label (config name) for one feature vector."""
        return self.leaf(features).label

    def decision_path(self, features: Sequence[int]) -> list[int]:
        """Indices of the nodes visited, root first, leaf last."""
        path = [0]
        node = self.nodes[0]
        while isinstance(node, Split):
            path.append(node.left if features[node.feature] <= node.threshold else node.right)
            node = self.nodes[path[-1]]
        return path

    def candidates(self, features: Sequence[int]) -> tuple[str, ...]:
        """The candidates of the leaf ``features`` reach (:attr:`Leaf.choices`: the label first)."""
        return self.leaf(features).choices

    def predict_index(self, features: Sequence[int]) -> int:
        """Index into :attr:`classes` of the prediction."""
        return self.classes.index(self.predict(features))

    def predict_many(self, rows: Iterable[Sequence[int]]) -> list[str]:
        return [self.predict(r) for r in rows]

    @property
    def depth(self) -> int:
        """Number of splits on the longest root-to-leaf path."""
        def d(i: int) -> int:
            n = self.nodes[i]
            return 0 if isinstance(n, Leaf) else 1 + max(d(n.left), d(n.right))
        return d(0)

    @property
    def n_leaves(self) -> int:
        return sum(isinstance(n, Leaf) for n in self.nodes)

    def used_features(self) -> list[int]:
        return sorted({n.feature for n in self.nodes if isinstance(n, Split)})

    def thresholds(self) -> dict[int, list[int]]:
        """Feature index -> sorted integer thresholds used on it."""
        out: dict[int, set[int]] = {}
        for n in self.nodes:
            if isinstance(n, Split):
                out.setdefault(n.feature, set()).add(n.threshold)
        return {f: sorted(v) for f, v in sorted(out.items())}

    # ---------------------------------------------------------------- invariants
    def validate(self) -> "TreeIR":
        """Raise :class:`TreeIRError` unless: there is at least one node, every child index is in
        range, every node is reachable from the root and no path returns to a node it passed (no
        cycles; a subtree may be shared by several parents: :func:`graft`), feature indices are in
        range, thresholds are ints, and leaf labels are in :attr:`classes`."""
        if not self.nodes:
            raise TreeIRError("empty tree")
        if len(set(self.classes)) != len(self.classes) or not self.classes:
            raise TreeIRError(f"classes must be non-empty and unique, got {self.classes}")
        n = len(self.nodes)
        state = [0] * n  # 0 unseen, 1 on the current path, 2 done
        stack: list[tuple[int, bool]] = [(0, False)]
        while stack:
            i, leaving = stack.pop()
            if leaving:
                state[i] = 2
                continue
            if not 0 <= i < n:
                raise TreeIRError(f"child index {i} out of range [0, {n})")
            if state[i] == 1:
                raise TreeIRError(f"node {i} is on a cycle (not a tree)")
            if state[i] == 2:
                continue
            state[i] = 1
            stack.append((i, True))
            node = self.nodes[i]
            if isinstance(node, Split):
                if not 0 <= node.feature < len(self.feature_names):
                    raise TreeIRError(f"node {i}: feature index {node.feature} out of range")
                if type(node.threshold) is not int:
                    raise TreeIRError(f"node {i}: threshold {node.threshold!r} is not an int")
                stack += [(node.right, False), (node.left, False)]
            elif isinstance(node, Leaf):
                if node.label not in self.classes:
                    raise TreeIRError(f"node {i}: label {node.label!r} is not in the portfolio")
                c = node.candidates
                if c and (c[0] != node.label or len(set(c)) != len(c) or not set(c) <= set(self.classes)
                          or len(c) > MAX_CANDIDATES):
                    raise TreeIRError(f"node {i}: candidates {list(c)} must start with the label {node.label!r} "
                                      f"and be at most {MAX_CANDIDATES} distinct configs of the portfolio")
            else:
                raise TreeIRError(f"node {i}: unknown node type {type(node).__name__}")
        unreachable = [i for i, s in enumerate(state) if s == 0]
        if unreachable:
            raise TreeIRError(f"unreachable node(s) {unreachable[:10]}")
        return self

    @functools.cached_property
    def shared(self) -> tuple[int, ...]:
        """Split nodes with more than one parent (the roots of shared subtrees, :func:`graft`), in index
        order; empty for a tree (computed once: the nodes never change)."""
        parents = [0] * len(self.nodes)
        for node in self.nodes:
            if isinstance(node, Split):
                parents[node.left] += 1
                parents[node.right] += 1
        return tuple(i for i, (p, node) in enumerate(zip(parents, self.nodes)) if p > 1 and isinstance(node, Split))

    # ---------------------------------------------------------------- (de)serialisation
    def to_dict(self) -> dict[str, Any]:
        nodes: list[dict[str, Any]] = []
        for node in self.nodes:
            if isinstance(node, Split):
                nodes.append({"feature": node.feature, "threshold": node.threshold,
                              "left": node.left, "right": node.right})
            else:
                nodes.append({"label": node.label, **({"candidates": list(node.candidates)} if node.candidates else {})})
        return {"format": FORMAT, "feature_names": list(self.feature_names),
                "classes": list(self.classes), "nodes": nodes, "meta": dict(self.meta)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TreeIR":
        if d.get("format") != FORMAT:
            raise TreeIRError(f"not a {FORMAT} document (format={d.get('format')!r})")
        nodes: list[Node] = []
        for i, nd in enumerate(d["nodes"]):
            if "label" in nd:
                nodes.append(Leaf(str(nd["label"]), tuple(str(c) for c in nd.get("candidates", ()))))
            else:
                try:
                    nodes.append(Split(int(nd["feature"]), _as_int(nd["threshold"]),
                                       int(nd["left"]), int(nd["right"])))
                except (KeyError, TypeError) as exc:
                    raise TreeIRError(f"node {i}: malformed {nd!r}") from exc
        return cls(tuple(d["feature_names"]), tuple(d["classes"]), tuple(nodes),
                   dict(d.get("meta", {}))).validate()

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> "TreeIR":
        return cls.from_dict(json.loads(text))

    def save(self, path: str | Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(self.to_json())
        tmp.replace(path)

    @classmethod
    def load(cls, path: str | Path) -> "TreeIR":
        return cls.from_json(Path(path).read_text())

    # ---------------------------------------------------------------- from scikit-learn
    @classmethod
    def from_sklearn(cls, clf: Any, feature_names: Sequence[str], classes: Sequence[str] | None = None,
                     meta: Mapping[str, Any] | None = None, check_X: Any = None) -> "TreeIR":
        """Flatten a fitted ``DecisionTreeClassifier`` (single output), or a tree whose leaves
        answer stored labels: any object with ``tree_``, ``classes_`` and ``node_labels`` (one label
        per sklearn node, e.g. :class:`predictor.fitting.LeafTree`; the tree may then be a
        multi-output regressor).

        ``classes`` is the table order (defaults to ``clf.classes_``; must contain every class the
        tree can predict).  Sibling leaves with the same label are merged.  If ``check_X`` (integer
        feature matrix) is given, asserts that the IR's predictions equal ``clf.predict``."""
        tree = clf.tree_
        node_labels = getattr(clf, "node_labels", None)
        node_cands = getattr(clf, "node_candidates", None)  # per node, label first (LeafTree)
        if node_labels is None and tree.n_outputs != 1:
            raise TreeIRError("only single-output trees are supported")
        if tree.n_features != len(feature_names):
            raise TreeIRError(f"tree has {tree.n_features} features, {len(feature_names)} names given")
        labels = [str(c) for c in clf.classes_]
        table = tuple(labels if classes is None else (str(c) for c in classes))
        missing = set(labels) - set(table)
        if missing:
            raise TreeIRError(f"tree classes {sorted(missing)} are not in the table")
        left, right = tree.children_left, tree.children_right
        feat, thr, value = tree.feature, tree.threshold, tree.value

        out: list[Node] = []

        def cands(i: int) -> tuple[str, ...]:
            if node_cands is None:
                return ()
            c = tuple(str(v) for v in node_cands[i])
            if node_labels is not None and c and c[0] != str(node_labels[i]):
                raise TreeIRError(f"node {i}: candidates {list(c)} do not start with its label {node_labels[i]!r}")
            return c

        def emit(i: int) -> int:
            # returns the index of the emitted node; collapses splits whose subtrees agree
            if left[i] == -1:  # sklearn's TREE_LEAF
                if node_labels is not None:
                    out.append(Leaf(str(node_labels[i]), cands(i)))
                else:  # same argmax as DecisionTreeClassifier.predict (first maximum)
                    out.append(Leaf(labels[int(np.argmax(value[i, 0, :]))]))
                return len(out) - 1
            if math.isinf(thr[i]) and thr[i] > 0:  # only for NaN routing; our features have none
                return emit(int(left[i]))
            slot = len(out)
            out.append(Leaf("?"))  # placeholder
            t = exact_int_threshold(float(thr[i]))
            li = emit(int(left[i]))
            ri = emit(int(right[i]))
            ln, rn = out[li], out[ri]
            if isinstance(ln, Leaf) and isinstance(rn, Leaf) and ln.label == rn.label:
                # one leaf: the training problems of both, i.e. of this node, answering the children's label, then
                # this node's other candidates among the table (a summed cost ranks that label first here too; a
                # node cost of means, ``blend``'s, may rank another config, possibly one no leaf answers, first)
                del out[slot:]
                c = cands(i) if node_cands is not None else ()
                c = (ln.label, *(x for x in c if x != ln.label and x in table))[:MAX_CANDIDATES] if c else ()
                out.append(Leaf(ln.label, c))
                return slot
            out[slot] = Split(int(feat[i]), t, li, ri)
            return slot

        emit(0)
        ir = cls(tuple(feature_names), table, tuple(out), dict(meta or {})).validate()
        if check_X is not None:
            ir.check_against(clf, check_X)
        return ir

    def check_against(self, clf: Any, X: Any) -> None:
        """Assert the IR predicts exactly ``clf.predict(X)`` on integer matrix ``X``."""
        Xi = np.asarray(X, dtype=np.int64)
        expected = [str(v) for v in clf.predict(Xi)]
        got = self.predict_many(Xi.tolist())
        bad = [i for i, (a, b) in enumerate(zip(expected, got)) if a != b]
        if bad:
            i = bad[0]
            raise TreeIRError(f"IR disagrees with sklearn on {len(bad)} of {len(Xi)} rows, e.g. row {i}: "
                              f"{Xi[i].tolist()} -> sklearn {expected[i]!r}, IR {got[i]!r}")


def compose(left: TreeIR, right: TreeIR, feature: int, threshold: int, classes: Sequence[str] | None = None,
            meta: Mapping[str, Any] | None = None) -> TreeIR:
    """One tree: a root ``Split(feature, threshold)`` sending ``features[feature] <= threshold`` to
    ``left``'s tree and the rest to ``right``'s (node indices remapped; ``classes``: the table
    order, default ``left``'s classes then ``right``'s new ones); over the longer of their feature lists, of which
    the other must be the start (:func:`common_features`).  Validated."""
    names = common_features(left, right)

    def shifted(node: Node, offset: int) -> Node:
        if isinstance(node, Split):
            return Split(node.feature, node.threshold, node.left + offset, node.right + offset)
        return node

    r0 = 1 + len(left.nodes)
    nodes = (Split(int(feature), int(threshold), 1, r0), *(shifted(n, 1) for n in left.nodes),
             *(shifted(n, r0) for n in right.nodes))
    table = tuple(classes) if classes is not None else tuple(dict.fromkeys((*left.classes, *right.classes)))
    return TreeIR(names, table, nodes, dict(meta or {})).validate()


def common_features(*trees: TreeIR) -> tuple[str, ...]:
    """The longest feature list of ``trees``, each other one its start (a feature's index then means the same in
    every tree: models of different feature sets, ``predictor.features.FEATURE_SETS``); else :class:`TreeIRError`."""
    names = max((tuple(t.feature_names) for t in trees), key=len)
    if any(tuple(t.feature_names) != names[:len(t.feature_names)] for t in trees):
        raise TreeIRError("cannot join trees over different features (neither list starts the other)")
    return names


def graft(router: TreeIR, members: Mapping[str, TreeIR], classes: Sequence[str] | None = None,
          meta: Mapping[str, Any] | None = None, member_of: Callable[[str], str | None] | None = None) -> TreeIR:
    """One model of a ``router`` whose leaf labels name ``members`` (its classes: the member keys), each router
    leaf replaced by its member's root: the router's splits first, then each member's nodes once, in
    ``router.classes`` order, shared by every router leaf naming it (a DAG; :attr:`TreeIR.shared`).
    ``member_of``: the member a leaf label hands its problems to, ``None`` for a leaf that stays as it is (a
    config of the model); default: every label is a member key.  ``classes``: the table order, default the members'
    classes in that order.  Over the longest feature list of the router and the members (:func:`common_features`).
    Validated."""
    names = common_features(router, *members.values())
    to = member_of or (lambda label: label)
    order = list(dict.fromkeys(m for m in map(to, router.classes) if m is not None))
    missing = [m for m in order if m not in members]
    if missing:
        raise TreeIRError(f"the router names members {missing} that were not given")
    if isinstance(router.nodes[0], Leaf) and to(router.nodes[0].label) is not None:
        raise TreeIRError("a router of one leaf: use its member alone")
    kept = [i for i, x in enumerate(router.nodes) if isinstance(x, Split) or to(x.label) is None]
    new = {old: j for j, old in enumerate(kept)}
    start, n = {}, len(kept)
    for c in order:
        start[c] = n
        n += len(members[c].nodes)

    def child(i: int) -> int:
        x = router.nodes[i]
        return start[to(x.label)] if isinstance(x, Leaf) and to(x.label) is not None else new[i]  # type: ignore[index]

    def moved(x: Node, k: int) -> Node:
        return Split(x.feature, x.threshold, x.left + k, x.right + k) if isinstance(x, Split) else x

    nodes: list[Node] = []
    for i in kept:
        x = router.nodes[i]
        nodes.append(Split(x.feature, x.threshold, child(x.left), child(x.right)) if isinstance(x, Split) else x)
    for c in order:
        nodes += [moved(x, start[c]) for x in members[c].nodes]
    table = tuple(classes) if classes is not None else tuple(dict.fromkeys(
        label for c in order for label in members[c].classes))
    return TreeIR(names, table, tuple(nodes), dict(meta or {})).validate()


def _as_int(v: Any) -> int:
    if type(v) is not int:
        raise TreeIRError(f"threshold {v!r} is not an integer")
    return v


__all__ = ["MAX_CANDIDATES", "TreeIR", "Split", "Leaf", "TreeIRError", "common_features", "compose", "graft", "exact_int_threshold", "sklearn_goes_left", "FORMAT"]

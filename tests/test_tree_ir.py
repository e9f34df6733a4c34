"""Tree IR: exact integer thresholds, agreement with scikit-learn, JSON round trip, invariants."""
from __future__ import annotations

import json
import random

import joblib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier

from predictor.features import FEATURE_NAMES
from predictor.tree_ir import Leaf, Split, TreeIR, TreeIRError, exact_int_threshold, graft, sklearn_goes_left


# --------------------------------------------------------------------------- thresholds
@pytest.mark.parametrize("thr,expected", [
    (0.5, 0), (1.5, 1), (2.0, 2), (47.5, 47),
    (16777216.5, 16777217),  # float32(16777217) == 2**24 (tie to even) <= thr
    (2.0**25 - 1, 2**25 - 2),  # the tie 2**25 - 1 rounds up to 2**25
    (2.0**25 + 2, 2**25 + 2),  # the tie 2**25 + 2 rounds down to 2**25 (even)
    (2.0**25 + 3, 2**25 + 2),
])
def test_exact_threshold_examples(thr: float, expected: int) -> None:
    assert exact_int_threshold(thr) == expected


def _midpoint(a: int, b: int) -> float:
    """The threshold sklearn stores between two int feature values (float32 midpoint in double)."""
    fa, fb = np.array([a, b], dtype=np.int64).astype(np.float32)
    return float(fa) / 2.0 + float(fb) / 2.0


@settings(max_examples=3000, deadline=None)
@given(st.integers(0, 2**56), st.integers(1, 2**40))
def test_exact_threshold_invariant(a: int, gap: int) -> None:
    thr = _midpoint(a, a + gap)
    t = exact_int_threshold(thr)
    assert sklearn_goes_left(t, thr) and not sklearn_goes_left(t + 1, thr)
    # monotonic: everything below goes left, everything above goes right
    for x in (t - 1, t - 7, t - 2**30, min(0, t)):
        assert sklearn_goes_left(x, thr)
    for x in (t + 2, t + 9, t + 2**30):
        assert not sklearn_goes_left(x, thr)


def test_non_finite_threshold() -> None:
    with pytest.raises(TreeIRError):
        exact_int_threshold(float("inf"))
    with pytest.raises(TreeIRError):
        exact_int_threshold(float("nan"))


# --------------------------------------------------------------------------- IR vs sklearn
def _random_fit(seed: int, n: int = 600, big: bool = True) -> tuple[DecisionTreeClassifier, np.ndarray]:
    rng = np.random.default_rng(seed)
    nf = len(FEATURE_NAMES)
    scale = rng.integers(0, 52 if big else 12, size=nf)
    X = (rng.random((n, nf)) * (2.0 ** scale)).astype(np.int64)
    y = np.array([f"cfg{v}" for v in ((X[:, 0] > np.median(X[:, 0])) * 2 + (X[:, 3] % 3 == 0)
                                      + rng.integers(0, 2, n))])
    clf = DecisionTreeClassifier(max_depth=12, random_state=seed).fit(X, y)
    return clf, X


def _boundary_rows(ir: TreeIR, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Rows of X with one feature moved to each threshold T and T +- 1."""
    rows = []
    for f, ts in ir.thresholds().items():
        for t in ts:
            for v in (t - 1, t, t + 1):
                r = X[rng.integers(len(X))].copy()
                r[f] = max(v, 0)
                rows.append(r)
    return np.array(rows, dtype=np.int64)


@pytest.mark.parametrize("seed", range(6))
def test_ir_matches_sklearn(seed: int) -> None:
    clf, X = _random_fit(seed, big=seed % 2 == 0)
    ir = TreeIR.from_sklearn(clf, FEATURE_NAMES, check_X=X)
    rng = np.random.default_rng(100 + seed)
    nf = len(FEATURE_NAMES)
    R = (rng.random((5000, nf)) * (2.0 ** rng.integers(0, 56, size=(5000, nf)))).astype(np.int64)
    B = _boundary_rows(ir, X, rng)
    for M in (X, R, B):
        assert ir.predict_many(M.tolist()) == [str(v) for v in clf.predict(M)]
    # exact thresholds: integers only
    assert all(type(n.threshold) is int for n in ir.nodes if isinstance(n, Split))


def test_ir_leaves_merged_and_classes() -> None:
    clf, X = _random_fit(3)
    ir = TreeIR.from_sklearn(clf, FEATURE_NAMES, classes=sorted(clf.classes_, reverse=True))
    assert list(ir.classes) == sorted(clf.classes_, reverse=True)
    for n in ir.nodes:  # no split left whose two children are leaves with the same label
        if isinstance(n, Split):
            a, b = ir.nodes[n.left], ir.nodes[n.right]
            assert not (isinstance(a, Leaf) and isinstance(b, Leaf) and a.label == b.label)
    with pytest.raises(TreeIRError):
        TreeIR.from_sklearn(clf, FEATURE_NAMES, classes=["cfg0"])
    with pytest.raises(TreeIRError):
        TreeIR.from_sklearn(clf, FEATURE_NAMES[:-1])


def test_merged_leaf_answers_its_children_label_first() -> None:
    """Sibling leaves with one label merge into a leaf with that label, first of the parent's candidates, even where
    the parent itself answers another config (``blend``'s node costs are means, not sums); candidates stay among the
    exported configs."""
    from predictor.fitting import LeafTree

    X = np.array([[0] * len(FEATURE_NAMES), [1] + [0] * (len(FEATURE_NAMES) - 1)])
    clf = DecisionTreeClassifier(random_state=0).fit(X, [0, 1])
    model = LeafTree(clf, ["B", "A", "A"], "blend", [("B", "C", "A"), ("A",), ("A", "C")])
    ir = TreeIR.from_sklearn(model, FEATURE_NAMES, classes=["A", "C"], check_X=X)
    assert len(ir.nodes) == 1 and ir.nodes[0] == Leaf("A", ("A", "C"))


def test_check_against_detects_disagreement() -> None:
    clf, X = _random_fit(1)
    ir = TreeIR.from_sklearn(clf, FEATURE_NAMES)
    nodes = list(ir.nodes)
    i = next(j for j, n in enumerate(nodes) if isinstance(n, Split))
    n = nodes[i]
    nodes[i] = Split(n.feature, n.threshold + 10**9, n.left, n.right)
    broken = TreeIR(ir.feature_names, ir.classes, tuple(nodes), ir.meta)
    with pytest.raises(TreeIRError, match="disagrees"):
        broken.check_against(clf, X)


# --------------------------------------------------------------------------- JSON
def test_json_round_trip(tmp_path) -> None:
    clf, X = _random_fit(2)
    ir = TreeIR.from_sklearn(clf, FEATURE_NAMES, meta={"family": "i8nc32", "note": "x"})
    back = TreeIR.from_json(ir.to_json())
    assert back.to_dict() == ir.to_dict()
    assert back.predict_many(X.tolist()) == ir.predict_many(X.tolist())
    ir.save(tmp_path / "t.json")
    assert TreeIR.load(tmp_path / "t.json").to_dict() == ir.to_dict()
    d = json.loads(ir.to_json())
    assert "feature" in d["nodes"][0], "the random fit has a split at its root"
    d["nodes"][0]["threshold"] = 1.5  # a split's threshold must be an integer
    with pytest.raises(TreeIRError):
        TreeIR.from_dict(d)
    with pytest.raises(TreeIRError):
        TreeIR.from_dict({**ir.to_dict(), "format": "other"})


# --------------------------------------------------------------------------- invariants
def _ir(nodes, classes=("a", "b")) -> TreeIR:
    return TreeIR(("x", "y"), tuple(classes), tuple(nodes))


def test_validate() -> None:
    ok = _ir([Split(0, 5, 1, 2), Leaf("a"), Split(1, -3, 3, 4), Leaf("b"), Leaf("a")]).validate()
    assert ok.predict([5, 0]) == "a" and ok.predict([6, -3]) == "b" and ok.predict([6, -2]) == "a"
    assert ok.depth == 2 and ok.n_leaves == 3 and ok.used_features() == [0, 1]
    bad = {
        "unreachable": [Split(0, 5, 1, 1), Leaf("a"), Leaf("b")],
        "out of range": [Split(0, 5, 1, 7), Leaf("a")],
        "feature index": [Split(2, 5, 1, 2), Leaf("a"), Leaf("b")],
        "not in the portfolio": [Split(0, 5, 1, 2), Leaf("a"), Leaf("c")],
        "not an int": [Split(0, 5.5, 1, 2), Leaf("a"), Leaf("b")],  # type: ignore[arg-type]
        "cycle": [Split(0, 5, 1, 0), Leaf("a")],
        "deeper cycle": [Split(0, 5, 1, 2), Leaf("a"), Split(1, 0, 1, 0)],
    }
    for what, nodes in bad.items():
        with pytest.raises(TreeIRError):
            _ir(nodes).validate()
    with pytest.raises(TreeIRError):
        _ir([]).validate()
    with pytest.raises(TreeIRError):
        _ir([Leaf("a")], classes=("a", "a")).validate()


def test_graft_shares_each_member_once() -> None:
    a = _ir([Split(0, 5, 1, 2), Leaf("a"), Leaf("b", ("b", "a"))])
    b = _ir([Split(1, 3, 1, 2), Leaf("c"), Leaf("b")], classes=("b", "c"))
    router = _ir([Split(0, 10, 1, 2), Split(1, 0, 3, 4), Leaf("B"), Leaf("A"), Leaf("B")], classes=("A", "B"))
    g = graft(router, {"A": a, "B": b})
    assert g.classes == ("a", "b", "c") and len(g.nodes) == 2 + 3 + 3
    assert g.shared == (5,)  # B's root, reached from both of the router's leaves naming it
    assert g.depth == 3 and g.n_leaves == 4
    for x in range(-2, 14):
        for y in range(-2, 6):
            member = a if x <= 10 and y <= 0 else b
            assert g.predict((x, y)) == member.predict((x, y)) and g.candidates((x, y)) == member.candidates((x, y))
    assert graft(router, {"A": a, "B": b}, classes=("c", "b", "a")).classes == ("c", "b", "a")
    with pytest.raises(TreeIRError, match="were not given"):
        graft(router, {"A": a})
    with pytest.raises(TreeIRError, match="different features"):
        graft(router, {"A": a, "B": TreeIR(("x", "z"), b.classes, b.nodes)})
    # a member over more features (a larger feature set, whose start is the router's): the graft reads them all
    wide = TreeIR(("x", "y", "w"), b.classes, (Split(2, 3, 1, 2), Leaf("c"), Leaf("b"))).validate()
    gw = graft(router, {"A": a, "B": wide})
    assert gw.feature_names == ("x", "y", "w")
    for v in ((11, 0, 1), (11, 0, 9), (0, 1, 1), (0, 0, 9)):
        assert gw.predict(v) == (wide.predict(v) if v[0] > 10 or v[1] > 0 else a.predict(v[:2]))
    with pytest.raises(TreeIRError, match="one leaf"):
        graft(_ir([Leaf("A")], classes=("A",)), {"A": a})
    with pytest.raises(TreeIRError, match="not in the portfolio"):
        graft(router, {"A": a, "B": b}, classes=("a", "b"))
    assert TreeIR.from_json(g.to_json()).nodes == g.nodes


# --------------------------------------------------------------------------- the trained model
def test_trained_model_ir_matches_sklearn(synthetic_models) -> None:
    rng = random.Random(0)
    for fam in synthetic_models.families:
        blob = joblib.load(synthetic_models.models / f"synthetic-{fam}.joblib")
        ir = TreeIR.load(synthetic_models.models / f"synthetic-{fam}.tree.json")
        clf = blob["model"]
        nf = len(FEATURE_NAMES)
        R = np.array([[rng.randint(0, 2 ** rng.randint(0, 54)) for _ in range(nf)] for _ in range(3000)],
                     dtype=np.int64)
        B = _boundary_rows(ir, R, np.random.default_rng(1))
        for M in (R, B):
            assert ir.predict_many(M.tolist()) == [str(v) for v in clf.predict(M)]

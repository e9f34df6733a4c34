"""A choice routed over its members' own models (:mod:`predictor.route`): the router's fit and its one model
(:func:`predictor.tree_ir.graft`), on a SYNTHETIC sweep of the two fp16 conv families."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from predictor.model_key import model_key
from predictor.portfolio import best_of, family_table
from predictor.route import ROUTER_DEPTHS, ROUTER_MIN_LEAF, fit_router, route_ir
from predictor.tree_ir import Leaf, TreeIR

CHOICE, MEMBERS = "f16nhwc+f16nhwc90", ("f16nhwc", "f16nhwc90")


@pytest.fixture(scope="module")
def members(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """Each member family's model trained on a synthetic sweep of both, and the choice's table."""
    from synthetic import make_sweep

    from predictor.schema import write_sweep
    from predictor.train import main

    d = tmp_path_factory.mktemp("router")
    df = make_sweep(n_shapes=160, families=MEMBERS)
    sweep = d / "s.parquet"
    write_sweep(df, sweep, {"synthetic": True})
    for fam in MEMBERS:
        assert main([str(sweep), "--family", fam, "--models-dir", str(d / "m"), "--export-dir", str(d / "e"),
                     "--max-portfolio", "4", "--quiet"]) == 0
    irs = {fam: TreeIR.load(d / "m" / f"synthetic-{fam}.tree.json") for fam in MEMBERS}
    table = family_table(df, model_key(CHOICE)).table
    return SimpleNamespace(irs=irs, table=table, X=table.features().to_numpy(dtype=np.int64))


def test_router_sends_each_problem_to_a_member_model(members) -> None:
    t, X, irs = members.table, members.X, members.irs
    best = np.stack([best_of(t, irs[m].classes) for m in MEMBERS], axis=1)
    assert (best > 0).all() and np.isfinite(best).all()
    fit = fit_router(t, X, best, MEMBERS, cv_groups="problem")
    assert set(fit.scores) == {(d, leaf) for d in ROUTER_DEPTHS for leaf in ROUTER_MIN_LEAF}
    assert all(s <= 0 for s in fit.scores.values()) and fit.scores[fit.chosen] == max(fit.scores.values())
    assert set(fit.clf.classes_) <= set(MEMBERS)
    classes = tuple(c for c in t.configs if any(c in irs[m].classes for m in MEMBERS))
    ir = route_ir(fit.clf, irs, classes, meta={"family": CHOICE})
    assert ir.classes == classes and ir.meta["family"] == CHOICE
    assert len(ir.nodes) <= sum(len(m.nodes) for m in irs.values()) + fit.clf.tree_.node_count
    sent = fit.clf.predict(X)
    for x, m in zip(X.tolist(), sent):  # the model answers what the routed member's own model answers
        assert ir.predict(x) == irs[m].predict(x) and ir.candidates(x) == irs[m].candidates(x)
    # on its training problems the router loses no more than sending every problem to the better member (a leaf's
    # label is its problems' weighted majority, the weight each problem's log ratio plus a floor)
    loss = np.log(best[np.arange(len(X)), [MEMBERS.index(m) for m in sent]] / best.min(axis=1)).mean()
    assert loss <= min(np.log(best[:, j] / best.min(axis=1)).mean() for j in range(len(MEMBERS))) + 1e-3


def test_a_one_member_router_is_that_members_model(members) -> None:
    t, X, irs = members.table, members.X, members.irs
    best = np.stack([best_of(t, irs[m].classes) for m in MEMBERS], axis=1)
    best[:, 0] = best[:, 1] * 2  # f16nhwc90's portfolio always faster
    fit = fit_router(t, X, best, MEMBERS, cv_groups="problem")
    ir = route_ir(fit.clf, irs, irs["f16nhwc90"].classes)
    assert isinstance(TreeIR.from_sklearn(fit.clf, ir.feature_names).nodes[0], Leaf)
    assert ir.nodes == irs["f16nhwc90"].nodes


def test_router_refuses_bad_input(members) -> None:
    t, X = members.table, members.X
    with pytest.raises(ValueError, match="one column per member"):
        fit_router(t, X, np.ones((t.n_shapes, 1)), MEMBERS[:1])
    with pytest.raises(ValueError, match="none of the configs"):
        best_of(t, ["f16nhwc_not_a_config"])

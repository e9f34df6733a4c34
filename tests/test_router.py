"""A choice routed over its members' own models (:mod:`predictor.route`): the router's fit and its one model
(:func:`predictor.tree_ir.graft`), on a SYNTHETIC sweep of the two fp16 conv families."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from predictor.features import FEATURE_SETS
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
    base = len(FEATURE_SETS["base"])  # what the members read
    return SimpleNamespace(irs=irs, table=table, X=table.features().to_numpy(dtype=np.int64)[:, :base])


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


def test_a_router_over_one_member_is_one_leaf(members) -> None:
    """A choice whose only conv member is routed (its GEMM family on the pointwise side): nothing to learn."""
    t, X, irs = members.table, members.X, members.irs
    fit = fit_router(t, X, best_of(t, irs["f16nhwc90"].classes)[:, None], ("f16nhwc90",), cv_groups="problem")
    assert fit.chosen == (0, 0) and fit.clf.get_n_leaves() == 1 and not fit.sent.any()
    assert set(fit.clf.predict(X)) == {"f16nhwc90"}
    assert route_ir(fit.clf, {"f16nhwc90": irs["f16nhwc90"]}, irs["f16nhwc90"].classes).nodes == irs["f16nhwc90"].nodes


def test_router_refuses_bad_input(members) -> None:
    t, X = members.table, members.X
    with pytest.raises(ValueError, match="one column per member"):
        fit_router(t, X, np.ones((t.n_shapes, 2)), MEMBERS[:1])
    with pytest.raises(ValueError, match="one column per member"):
        fit_router(t, X, np.ones((t.n_shapes, 0)), ())
    with pytest.raises(ValueError, match="none of the configs"):
        best_of(t, ["f16nhwc_not_a_config"])


# --------------------------------------------------------------------------- a routed choice, trained and scored
GEMM_CHOICE = "f16nhwc+f16nhwc90+f16gemm90"


@pytest.fixture(scope="module")
def routed(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """A SYNTHETIC sweep of the three fp16 families whose network layers belong to two networks, and its choice
    trained routed over the two conv members (``--route``) after them, in one run."""
    from synthetic import make_sweep

    from predictor.schema import write_sweep
    from predictor.train import main

    d = tmp_path_factory.mktemp("routed")
    df = make_sweep(n_shapes=200, families=("f16nhwc", "f16nhwc90", "f16gemm90"))
    nets = sorted(df.loc[df["source"] == "net:synthnet", "shape_key"].unique())
    df.loc[df["shape_key"].isin(nets[1::2]), "source"] = "net:othernet"
    sweep = d / "s.parquet"
    write_sweep(df, sweep, {"synthetic": True})
    args = [str(sweep), "--family", GEMM_CHOICE, "--family", "f16nhwc", "--family", "f16nhwc90",
            "--route", *MEMBERS, "--max-portfolio", "4", "--quiet"]
    for out in ("m", "again"):
        assert main([*args, "--models-dir", str(d / out), "--export-dir", str(d / f"{out}-e")]) == 0
    return SimpleNamespace(d=d, sweep=sweep, df=df, args=args)


def test_a_routed_choice_answers_its_router_and_members(routed) -> None:
    import joblib

    from predictor.features import FEATURE_NAMES
    from predictor.schema import file_sha256

    m = routed.d / "m"
    ir = TreeIR.load(m / f"synthetic-{GEMM_CHOICE}.tree.json")
    model = joblib.load(m / f"synthetic-{GEMM_CHOICE}.joblib")["model"]
    irs = {f: TreeIR.load(m / f"synthetic-{f}.tree.json") for f in MEMBERS}
    assert ir.meta["hyperparameters"]["route"] == list(MEMBERS)
    assert ir.meta["router"]["members"] == {f: file_sha256(m / f"synthetic-{f}.tree.json") for f in MEMBERS}
    table = family_table(routed.df, model_key(GEMM_CHOICE)).table
    X = table.features().to_numpy(dtype=np.int64)[:, :len(FEATURE_SETS["base"])]
    pw = X[:, FEATURE_NAMES.index("pointwise")] > 0
    assert pw.any() and (~pw).any()
    sent = model.router.predict(X[~pw])
    for x, f in zip(X[~pw].tolist(), sent):  # the conv problems: the routed member's own answer
        assert ir.predict(x) == irs[f].predict(x) and ir.candidates(x) == irs[f].candidates(x)
    # the pointwise problems: the choice's own tree, which hands a member family's answer to that member
    handed = 0
    for x, own in zip(X[pw].tolist(), model.pointwise.predict(X[pw])):
        f = own.split("_")[0]
        if f in MEMBERS:
            handed += 1
            assert ir.predict(x) == irs[f].predict(x) and ir.candidates(x) == irs[f].candidates(x)
        else:
            assert f == "f16gemm90" and ir.predict(x) == own
    assert 0 < handed < pw.sum()  # both kinds of answer met
    assert list(model.predict(X)) == [ir.predict(x) for x in X.tolist()]
    assert any(c.startswith("f16gemm90_") for c in ir.classes)
    assert set(ir.classes) == {c for n in ir.nodes if isinstance(n, Leaf) for c in n.choices}  # none unreachable
    for f in sorted(m.iterdir()):  # retrained from the same inputs: the same files
        assert f.read_bytes() == (routed.d / "again" / f.name).read_bytes(), f.name


def test_route_refuses_what_it_cannot_route(routed, tmp_path, capsys) -> None:
    from predictor.train import main

    base = [str(routed.sweep), "--models-dir", str(tmp_path), "--no-export", "--quiet"]
    for args, message in (([GEMM_CHOICE, "--route", "f16nhwc", "f16gemm90"], "that run every convolution"),
                          ([CHOICE, "--route", "f16nhwc"], "or one of a choice with a GEMM family"),
                          ([GEMM_CHOICE, "--route", *MEMBERS], "train the members first"),
                          (["f16nhwc", "--route", *MEMBERS], "give a choice"),
                          ([CHOICE, "--keep-pointwise"], "--keep-pointwise goes with --route")):
        assert main([*base, "--family", *args]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1
    assert not list(tmp_path.iterdir())  # nothing written


def test_route_lono_takes_each_layer_from_its_routed_member(routed, tmp_path) -> None:
    import pandas as pd

    from predictor.lono import main as lono
    from predictor.route_lono import main as route_lono

    small = ["--groups", "2", "--kind", "repick", "--max-portfolio", "4", "--k-grid", "4", "--folds", "3"]
    for key, out in ((GEMM_CHOICE, "choice"), *((f, f) for f in MEMBERS)):
        assert lono([str(routed.sweep), "--family", key, *small, "--out", str(tmp_path / out)]) == 0
    args = ["--choice", str(tmp_path / "choice"), *(a for f in MEMBERS for a in ("--member", f"{f}={tmp_path / f}")),
            "--out", str(tmp_path / "route")]
    assert route_lono(args) == 0
    layers = pd.read_csv(tmp_path / "route" / "layers.csv")
    own = pd.read_csv(tmp_path / "choice" / "layers.csv")
    assert len(layers) == len(own) and set(layers["kind"]) == {"route"}
    assert set(layers["member"]) <= {*MEMBERS, "pointwise"} and (layers["member"] != "pointwise").any()
    key = ["network", "shape_key"]
    for f in (*MEMBERS, "pointwise"):
        mine = layers[layers["member"] == f].merge(
            pd.read_csv(tmp_path / (f if f != "pointwise" else "choice") / "layers.csv"), on=key, suffixes=("", "_m"))
        assert (mine["pick"] == mine["pick_m"]).all() and (mine["score"] <= 1 + 1e-12).all()
    assert ((layers["tuned"] >= layers["score"] - 1e-12) | layers["tuned"].isna()).all()
    text = (tmp_path / "route" / "REPORT.md").read_text()
    assert "generated by predictor.route_lono" in text and f"| {GEMM_CHOICE} | `route` |" in text
    with pytest.raises(SystemExit, match="give reports of two or more of"):
        route_lono(["--choice", str(tmp_path / "choice"), "--member", f"f16gemm90={tmp_path / 'f16nhwc'}",
                    "--out", str(tmp_path / "bad")])


def test_keep_pointwise_keeps_the_choices_family_choice_on_1x1_problems(routed, tmp_path) -> None:
    import shutil

    import joblib

    from predictor.features import FEATURE_NAMES
    from predictor.train import main

    for f in MEMBERS:
        shutil.copy(routed.d / "m" / f"synthetic-{f}.tree.json", tmp_path)
    base = [str(routed.sweep), "--family", CHOICE, "--route", *MEMBERS, "--max-portfolio", "4", "--quiet",
            "--models-dir", str(tmp_path), "--no-export"]
    assert main([*base, "--keep-pointwise"]) == 0
    ir = TreeIR.load(tmp_path / f"synthetic-{CHOICE}.tree.json")
    model = joblib.load(tmp_path / f"synthetic-{CHOICE}.joblib")["model"]
    assert ir.meta["router"]["keep_pointwise"] is True and model.pointwise is not None
    table = family_table(routed.df, model_key(CHOICE)).table
    X = table.features().to_numpy(dtype=np.int64)[:, :len(FEATURE_SETS["base"])]
    pw = X[:, FEATURE_NAMES.index("pointwise")] > 0
    irs = {f: TreeIR.load(tmp_path / f"synthetic-{f}.tree.json") for f in MEMBERS}
    # on the 1x1 problems the choice's own tree chooses the family, whose member picks the config
    assert [ir.predict(x) for x in X[pw].tolist()] == [
        irs[own.split("_")[0]].predict(x) for x, own in zip(X[pw].tolist(), model.pointwise.predict(X[pw]))]
    assert {own.split("_")[0] for own in model.pointwise.predict(X[pw])} == set(MEMBERS)
    assert all(ir.predict(x) == irs[f].predict(x) for x, f in zip(X[~pw].tolist(), model.router.predict(X[~pw])))
    plain = tmp_path / "plain"  # without it the router routes every problem
    shutil.copytree(tmp_path, plain, ignore=shutil.ignore_patterns(f"synthetic-{CHOICE}.*"))
    assert main([*base[:-3], "--models-dir", str(plain), "--no-export"]) == 0
    m2 = joblib.load(plain / f"synthetic-{CHOICE}.joblib")["model"]
    assert m2.pointwise is None and "keep_pointwise" not in TreeIR.load(plain / f"synthetic-{CHOICE}.tree.json").meta["router"]


def test_a_member_over_more_features(routed, tmp_path) -> None:
    """``--features tiles`` for one member: its file names the larger set; the routed choice (its router on the
    choice's own ``base`` features) reads the members' features, answers each routed member's own answer, and
    retrains byte for byte; ``predictor.lono --features`` names the set in its report."""
    import shutil

    import joblib

    from predictor.lono import main as lono
    from predictor.train import main

    base = [str(routed.sweep), "--max-portfolio", "4", "--quiet", "--no-export"]
    for out in ("a", "b"):
        d = tmp_path / out
        d.mkdir()
        shutil.copy(routed.d / "m" / "synthetic-f16nhwc.tree.json", d)
        assert main([*base, "--family", "f16nhwc90", "--features", "tiles", "--models-dir", str(d)]) == 0
        assert main([*base, "--family", CHOICE, "--route", *MEMBERS, "--models-dir", str(d)]) == 0
    wide = TreeIR.load(tmp_path / "a" / "synthetic-f16nhwc90.tree.json")
    assert wide.feature_names == FEATURE_SETS["tiles"] and wide.meta["hyperparameters"]["features"] == "tiles"
    assert wide.meta["feature_names"] == list(FEATURE_SETS["tiles"])
    assert "features: `tiles`" in (tmp_path / "a" / "synthetic-f16nhwc90.summary.md").read_text()
    ir = TreeIR.load(tmp_path / "a" / f"synthetic-{CHOICE}.tree.json")
    assert ir.feature_names == FEATURE_SETS["tiles"] and "features" not in ir.meta["hyperparameters"]
    model = joblib.load(tmp_path / "a" / f"synthetic-{CHOICE}.joblib")["model"]
    assert model.router.n_features_in_ == len(FEATURE_SETS["base"])
    irs = {f: TreeIR.load(tmp_path / "a" / f"synthetic-{f}.tree.json") for f in MEMBERS}
    X = family_table(routed.df, model_key(CHOICE)).table.features().to_numpy(dtype=np.int64)
    sent = model.router.predict(X[:, :len(FEATURE_SETS["base"])])
    assert set(sent) == set(MEMBERS)
    assert all(ir.predict(x) == irs[f].predict(x) for x, f in zip(X.tolist(), sent))
    assert list(model.predict(X)) == ir.predict_many(X.tolist())
    for f in sorted((tmp_path / "a").iterdir()):
        assert f.read_bytes() == (tmp_path / "b" / f.name).read_bytes(), f.name
    small = ["--groups", "2", "--kind", "repick", "--max-portfolio", "4", "--k-grid", "4", "--folds", "3"]
    assert lono([str(routed.sweep), "--family", "f16nhwc90", *small, "--features", "tiles",
                 "--out", str(tmp_path / "lono")]) == 0
    assert "the trees read the feature set `tiles`" in (tmp_path / "lono" / "REPORT.md").read_text()


def test_a_choice_routed_over_its_one_member(routed, tmp_path) -> None:
    """``--route f16nhwc90`` for the GEMM choice: its conv problems get that member's own answer (no router), its
    pointwise ones the choice's own tree, an answer of the member's family handed to the member; retrained byte for byte; ``predictor.route_lono`` scores it so."""
    import shutil

    import joblib
    import pandas as pd

    from predictor.features import FEATURE_NAMES
    from predictor.lono import main as lono
    from predictor.route_lono import main as route_lono
    from predictor.train import main

    base = [str(routed.sweep), "--family", GEMM_CHOICE, "--route", "f16nhwc90", "--max-portfolio", "4", "--quiet",
            "--no-export"]
    for out in ("a", "b"):
        (tmp_path / out).mkdir()
        shutil.copy(routed.d / "m" / "synthetic-f16nhwc90.tree.json", tmp_path / out)
        assert main([*base, "--models-dir", str(tmp_path / out)]) == 0
    ir = TreeIR.load(tmp_path / "a" / f"synthetic-{GEMM_CHOICE}.tree.json")
    model = joblib.load(tmp_path / "a" / f"synthetic-{GEMM_CHOICE}.joblib")["model"]
    assert ir.meta["router"]["leaves"] == 1 and ir.meta["hyperparameters"]["route"] == ["f16nhwc90"]
    member = TreeIR.load(tmp_path / "a" / "synthetic-f16nhwc90.tree.json")
    X = family_table(routed.df, model_key(GEMM_CHOICE)).table.features().to_numpy(dtype=np.int64)
    X = X[:, :len(FEATURE_SETS["base"])]
    pw = X[:, FEATURE_NAMES.index("pointwise")] > 0
    assert pw.any() and (~pw).any()
    assert all(ir.predict(x) == member.predict(x) for x in X[~pw].tolist())
    own = model.pointwise.predict(X[pw])  # an f16nhwc90 answer there is the member's to give; f16nhwc stays
    assert [ir.predict(x) for x in X[pw].tolist()] == [
        member.predict(x) if o.startswith("f16nhwc90_") else o for x, o in zip(X[pw].tolist(), own)]
    assert any(o.startswith("f16nhwc90_") for o in own) and ir.shared  # the member's nodes serve both sides
    assert list(model.predict(X)) == ir.predict_many(X.tolist())
    for f in sorted((tmp_path / "a").iterdir()):
        assert f.read_bytes() == (tmp_path / "b" / f.name).read_bytes(), f.name
    small = ["--groups", "2", "--kind", "repick", "--max-portfolio", "4", "--k-grid", "4", "--folds", "3"]
    for key, out in ((GEMM_CHOICE, "choice"), ("f16nhwc90", "f16nhwc90")):
        assert lono([str(routed.sweep), "--family", key, *small, "--out", str(tmp_path / out)]) == 0
    assert route_lono(["--choice", str(tmp_path / "choice"), "--member", f"f16nhwc90={tmp_path / 'f16nhwc90'}",
                       "--out", str(tmp_path / "route")]) == 0
    layers = pd.read_csv(tmp_path / "route" / "layers.csv")
    assert set(layers["member"]) == {"f16nhwc90", "pointwise"}
    mine = layers[layers["member"] == "f16nhwc90"].merge(pd.read_csv(tmp_path / "f16nhwc90" / "layers.csv"),
                                                         on=["network", "shape_key"], suffixes=("", "_m"))
    assert len(mine) and (mine["pick"] == mine["pick_m"]).all()

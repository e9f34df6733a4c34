"""Leave-one-network-out evaluation and the model kinds, on SYNTHETIC sweeps (not measurements)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from synthetic import make_sweep

from predictor.config import Family
from predictor.export_py import compile_selector
from predictor.features import ARGS, FEATURE_NAMES, LIMITS, compute
from predictor.fitting import KINDS, TEACHER_KINDS, base_keys, fit_model, regret_matrix
from predictor.lono import Settings, evaluate_family, evaluate_network, lono_split, main, networks
from predictor.portfolio import effective_times, eligible_rows, family_table, one_method_per_problem
from predictor.schema import file_sha256, read_sweep, write_sweep
from predictor.train import SHIPPED_RUNS
from predictor.tree_ir import TreeIR

FAM = Family("i8nc32")
SMALL = Settings(kinds=KINDS, max_portfolio=6, folds=3, depth_grid=(2, 4, 6), min_leaf_grid=(2, 8),
                 weightings=("regret", "uniform"))


def two_networks(n_shapes: int = 120) -> tuple[pd.DataFrame, str]:
    """A SYNTHETIC sweep at 132 and 16 SMs whose network layers belong to two networks; the 16-SM
    copy of one ``synthnet`` layer is listed as a grid problem.  Returns the frame and that key."""
    parts = []
    for sms in (132, 16):
        d = make_sweep(n_shapes=n_shapes, families=(FAM.value,), sms=sms)
        keys = sorted(d.loc[d["source"] == "net:synthnet", "shape_key"].unique())
        d.loc[d["shape_key"].isin(keys[1::2]), "source"] = "net:othernet"
        parts.append(d)
    twin = keys[0]
    parts[1].loc[parts[1]["shape_key"] == twin, "source"] = "grid"
    return pd.concat(parts, ignore_index=True), twin


@pytest.fixture(scope="module")
def data() -> tuple[pd.DataFrame, str]:
    return two_networks()


def test_split_never_trains_on_held_out_shapes(data) -> None:
    df, twin = data
    table = family_table(df, FAM).table
    assert networks(table) == ["othernet", "synthnet"]
    for net in networks(table):
        tr, te = lono_split(table, net)
        assert len(tr) and len(te) and not set(tr) & set(te)
        assert set(table.sources[te]) == {f"net:{net}"}
        assert not set(base_keys(table.keys[tr])) & set(base_keys(table.keys[te]))
        assert {int(k.split("@sm")[1]) for k in table.keys[te]} == {16, 132}  # every SM count held out
        excluded = set(range(table.n_shapes)) - set(tr) - set(te)
        assert all(base_keys(table.keys[[i]])[0] in set(base_keys(table.keys[te])) for i in excluded)
    tr, _ = lono_split(table, "synthnet")
    grid_twin = [i for i, k in enumerate(table.keys) if k == f"{twin}@sm16"]
    assert len(grid_twin) == 1 and table.sources[grid_twin[0]] == "grid"
    assert grid_twin[0] not in set(tr)  # same shape, another source: still left out of training
    with pytest.raises(ValueError, match="nope"):
        lono_split(table, "nope")


def test_choices_ignore_held_out_timings(data) -> None:
    """Perturbing the held-out network's timings (every row of its shapes, any source or SM count)
    changes its scores but neither the chosen hyper-parameters nor the picks."""
    df, _ = data
    table = family_table(df, FAM).table
    X = table.features().to_numpy(dtype=np.int64)
    _, te = lono_split(table, "synthnet")
    held = set(base_keys(table.keys[te]))
    rng = np.random.default_rng(0)
    noisy = df.copy()
    rows = noisy["shape_key"].isin(held).to_numpy()
    noisy.loc[rows, "time_us"] *= rng.uniform(0.5, 2.0, rows.sum())
    noisy_table = family_table(noisy, FAM).table
    a_layers, a_folds = evaluate_network(table, X, "synthnet", SMALL, FAM.value)
    b_layers, b_folds = evaluate_network(noisy_table, X, "synthnet", SMALL, FAM.value)
    assert a_folds == b_folds
    assert [r["pick"] for r in a_layers] == [r["pick"] for r in b_layers]
    assert [r["score"] for r in a_layers] != [r["score"] for r in b_layers]


def test_deterministic(data) -> None:
    """Two fits agree, and ``jobs`` processes (spawned: each fits its own cost teacher, whose OpenMP would hang
    in a child forked after the parent ran it) give what one process gives."""
    df, _ = data
    some = Settings(kinds=("class", "blend"), max_portfolio=6, folds=3, depth_grid=(2, 4), min_leaf_grid=(2,),
                    weightings=("regret",))
    a = evaluate_family(df, FAM, some, threads=2)  # the parent runs OpenMP before the children start
    b = evaluate_family(df, FAM, some, jobs=2)
    pd.testing.assert_frame_equal(a[0], b[0])
    pd.testing.assert_frame_equal(a[1], b[1])
    table = family_table(df, FAM).table
    X = table.features().to_numpy(dtype=np.int64)
    for kind in KINDS:
        f1, f2 = (fit_model(table, X, kind, (6, "regret", 2, 6), 0) for _ in range(2))
        ir1, ir2 = (TreeIR.from_sklearn(f.model, FEATURE_NAMES, classes=f.classes) for f in (f1, f2))
        assert ir1.to_json() == ir2.to_json()


def _random_args(rng: np.random.Generator, n: int, cm: int) -> list[dict[str, int]]:
    out = []
    while len(out) < n:
        r = int(rng.choice([1, 3, 5, 7]))
        a = {"N": int(rng.integers(1, 129)), "C": cm * int(rng.integers(1, 80)), "H": int(rng.integers(r, 300)),
             "W": int(rng.integers(r, 300)), "K": cm * int(rng.integers(1, 80)), "R": r, "S": r,
             "stride": int(rng.choice([1, 2])), "pad": r // 2, "dilation": 1, "sms": int(rng.choice([16, 132]))}
        assert all(LIMITS[k][0] <= a[k] <= LIMITS[k][1] for k in ARGS)
        out.append(a)
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_exports_exactly(data, kind: str) -> None:
    """scikit-learn model == tree IR == generated Python selector (the C++ header is generated from
    the same IR: tests/test_export_cpp.py), on training rows and random shapes."""
    df, _ = data
    table = family_table(df, FAM).table
    X = table.features().to_numpy(dtype=np.int64)
    fitted = fit_model(table, X, kind, (6, "expand" if kind == "class" else "regret", 2, 8), 0)
    ir = TreeIR.from_sklearn(fitted.model, FEATURE_NAMES, classes=fitted.classes, check_X=X)
    assert set(n.label for n in ir.nodes if hasattr(n, "label")) <= set(fitted.classes)
    args = _random_args(np.random.default_rng(1), 2000, FAM.spec.channel_multiple)
    R = np.array([compute(a) for a in args], dtype=np.int64)
    assert ir.predict_many(R.tolist()) == [str(v) for v in fitted.model.predict(R)]
    fn = compile_selector(ir, FAM.spec.channel_multiple)
    assert [ir.classes[fn(*(a[k] for k in ARGS))] for a in args] == ir.predict_many(R.tolist())


@pytest.mark.parametrize("kind", ["repick", "regret"])
def test_leaves_answer_their_least_regret_config(data, kind: str) -> None:
    df, _ = data
    table = family_table(df, FAM).table
    X = table.features().to_numpy(dtype=np.int64)
    fitted = fit_model(table, X, kind, (4, "regret", 8, 4), 0)
    leaf_of = fitted.model.estimator.apply(X.astype(np.float32))
    R = regret_matrix(table)
    for leaf in np.unique(leaf_of):
        totals = R[leaf_of == leaf].sum(axis=0)
        assert fitted.model.node_labels[leaf] == table.configs[int(np.argmin(totals))]
    # a missing config counts the problem's worst time
    i, j = np.argwhere(np.isnan(table.times))[0]
    assert R[i, j] == pytest.approx(np.log(table.worst[i] / table.oracle[i]))


def test_blend_leaves_weigh_measured_and_predicted_regret(data) -> None:
    """A ``blend`` leaf answers the portfolio member of least mean teacher-predicted log-regret over its samples
    plus ``BLEND`` x mean measured log-regret over its training problems (recomputed here from the teacher's
    predictions); its tree is ``dense``'s, node for node."""
    from predictor.fitting import _TEACHER_CACHE, BLEND, TEACHER_CONFIGS
    from predictor.portfolio import greedy_portfolio

    df, _ = data
    table = family_table(df, FAM).table
    X = table.features().to_numpy(dtype=np.int64)
    _TEACHER_CACHE.clear()
    fitted = fit_model(table, X, "blend", (6, "uniform", 2, 6), 0)
    dense = fit_model(table, X, "dense", (6, "uniform", 2, 6), 0)
    assert np.array_equal(fitted.model.estimator.tree_.feature, dense.model.estimator.tree_.feature)
    (Z, pred), = _TEACHER_CACHE.values()
    port = greedy_portfolio(table, 6)
    teacher_cols = sorted(set(greedy_portfolio(table, TEACHER_CONFIGS)) | set(port))
    P = pred[:, [teacher_cols.index(j) for j in port]]
    R = regret_matrix(table)[:, port]
    est = fitted.model.estimator
    leaf_z, leaf_x = est.apply(Z.astype(np.float32)), est.apply(X.astype(np.float32))
    held = 0
    for leaf in np.unique(leaf_z):
        measured = R[leaf_x == leaf].mean(axis=0) if (leaf_x == leaf).any() else np.zeros(len(port))
        held += (leaf_x == leaf).any()
        cost = P[leaf_z == leaf].mean(axis=0) + BLEND * measured
        assert fitted.model.node_labels[leaf] == table.configs[port[int(np.argmin(cost))]]
    assert held


@pytest.mark.parametrize("kind", KINDS)
def test_leaves_record_their_next_best_candidates(data, kind: str) -> None:
    """Every IR leaf's candidates: its label, then each the model's config that most lowers the leaf's
    total log-regret of the best candidate so far over its training problems, then (once none lowers
    it) by least total log-regret (``distill``: by class weight; ``class``: the next classes by weight)."""
    df, _ = data
    table = family_table(df, FAM).table
    X = table.features().to_numpy(dtype=np.int64)
    fitted = fit_model(table, X, kind, (6, "expand" if kind == "class" else "regret", 4, 6), 0)
    ir = TreeIR.from_sklearn(fitted.model, FEATURE_NAMES, classes=fitted.classes, check_X=X)
    assert TreeIR.from_json(ir.to_json()).to_json() == ir.to_json()
    R = regret_matrix(table)
    col = {c: j for j, c in enumerate(table.configs)}
    rows_of: dict[int, list[int]] = {}
    for r, x in enumerate(X.tolist()):
        rows_of.setdefault(ir.decision_path(x)[-1], []).append(r)
    seen = covering = 0
    for leaf, rows in rows_of.items():
        c = ir.nodes[leaf].candidates
        assert c[0] == ir.nodes[leaf].label and 1 <= len(c) <= 3 and set(c) <= set(fitted.classes)
        if kind != "class":
            # recomputed here by brute force: the greedy best-of-set choice, then least total regret
            best, want = R[rows, col[c[0]]], [c[0]]
            rest = [n for n in fitted.classes if n != c[0]]
            while len(want) < min(3, len(fitted.classes)):
                gain = {n: np.minimum(best, R[rows, col[n]]).sum() for n in rest}
                n = min(rest, key=lambda n: (gain[n], col[n]))
                if gain[n] >= best.sum() - 1e-12:
                    if kind in TEACHER_KINDS:  # the rest by the leaf's class weights (a majority kind)
                        want += [m for m in c[len(want):] if m in rest]
                    else:
                        totals = R[rows].sum(axis=0)
                        want += sorted(rest, key=lambda n: (totals[col[n]], col[n]))[:3 - len(want)]
                    break
                covering += 1
                want.append(n)
                rest.remove(n)
                best = np.minimum(best, R[rows, col[n]])
            assert list(c) == want
        seen += len(c) > 1
    assert seen and (kind == "class" or covering)


def test_label_time_follows_timing_method() -> None:
    df = pd.DataFrame({"time_us": [10.0, 10.0, 10.0, 10.0], "retime_us": [11.0, np.nan, 11.0, np.nan],
                       "timing_method": [1, 1, 2, 2]})
    assert effective_times(df).tolist() == [10.0, 10.0, 11.0, 10.0]
    assert effective_times(df.drop(columns="timing_method")).tolist() == [10.0] * 4  # older files: method 1


def test_each_problem_is_labelled_by_one_timing_method() -> None:
    """A re-sweep with graph batches (method 3) labels the problems it covers in full; a problem it
    covers in part keeps its older rows; the older rows never mix with the newer in one problem."""
    rows = []
    for key, m3_configs in (("full", "abc"), ("part", "a"), ("old", "")):
        rows += [dict(shape_key=key, sms=132, config=c, timing_method=2, time_us=10.0) for c in "abc"]
        rows += [dict(shape_key=key, sms=132, config=c, timing_method=3, time_us=9.0) for c in m3_configs]
    rows.append(dict(shape_key="full", sms=16, config="a", timing_method=2, time_us=30.0))  # another SM count
    rows += [dict(shape_key="added", sms=132, config=c, timing_method=m, time_us=10.0)  # configs added later,
             for c, m in (("a", 1), ("b", 1), ("c", 2))]  # both eager: kept together
    df = pd.DataFrame(rows).assign(family="f")
    other = pd.DataFrame([dict(shape_key="full", sms=132, config=c, timing_method=2, time_us=5.0, family="i8")
                          for c in "uvwxyz"])  # another family of the same shape, never graph-timed
    assert one_method_per_problem(pd.concat([df, other])).groupby("family")["timing_method"].agg(
        lambda m: sorted(set(m))).to_dict() == {"f": [1, 2, 3], "i8": [2]}
    kept = one_method_per_problem(df)
    got = kept.groupby(["shape_key", "sms"])["timing_method"].agg(lambda m: sorted(set(m))).to_dict()
    assert got == {("full", 132): [3], ("part", 132): [2], ("old", 132): [2], ("full", 16): [2],
                   ("added", 132): [1, 2]}
    assert len(kept) == 3 + 3 + 3 + 1 + 3
    ok = df.assign(status="ok", verified=True, retime_us=np.nan)
    assert sorted(eligible_rows(ok).groupby("shape_key")["t_eff"].min().tolist()) == [9.0, 10.0, 10.0, 10.0]


def test_a_choice_is_labelled_by_one_timing_method_across_its_families() -> None:
    """Families with the same tensors (a choice's members) are one problem's competitors: graph rows of one
    member alone do not outvote the eager rows of all of them (its graph time would be compared with the others'
    eager times); a family of other tensors never decides."""
    rows = []
    for key, graph_fams in (("one", ("i8nhwc",)), ("all", ("i8nhwc", "i8nhwc90"))):
        for fam, cfgs in (("i8nhwc", "abc"), ("i8nhwc90", "uv")):
            rows += [dict(shape_key=key, sms=132, family=fam, config=fam + c, timing_method=2) for c in cfgs]
            rows += [dict(shape_key=key, sms=132, family=fam, config=fam + c, timing_method=3)
                     for c in cfgs if fam in graph_fams]
    rows += [dict(shape_key="one", sms=132, family="f16nhwc", config=c, timing_method=2) for c in "pqrstuvwxyz"]
    df = pd.DataFrame(rows)
    methods = lambda d: d.groupby(["shape_key", "family"])["timing_method"].agg(  # noqa: E731
        lambda m: sorted(set(m))).to_dict()
    assert methods(one_method_per_problem(df)) == {
        ("all", "i8nhwc"): [3], ("all", "i8nhwc90"): [3], ("one", "i8nhwc"): [2], ("one", "i8nhwc90"): [2],
        ("one", "f16nhwc"): [2]}
    # the same where the other member was never graph-timed at all (the held-out layers of session 25)
    assert methods(one_method_per_problem(df[df["shape_key"] == "one"])) == {
        ("one", "i8nhwc"): [2], ("one", "i8nhwc90"): [2], ("one", "f16nhwc"): [2]}
    alone = one_method_per_problem(df[(df["family"] == "i8nhwc")])  # its own model: a tie on "one", graph
    assert set(alone["timing_method"]) == {3}


@pytest.fixture(scope="module")
def shipped_int8() -> tuple[dict[str, pd.DataFrame], pd.DataFrame, pd.DataFrame]:
    """The h200 run's sweeps (int8 NHWC rows), read and labelled once for the re-sweep checks below."""
    root = Path(__file__).resolve().parent.parent
    fams = ["i8nhwc", "i8nhwc90", "i8gemm90"]
    frames = {f: read_sweep(root / f) for f in SHIPPED_RUNS[0].sweeps}
    df = pd.concat([f[f["family"].isin(fams)] for f in frames.values()], ignore_index=True)
    return frames, df, one_method_per_problem(df)


@pytest.mark.parametrize("graph_file, n_problems", [("sweeps/h200-graph-i8.parquet", 650),
                                                     ("sweeps/h200-graph-i8-rest.parquet", 768),
                                                     ("sweeps/h200-graph-i8-30us.parquet", 443)])
def test_shipped_int8_graph_sweep_labels_its_problems_alone(shipped_int8, graph_file: str, n_problems: int) -> None:
    """Every problem of the int8 graph re-sweeps (sessions 25 and 26: under 5.1, 10 and 30 us) is labelled by its
    graph rows alone, in every family of the int8 NHWC choice that implements it, once the h200 run's sweeps are
    read together: the re-sweeps timed every config of the three families, so no label compares graph with eager
    times."""
    frames, df, kept = shipped_int8
    assert graph_file in frames
    graph = set(frames[graph_file]["shape_key"])
    kept = kept[kept["shape_key"].isin(graph)]
    assert len(graph) == n_problems and kept["timing_method"].unique().tolist() == [3]
    per_family = kept.groupby("shape_key")["family"].nunique()
    assert len(per_family) == n_problems and per_family.min() >= 2  # both conv families, GEMM on 1x1 problems
    # the graph rows hold every family the eager rows of the same problem hold (some more: the eager sweeps of
    # the three families drew different problems)
    eager = df[df["shape_key"].isin(graph) & (df["timing_method"] != 3)].groupby("shape_key")["family"].agg(set)
    timed = kept.groupby("shape_key")["family"].agg(set)
    assert all(e <= timed[k] for k, e in eager.items())


def test_cli_report(data, tmp_path: Path) -> None:
    df, _ = data
    sweeps = []
    for sms in (132, 16):  # one file per SM count, as the collector writes them
        sweeps.append(tmp_path / f"sm{sms}.parquet")
        write_sweep(df[df["sms"] == sms], sweeps[-1], {"synthetic": True})
    out = tmp_path / "lono"
    assert main([*map(str, sweeps), "--out", str(out), "--max-portfolio", "4", "--folds", "3"]) == 0
    text = (out / "REPORT.md").read_text()
    assert text.startswith("# Leave-one-network-out") and all(file_sha256(p) in text for p in sweeps)
    assert "python -m predictor.lono" in text and "`othernet`" in text and "> 8 GFLOP" in text
    layers = pd.read_csv(out / "layers.csv")
    table = family_table(df, FAM).table
    n_layers = int(sum(str(s).startswith("net:") for s in table.sources))
    assert len(layers) == 2 * n_layers and set(layers["kind"]) == {"class", "repick"}
    assert ((layers["score"] > 0) & (layers["score"] <= layers["bound"] + 1e-12)).all()
    # first-call tuning: the pick is the first candidate, and the best candidate is one of the model's configs
    assert ((layers["tuned"] >= layers["score"]) & (layers["tuned"] <= layers["bound"] + 1e-12)).all()
    assert (layers["tuned"] > layers["score"]).any() and layers["candidates"].between(1, 3).all()
    assert "tuned" in text


def test_cli_bad_input(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="not found"):
        main([str(tmp_path / "nope.parquet"), "--out", str(tmp_path / "o")])
    sweep = tmp_path / "s.parquet"
    write_sweep(make_sweep(n_shapes=20, families=("i8nc32",)), sweep)
    with pytest.raises(SystemExit, match="f16nhwc"):
        main([str(sweep), "--family", "f16nhwc", "--out", str(tmp_path / "o")])


def test_groups_hold_out_whole_groups(data) -> None:
    from predictor.lono import network_groups

    df, _ = data
    table = family_table(df, FAM).table
    names = networks(table)
    assert network_groups(names, 0) == [[n] for n in sorted(names)]
    assert network_groups(["c", "a", "b"], 2) == [["a", "c"], ["b"]]
    tr, te = lono_split(table, names)
    assert set(table.sources[te]) == {f"net:{n}" for n in names}
    assert not set(base_keys(table.keys[tr])) & set(base_keys(table.keys[te]))


def test_synthetic_neighbours_keep_the_filter_and_stay_runnable(data) -> None:
    """``distill``'s perturbed copies: N, C, H, W, K change; filter, stride, padding, dilation, SM count
    and the channel multiple stay; the same seed gives the same rows."""
    from predictor.fitting import synthetic_neighbours

    df, _ = data
    X = family_table(df, FAM).table.features().to_numpy(dtype=np.int64)[:40]
    Z = synthetic_neighbours(X, 5, seed=3)
    assert Z.shape == (200, X.shape[1]) and np.array_equal(Z, synthetic_neighbours(X, 5, seed=3))
    col = {n: FEATURE_NAMES.index(n) for n in ("N", "C", "H", "W", "K", "R", "S", "stride", "pad", "dilation", "sms")}
    src = np.repeat(X, 5, axis=0)
    for n in ("R", "S", "stride", "pad", "dilation", "sms"):
        assert np.array_equal(Z[:, col[n]], src[:, col[n]])
    mult = np.gcd(np.gcd(src[:, col["C"]], src[:, col["K"]]), 32)
    assert (Z[:, col["C"]] % mult == 0).all() and (Z[:, col["K"]] % mult == 0).all()
    assert (Z[:, col["N"]] != src[:, col["N"]]).any() and (Z[:, col["H"]] != src[:, col["H"]]).any()
    assert Z[:, col["N"]].min() >= 1 and Z[:, col["N"]].max() <= 64
    assert synthetic_neighbours(X, 0, seed=3).shape == (0, X.shape[1])


@pytest.mark.parametrize("kind", sorted(TEACHER_KINDS))
def test_each_teacher_kind_labels_its_number_of_copies(data, kind: str) -> None:
    """The student of a teacher kind learns the training problems and ``COPIES[kind]`` perturbed copies of
    each (``dense``: twice ``cost``'s)."""
    from predictor.fitting import COPIES
    from predictor.portfolio import greedy_portfolio, portfolio_targets

    df, _ = data
    table = family_table(df, FAM).table
    X = table.features().to_numpy(dtype=np.int64)
    fitted = fit_model(table, X, kind, (6, "uniform", 1, 4), 0)
    kept = int((portfolio_targets(table, greedy_portfolio(table, 6))[0] >= 0).sum())
    assert fitted.model.estimator.tree_.n_node_samples[0] == (1 + COPIES[kind]) * kept
    assert COPIES["dense"] == 2 * COPIES["cost"]


@pytest.mark.parametrize("kind", ["soft", "soft10"])
def test_soft_student_learns_the_teachers_soft_labels(data, kind: str) -> None:
    """``soft`` kinds: every node of the student holds the mean over its samples (training problems and copies) of
    ``softmax(-teacher-predicted log-regret / SOFT)`` over the portfolio, and answers its largest member; the
    labels are soft (not the teacher's argmin alone)."""
    from predictor.fitting import (COPIES, SOFT, TEACHER_CONFIGS, _teacher_predictions, cost_teacher_set,
                                   regret_matrix, soft_labels)
    from predictor.portfolio import LOG_BITS
    from predictor.portfolio import greedy_portfolio, portfolio_targets

    df, _ = data
    table = family_table(df, FAM).table
    X = table.features().to_numpy(dtype=np.int64)
    fitted = fit_model(table, X, kind, (6, "uniform", 2, 6), 0)
    port = greedy_portfolio(table, 6)
    keep = portfolio_targets(table, port)[0] >= 0
    teacher = cost_teacher_set(table, port, greedy_portfolio(table, TEACHER_CONFIGS), regret_matrix(table))
    Z, pred = _teacher_predictions(X[keep], teacher.regret[keep], 0, COPIES[kind], teacher.configs)
    P = pred[:, list(teacher.members)]
    S = np.exp(-(P - P.min(axis=1, keepdims=True)) / SOFT[kind])
    S /= S.sum(axis=1, keepdims=True)
    assert (S.max(axis=1) < 0.99).mean() > 0.1  # soft: many samples hold more than one near-best member
    learned = soft_labels(P, SOFT[kind])  # S on the 2**-LOG_BITS grid (the CPU cannot change its last bit)
    assert np.abs(learned - S).max() <= 2.0 ** -(LOG_BITS + 1) + 1e-15 and not np.array_equal(learned, S)
    S = learned
    tree = fitted.model.estimator
    leaf = tree.apply(Z.astype(np.float32))
    checked = 0
    for node in np.unique(leaf):
        mean = S[leaf == node].mean(axis=0)
        assert tree.tree_.value[node, :, 0] == pytest.approx(mean, abs=1e-9)
        assert fitted.model.node_labels[node] == table.configs[port[int(np.argmax(mean))]]
        checked += 1
    assert checked > 4


def test_default_families_leave_a_gemm_family_to_the_choices() -> None:
    """train and lono cover the same families when none is named: those that run every convolution."""
    from predictor.model_key import default_families

    assert default_families({"f16gemm90", "i8nc32", "f16nhwc", "f16nhwc90", "bogus"}) == ["f16nhwc", "f16nhwc90", "i8nc32"]


def test_hyper_parameters_are_chosen_as_train_chooses_them() -> None:
    """The leave-out folds choose their hyper-parameters as ``predictor.train`` does (same CV tolerance, same grid
    of portfolio sizes unless one is asked for), so the figures are those of the shipped method."""
    from predictor.fitting import CV_TOLERANCE, portfolio_sizes
    from predictor.lono import build_parser as lono_parser
    from predictor.train import build_parser as train_parser

    assert Settings().tolerance == CV_TOLERANCE == train_parser().get_default("cv_tolerance")
    assert lono_parser().get_default("cv_tolerance") == CV_TOLERANCE
    assert Settings(max_portfolio=24).k_grid == portfolio_sizes(None, 24) == [2, 3, 4, 6, 8, 10, 12, 16, 24]
    assert Settings(max_portfolio=20).k_grid == [2, 3, 4, 6, 8, 10, 12, 16, 20]
    assert Settings(max_portfolio=12, k_sizes=(4, 12, 24)).k_grid == [4, 12]
    assert portfolio_sizes([30], 24) == [24]


@pytest.mark.parametrize("kind", ["repick", "cost"])
def test_threads_do_not_change_the_cross_validation(data, kind: str) -> None:
    """``threads`` fits the CV folds in parallel: every score, the chosen combination and every
    out-of-fold pick are those of the serial run."""
    from predictor.fitting import cross_validate

    df, _ = data
    table = family_table(df, FAM).table
    X = table.features().to_numpy(dtype=np.int64)
    grid = dict(k_grid=[2, 4, 6], depth_grid=(2, 4, 6), min_leaf_grid=(2, 8), weightings=("regret", "uniform"),
                folds=3, seed=0, tolerance=0.002, kind=kind)
    serial, threaded = cross_validate(table, X, **grid), cross_validate(table, X, **grid, threads=3)
    assert serial.scores == threaded.scores and serial.chosen == threaded.chosen
    assert np.array_equal(serial.model_picks, threaded.model_picks)
    assert np.array_equal(serial.single_picks, threaded.single_picks)


def _plain_run(data, tmp_path: Path) -> list[str]:
    """The whole-GPU rows of the synthetic sweep written to ``tmp_path``, scored without ``--parts`` into
    ``tmp_path/plain``: the arguments of that run (a ``repick`` tree, one network held out at a time)."""
    df, _ = data
    sweep = tmp_path / "s.parquet"
    write_sweep(df[df["sms"] == 132], sweep, {"synthetic": True})
    args = [str(sweep), "--max-portfolio", "4", "--folds", "3", "--kind", "repick"]
    assert main([*args, "--out", str(tmp_path / "plain")]) == 0
    return args


def test_parts_resume_a_stopped_run_with_the_same_result(data, tmp_path: Path) -> None:
    """``--parts`` keeps each finished held-out fold; a run that finds some of them (one deleted, as if
    stopped before it) reuses them and writes the same layers as a run without parts."""
    args = _plain_run(data, tmp_path)
    parts = tmp_path / "parts"
    assert main([*args, "--out", str(tmp_path / "first"), "--parts", str(parts)]) == 0
    kept = sorted(parts.glob("*.json"))
    assert len(kept) == 2 and all(p.name.startswith("i8nc32-g") for p in kept)  # two networks
    kept[0].unlink()
    stamp = kept[1].stat().st_mtime_ns
    assert main([*args, "--out", str(tmp_path / "resumed"), "--parts", str(parts), "--jobs", "2"]) == 0
    assert kept[1].stat().st_mtime_ns == stamp and kept[0].is_file()  # read, not rerun; the missing one rerun
    plain = (tmp_path / "plain" / "layers.csv").read_text()
    assert (tmp_path / "first" / "layers.csv").read_text() == plain
    assert (tmp_path / "resumed" / "layers.csv").read_text() == plain
    assert "1 of the 2 held-out folds read from" in (tmp_path / "resumed" / "REPORT.md").read_text()
    assert "read from" not in (tmp_path / "first" / "REPORT.md").read_text()
    assert main([*args[:-1], "class", "--out", str(tmp_path / "other"), "--parts", str(parts)]) == 0
    assert len(list(parts.glob("*.json"))) == 4  # other settings: new parts, none reused


def test_only_folds_share_a_run_between_machines(data, tmp_path: Path) -> None:
    """``--only-folds`` computes just those held-out folds into ``--parts`` and writes no report; two such
    runs into one folder, then a plain run reading them, give the layers of a run without parts."""
    args = _plain_run(data, tmp_path)
    parts = tmp_path / "parts"
    assert main([*args, "--out", str(tmp_path / "a"), "--parts", str(parts), "--only-folds", "1"]) == 0
    assert [p.name[:10] for p in parts.glob("*.json")] == ["i8nc32-g1-"] and not (tmp_path / "a").exists()
    assert main([*args, "--out", str(tmp_path / "b"), "--parts", str(parts), "--only-folds", "0"]) == 0
    assert main([*args, "--out", str(tmp_path / "joined"), "--parts", str(parts)]) == 0
    assert (tmp_path / "joined" / "layers.csv").read_text() == (tmp_path / "plain" / "layers.csv").read_text()
    assert "2 of the 2 held-out folds read from" in (tmp_path / "joined" / "REPORT.md").read_text()
    with pytest.raises(SystemExit, match="--only-folds needs --parts"):
        main([*args, "--out", str(tmp_path / "c"), "--only-folds", "0"])
    with pytest.raises(SystemExit, match=r"folds in 0\.\.1"):
        main([*args, "--out", str(tmp_path / "c"), "--parts", str(parts), "--only-folds", "2"])


def test_network_cv_groups_keep_each_networks_layers_in_one_fold(data) -> None:
    """``cv_groups="network"``: every network's layers (all SM counts) fall in one inner fold, other problems are
    grouped by problem as ``train`` groups them; the default is ``train``'s and is not in a kept fold's name."""
    from predictor.fitting import _folds, cv_group_labels
    from predictor.lono import _part_path

    df, _ = data
    table = family_table(df, FAM).table
    assert np.array_equal(cv_group_labels(table), base_keys(table.keys))
    labels = cv_group_labels(table, "network")
    net = np.char.startswith(np.asarray(table.sources).astype(str), "net:")
    assert set(labels[net]) == {"net:synthnet", "net:othernet"}
    assert np.array_equal(labels[~net], base_keys(table.keys)[~net])
    for tr, te in _folds(table, 3, 0, "network"):
        assert not set(labels[tr]) & set(labels[te])
    assert any(len(set(table.sources[te]) & {"net:synthnet", "net:othernet"}) == 1
               for _, te in _folds(table, 3, 0, "network"))
    assert any(set(table.sources[te]) >= {"net:synthnet", "net:othernet"} for _, te in _folds(table, 3, 0))
    with pytest.raises(ValueError, match="cv groups 'layer'"):
        cv_group_labels(table, "layer")
    assert "cv_groups" not in repr(Settings())
    X = table.features().to_numpy(dtype=np.int64)
    task = (table, X, ["synthnet"], SMALL, FAM.value, 1)
    other = (table, X, ["synthnet"], Settings(**{**SMALL.__dict__, "cv_groups": "network"}), FAM.value, 1)
    assert _part_path(Path("p"), task, 0) != _part_path(Path("p"), other, 0)


def test_cli_network_cv_groups_are_reported(data, tmp_path: Path) -> None:
    """``--cv-groups network`` runs and says so in the report; a value not in ``CV_GROUPS`` is refused."""
    args = _plain_run(data, tmp_path)
    assert main([*args, "--out", str(tmp_path / "net"), "--cv-groups", "network"]) == 0
    report = (tmp_path / "net" / "REPORT.md").read_text()
    assert "`--cv-groups network`" in report and "`--cv-groups network`" not in (tmp_path / "plain" / "REPORT.md").read_text()
    with pytest.raises(SystemExit):
        main([*args, "--out", str(tmp_path / "bad"), "--cv-groups", "layer"])


def test_cli_depth_grid_is_searched_and_reported(data, tmp_path: Path) -> None:
    """``--depth-grid`` limits the depths the inner CV searches (every fold's chosen depth is one of them) and the
    report names it; a depth below 1 is refused."""
    args = _plain_run(data, tmp_path)
    assert main([*args, "--out", str(tmp_path / "d"), "--depth-grid", "3", "2"]) == 0
    report = (tmp_path / "d" / "REPORT.md").read_text()
    assert "tree depths searched: [2, 3] (`--depth-grid`" in report
    assert "--depth-grid" not in (tmp_path / "plain" / "REPORT.md").read_text()
    chosen = report.split("## Chosen per fold")[1]
    depths = {int(row.split(" | ")[-3]) for row in chosen.splitlines() if row.startswith("| ") and "repick" in row}
    assert depths and depths <= {2, 3}
    with pytest.raises(SystemExit, match="depth"):
        main([*args, "--out", str(tmp_path / "bad"), "--depth-grid", "0", "4"])

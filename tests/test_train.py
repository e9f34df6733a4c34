"""predictor.train end to end on the SYNTHETIC sweep, plus portfolio/metric units and bad input."""
from __future__ import annotations

import json
import math
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from synthetic import make_sweep

from predictor.config import Family, KernelConfig
from predictor.features import FEATURE_NAMES, FEATURE_SETS, compute
from predictor.portfolio import (
    ShapeTable, best_single, greedy_portfolio, metrics, picked_times, portfolio_targets,
)
from predictor.schema import file_sha256, write_sweep
from predictor.train import gpu_slug, keys_to_train, main, training_set
from predictor.tree_ir import TreeIR


# --------------------------------------------------------------------------- end to end
def test_outputs_exist_and_metadata(synthetic_models) -> None:
    sha = file_sha256(synthetic_models.sweep)
    for fam in synthetic_models.families:
        stem = synthetic_models.models / f"synthetic-{fam}"
        for suffix in (".joblib", ".tree.json", ".summary.json", ".summary.md"):
            assert Path(f"{stem}{suffix}").is_file(), suffix
        blob = joblib.load(f"{stem}.joblib")
        meta = blob["meta"]
        assert meta["sweep_sha256"] == sha
        assert meta["family"] == fam and meta["gpu"] == "synthetic" and meta["sms"] == 132
        assert meta["feature_names"] == list(FEATURE_SETS["base"])
        assert 1 <= len(meta["hyperparameters"]["grown_on"]) <= 12  # --max-portfolio (default 12)
        assert set(meta["hyperparameters"]) >= {"kind", "k", "max_depth", "min_samples_leaf"}
        assert {"sklearn", "numpy"} <= set(meta["versions"])
        assert meta["tree_json_sha256"] == file_sha256(f"{stem}.tree.json")
        for name in meta["portfolio"]:
            assert KernelConfig.from_name(name).family is Family(fam)
        ir = TreeIR.load(f"{stem}.tree.json")
        assert list(ir.classes) == meta["portfolio"] and ir.meta["sweep_sha256"] == sha
        assert {n.label for n in ir.nodes if hasattr(n, "label")} == set(ir.classes)  # every config is answered
        # the saved sklearn model and the IR agree on the training shapes
        df = pd.read_parquet(synthetic_models.sweep)
        shapes = df[df["family"] == fam].drop_duplicates("shape_key")
        X = np.array([compute({**r, "sms": 132}) for r in shapes[["N", "C", "H", "W", "K", "R", "S", "stride",
                                                                   "pad", "dilation"]].to_dict("records")])
        assert [str(v) for v in blob["model"].predict(X)] == ir.predict_many(X.tolist())
    assert (synthetic_models.export / "synthetic_conv_heuristics.hpp").is_file()


def test_summary_metrics(synthetic_models) -> None:
    for fam in synthetic_models.families:
        s = json.loads((synthetic_models.models / f"synthetic-{fam}.summary.json").read_text())
        assert s["shapes"]["holdout"] > 0 and s["shapes"]["train"] > 100
        assert s["shapes"]["dropped_no_ok"] == 1  # the fixture has one shape where nothing ran
        for block in ("cv", "holdout", "in_sample"):
            for picker in ("model", "best_single"):
                m = s[block][picker]
                for key in ("geomean", "p10", "worst"):
                    assert math.isfinite(m[key]) and 0 < m[key] <= 1 + 1e-9, (block, picker, key)
                assert 0 <= m["exact"] <= 1
                assert m["worst"] <= m["p10"] <= 1 and m["worst"] <= m["geomean"] <= 1
        assert s["cv"]["model"]["geomean"] > s["cv"]["best_single"]["geomean"]
        assert s["holdout"]["model"]["geomean"] > s["holdout"]["best_single"]["geomean"]
        seed_family = fam == "i8nc32"  # SEED_CONFIG is an int8 config: scored for its family only
        assert (s["cv"]["seed"] is not None) == seed_family and (s["holdout"]["seed"] is not None) == seed_family
        md = (synthetic_models.models / f"synthetic-{fam}.summary.md").read_text()
        assert "geomean" in md and "worst" in md


def test_target_sm87(tmp_path: Path) -> None:
    df = make_sweep(n_shapes=120, families=("i8nc32",))
    sweep = tmp_path / "s.parquet"
    write_sweep(df, sweep)
    bad = set(df.loc[~df["sm87_ok"], "config"])
    assert bad  # the fixture has a config that does not fit sm_87
    main([str(sweep), "--target", "sm_87", "--models-dir", str(tmp_path / "m"), "--export-dir",
          str(tmp_path / "x"), "--quiet"])
    meta = joblib.load(tmp_path / "m" / "synthetic-sm87-i8nc32.joblib")["meta"]
    assert meta["target"] == "sm_87" and not set(meta["portfolio"]) & bad
    assert all(meta["sm87_ok"].values())
    summary = json.loads((tmp_path / "m" / "synthetic-sm87-i8nc32.summary.json").read_text())
    assert set(summary["configs_dropped_for_target"]) == bad
    assert (tmp_path / "x" / "synthetic_sm87_conv_heuristics.hpp").is_file()


def test_holdout_prefixes_and_family_option(tmp_path: Path) -> None:
    sweep = tmp_path / "s.parquet"
    write_sweep(make_sweep(n_shapes=80), sweep)
    main([str(sweep), "--family", "f16nhwc", "--holdout-sources", "--models-dir", str(tmp_path / "m"),
          "--no-export", "--quiet", "--max-portfolio", "3"])
    s = json.loads((tmp_path / "m" / "synthetic-f16nhwc.summary.json").read_text())
    assert s["shapes"]["holdout"] == 0 and s["holdout"]["model"] is None
    assert len(s["hyperparameters"]["grown_on"]) <= 3
    assert not (tmp_path / "m" / "synthetic-i8nc32.joblib").exists()
    assert not (tmp_path / "export").exists()


def test_cv_groups_network(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--cv-groups network`` keeps the synthetic network's layers in one inner fold and says so in the summary's
    CV grid (the default writes nothing there, so the shipped files did not change); ``--all`` takes its own."""
    sweep = tmp_path / "s.parquet"
    write_sweep(make_sweep(n_shapes=80, families=("f16nhwc",)), sweep)
    grids = {}
    for groups in ("problem", "network"):
        assert main([str(sweep), "--cv-groups", groups, "--models-dir", str(tmp_path / groups), "--no-export",
                     "--quiet", "--max-portfolio", "3"]) == 0
        grids[groups] = json.loads((tmp_path / groups / "synthetic-f16nhwc.summary.json").read_text())["cv_grid"]
    assert grids["network"]["cv_groups"] == "network" and "cv_groups" not in grids["problem"]
    assert grids["network"]["top"] != grids["problem"]["top"]  # other folds, other CV scores
    assert "--cv-groups" in _fails(["--all", "--cv-groups", "network"], capsys)


# --------------------------------------------------------------------------- bad input
def _fails(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the CLI on bad input: exit code 2 and exactly one line on stderr, which is returned."""
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("predictor.train: error: ") and err.count("\n") == 1, err
    return err


def _run(tmp_path: Path, df: pd.DataFrame, capsys: pytest.CaptureFixture[str]) -> str:
    sweep = tmp_path / "bad.parquet"
    write_sweep(df, sweep)
    return _fails([str(sweep), "--models-dir", str(tmp_path / "m"), "--export-dir", str(tmp_path / "x"), "--quiet"],
                  capsys)


def test_missing_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    msg = _run(tmp_path, make_sweep(n_shapes=20, families=("i8nc32",)).drop(columns=["retime_us"]), capsys)
    assert "missing column(s) ['retime_us']" in msg


def test_empty_sweep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "the sweep has no rows" in _run(tmp_path, make_sweep(n_shapes=20).iloc[:0], capsys)


def test_empty_file_and_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty.parquet").write_bytes(b"")
    assert "not a readable parquet file" in _fails([str(tmp_path / "empty.parquet")], capsys)
    assert "is a folder" in _fails([str(tmp_path)], capsys)
    assert "give sweep file(s)" in _fails([], capsys)


def test_no_ok_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    df = make_sweep(n_shapes=20, families=("i8nc32",))
    df["status"] = "cannot_implement"
    assert "no rows with status == 'ok'" in _run(tmp_path, df, capsys)


def test_unknown_family_requested(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sweep = tmp_path / "s.parquet"
    write_sweep(make_sweep(n_shapes=20, families=("i8nc32",)), sweep)
    assert "no rows of family ['f16nhwc']" in _fails(
        [str(sweep), "--family", "f16nhwc", "--models-dir", str(tmp_path / "m"), "--quiet"], capsys)


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "not found" in _fails([str(tmp_path / "nope.parquet"), "--quiet"], capsys)


def test_shipped_models_are_not_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Training a subset under the shipped slug into the shipped folders is refused (one line);
    --all takes no other arguments."""
    from predictor.resources import export_dir, models_dir

    sweep = tmp_path / "s.parquet"
    write_sweep(make_sweep(n_shapes=20, families=("i8nc32",)), sweep)
    before = {p: p.read_bytes() for p in sorted(models_dir().glob("h200-i8nc32.*"))}
    assert before
    msg = _fails([str(sweep), "--slug", "h200", "--models-dir", str(models_dir()), "--export-dir",
                  str(export_dir()), "--quiet"], capsys)
    assert "is a shipped file" in msg and "--overwrite" in msg
    assert {p: p.read_bytes() for p in before} == before
    assert "--all" in _fails(["--all", str(sweep)], capsys)
    assert "--seed" in _fails(["--all", "--seed", "1"], capsys)


def test_all_family_selects_shipped_keys_and_their_routed_choices() -> None:
    """``--all --family F``: the runs that train F, F and every routed choice grafting F's model (transitively), in
    the run's order; ``--slug`` narrows the runs; a key no run trains is refused."""
    from predictor.shipped import SHIPPED_RUNS, shipped_selection

    def keys_of(run):  # the families of the shipped sweeps, without reading them
        fams = ["f16nhwc", "f16nhwc90", "i8nc32", "i8nhwc", "i8nhwc90"] if run.slug == "h200" else ["f16nhwc", "i8nc32", "i8nhwc"]
        return [*fams, *run.choices]

    sel = {r.slug: k for r, k in shipped_selection(["f16nhwc90"], None, keys_of)}
    assert sel == {"h200": ["f16nhwc90", "f16nhwc+f16nhwc90", "f16nhwc+f16nhwc90+f16gemm90"]}
    sel = {r.slug: k for r, k in shipped_selection(["f16nhwc"], None, keys_of)}
    assert sel == {"h200": ["f16nhwc", "f16nhwc+f16nhwc90", "f16nhwc+f16nhwc90+f16gemm90"], "h200-sm87": ["f16nhwc"]}
    assert [(r.slug, k) for r, k in shipped_selection(["f16nhwc"], "h200-sm87", keys_of)] == [("h200-sm87", ["f16nhwc"])]
    assert [k for _, k in shipped_selection(["i8nhwc90+i8gemm90", "i8nc32"], "h200", keys_of)] == [
        ["i8nc32", "i8nhwc90+i8gemm90"]]  # a choice that is not routed: nothing else
    assert {r.slug for r in SHIPPED_RUNS} == {"h200", "h200-sm87"}
    with pytest.raises(ValueError, match="i8nhwc90: no shipped run of slug h200-sm87"):
        shipped_selection(["i8nhwc90"], "h200-sm87", keys_of)
    with pytest.raises(ValueError, match="--slug h100: no shipped run"):
        shipped_selection(["i8nc32"], "h100", keys_of)


def test_all_family_bad_input(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)  # --all runs from the repository root
    assert "give them with --family" in _fails(["--all", "--slug", "h200"], capsys)
    assert "--all --family i8gemm90: no shipped run trains it" in _fails(["--all", "--family", "i8gemm90"], capsys)
    assert "--target" in _fails(["--all", "--family", "i8nc32", "--target", "sm_87"], capsys)


def test_gpu_slug() -> None:
    assert gpu_slug("NVIDIA H200") == "h200"
    assert gpu_slug("NVIDIA H100 80GB HBM3") == "h100-80gb-hbm3"
    assert gpu_slug("Orin (nvgpu)") == "orin-nvgpu"
    assert gpu_slug("synthetic") == "synthetic"


# --------------------------------------------------------------------------- portfolio units
def _table(times: list[list[float]]) -> ShapeTable:
    t = np.array(times, dtype=float)
    n, m = t.shape
    shapes = pd.DataFrame({"N": np.arange(1, n + 1)})
    return ShapeTable(np.array([f"s{i}" for i in range(n)]), np.array(["grid"] * n), shapes,
                      tuple(f"c{j}" for j in range(m)), t)


def test_picked_times_missing_is_worst() -> None:
    t = _table([[1.0, np.nan, 4.0], [2.0, 3.0, np.nan]])
    np.testing.assert_allclose(picked_times(t, np.array([1, 2])), [4.0, 3.0])
    np.testing.assert_allclose(picked_times(t, np.array([0, -1])), [1.0, 3.0])
    m = metrics(t.oracle, picked_times(t, np.array([1, 0])))
    assert m["worst"] == pytest.approx(0.25) and m["exact"] == 0.5


def test_greedy_covers_and_improves() -> None:
    # c0 is best on shape 0 only, c1 runs everywhere (slowly), c2 is best on 1..3 but missing on 4
    t = _table([[1, 5, 2], [9, 5, 1], [9, 5, 1], [9, 5, 1], [9, 5, np.nan]])
    assert greedy_portfolio(t, 1) == [1]  # the only config that covers every shape
    assert best_single(t) == 2  # by geomean alone (missing on shape 4 scores its worst time)
    p2 = greedy_portfolio(t, 2)
    assert p2 == [2, 0]  # best geomean first, then the better of the configs covering shape 4
    label, regret = portfolio_targets(t, p2)
    assert [p2[i] for i in label] == [0, 2, 2, 2, 0]
    assert regret.min() == 0
    scores = []
    for k in (1, 2, 3):
        p = greedy_portfolio(t, k)
        lab, _ = portfolio_targets(t, p)
        scores.append(metrics(t.oracle, picked_times(t, np.asarray(p)[lab]))["geomean"])
    assert scores == sorted(scores) and scores[-1] == pytest.approx(1.0)


def test_training_set_weightings() -> None:
    X = np.arange(6).reshape(3, 2)
    label = np.array([0, 1, -1])
    regret = np.log(np.array([[1.0, 2.0], [1.5, 1.0], [1.0, 1.0]]))
    Xr, yr, wr = training_set(X, label, regret, "regret")
    assert list(yr) == [0, 1] and wr[0] > wr[1] > 0
    Xe, ye, we = training_set(X, label, regret, "expand")
    assert list(ye) == [0, 1] and np.all(we > 0)  # losers get zero weight and are dropped
    with pytest.raises(ValueError):
        training_set(X, label, regret, "nope")


def test_config_with_any_wrong_result_is_never_eligible() -> None:
    import pandas as pd

    from predictor.portfolio import eligible_rows

    base = {"family": "i8nc32", "verified": True, "time_us": 1.0, "retime_us": float("nan")}
    df = pd.DataFrame([
        {**base, "shape_key": "a", "config": "x", "status": "ok"},
        {**base, "shape_key": "b", "config": "x", "status": "wrong_result", "verified": False},
        {**base, "shape_key": "a", "config": "y", "status": "ok"},
        {**base, "shape_key": "a", "config": "x", "status": "ok", "family": "f16nhwc"},
    ])
    out = eligible_rows(df)
    assert sorted(zip(out["family"], out["config"])) == [("f16nhwc", "x"), ("i8nc32", "y")]


def test_several_sm_counts_make_sms_a_feature(tmp_path) -> None:
    """Two SYNTHETIC sweeps of one GPU at 132 and 16 SMs: one model, with the SM count as a feature
    that changes the pick, and CV folds that keep a problem's SM counts together."""
    import numpy as np

    from synthetic import write_synthetic_sweep

    from predictor.portfolio import ShapeTable
    from predictor.selector import select
    from predictor.train import _folds, base_keys, main

    a = write_synthetic_sweep(tmp_path / "full.parquet", n_shapes=150, families=("i8nc32",), sms=132)
    b = write_synthetic_sweep(tmp_path / "sm16.parquet", n_shapes=150, families=("i8nc32",), sms=16)
    models = tmp_path / "models"
    assert main([str(a), str(b), "--slug", "multi", "--models-dir", str(models), "--export-dir",
                 str(tmp_path / "export"), "--quiet"]) == 0
    s = json.loads((models / "multi-i8nc32.summary.json").read_text())
    assert s["shapes"]["train"] + s["shapes"]["holdout"] > 150  # (shape, sms) pairs
    model = str(models / "multi-i8nc32.tree.json")
    picks = {sms: [select(8, c, 28, 28, 256, 3, 3, sms=sms, model=model).name for c in (64, 128, 256, 512, 1024)]
             for sms in (16, 132)}
    assert picks[16] != picks[132], "the SM count should change some picks"
    keys = np.array(["a@sm16", "a@sm132", "b@sm16", "b@sm132", "c@sm16", "c@sm132"])
    assert list(base_keys(keys)) == ["a", "a", "b", "b", "c", "c"]
    t = ShapeTable(keys, keys, None, ("x",), np.ones((6, 1)))  # type: ignore[arg-type]
    for tr, te in _folds(t, 3, 0):
        assert set(base_keys(keys[tr])).isdisjoint(base_keys(keys[te]))


def test_header_after_training_some_families_keeps_the_others(tmp_path: Path, synthetic_models) -> None:
    """Retraining one family rewrites the header from every model of the slug in the folder: the
    other family's code stays, and the header names no training command (only its inputs)."""
    import shutil

    from predictor.export_cpp import header_path

    models, export = tmp_path / "models", tmp_path / "export"
    shutil.copytree(synthetic_models.models, models)
    shutil.copytree(synthetic_models.export, export)
    before = header_path(export, "synthetic").read_text()
    i8 = before[before.index("// ---- family i8nc32"):before.index("// ---- family f16nhwc")]
    assert main([str(synthetic_models.sweep), "--family", "f16nhwc", "--models-dir", str(models), "--export-dir",
                 str(export), "--quiet", "--max-portfolio", "3"]) == 0
    after = header_path(export, "synthetic").read_text()
    assert i8 in after and "constexpr int select_f16nhwc(" in after
    assert after != before  # the f16nhwc model changed (smaller portfolio)
    assert "--family" not in after and "python -m predictor.export_cpp" in after.splitlines()[1]


def test_sweeps_repeat_a_problem_only_under_another_timing_method(tmp_path: Path) -> None:
    """Two files with the same (family, shape, config, sms) are refused, unless the second timed them by
    another method (a re-sweep as graph replays); then each problem is labelled by one method."""
    from predictor.portfolio import eligible_rows
    from predictor.train import TrainError, _read_sweeps

    df = make_sweep(n_shapes=30, n_configs=4, families=("f16nhwc",))
    paths = {}
    for name, frame in (("a", df), ("b", df), ("graph", df.assign(timing_method=3, time_us=df["time_us"] - 1.0))):
        paths[name] = tmp_path / f"{name}.parquet"
        write_sweep(frame, paths[name], {"synthetic": True})
    with pytest.raises(TrainError, match="appears twice with the same timing method"):
        _read_sweeps([paths["a"], paths["b"]])
    both, _, _ = _read_sweeps([paths["a"], paths["graph"]])
    assert len(both) == 2 * len(df)
    ok = eligible_rows(both)
    assert set(ok["timing_method"]) == {3}
    assert len(ok) == len(eligible_rows(df))


def test_scores_and_soft_labels_do_not_depend_on_the_last_bit() -> None:
    """A platform's SIMD ``log``/``exp`` may differ in the last bit (AVX-512 against AVX2), and the model files
    must not: CV scores and ``soft``'s student targets are equal for inputs one ulp apart, and sum exactly."""
    from predictor.fitting import soft_labels
    from predictor.portfolio import geomean, geomean_score, scalar_exp, scalar_log, scalar_pow2

    rng = np.random.default_rng(0)
    x = np.array([[0.0, 1.0], [2.5, np.inf]])
    assert scalar_log(x).tolist() == [[-math.inf, 0.0], [math.log(2.5), math.inf]]
    with np.errstate(invalid="ignore"):
        assert np.isnan(scalar_log(np.array([-1.0, np.nan]))).all()
    assert scalar_exp(x).tolist() == [[1.0, math.e], [math.exp(2.5), math.inf]]
    assert scalar_pow2(x).tolist() == [[1.0, 2.0], [math.pow(2.0, 2.5), math.inf]]
    assert scalar_pow2(x).dtype == np.float64
    assert scalar_log(np.zeros((0, 3))).shape == (0, 3)
    r = rng.uniform(0.3, 1.0, 5000)
    assert geomean(r) == geomean(np.nextafter(r, 2.0)) == geomean(r[::-1])
    assert geomean(r) == pytest.approx(float(np.exp(np.log(r).mean())), rel=1e-7)
    assert geomean_score(np.ones(3), np.array([1.0, 2.0, 4.0])) == pytest.approx(0.5, rel=1e-7)
    P = rng.normal(0.0, 0.2, (2000, 24))
    Q = np.nextafter(P, np.inf)
    naive = lambda x: np.exp(-(x - x.min(1, keepdims=True)) / 0.05)  # noqa: E731
    assert not np.array_equal(naive(P), naive(Q))  # the nudge does reach exp's result
    for tau in (0.05, 0.1):
        S = soft_labels(P, tau)
        assert np.array_equal(S, soft_labels(Q, tau))
        assert np.array_equal(S.sum(0), S[::-1].sum(0))
        np.testing.assert_allclose(S.sum(1), 1.0, atol=1e-6)


def test_keys_to_train_orders_families_before_choices() -> None:
    """One derivation of what a run trains (train_sweeps and --all --family share it): a GEMM family only when
    named, choices after the plain families their routed models read, each key once."""
    present = ["f16nhwc90", "f16gemm90", "f16nhwc"]
    choices = ["f16nhwc+f16nhwc90+f16gemm90", "f16nhwc+f16nhwc90"]
    assert keys_to_train(present, None, choices) == ["f16nhwc", "f16nhwc90", "f16nhwc+f16nhwc90",
                                                     "f16nhwc+f16nhwc90+f16gemm90"]
    assert keys_to_train(present, ["f16nhwc+f16nhwc90", "f16gemm90"], choices) == [
        "f16gemm90", "f16nhwc+f16nhwc90", "f16nhwc+f16nhwc90+f16gemm90"]

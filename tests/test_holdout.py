"""predictor.holdout: the shipped models scored on the held-out networks' sweeps (measured H200 files,
CPU only)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from predictor.holdout import cannot_implement, dispatched, layer_networks, main, score_key, training_keys
from predictor.lono import load_sweeps
from predictor.model_key import model_key
from predictor.portfolio import effective_times
from predictor.selector import select

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ROOT / "bench" / "holdout" / "layers"
SWEEP = ROOT / "sweeps" / "h200-holdout-f16nhwc90.parquet"
TRAIN = [ROOT / "sweeps" / "h200-sm90.parquet", ROOT / "sweeps" / "h200-sm90-nets.parquet"]


@pytest.fixture(scope="module")
def scored() -> pd.DataFrame:
    df, _ = load_sweeps([SWEEP])
    return score_key(df, model_key("f16nhwc90"), "h200", layer_networks(LAYERS), training_keys(TRAIN))


def test_scores_are_the_shipped_selector_against_the_whole_grid(scored: pd.DataFrame) -> None:
    sweep = pd.read_parquet(SWEEP)
    ok = sweep[sweep["status"] == "ok"]
    u = scored.drop_duplicates("shape_key")
    assert len(u) == ok["shape_key"].nunique()
    for r in u.sample(40, random_state=0).itertuples():
        assert r.pick == select(r.N, r.C, r.H, r.W, r.K, r.R, r.S, stride=r.stride, pad=r.pad, dilation=r.dilation,
                                family="f16nhwc90").name
        rows = ok[ok["shape_key"] == r.shape_key]
        assert r.fastest_us == pytest.approx(effective_times(rows).min())
    assert ((u["score"] > 0) & (u["score"] <= u["tuned"] + 1e-12) & (u["tuned"] <= u["bound"] + 1e-12)).all()
    assert (u["bound"] <= 1 + 1e-12).all() and (u["score"] < 1).any()


def test_networks_and_new_shapes(scored: pd.DataFrame) -> None:
    nets = layer_networks(LAYERS)
    assert set(scored["network"]) == {p.stem for p in LAYERS.glob("*.csv")}
    shared = [k for k, n in nets.items() if len(n) > 1 and k in set(scored["shape_key"])]
    assert shared and all(set(scored.loc[scored["shape_key"] == k, "network"]) == set(nets[k]) for k in shared)
    trained = training_keys(TRAIN)["f16nhwc90"]
    assert (scored["new_shape"] == ~scored["shape_key"].isin(trained)).all()
    assert scored["new_shape"].any() and (~scored["new_shape"]).any()


def test_cli_report(tmp_path: Path) -> None:
    out = tmp_path / "holdout"
    assert main([str(SWEEP), "--layers-dir", str(LAYERS), "--out", str(out)]) == 0
    text = (out / "REPORT.md").read_text()
    assert text.startswith("# The shipped models on held-out networks") and "python -m predictor.holdout" in text
    assert "| f16nhwc90 |" in text and "new shapes" in text and "`hrnet_w32`" in text
    layers = pd.read_csv(out / "layers.csv")
    assert set(layers["model"]) == {"f16nhwc90"} and np.isfinite(layers["score"]).all()
    fam = tmp_path / "family"  # --family names the key to score: the same rows as the default run's
    assert main([str(SWEEP), "--layers-dir", str(LAYERS), "--family", "f16nhwc90", "--out", str(fam)]) == 0
    assert (fam / "layers.csv").read_text() == (out / "layers.csv").read_text()
    with pytest.raises(SystemExit, match="no layer CSV"):
        main([str(SWEEP), "--layers-dir", str(tmp_path), "--out", str(out)])
    with pytest.raises(SystemExit, match="not a shipped run"):
        main([str(SWEEP), "--layers-dir", str(LAYERS), "--gpu", "nope", "--out", str(out)])
    # a model not shipped (an experiment's slug, in a folder of its own) trained as the run h200: scored alike
    models = tmp_path / "models"
    models.mkdir()
    (models / "exp-f16nhwc90.tree.json").write_bytes((ROOT / "models" / "h200-f16nhwc90.tree.json").read_bytes())
    exp = tmp_path / "exp"
    args = [str(SWEEP), "--layers-dir", str(LAYERS), "--gpu", "exp", "--models-dir", str(models), "--out", str(exp)]
    with pytest.raises(SystemExit, match="--gpu 'exp' is not a shipped run"):
        main(args)
    assert main([*args, "--run", "h200"]) == 0
    with pytest.raises(SystemExit, match=r"no model key of run 'h200'.* and a model .*/none/exp-<key>\.tree\.json"):
        main([*args[:-3], str(tmp_path / "none"), "--run", "h200", "--out", str(exp)])
    assert (exp / "layers.csv").read_text() == (out / "layers.csv").read_text()
    assert str(models / "exp-f16nhwc90.tree.json") in (exp / "REPORT.md").read_text()


def test_scores_the_config_the_dispatcher_runs() -> None:
    """A pick whose kernel refused the layer (cannot_implement) is scored as the generated dispatchers run it: the
    next of the leaf's candidates that does not refuse, then the model's other configs in their order."""
    configs = ["a", "b", "c", "d"]
    assert dispatched(["b", "a"], configs, set()) == "b"
    assert dispatched(["b", "a"], configs, {"b"}) == "a"
    assert dispatched(["b", "a"], configs, {"a", "b"}) == "c"
    assert dispatched(["b", "a"], configs, {"a", "b", "c"}) == "d"
    assert dispatched(["b", "a"], configs, set(configs)) == "b"  # all refuse: the pick (the dispatcher's error)
    # a choice: its members' own picks after the leaf's candidates (one it does not hold is skipped), then the table
    assert dispatched(["b", "a"], configs, {"a", "b"}, ["x", "d"]) == "d"
    assert dispatched(["b", "a"], configs, {"a", "b", "d"}, ["x", "d"]) == "c"
    assert dispatched(["b"], configs, {"b"}, ["b", "c"]) == "c"
    df = pd.DataFrame({"shape_key": ["s1", "s1", "s2", "s2"], "family": ["f16nhwc", "f16nhwc90", "f16nhwc", "i8nc32"],
                       "config": ["a", "b", "c", "d"],
                       "status": ["cannot_implement", "ok", "cannot_implement", "cannot_implement"]})
    assert cannot_implement(df, model_key("f16nhwc+f16nhwc90")) == {"s1": {"a"}, "s2": {"c"}}

"""predictor.select: results, errors naming the argument, fallbacks, model loading, the public
name's signature (its latency is measured by bench/select_latency.py, not here)."""
from __future__ import annotations

import dataclasses
import functools
import inspect
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import predictor
from predictor import selector
from predictor.config import KernelConfig
from predictor.features import ARGS, LIMITS, compute, same_pad
from predictor.selector import LoadedModel, ModelNotFoundError, Selection, load_model, select
from predictor.tree_ir import TreeIR

ROOT = Path(__file__).resolve().parent.parent
BASE = dict(N=1, C=64, H=56, W=56, K=64, R=3, S=3)


@functools.lru_cache(maxsize=None)
def _load_ir(path: str) -> TreeIR:
    return TreeIR.load(path)


@pytest.fixture(scope="module")
def model(synthetic_models):
    return str(synthetic_models.models / "synthetic-i8nc32.tree.json")


@pytest.fixture(scope="module")
def f16_model(synthetic_models):
    return str(synthetic_models.models / "synthetic-f16nhwc.tree.json")


def test_basic_selection(model: str) -> None:
    s = select(**BASE, model=model)
    assert isinstance(s, Selection) and isinstance(s.config, KernelConfig)
    assert s.name == s.config.name == str(s) and not s.fallback
    ir = TreeIR.load(model)
    assert s.index == ir.classes.index(s.name)
    feats = compute({**BASE, "stride": 1, "pad": 1, "dilation": 1, "sms": ir.meta["sms"]})
    assert s.name == ir.predict(feats)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.fallback = True  # type: ignore[misc]
    # the package-level lazy entry point is the same function
    assert predictor.select(**BASE, model=model) == s


def test_same_padding_and_defaults(model: str) -> None:
    ir = TreeIR.load(model)
    for r, d in ((1, 1), (3, 1), (3, 2), (5, 1), (7, 3)):
        a = {**BASE, "R": r, "S": r, "H": 64, "W": 64}
        got = select(**a, dilation=d, model=model)
        want = ir.predict(compute({**a, "stride": 1, "pad": same_pad(r, d), "dilation": d, "sms": ir.meta["sms"]}))
        assert got.name == want
    # the shipped models' fast path reads same padding from a table over R's range (dilation 1), or computes it
    for r, d in ((1, 1), (3, 1), (4, 1), (1024, 1), (3, 2), (np.int64(3), 1), (3, np.int64(1))):
        a = {**BASE, "R": r, "S": r, "H": 2048, "W": 2048}
        assert select(**a, dilation=d) == select(**a, dilation=d, pad=same_pad(int(r), int(d))), (r, d)
    for bad in (1025, 0, -3, 3.0):  # past the table, or wrapping round it: the error names R, not pad
        with pytest.raises(ValueError, match=r"^R"):
            select(**{**BASE, "R": bad, "S": bad, "H": 2048, "W": 2048})
    with pytest.raises(ValueError, match="pad"):
        select(**{**BASE, "S": 1}, model=model)
    # explicit pad with R != S is fine
    assert select(**{**BASE, "S": 1}, pad=0, model=model).index >= 0


@settings(max_examples=300, deadline=None)
@given(N=st.integers(1, 256), c=st.integers(1, 64), H=st.integers(1, 300), W=st.integers(1, 300),
       k=st.integers(1, 64), R=st.sampled_from([1, 3, 5, 7]), stride=st.integers(1, 3),
       sms=st.one_of(st.just(132), st.integers(1, 4096)))
def test_matches_ir_everywhere(model: str, N: int, c: int, H: int, W: int, k: int, R: int, stride: int,
                               sms: int) -> None:
    ir = _load_ir(model)
    args = dict(N=N, C=32 * c, H=H, W=W, K=32 * k, R=R, S=R, stride=stride, pad=same_pad(R), dilation=1, sms=sms)
    lo, hi = (min(ir.meta.get("sms_trained", [ir.meta["sms"]])), max(ir.meta.get("sms_trained", [ir.meta["sms"]])))
    if not lo <= sms <= hi:  # a count the model was not trained at is refused
        with pytest.raises(ValueError, match="sms="):
            select(**{a: args[a] for a in BASE}, stride=stride, sms=sms, model=model)
        return
    try:
        feats = compute(args)
    except ValueError:
        with pytest.raises(ValueError):
            select(**{a: args[a] for a in BASE}, stride=stride, sms=sms, model=model)
        return
    s = select(**{a: args[a] for a in BASE}, stride=stride, sms=sms, model=model)
    assert s.name == ir.predict(feats)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("arg", ARGS)
@pytest.mark.parametrize("kind", ["zero", "negative", "float", "string", "bool", "too_large"])
def test_bad_argument_names_it(model: str, arg: str, kind: str) -> None:
    lo, hi = LIMITS[arg]
    value = {"zero": 0, "negative": -5, "float": 3.0, "string": "8", "bool": True, "too_large": hi + 1}[kind]
    if kind == "zero" and lo == 0:
        value = -1  # pad = 0 is valid
    kwargs = {**BASE, "stride": 1, "pad": 1, "dilation": 1, "sms": 132, arg: value}
    with pytest.raises(ValueError) as exc:
        select(**kwargs, model=model)
    assert str(exc.value).startswith(f"{arg}=") or str(exc.value).startswith(f"{arg} ")


def test_filter_does_not_fit(model: str) -> None:
    with pytest.raises(ValueError, match="R=7"):
        select(1, 64, 3, 56, 64, 7, 7, pad=0, model=model)


@pytest.mark.parametrize("arg", ["C", "K"])
def test_channel_multiple(model: str, f16_model: str, arg: str) -> None:
    with pytest.raises(ValueError, match=f"^{arg}=48 is not a multiple of 32"):
        select(**{**BASE, arg: 48}, model=model)
    assert select(**{**BASE, arg: 48}, model=f16_model).index >= 0  # fine for fp16 (multiple of 8)
    with pytest.raises(ValueError, match=f"^{arg}=12 is not a multiple of 8"):
        select(**{**BASE, arg: 12}, model=f16_model)
    s = select(**{**BASE, arg: 48}, model=model, on_unsupported="pad")
    assert s.fallback and f"{arg}=48 padded to 64" in s.reason
    assert s.config == select(**{**BASE, arg: 64}, model=model).config
    with pytest.raises(ValueError, match="on_unsupported"):
        select(**{**BASE, arg: 48}, model=model, on_unsupported="nope")
    with pytest.raises(ValueError, match="on_unsupported must be 'raise' or 'pad', got 'bogus'"):
        select(**BASE, model=model, on_unsupported="bogus")  # a problem the model can answer


def test_numpy_integers(model: str) -> None:
    a = select(**{k: np.int64(v) for k, v in BASE.items()}, stride=np.int32(1), model=model)
    assert a == select(**BASE, model=model)
    with pytest.raises(ValueError, match="^N"):
        select(**{**BASE, "N": np.float64(1.0)}, model=model)


def test_family_and_model_resolution(model: str, f16_model: str, synthetic_models, tmp_path, monkeypatch) -> None:
    with pytest.raises(ValueError, match="family"):
        select(**BASE, model=model, family="f16nhwc")
    assert select(**BASE, model=f16_model, family="f16nhwc").config.family.value == "f16nhwc"
    ir = TreeIR.load(model)
    assert select(**BASE, model=ir) == select(**BASE, model=model)
    loaded = LoadedModel.from_ir(ir)
    assert select(**BASE, model=loaded) == select(**BASE, model=model)
    with pytest.raises(ValueError, match="model"):
        select(**BASE, model=42)
    # shipped-model lookup: models/<gpu>-<family>.tree.json, cached
    for f in ("i8nc32", "f16nhwc"):
        shutil.copy(synthetic_models.models / f"synthetic-{f}.tree.json", tmp_path / f"synth-{f}.tree.json")
    monkeypatch.setattr(selector, "models_dir", lambda: tmp_path)
    selector.cache_clear()
    try:
        assert select(**BASE, gpu="synth") == select(**BASE, model=model)
        assert select(**BASE, gpu="synth", family="f16nhwc") == select(**BASE, model=f16_model)
        assert load_model("synth", "i8nc32") is load_model("synth", "i8nc32")
        with pytest.raises(ModelNotFoundError, match="gpu='nope'") as exc:
            select(**BASE, gpu="nope")
        assert isinstance(exc.value, FileNotFoundError) and isinstance(exc.value, ValueError)
        with pytest.raises(ValueError, match="family"):
            select(**BASE, gpu="synth", family="int4")
    finally:
        selector.cache_clear()


def test_stale_model_features(model: str) -> None:
    ir = TreeIR.load(model)
    stale = TreeIR(ir.feature_names[:-1] + ("other",), ir.classes, ir.nodes, ir.meta)
    with pytest.raises(ValueError, match="retrain"):
        select(**BASE, model=stale)


def test_public_select_is_the_real_function() -> None:
    """help(predictor.select) shows the real signature; no wrapper between the user and it."""
    assert predictor.select is select
    params = inspect.signature(predictor.select).parameters
    assert list(params)[:7] == ["N", "C", "H", "W", "K", "R", "S"]
    assert not [p for p in params.values() if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    assert params["family"].default is None and params["on_unsupported"].default == "raise"
    assert "i8nc32" in predictor.__doc__ and 'family="f16nhwc"' in predictor.__doc__


def test_import_is_cheap_and_has_no_side_effects(tmp_path) -> None:
    code = ("import sys, predictor; mods = set(sys.modules); "
            "assert not {'predictor.selector', 'sklearn', 'pandas', 'numpy'} & mods, sorted(mods); "
            "print(predictor.select(1, 64, 56, 56, 64, 3, 3).name)")
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("i8nc32_")
    assert not list(tmp_path.iterdir())  # nothing written


def test_a_model_refuses_sm_counts_it_was_not_trained_at():
    from predictor.selector import load_model

    m = load_model("h200", "i8nc32")
    assert m.sms_range == (132, 132)
    assert select(1, 64, 56, 56, 64, 3, 3, sms=132) == select(1, 64, 56, 56, 64, 3, 3)
    with pytest.raises(ValueError, match="sms=16: .* trained at 132 SMs only"):
        select(1, 64, 56, 56, 64, 3, 3, sms=16)
    with pytest.raises(ValueError, match="sms"):
        select(1, 64, 56, 56, 64, 3, 3, sms="16")


def test_candidates_mirror_select(model: str, f16_model: str) -> None:
    """``predictor.candidates``: select's signature, arguments and errors; the pick first, then the
    leaf's other candidates (the IR's), at most 3, distinct."""
    assert predictor.candidates is selector.candidates
    assert list(inspect.signature(predictor.candidates).parameters) == list(inspect.signature(select).parameters)
    ir = TreeIR.load(model)
    seen = 0
    for n, c, h in ((1, 64, 56), (8, 256, 28), (32, 512, 7), (4, 128, 112), (16, 1024, 14)):
        args = {**BASE, "N": n, "C": c, "K": c, "H": h, "W": h}
        cands = predictor.candidates(**args, model=model)
        assert cands[0] == select(**args, model=model) and 1 <= len(cands) <= 3
        assert len({s.index for s in cands}) == len(cands) and not any(s.fallback for s in cands)
        feats = compute({**args, "stride": 1, "pad": 1, "dilation": 1, "sms": ir.meta["sms"]})
        assert tuple(s.name for s in cands) == ir.candidates(feats)
        assert predictor.candidates(**{k: np.int64(v) for k, v in args.items()}, model=model) == cands
        seen += len(cands) > 1
    assert seen  # the synthetic models' leaves record several candidates
    with pytest.raises(ValueError, match="^C=48 is not a multiple of 32"):
        predictor.candidates(**{**BASE, "C": 48}, model=model)
    padded = predictor.candidates(**{**BASE, "C": 48}, model=model, on_unsupported="pad")
    assert all(s.fallback and "C=48 padded to 64" in s.reason for s in padded)
    assert [s.index for s in padded] == [s.index for s in predictor.candidates(**{**BASE, "C": 64}, model=model)]
    with pytest.raises(ValueError, match="^N"):
        predictor.candidates(**{**BASE, "N": 0}, model=model)
    with pytest.raises(ValueError, match="on_unsupported"):
        predictor.candidates(**BASE, model=model, on_unsupported="nope")
    assert predictor.candidates(**BASE, family="f16nhwc")[0] == select(**BASE, family="f16nhwc")  # shipped model

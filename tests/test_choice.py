"""Choice models (``predictor.model_key``): one model over the configs of several families with
identical tensors (``f16nhwc+f16nhwc90``), through training, the Python selector, the C++ header,
the dispatcher and leave-one-network-out -- on a SYNTHETIC sweep of both fp16 families."""
from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from predictor import selector
from predictor.config import Family, KernelConfig
from predictor.features import ARGS, compute
from predictor.model_key import Choice, all_keys, choices, cli_model_key, model_key, sort_key
from predictor.tree_ir import TreeIR

CHOICE = "f16nhwc+f16nhwc90"
IDENT = "f16nhwc_f16nhwc90"
F16, F90 = Family.FP16_NHWC, Family.F16_NHWC_SM90
BASE = dict(N=8, C=64, H=56, W=56, K=128, R=3, S=3)


# --------------------------------------------------------------------------- the key
def test_choice_key() -> None:
    c = model_key(CHOICE)
    assert isinstance(c, Choice) and c.families == (F16, F90)
    assert (c.value, c.identifier, c.channel_multiple, c.tensor_kind) == (CHOICE, IDENT, 8, "fp16_nhwc")
    assert model_key("f16nhwc90+f16nhwc") == c == Choice((F90, F16))  # members in member_order
    # conv families before those that run only some convolutions, older kernel generations first
    assert model_key("i8gemm90+i8nhwc90+i8nhwc").value == "i8nhwc+i8nhwc90+i8gemm90"
    assert len({c, Choice((F16, F90))}) == 1
    assert "2.x/3.x" in c.description
    # the fp16 NHWC families; a GEMM family (1x1 only) joins a choice with a conv family of its tensors
    assert [x.value for x in choices()] == [CHOICE, "f16nhwc+f16gemm90", "f16nhwc90+f16gemm90",
                                            "i8nhwc90+i8gemm90", "i8nhwc+i8nhwc90", "i8nhwc+i8gemm90",
                                            "f16nhwc+f16nhwc90+f16gemm90", "i8nhwc+i8nhwc90+i8gemm90"]
    assert all_keys() == [*Family, *choices()] and all_keys()[len(Family)] == c
    assert sorted([c, F90, Family.INT8_NC32HW32], key=sort_key) == [Family.INT8_NC32HW32, F90, c]
    assert cli_model_key("f16nhwc90+f16nhwc") == CHOICE


def test_a_family_is_a_key_of_itself() -> None:
    for f in Family:
        assert model_key(f.value) is f and model_key(f) is f
        assert (f.families, f.identifier, f.channel_multiple, f.tensor_kind) == (
            (f,), f.value, f.spec.channel_multiple, f.spec.tensor_kind)


@pytest.mark.parametrize("text,match", [
    ("i8nc32+f16nhwc", "families i8nc32 and f16nhwc read or write different tensors"),
    ("i8nc32+i8nhwc90", "TensorNC32HW32"),  # same element type, other layout
    ("f16nhwc+f16nhwc", "at least two different families"),
    ("f16nhwc+int4", "unknown family 'int4'"),
    ("f16nhwc+", "unknown family ''"),
    ("fp16", "unknown family 'fp16'"),
])
def test_bad_keys_are_one_line_errors(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match) as exc:
        model_key(text)
    assert "\n" not in str(exc.value)


# --------------------------------------------------------------------------- training
@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """Both fp16 families measured on the same problems, except 15 that only f16nhwc measured; the
    choice and the SM90 family trained from it."""
    from synthetic import make_sweep

    from predictor.schema import write_sweep
    from predictor.train import main

    d = tmp_path_factory.mktemp("choice")
    df = make_sweep(n_shapes=160, families=("f16nhwc", "f16nhwc90"))
    only80 = sorted(set(df["shape_key"]))[:15]
    df = df[~((df["family"] == F90.value) & df["shape_key"].isin(only80))].reset_index(drop=True)
    sweep = d / "s.parquet"
    write_sweep(df, sweep, {"synthetic": True})
    assert main([str(sweep), "--family", "f16nhwc90+f16nhwc", "--family", "f16nhwc90", "--models-dir", str(d / "m"),
                 "--export-dir", str(d / "e"), "--max-portfolio", "6", "--quiet"]) == 0
    return SimpleNamespace(dir=d, sweep=sweep, df=df, only80=only80, models=d / "m", export=d / "e",
                           model=d / "m" / f"synthetic-{CHOICE}.tree.json")


def test_training_a_choice(trained) -> None:
    import json

    names = sorted(p.name for p in trained.models.iterdir())
    assert names == sorted(f"synthetic-{k}{ext}" for k in (CHOICE, "f16nhwc90")
                           for ext in (".joblib", ".tree.json", ".summary.json", ".summary.md"))
    ir = TreeIR.load(trained.model)
    assert ir.meta["family"] == CHOICE
    fams = {KernelConfig.from_name(n).family for n in ir.classes}
    assert fams == {F16, F90}  # the synthetic time model makes each family the fastest somewhere
    s = json.loads((trained.models / f"synthetic-{CHOICE}.summary.json").read_text())
    common = set(trained.df.loc[trained.df["family"] == F90.value, "shape_key"])
    assert s["choice"]["not_in_every_family"] == len(trained.only80) == 15
    assert s["shapes"]["all"] == len(common)  # trained only on the problems both families measured
    assert s["shapes"]["train"] + s["shapes"]["dropped_no_ok"] == len(common)
    assert sum(s["choice"]["portfolio_by_family"].values()) == len(ir.classes)
    assert "choice across f16nhwc, f16nhwc90" in (trained.models / f"synthetic-{CHOICE}.summary.md").read_text()
    # what a choice is for: its picks run faster than the SM90-only model's on the common problems
    ok = trained.df[trained.df["status"] == "ok"].set_index(["shape_key", "config"])["time_us"]
    ir90 = TreeIR.load(trained.models / "synthetic-f16nhwc90.tree.json")
    ratios = []
    for r in trained.df[trained.df["shape_key"].isin(common)].drop_duplicates("shape_key").itertuples():
        x = compute({**{a: int(getattr(r, a)) for a in ARGS if a != "sms"}, "sms": 132})
        t90, tc = ok.get((r.shape_key, ir90.predict(x))), ok.get((r.shape_key, ir.predict(x)))
        if t90 is not None and tc is not None:
            ratios.append(t90 / tc)
    assert len(ratios) > 100 and np.exp(np.mean(np.log(ratios))) > 1.0  # 1.007 on this sweep


def test_family_table_of_a_choice(trained) -> None:
    from predictor.portfolio import family_table

    ft = family_table(trained.df, model_key(CHOICE))
    assert ft.n_not_common == 15 and not set(ft.table.keys) & set(trained.only80)
    assert {KernelConfig.from_name(c).family for c in ft.table.configs} == {F16, F90}
    single = family_table(trained.df, F16)
    assert single.n_not_common == 0 and set(trained.only80) <= set(single.table.keys)


def test_train_refuses_a_choice_without_rows_of_a_member(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from synthetic import write_synthetic_sweep

    from predictor.train import main

    sweep = write_synthetic_sweep(tmp_path / "s.parquet", n_shapes=20, families=("f16nhwc",))
    assert main([str(sweep), "--family", CHOICE, "--models-dir", str(tmp_path / "m"), "--quiet"]) == 2
    assert "no rows of family ['f16nhwc90']" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(sweep), "--family", "i8nc32+f16nhwc", "--models-dir", str(tmp_path / "m")])
    assert "different tensors" in capsys.readouterr().err


def test_the_shipped_run_trains_the_fp16_choice() -> None:
    from predictor.train import SHIPPED_DISPATCHERS, SHIPPED_RUNS, build_parser

    assert SHIPPED_RUNS[0].slug == "h200" and SHIPPED_RUNS[0].choices == (CHOICE, "f16nhwc+f16nhwc90+f16gemm90", "i8nhwc90+i8gemm90",
                                                                        "i8nhwc+i8nhwc90+i8gemm90")
    assert "sweeps/h200-gemm90.parquet" in SHIPPED_RUNS[0].sweeps
    assert ("h200", (CHOICE,), "dispatch_f16_choice") in SHIPPED_DISPATCHERS
    # SM90 conv and GEMM kernels in separate translation units (test_route)
    assert ("h200", ("f16nhwc+f16nhwc90+f16gemm90",), "dispatch_f16_choice3") in SHIPPED_DISPATCHERS
    # the int8 choice: SM80 int8 NHWC conv, SM90 conv and SM90 GEMM kernels behind one C ABI
    assert ("h200", ("i8nhwc+i8nhwc90+i8gemm90",), "dispatch_i8_choice3") in SHIPPED_DISPATCHERS
    assert CHOICE in build_parser().format_help()  # --family's help and --all's runs name it


# --------------------------------------------------------------------------- the Python selector
def test_select_a_choice(trained, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ir = TreeIR.load(trained.model)
    sel = selector.select(**BASE, model=str(trained.model))
    assert sel.name == ir.predict(compute({**{k: BASE[k] for k in "NCHWKRS"}, "stride": 1, "pad": 1, "dilation": 1,
                                           "sms": 132}))
    assert sel.config.family in (F16, F90) and sel.config == KernelConfig.from_name(sel.name)
    with pytest.raises(ValueError, match="does not match the model's family"):
        selector.select(**BASE, model=str(trained.model), family="f16nhwc")
    assert selector.select(**BASE, model=str(trained.model), family="f16nhwc90+f16nhwc") == sel
    with pytest.raises(ValueError, match="C=60 is not a multiple of 8, which family f16nhwc\\+f16nhwc90 needs"):
        selector.select(**{**BASE, "C": 60}, model=str(trained.model))
    padded = selector.select(**{**BASE, "C": 60}, model=str(trained.model), on_unsupported="pad")
    assert padded.fallback and padded.name == selector.select(**{**BASE, "C": 64}, model=str(trained.model)).name
    # the shipped-model lookup: models/<gpu>-f16nhwc+f16nhwc90.tree.json
    shutil.copy(trained.model, tmp_path / f"synth-{CHOICE}.tree.json")
    monkeypatch.setattr(selector, "models_dir", lambda: tmp_path)
    selector.cache_clear()
    try:
        assert selector.model_path("synth", "f16nhwc90+f16nhwc") == tmp_path / f"synth-{CHOICE}.tree.json"
        assert selector.select(**BASE, gpu="synth", family=CHOICE) == sel
        m = selector.load_model("synth", model_key(CHOICE))
        assert m is selector.load_model("synth", CHOICE)  # one file, loaded once
        assert m.family == model_key(CHOICE) and {c.family for c in m.configs} == {F16, F90}
        with pytest.raises(ValueError, match="different tensors"):
            selector.select(**BASE, gpu="synth", family="i8nc32+f16nhwc")
    finally:
        selector.cache_clear()


def test_help_of_select_names_choices() -> None:
    import predictor

    assert "f16nhwc+f16nhwc90" in (predictor.select.__doc__ or "")


# --------------------------------------------------------------------------- the C++ header
def _driver(header: Path, ns: str) -> str:
    return f"""\
#include <cstdint>
#include <cstdio>
#include <iostream>
#include "{header}"
namespace ns = cutlass_conv_predictor::{ns};
static_assert(ns::select_{IDENT}(1, 64, 56, 56, 64, 3, 3, 1, 1, 1) >= 0, "constexpr selection");
static_assert(ns::select_{IDENT}(1, 12, 56, 56, 64, 3, 3, 1, 1, 1) == ns::kUnsupportedShape, "C");
static_assert(ns::config_{IDENT}(0)->family == ns::Family::kFP16_NHWC ||
              ns::config_{IDENT}(0)->family == ns::Family::kF16_NHWC_SM90, "family field");
int main() {{
  std::int64_t a[11];
  while (std::cin >> a[0]) {{
    for (int i = 1; i < 11; ++i) if (!(std::cin >> a[i])) return 3;
    int r = ns::select_{IDENT}(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]);
    const ns::KernelConfig* c = ns::config_{IDENT}(r);
    std::printf("%d %s %d\\n", r, c ? c->name : "-", c ? static_cast<int>(c->family) : -1);
  }}
  return 0;
}}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
def test_header_choice_agrees_with_python(trained) -> None:
    from test_export_cpp import WARN, compile_driver, python_result, random_rows

    header = trained.export / "synthetic_conv_heuristics.hpp"
    text = header.read_text()
    assert f"constexpr int select_{IDENT}(" in text and f"kConfigs_{IDENT}[" in text
    assert ("enum class Family : int { " + ", ".join(f"k{f.name}" for f in Family) + " };") in text
    assert "  Family family;" in text and text.index("// ---- family f16nhwc90") < text.index(f"// ---- choice {CHOICE}")
    exe = compile_driver(_driver(header, "synthetic"), trained.dir / "drv", [*WARN, "-O1"])
    rows = [a for _, a in random_rows("f16nhwc", 3000, seed=7)]
    rows += [(n, c, hw, hw, k, r, r, 1, r // 2, 1, 132) for n, c, hw, k, r in
             trained.df.drop_duplicates("shape_key")[["N", "C", "H", "K", "R"]].itertuples(index=False)]
    import subprocess

    out = subprocess.run([str(exe)], input="".join(" ".join(map(str, a)) + "\n" for a in rows),
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(rows)
    order = list(Family)
    valid = 0
    for a, line in zip(rows, out):
        i, name, fam = line.split(" ")
        assert int(i) == python_result(trained.model, a), a
        if int(i) >= 0:
            valid += 1
            assert order[int(fam)] is KernelConfig.from_name(name).family  # the C++ family is the config's
    assert valid > 2000


def test_header_without_a_choice_has_no_family_field(tmp_path: Path, trained) -> None:
    """A header of family models only is what it was before choices existed (no Family enum or field)."""
    from predictor.export_cpp import export_models_dir

    (tmp_path / "m").mkdir()
    shutil.copy(trained.models / "synthetic-f16nhwc90.tree.json", tmp_path / "m")
    text = export_models_dir(tmp_path / "m", "synthetic", tmp_path / "e").read_text()
    assert "enum class Family" not in text and "Family family" not in text and "// ---- choice" not in text
    assert "Family::k" not in text


# --------------------------------------------------------------------------- dispatcher
def test_choice_dispatcher_is_generated(trained) -> None:
    pytest.importorskip("cutlass_library")
    from predictor.dispatcher import build, generate, member_models, member_table, required_arch
    from predictor.export_cpp import load_models

    out = generate(trained.models, "synthetic", trained.export, trained.dir / "dispatch", families=["f16nhwc90+f16nhwc"])
    src = out.read_text()
    ir = TreeIR.load(trained.model)
    cfgs = [KernelConfig.from_name(n) for n in ir.classes]
    assert src.splitlines()[0] == "// generated by predictor.dispatcher, do not edit"
    assert f"--family {CHOICE}" in src.splitlines()[1] and f"// models: {CHOICE} sha256 " in src
    # not the default folder (dispatch_sm90): the regenerate line names it, so it rewrites this file
    assert src.splitlines()[1].endswith(f" --out-dir {trained.dir / 'dispatch'}")
    for what in ("select", "name", "num_configs", "workspace_bytes", "conv2d"):
        assert f"pkd_{what}_{IDENT}(" in src
    assert "pkd_conv2d_f16nhwc90(" not in src and "pkd_conv2d_f16nhwc(" not in src  # only the choice's ABI
    for c in cfgs:  # the kernels of both families, in table order
        assert f"&pk_run_{c.kernel_name},  // {cfgs.index(c)}: {c.name}" in src
    assert src.count("PK_EXPORT_KERNEL_3X(") == len({c.kernel_name for c in cfgs if c.family is F90})
    assert src.count("PK_EXPORT_KERNEL(") == len({c.kernel_name for c in cfgs if c.family is F16})
    assert '#include "pk_runtime.h"\n#include "pk_runtime_sm90.h"\n' in src
    # where the pick and its leaf's candidates cannot run a problem, the members' own models' picks come next,
    # through tables from their configs to the choice's (-1 where it does not hold one)
    members = member_models(ir, load_models(trained.models, "synthetic"))
    assert [m.meta["family"] for m, _ in members] == [f for f in ("f16nhwc", "f16nhwc90")
                                                      if (trained.models / f"synthetic-{f}.tree.json").is_file()]
    assert members, "the fixture ships the members' models"
    for m, sha in members:
        ident, table = model_key(m.meta["family"]).identifier, member_table(ir, m)
        assert f"// member model (its pick is a fall-back): {m.meta['family']} sha256 {sha}\n" in src
        assert f"kMemberPick_{IDENT}_{ident}[] = {{{', '.join(map(str, table))}}};" in src
        assert f"int j = NS::select_{ident}(" in src
        assert [ir.classes[t] for t in table if t >= 0] == [c for c in m.classes if c in ir.classes]
    assert f"int cand[NS::kMaxCandidates + {len(members)}];" in src
    assert required_arch(out) == "sm_90a"
    assert sorted(p.name for p in out.parent.iterdir()) == ["CMakeLists.txt", "pk_runtime.h", "pk_runtime_sm90.h",
                                                            "synthetic_dispatch.cu"]
    assert "set(CMAKE_CUDA_ARCHITECTURES 90a)" in (out.parent / "CMakeLists.txt").read_text()
    with pytest.raises(ValueError, match="need sm_90a"):
        build(out, "sm_90", compile_only=True)
    with pytest.raises(ValueError, match="different tensors"):
        generate(trained.models, "synthetic", trained.export, trained.dir / "d2", families=["i8nc32+f16nhwc"])


def test_member_table_maps_member_configs_into_the_choice() -> None:
    from predictor.dispatcher import member_table

    choice, member = SimpleNamespace(classes=("a", "b", "c")), SimpleNamespace(classes=("c", "x", "a"))
    assert member_table(choice, member) == [2, -1, 0]  # type: ignore[arg-type]
    from predictor.model_key import members_with_models

    three = model_key("f16nhwc+f16nhwc90+f16gemm90")
    assert members_with_models(three, {"f16nhwc90", "f16gemm90"}.__contains__) == ["f16nhwc90", "f16gemm90"]
    assert members_with_models(three, lambda f: f != "f16gemm90") == ["f16nhwc", "f16nhwc90"]
    assert members_with_models(model_key("f16nhwc"), lambda f: True) == []  # a single family: none


def test_a_member_table_outside_the_choice_is_refused() -> None:
    from predictor.dispatch_text import family_code

    cfg = KernelConfig.from_name("f16nhwc_t128x128x32_w64x64x32_i16x8x16_s3_sw1_optimized_strided_sk1_a8x8x8_lincomb")
    assert "kMemberPick_c_m[] = {0, -1};" in family_code("c", [cfg], [("m", [0, -1])])
    with pytest.raises(ValueError, match=r"member m's table maps to \[1\], outside the 1 configs"):
        family_code("c", [cfg], [("m", [0, 1])])


def test_a_single_family_dispatcher_has_no_member_fallback(trained) -> None:
    pytest.importorskip("cutlass_library")
    from predictor.dispatcher import generate

    src = generate(trained.models, "synthetic", trained.export, trained.dir / "d90", families=["f16nhwc90"]).read_text()
    assert "kMemberPick" not in src and "member model" not in src and "int cand[NS::kMaxCandidates];" in src


# --------------------------------------------------------------------------- leave one network out
def test_lono_accepts_a_choice(trained, tmp_path: Path) -> None:
    from predictor.lono import main

    out = tmp_path / "lono"
    assert main([str(trained.sweep), "--family", "f16nhwc90+f16nhwc", "--kind", "repick", "--max-portfolio", "4",
                 "--folds", "3", "--out", str(out)]) == 0
    layers = pd.read_csv(out / "layers.csv")
    assert set(layers["family"]) == {CHOICE} and len(layers) > 0
    assert not set(layers["shape_key"]) & set(trained.only80)
    assert ((layers["score"] > 0) & (layers["score"] <= layers["bound"] + 1e-12)).all()
    assert {KernelConfig.from_name(p).family for p in layers["pick"]} <= {F16, F90}
    assert np.isfinite(layers["score"]).all() and f"| {CHOICE} |" in (out / "REPORT.md").read_text()


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_choice_dispatcher_builds_and_selects_through_ctypes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A two-config choice (one SM80, one SM90 kernel; hand-made tree in the trainer's file format)
    built for sm_90a as a library: ``Dispatcher`` finds the choice's C ABI and its selection is the
    Python selector's, and ``torch_conv.convert`` takes the choice (host code only: no GPU needed)."""
    pytest.importorskip("cutlass_library")
    from predictor.config import EpilogueFunctor
    from predictor.dispatcher import Dispatcher, build, generate
    from predictor.export_cpp import export_models_dir
    from predictor.features import FEATURE_NAMES
    from predictor.tree_ir import Leaf, Split

    sm90 = KernelConfig.sm90(F90, (64, 64, 64))
    sm80 = KernelConfig(family=F16, tb=(64, 64, 32), warp=(32, 32, 32), inst=(16, 8, 16), stages=4, align=(8, 8, 8),
                        epilogue=EpilogueFunctor.LinearCombination)
    classes = (sm90.name, sm80.name)
    ir = TreeIR(tuple(FEATURE_NAMES), classes,
                (Split(FEATURE_NAMES.index("gemm_m"), 4096, 1, 2), Leaf(classes[0]), Leaf(classes[1])),
                {"family": CHOICE, "gpu_slug": "tc", "gpu": "hand-made", "sms": 132,
                 "smem_bytes": {c: 100000 for c in classes}, "sm87_ok": {c: False for c in classes}}).validate()
    (tmp_path / "models").mkdir()
    model = tmp_path / "models" / f"tc-{CHOICE}.tree.json"
    ir.save(model)
    export_models_dir(tmp_path / "models", "tc", tmp_path / "export")
    src = generate(tmp_path / "models", "tc", tmp_path / "export", tmp_path / "dispatch", families=[CHOICE])
    disp_path = build(src, "sm_90a")
    disp = Dispatcher(disp_path)
    assert disp.families == [model_key(CHOICE)]
    assert disp.num_configs(CHOICE) == 2 and disp.config_names(CHOICE) == list(classes)
    for n in (1, 2, 32):  # gemm_m = N * 56 * 56: the SM90 kernel up to 4096, the SM80 one above
        shape = (n, 64, 56, 56, 64, 3, 3, 1, 1, 1)
        i = disp.select(CHOICE, shape, 132)
        assert i == selector.select(n, 64, 56, 56, 64, 3, 3, model=str(model)).index == (0 if n == 1 else 1)
        assert disp.name("f16nhwc90+f16nhwc", i) == classes[i]
    assert disp.select(CHOICE, (1, 60, 56, 56, 64, 3, 3, 1, 1, 1), 132) == -2  # C not a multiple of 8
    with pytest.raises(ValueError, match="holds \\['f16nhwc\\+f16nhwc90'\\], not f16nhwc90"):
        disp.select("f16nhwc90", (1, 64, 56, 56, 64, 3, 3, 1, 1, 1), 132)
    # the PyTorch path: convert() asks the choice's C ABI which layers it holds (no GPU needed for that)
    torch = pytest.importorskip("torch")
    from predictor import torch_conv

    monkeypatch.setattr(torch_conv, "_DISPATCHERS", {})
    assert torch_conv.load(disp_path, ["f16nhwc90+f16nhwc"]) == [CHOICE]
    net = torch.nn.Sequential(torch.nn.Conv2d(64, 64, 3, padding=1), torch.nn.Conv2d(64, 60, 1)).half()
    report = torch_conv.convert(net, "f16nhwc90+f16nhwc")
    assert report.converted == ["0"] and "shape the family cannot run" in report.kept["1"]
    assert net[0].family == CHOICE

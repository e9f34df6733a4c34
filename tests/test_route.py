"""A choice with a member that runs only some convolutions (``f16nhwc+f16nhwc90+f16gemm90``: the GEMM
family runs 1x1 / stride 1 / pad 0 / dilation 1 only), routed by the ``pointwise`` feature: the
feature, the key, the problem table, training (two models under a root split), the Python selector,
the C++ header, leave-one-network-out and the dispatcher -- on a SYNTHETIC sweep of the three fp16
families."""
from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from predictor import selector
from predictor.config import FAMILY_SPECS, Family, KernelConfig
from predictor.features import ARGS, FEATURE_NAMES, FEATURE_SETS, LIMITS, compute, validate
from predictor.model_key import Choice, model_key
from predictor.tree_ir import Leaf, Split, TreeIR, compose

CHOICE = "f16nhwc+f16nhwc90+f16gemm90"
IDENT = "f16nhwc_f16nhwc90_f16gemm90"
F16, F90, GEMM = Family.FP16_NHWC, Family.F16_NHWC_SM90, Family.F16_GEMM_SM90
PW = FEATURE_NAMES.index("pointwise")


# --------------------------------------------------------------------------- the feature and the key
def test_pointwise_is_what_the_gemm_family_implements() -> None:
    rng = random.Random(3)
    edges = {a: (lo, lo + 1, hi - 1, hi) for a, (lo, hi) in LIMITS.items()}
    spec = FAMILY_SPECS[GEMM]
    seen = {0: 0, 1: 0}
    for i in range(20000):
        a = {n: rng.choice(edges[n]) if rng.random() < 0.3 else rng.randint(lo, min(hi, 4 if n in ("R", "S", "stride",
                                                                                                   "dilation") else hi))
             for n, (lo, hi) in LIMITS.items()}
        if i % 2:  # half the draws near the 1x1 / stride 1 / pad 0 / dilation 1 corner
            a.update({n: rng.choice((v, v, v + 1)) for n, v in (("R", 1), ("S", 1), ("stride", 1), ("dilation", 1))})
            a["pad"] = rng.choice((0, 0, 1))
        try:
            validate(a)
        except ValueError:
            continue
        pw = compute(a)[PW]
        assert pw == int(spec.implements(a["R"], a["S"], a["stride"], a["pad"], a["dilation"])), a
        seen[pw] += 1
    assert seen[0] > 1000 and seen[1] > 500
    # appended last to the features of its time (the models trained before it kept their indices); a feature set
    # is the start of the feature list, so every set holds it at the same index
    assert FEATURE_SETS["base"][-1] == "pointwise"
    assert all(names[:len(FEATURE_SETS["base"])] == FEATURE_SETS["base"] for names in FEATURE_SETS.values())


def test_a_choice_may_hold_a_partial_family() -> None:
    c = model_key(CHOICE)
    assert isinstance(c, Choice) and c.families == (F16, F90, GEMM)
    assert c.partial == (GEMM,) and c.conv_members == (F16, F90) and c.identifier == IDENT
    assert model_key("f16nhwc+f16nhwc90").partial == ()
    assert model_key("f16nhwc90+f16gemm90").partial == (GEMM,)
    with pytest.raises(ValueError, match="runs only some convolutions") as exc:
        Choice((GEMM, GEMM))
    assert "\n" not in str(exc.value)


def test_the_int8_routed_choice(tmp_path: Path) -> None:
    """``i8nhwc90+i8gemm90``: the int8 SM90 conv family with its GEMM twin, keyed and trained like the
    fp16 one (SYNTHETIC sweep): the GEMM configs only under the pointwise side of the root split."""
    from synthetic import make_sweep

    from predictor.schema import write_sweep
    from predictor.train import main

    i90, i8gemm = Family.I8_NHWC_SM90, Family.I8_GEMM_SM90
    c = model_key("i8gemm90+i8nhwc90")
    assert c.value == "i8nhwc90+i8gemm90" and c.identifier == "i8nhwc90_i8gemm90"
    assert c.families == (i90, i8gemm) and c.partial == (i8gemm,) and c.conv_members == (i90,)
    assert (c.channel_multiple, c.tensor_kind) == (16, "int8_nhwc")
    with pytest.raises(ValueError, match="different tensors"):
        model_key("f16nhwc90+i8gemm90")
    df = make_sweep(n_shapes=120, families=(i90.value, i8gemm.value))
    sweep = tmp_path / "s.parquet"
    write_sweep(df, sweep, {"synthetic": True})
    assert main([str(sweep), "--family", c.value, "--models-dir", str(tmp_path / "m"), "--export-dir",
                 str(tmp_path / "e"), "--max-portfolio", "6", "--quiet"]) == 0
    ir = TreeIR.load(tmp_path / "m" / f"synthetic-{c.value}.tree.json")
    root = ir.nodes[0]
    assert isinstance(root, Split) and (root.feature, root.threshold) == (PW, 0)
    assert {KernelConfig.from_name(n).family for n in ir.classes} == {i90, i8gemm}
    assert all(KernelConfig.from_name(ir.nodes[i].label).family is i90
               for i in range(1, root.right) if isinstance(ir.nodes[i], Leaf))
    assert ir.meta["routed"]["partial_families"] == ["i8gemm90"]


def test_compose_puts_a_root_split_over_two_trees() -> None:
    names = ("a", "b")
    left = TreeIR(names, ("x", "y"), (Split(0, 3, 1, 2), Leaf("x"), Leaf("y"))).validate()
    right = TreeIR(names, ("z", "y"), (Leaf("z"),)).validate()
    ir = compose(left, right, 1, 0)
    assert ir.classes == ("x", "y", "z") and ir.nodes[0] == Split(1, 0, 1, 4)
    assert [ir.predict(v) for v in ((0, 0), (9, 0), (0, 1), (9, 5))] == ["x", "y", "z", "z"]
    with pytest.raises(ValueError, match="different features"):
        compose(left, TreeIR(("a", "c"), ("z",), (Leaf("z"),)), 1, 0)
    wide = compose(left, TreeIR(("a", "b", "c"), ("z", "w"), (Split(2, 0, 1, 2), Leaf("z"), Leaf("w"))).validate(), 1, 0)
    assert wide.feature_names == ("a", "b", "c")
    assert [wide.predict(v) for v in ((0, 0, 5), (9, 0, 5), (0, 1, 0), (0, 1, 5))] == ["x", "y", "z", "w"]


# --------------------------------------------------------------------------- training
@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """The three fp16 families on the same problems (the GEMM family on the 1x1 / stride-1 ones
    only), except one pointwise problem the GEMM family did not measure; the routed choice trained."""
    from synthetic import make_sweep

    from predictor.schema import write_sweep
    from predictor.train import main

    d = tmp_path_factory.mktemp("route")
    df = make_sweep(n_shapes=160, families=("f16nhwc", "f16nhwc90", "f16gemm90"))
    unmeasured = sorted(set(df.loc[df["family"] == GEMM.value, "shape_key"]))[0]
    df = df[~((df["family"] == GEMM.value) & (df["shape_key"] == unmeasured))].reset_index(drop=True)
    sweep = d / "s.parquet"
    write_sweep(df, sweep, {"synthetic": True})
    assert main([str(sweep), "--family", CHOICE, "--models-dir", str(d / "m"), "--export-dir", str(d / "e"),
                 "--max-portfolio", "6", "--quiet"]) == 0
    return SimpleNamespace(dir=d, sweep=sweep, df=df, unmeasured=unmeasured, models=d / "m", export=d / "e",
                           model=d / "m" / f"synthetic-{CHOICE}.tree.json")


def test_family_table_of_a_routed_choice(trained) -> None:
    from predictor.portfolio import family_table

    ft = family_table(trained.df, model_key(CHOICE))
    assert ft.n_not_common == 1 and trained.unmeasured not in set(ft.table.keys)
    pw = ft.table.features()["pointwise"].to_numpy() == 1
    gemm = [j for j, c in enumerate(ft.table.configs) if KernelConfig.from_name(c).family is GEMM]
    assert gemm and pw.any() and (~pw).sum() > 50
    assert np.isnan(ft.table.times[np.ix_(~pw, gemm)]).all()  # never a label where it cannot run
    assert (~np.isnan(ft.table.times[np.ix_(pw, gemm)])).any()
    # the non-pointwise problems, which the GEMM family never measured, are all kept
    ok = trained.df[(trained.df["family"] == F16.value) & (trained.df["status"] == "ok")]
    off = ok[(ok["R"] > 1) | (ok["stride"] > 1) | (ok["pad"] > 0) | (ok["dilation"] > 1)]
    assert len(set(off["shape_key"])) > 50 and set(off["shape_key"]) <= set(ft.table.keys)


def test_training_composes_two_models(trained) -> None:
    import joblib

    from predictor.fitting import RoutedTree

    ir = TreeIR.load(trained.model)
    root = ir.nodes[0]
    assert isinstance(root, Split) and (root.feature, root.threshold) == (PW, 0)
    assert {KernelConfig.from_name(n).family for n in ir.classes} == {F16, F90, GEMM}
    left_nodes = set(range(1, root.right))  # the rest tree: conv configs only
    assert all(KernelConfig.from_name(ir.nodes[i].label).family is not GEMM
               for i in left_nodes if isinstance(ir.nodes[i], Leaf))
    # first-call tuning candidates: conv configs only off pointwise, any of the model's configs on it
    for i, node in enumerate(ir.nodes):
        if isinstance(node, Leaf):
            assert node.candidates[0] == node.label and len(node.candidates) == 3
            assert i not in left_nodes or all(KernelConfig.from_name(c).family is not GEMM for c in node.candidates)
    saved = joblib.load(trained.model.with_suffix("").with_suffix(".joblib"))
    model = saved["model"]
    assert isinstance(model, RoutedTree) and model.feature == PW
    assert hasattr(model.rest.estimator, "tree_") and hasattr(model.pointwise.estimator, "tree_")
    routed = ir.meta["routed"]
    assert routed["partial_families"] == ["f16gemm90"] and set(routed) >= {"rest", "pointwise"}
    assert 0.5 < ir.meta["cv"]["model"]["geomean"] <= 1.0


def _shapes(n: int, seed: int) -> list[tuple[int, ...]]:
    """Random valid problems (C, K multiples of 8, sms 132), a third 1x1 with stride 1, 2, pad 0, 1,
    dilation 1, 2."""
    rng = random.Random(seed)
    out: list[tuple[int, ...]] = []
    while len(out) < n:
        r = 1 if rng.random() < 0.6 else rng.choice((3, 5, 7))
        s = r if rng.random() < 0.9 else rng.choice((1, 3))
        a = dict(N=rng.choice((1, 2, 8, 32, 64)), C=8 * rng.randint(1, 256), H=rng.randint(1, 160),
                 W=rng.randint(1, 160), K=8 * rng.randint(1, 256), R=r, S=s, stride=rng.choice((1, 1, 2)),
                 pad=rng.choice((0, 0, 1)) if r == 1 else (r - 1) // 2, dilation=rng.choice((1, 1, 1, 2)), sms=132)
        try:
            validate(a)
        except ValueError:
            continue
        out.append(tuple(a[k] for k in ARGS))
    return out


def test_python_selector_never_picks_gemm_off_pointwise(trained) -> None:
    rows = _shapes(3000, seed=1)
    picks = {0: set(), 1: set()}
    for a in rows:
        sel = selector.select(*a[:7], stride=a[7], pad=a[8], dilation=a[9], sms=a[10], model=str(trained.model))
        pw = compute(dict(zip(ARGS, a)))[PW]
        picks[pw].add(sel.config.family)
    assert GEMM not in picks[0] and picks[0] <= {F16, F90}
    assert GEMM in picks[1]  # the routing is not vacuous: the GEMM kernels are picked where they run
    one_by_one = [a for a in rows if a[5] == a[6] == 1]
    assert sum(a[7] == 2 for a in one_by_one) > 100 and sum(a[8] == 1 for a in one_by_one) > 100


_DRIVER = """\
#include <cstdint>
#include <cstdio>
#include <iostream>
#include "{header}"
namespace ns = cutlass_conv_predictor::synthetic;
int main() {{
  std::int64_t a[11];
  while (std::cin >> a[0]) {{
    for (int i = 1; i < 11; ++i) if (!(std::cin >> a[i])) return 3;
    int r = ns::select_{ident}(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]);
    const ns::KernelConfig* c = ns::config_{ident}(r);
    std::printf("%d %s %d %d\\n", r, c ? c->name : "-", c ? static_cast<int>(c->family) : -1,
                c ? static_cast<int>(c->tile_scheduler) : -1);
  }}
  return 0;
}}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
def test_header_never_picks_gemm_off_pointwise(trained) -> None:
    from test_export_cpp import WARN, compile_driver, python_result

    from predictor.config import TileScheduler

    header = trained.export / "synthetic_conv_heuristics.hpp"
    text = header.read_text()
    assert "  TileScheduler tile_scheduler;" in text and "KernelSchedule::kTmaWarpSpecializedCooperative" in text
    exe = compile_driver(_DRIVER.format(header=header, ident=IDENT), trained.dir / "drv", [*WARN, "-O1"])
    rows = _shapes(3000, seed=2)
    out = subprocess.run([str(exe)], input="".join(" ".join(map(str, a)) + "\n" for a in rows),
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(rows)
    order, schedulers = list(Family), list(TileScheduler)
    gemm_picks = 0
    for a, line in zip(rows, out):
        i, name, fam, ts = line.split(" ")
        assert int(i) == python_result(trained.model, a), a
        cfg = KernelConfig.from_name(name)
        assert order[int(fam)] is cfg.family and schedulers[int(ts)] is cfg.tile_scheduler
        pointwise = (a[5], a[6], a[7], a[8], a[9]) == (1, 1, 1, 0, 1)
        assert cfg.family is not GEMM or pointwise, a
        gemm_picks += cfg.family is GEMM
    assert gemm_picks > 50


def test_lono_routes_a_choice_with_a_partial_member(trained, tmp_path: Path) -> None:
    from predictor.lono import main

    out = tmp_path / "lono"
    assert main([str(trained.sweep), "--family", CHOICE, "--kind", "repick", "--max-portfolio", "4",
                 "--folds", "3", "--out", str(out)]) == 0
    layers = pd.read_csv(out / "layers.csv")
    assert set(layers["family"]) == {CHOICE} and len(layers) > 0
    fams = layers["pick"].map(lambda n: KernelConfig.from_name(n).family)
    pointwise = (layers["R"] == 1) & (layers["S"] == 1) & (layers["stride"] == 1) & (layers["pad"] == 0) & (
        layers["dilation"] == 1)
    assert pointwise.any() and (~pointwise).any()
    assert not (fams[~pointwise] == GEMM).any()
    assert ((layers["score"] > 0) & (layers["score"] <= layers["bound"] + 1e-12)).all()


def test_dispatcher_keeps_sm90_conv_and_gemm_kernels_in_separate_parts(trained) -> None:
    """CUTLASS 4.2 cannot compile an SM90 conv kernel in a translation unit holding the SM90 GEMM
    kernel headers (found building the shipped routed choice on an H200): the generated source puts
    them in two translation-unit classes, refuses a single-TU build, and every split into parts
    holds each kernel once with no part mixing the classes."""
    pytest.importorskip("cutlass_library")
    import re

    from predictor.dispatcher import build, generate, min_parts

    cfgs = [KernelConfig.from_name(n) for n in TreeIR.load(trained.model).classes]
    assert {c.family for c in cfgs} >= {GEMM, Family.F16_NHWC_SM90}
    src = generate(trained.models, "synthetic", trained.export, trained.dir / "dispatch", families=[CHOICE])
    text = src.read_text()
    assert min_parts(src) == 2 and "#define PKD_CLASSES 2" in text
    assert re.search(r'#if PKD_CLASS\(1\)\n#include "pk_runtime.h"\n#include "pk_runtime_gemm90.h"\n#endif', text)
    assert "pk_runtime_gemm90.h" not in text.split("#if PKD_CLASS(0)")[1].split("#endif")[0]
    placed = re.findall(r"#if PKD_KERNEL_PART\((\d+), (\d+)\)\n// generated by predictor.emit for (\S+);", text)
    assert len(placed) == len({c.kernel_name for c in cfgs})
    for cls, _, name in placed:
        assert (int(cls) == 1) == name.startswith(GEMM.value), name
    with pytest.raises(ValueError, match="translation units"):
        build(src, "sm_90a", compile_only=True)
    for parts in range(2, 7):  # the macros of the source, evaluated for each part
        owner: dict[str, int] = {}
        for part in range(parts):
            for cls, t, name in placed:
                c, t = int(cls), int(t)
                if part % 2 == c and t % ((parts - c + 1) // 2) == part // 2:
                    assert name not in owner
                    owner[name] = part
        assert len(owner) == len(placed)
        assert all(owner[n] % 2 == int(c) for c, _, n in placed)


def _three_kernel_routed_dispatcher(tmp_path: Path) -> tuple[Path, Path, tuple[KernelConfig, ...]]:
    """A routed choice of an SM80 and an SM90 conv kernel and a GEMM kernel (CUTLASS 4.2 cannot compile
    the last two in one translation unit; hand-made tree in the trainer's file format): its generated
    dispatcher source, its model file and its configs in table order."""
    from predictor.config import EpilogueFunctor
    from predictor.dispatcher import generate
    from predictor.export_cpp import export_models_dir

    sm80 = KernelConfig(family=F16, tb=(64, 64, 32), warp=(32, 32, 32), inst=(16, 8, 16), stages=4, align=(8, 8, 8),
                        epilogue=EpilogueFunctor.LinearCombination)
    cfgs = (sm80, KernelConfig.sm90(F90, (128, 128, 64)), KernelConfig.sm90(GEMM, (128, 128, 64)))
    classes = tuple(c.name for c in cfgs)
    c_idx = FEATURE_NAMES.index("C")
    ir = TreeIR(tuple(FEATURE_NAMES), classes, (Split(PW, 0, 1, 4), Split(c_idx, 128, 2, 3), Leaf(classes[0]),
                                                Leaf(classes[1]), Leaf(classes[2])),
                {"family": CHOICE, "gpu_slug": "tr", "gpu": "hand-made", "sms": 132,
                 "smem_bytes": {c: 100000 for c in classes}, "sm87_ok": {c: False for c in classes}}).validate()
    (tmp_path / "models").mkdir()
    model = tmp_path / "models" / f"tr-{CHOICE}.tree.json"
    ir.save(model)
    export_models_dir(tmp_path / "models", "tr", tmp_path / "export")
    src = generate(tmp_path / "models", "tr", tmp_path / "export", tmp_path / "dispatch", families=[CHOICE])
    return src, model, cfgs


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_routed_dispatcher_builds_in_parts_and_routes(tmp_path: Path) -> None:
    """The three-kernel routed choice built for sm_90a, asked for one part and built as the 2 it needs:
    the C ABI's selection sends only 1x1 / stride 1 / pad 0 / dilation 1 problems to the GEMM kernel,
    as the Python selector does (host code only)."""
    pytest.importorskip("cutlass_library")
    from predictor.dispatcher import Dispatcher, build

    src, model, cfgs = _three_kernel_routed_dispatcher(tmp_path)
    disp = Dispatcher(build(src, "sm_90a", jobs=1))
    assert disp.families == [model_key(CHOICE)]
    for shape, want in (((8, 64, 56, 56, 256, 1, 1, 1, 0, 1), 2), ((8, 64, 56, 56, 256, 1, 1, 2, 0, 1), 0),
                        ((8, 64, 56, 56, 256, 1, 1, 1, 1, 1), 0), ((8, 64, 56, 56, 64, 3, 3, 1, 1, 1), 0),
                        ((8, 256, 56, 56, 256, 1, 1, 1, 0, 1), 2), ((8, 256, 28, 28, 256, 3, 3, 1, 1, 1), 1)):
        i = disp.select(CHOICE, shape, 132)
        assert i == want == selector.select(*shape[:7], stride=shape[7], pad=shape[8], dilation=shape[9],
                                            model=str(model)).index
        assert disp.name(CHOICE, i) == cfgs[i].name


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None or shutil.which("cmake") is None, reason="needs nvcc and cmake")
def test_routed_dispatcher_cmake_project_builds_its_parts(tmp_path: Path) -> None:
    """The generated CMake project compiles the three-kernel routed choice as its two translation
    units (``PKD_PARTS`` defaults to the minimum) and links them into one library."""
    pytest.importorskip("cutlass_library")
    from predictor.dispatcher import Dispatcher
    from predictor.emit import cutlass_root

    src, _, cfgs = _three_kernel_routed_dispatcher(tmp_path)
    b = tmp_path / "cmake"
    subprocess.run(["cmake", "-S", str(src.parent), "-B", str(b), f"-DCUTLASS_DIR={cutlass_root()}",
                    f"-DCMAKE_CUDA_COMPILER={shutil.which('nvcc')}"], check=True, capture_output=True, text=True)
    subprocess.run(["cmake", "--build", str(b), "-j", "2"], check=True, capture_output=True, text=True)
    lib = next(b.glob("*.so"))
    syms = subprocess.run(["nm", "-D", "--defined-only", str(lib)], check=True, capture_output=True,
                          text=True).stdout.split()
    for c in cfgs:
        assert syms.count(f"pk_run_{c.kernel_name}") == 1
    assert syms.count(f"pkd_select_{model_key(CHOICE).identifier}") == 1
    assert Dispatcher(lib).select(CHOICE, (8, 256, 56, 56, 256, 1, 1, 1, 0, 1), 132) == 2

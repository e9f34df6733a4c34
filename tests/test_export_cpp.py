"""The generated C++ header: compiles warning-free, is constexpr, agrees EXACTLY with the Python
selector and the scikit-learn model, and has defined behaviour (UBSan) on extreme inputs."""
from __future__ import annotations

import functools
import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Sequence

import joblib
import numpy as np
import pandas as pd
import pytest

from predictor.config import FAMILY_SPECS, Family
from predictor.export_cpp import HEADER_FIRST_LINE, namespace_name
from predictor.features import ARGS, FEATURE_NAMES, LIMITS, compute, validate
from predictor.selector import LoadedModel, candidates, select
from predictor.tree_ir import Split, TreeIR

GXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(GXX is None, reason="g++ not found")

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
SMS = 132
Row = tuple[str, tuple[int, ...]]

WARN = ["-std=c++17", "-Wall", "-Wextra", "-Werror", "-Wpedantic", "-Wshadow", "-Wconversion"]


def driver_source(header: Path, ns: str, families: Sequence[str]) -> str:
    """A driver reading ``family N C H W K R S stride pad dilation sms`` lines, printing
    ``index name``; with static_asserts that the selection is a constant expression."""
    asserts, branches, helpers = [], [], []
    for f in families:
        cm = FAMILY_SPECS[Family(f)].channel_multiple
        asserts += [
            f"static_assert(ns::select_{f}(1, 64, 56, 56, 64, 3, 3, 1, 1, 1) >= 0, \"constexpr selection\");",
            f"static_assert(ns::select_{f}(0, 64, 56, 56, 64, 3, 3, 1, 1, 1) == ns::kInvalidShape, \"N = 0\");",
            f"static_assert(ns::select_{f}(1, {cm + 1}, 56, 56, 64, 3, 3, 1, 1, 1) == ns::kUnsupportedShape, \"C\");",
            f"static_assert(ns::name_{f}(-1) == nullptr && ns::config_{f}(ns::kNumConfigs_{f}) == nullptr, \"\");",
            f"static_assert(ns::kTrainedSms_{f} == {SMS}, \"trained sms\");",
            f"static_assert(first_candidate_{f}() == ns::select_{f}(1, 64, 56, 56, 64, 3, 3, 1, 1, 1), \"\");",
        ]
        helpers.append(f"constexpr int first_candidate_{f}() {{ int o[ns::kMaxCandidates] = {{}}; "
                       f"return ns::candidates_{f}(1, 64, 56, 56, 64, 3, 3, 1, 1, 1, o) > 0 ? o[0] : -9; }}")
        branches.append(
            f"    {'else ' if branches else ''}if (fam == \"{f}\") {{ r = ns::select_{f}(a[0], a[1], a[2], a[3], a[4], "
            f"a[5], a[6], a[7], a[8], a[9], a[10]); name = ns::name_{f}(r); "
            f"n = ns::candidates_{f}(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], o, a[10]); }}")
    return f"""\
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include "{header}"

namespace ns = cutlass_conv_predictor::{ns};
{chr(10).join(helpers)}
{chr(10).join(asserts)}

int main() {{
  std::string fam;
  std::int64_t a[11];
  while (std::cin >> fam) {{
    for (auto& v : a) {{
      if (!(std::cin >> v)) return 3;
    }}
    int r = 0, n = 0;
    int o[ns::kMaxCandidates] = {{-9, -9, -9}};
    const char* name = nullptr;
{chr(10).join(branches)}
    else return 2;
    std::printf("%d %s %d", r, name ? name : "-", n);
    for (int j = 0; j < n; ++j) std::printf(" %d", o[j]);
    std::printf("\\n");
  }}
  return 0;
}}
"""


def compile_driver(src: str, out: Path, flags: Sequence[str]) -> Path:
    cpp = out.with_suffix(".cpp")
    cpp.write_text(src)
    cmd = [str(GXX), *flags, str(cpp), "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


def run_driver(exe: Path, rows: Sequence[Row]) -> list[tuple[int, str, tuple[int, ...]]]:
    """(select's index, its name, candidates' result: the indices, or the negative code alone) per row."""
    text = "".join(f"{f} {' '.join(map(str, a))}\n" for f, a in rows)
    env = {**os.environ, "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}
    proc = subprocess.run([str(exe)], input=text, capture_output=True, text=True, env=env)
    assert proc.returncode == 0 and "runtime error" not in proc.stderr, proc.stderr[-2000:]
    out = []
    for line in proc.stdout.splitlines():
        i, name, n, *cands = line.split(" ")
        out.append((int(i), name, tuple(int(c) for c in cands) if int(n) > 0 else (int(n),)))
    assert len(out) == len(rows)
    return out


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def header(synthetic_models) -> Path:
    return synthetic_models.export / "synthetic_conv_heuristics.hpp"


@pytest.fixture(scope="module")
def models(synthetic_models) -> dict[str, tuple[TreeIR, object, Path]]:
    out = {}
    for f in synthetic_models.families:
        path = synthetic_models.models / f"synthetic-{f}.tree.json"
        out[f] = (TreeIR.load(path), joblib.load(synthetic_models.models / f"synthetic-{f}.joblib")["model"], path)
    return out


@pytest.fixture(scope="module")
def driver(header: Path, synthetic_models, tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = driver_source(header, namespace_name(synthetic_models.slug), synthetic_models.families)
    return compile_driver(src, tmp_path_factory.mktemp("cpp") / "driver", [*WARN, "-O2"])


@pytest.fixture(scope="module")
def ubsan_driver(header: Path, synthetic_models, tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = driver_source(header, namespace_name(synthetic_models.slug), synthetic_models.families)
    return compile_driver(src, tmp_path_factory.mktemp("ubsan") / "driver",
                          [*WARN, "-O1", "-fsanitize=undefined", "-fno-sanitize-recover=all"])


# --------------------------------------------------------------------------- shape sets
def training_rows(sweep: Path, fam: str) -> list[Row]:
    df = pd.read_parquet(sweep)
    shapes = df[df["family"] == fam].drop_duplicates("shape_key")
    cols = ["N", "C", "H", "W", "K", "R", "S", "stride", "pad", "dilation"]
    return [(fam, (*map(int, r), SMS)) for r in shapes[cols].itertuples(index=False)]


def random_rows(fam: str, n: int, seed: int) -> list[Row]:
    rng = random.Random(seed)
    cm = FAMILY_SPECS[Family(fam)].channel_multiple

    def lu(lo: int, hi: int) -> int:
        return max(lo, min(hi, round(2 ** rng.uniform(np.log2(lo), np.log2(hi)))))

    rows = []
    for _ in range(n):
        C = cm * lu(1, 128) if rng.random() < 0.9 else rng.randint(1, 4096)
        K = cm * lu(1, 128) if rng.random() < 0.9 else rng.randint(1, 4096)
        R = rng.choice((1, 1, 3, 3, 5, 7, 11))
        S = R if rng.random() < 0.9 else rng.choice((1, 3, 5))
        H = lu(1, 1024)
        W = H if rng.random() < 0.7 else lu(1, 1024)
        dil = rng.choice((1, 1, 1, 2, 3))
        pad = dil * (R - 1) // 2 if rng.random() < 0.8 else rng.randint(0, 4)
        sms = SMS if rng.random() < 0.8 else rng.randint(1, 4096)
        rows.append((fam, (lu(1, 512), C, H, W, K, R, S, rng.choice((1, 1, 2, 3)), pad, dil, sms)))
    return rows


def _feature(args: Sequence[int], f: int) -> int | None:
    a = dict(zip(ARGS, args))
    try:
        validate(a)
    except ValueError:
        return None
    return compute(a, check=False)[f]


def boundary_rows(fam: str, ir: TreeIR, pool: Sequence[Row], per_node: int = 5
                  ) -> tuple[list[Row], dict[int, str]]:
    """Shapes that reach each split node and put its feature on both sides of its threshold T.

    For every split, up to ``per_node`` shapes of ``pool`` whose decision path goes through the
    node are moved along each argument: raw-argument features get T-1, T, T+1 directly, and every
    feature gets the tightest crossing pair ``f <= T < f'`` found by binary search (assuming
    monotonicity; checked per pair).  Returns the rows and, per split node, ``"exact"`` (a shape
    reaching the node had f == T and one had f > T), ``"crossed"`` (a crossing pair reached it, T
    itself not attained), ``"placed"`` (crossing pairs exist but moving the argument also moved
    the shape off the node's path) or ``"missed"``."""
    cm = FAMILY_SPECS[Family(fam)].channel_multiple
    feats = {r: compute(dict(zip(ARGS, r[1]))) for r in pool if _feature(r[1], 0) is not None}
    rows: list[Row] = []
    status: dict[int, str] = {}
    for n, node in enumerate(ir.nodes):
        if not isinstance(node, Split):
            continue
        f, t = node.feature, node.threshold
        name = FEATURE_NAMES[f]
        bases = [r for r, x in feats.items() if n in ir.decision_path(x)][:per_node]
        status[n] = "missed"

        def reach(args: Sequence[int]) -> int | None:
            a = dict(zip(ARGS, args))
            try:
                validate(a)
            except ValueError:
                return None
            x = compute(a, check=False)
            return x[f] if n in ir.decision_path(x) else None

        for _, base in bases:
            if name in ARGS:
                i = ARGS.index(name)
                for v in (t - 1, t, t + 1, (t // cm) * cm, (t // cm + 1) * cm):
                    r = list(base)
                    r[i] = v
                    rows.append((fam, tuple(r)))
            for i, arg in enumerate(ARGS):
                step = cm if arg in ("C", "K") else 1
                lo, hi = LIMITS[arg]
                lo_s, hi_s = -(-lo // step), hi // step  # search over multiples of step

                def g(j: int) -> int | None:
                    r = list(base)
                    r[i] = j * step
                    return _feature(r, f)

                a, b = lo_s, hi_s
                if (g(b) or 0) <= t:
                    continue
                while b - a > 1:  # smallest j with g(j) > t (if monotone)
                    mid = (a + b) // 2
                    gm = g(mid)
                    if gm is not None and gm > t:
                        b = mid
                    else:
                        a = mid
                pair = []
                for j in (b - 1, b, b + 1):
                    r = list(base)
                    r[i] = j * step
                    rows.append((fam, tuple(r)))
                    pair.append(reach(r))
                below, above = pair[0], pair[1]
                if below is not None and above is not None and below <= t < above:
                    status[n] = "exact" if below == t or status[n] == "exact" else "crossed"
                elif status[n] == "missed" and (g(b - 1) or 0) <= t < (g(b) or 0):
                    status[n] = "placed"
        for _, base in bases:  # non-monotone features (tails, padding waste): scan a window around the base
            if status[n] in ("exact", "crossed"):
                break
            for i, arg in enumerate(ARGS):
                step = cm if arg in ("C", "K") else 1
                prev: tuple[int | None, tuple[int, ...]] | None = None
                for j in range(max(0, base[i] // step - 300), base[i] // step + 300):
                    r = list(base)
                    r[i] = j * step
                    cur = (reach(r), tuple(r))
                    if prev is not None and prev[0] is not None and cur[0] is not None:
                        lo_f, hi_f = sorted((prev[0], cur[0]))  # either direction (sawtooth features)
                        if lo_f <= t < hi_f:
                            rows += [(fam, prev[1]), (fam, cur[1])]
                            status[n] = "exact" if lo_f == t or status[n] == "exact" else "crossed"
                    prev = cur
    return rows, status


def extreme_rows(fam: str) -> list[Row]:
    base = (1, 64, 56, 56, 64, 3, 3, 1, 1, 1, SMS)
    rows: list[Row] = [(fam, (INT64_MAX,) * 11), (fam, (INT64_MIN,) * 11), (fam, (0,) * 11), (fam, (-1,) * 11)]
    for i, arg in enumerate(ARGS):
        lo, hi = LIMITS[arg]
        for v in (0, -1, 1, INT64_MIN, INT64_MAX, INT64_MIN + 1, INT64_MAX - 1, lo - 1, lo, hi, hi + 1,
                  2**31, -(2**31), 2**32 + 64):
            r = list(base)
            r[i] = v
            rows.append((fam, tuple(r)))
    # the largest valid problems: every feature at its maximum (overflow would show under UBSan)
    cm = FAMILY_SPECS[Family(fam)].channel_multiple
    top = LIMITS["C"][1] // cm * cm
    for sms in (1, 4096):
        for pad in (0, 1024):
            rows.append((fam, (65536, top, 65536, 65536, top, 1, 1, 1, pad, 1, sms)))
        rows.append((fam, (65536, top, 65536, 65536, top, 1024, 1024, 1, 1024, 1, sms)))
        rows.append((fam, (65536, top, 65536, 65536, top, 1024, 1024, 1024, 1024, 1024, sms)))
    return rows


# --------------------------------------------------------------------------- expectations
@functools.lru_cache(maxsize=None)
def _generated(model: Path) -> LoadedModel:
    return LoadedModel.from_ir(TreeIR.load(model), str(model))


def python_result(model: Path, args: Sequence[int]) -> int:
    """The Python selector's answer as a C++ return value (index, -1 invalid, -2 unsupported).
    The header answers any SM count; ``select`` refuses counts the model was not trained at, so
    there the generated selector function behind it is compared."""
    N, C, H, W, K, R, S, stride, pad, dil, sms = args
    try:
        return select(N, C, H, W, K, R, S, stride=stride, pad=pad, dilation=dil, sms=sms, model=str(model)).index
    except ValueError as exc:
        try:
            validate(dict(zip(ARGS, args)))
        except ValueError:
            return -1
        if str(exc).startswith(f"sms={sms}: ") and "trained at" in str(exc):
            return _generated(model).fn(*args)
        assert "not a multiple" in str(exc) and str(exc)[:2] in ("C=", "K="), exc
        return -2


def python_candidates(model: Path, args: Sequence[int]) -> tuple[int, ...]:
    """``predictor.candidates`` as the C++ driver prints it: the indices, or the negative code alone."""
    N, C, H, W, K, R, S, stride, pad, dil, sms = args
    try:
        return tuple(s.index for s in candidates(N, C, H, W, K, R, S, stride=stride, pad=pad, dilation=dil, sms=sms,
                                                 model=str(model)))
    except ValueError as exc:
        if str(exc).startswith(f"sms={sms}: ") and "trained at" in str(exc):
            got = _generated(model).candidates_fn(*args)
            return got if type(got) is tuple else (got,)
        return (python_result(model, args),)


def check_agreement(rows: Sequence[Row], cpp: Sequence[tuple[int, str, tuple[int, ...]]],
                    models: dict[str, tuple[TreeIR, object, Path]]) -> dict[str, int]:
    counts = {"valid": 0, "invalid": 0, "unsupported": 0}
    by_fam: dict[str, list[int]] = {}
    for j, ((fam, args), (ci, cname, cc)) in enumerate(zip(rows, cpp)):
        ir, _, path = models[fam]
        py = python_result(path, args)
        assert ci == py, (fam, args, ci, py)
        pc = python_candidates(path, args)
        assert cc == pc and pc[0] == py, (fam, args, cc, pc)
        if py >= 0:
            assert pc == tuple(ir.classes.index(c) for c in ir.candidates(compute(dict(zip(ARGS, args)))))
        if py >= 0:
            assert cname == ir.classes[py]
            by_fam.setdefault(fam, []).append(j)
            counts["valid"] += 1
        else:
            assert cname == "-"
            counts["invalid" if py == -1 else "unsupported"] += 1
    for fam, idx in by_fam.items():  # the scikit-learn model agrees on every supported shape
        ir, clf, _ = models[fam]
        X = np.array([compute(dict(zip(ARGS, rows[j][1]))) for j in idx], dtype=np.int64)
        sk = [ir.classes.index(str(v)) for v in clf.predict(X)]  # type: ignore[attr-defined]
        assert sk == [cpp[j][0] for j in idx]
    return counts


# --------------------------------------------------------------------------- tests
def test_header_text(header: Path, synthetic_models) -> None:
    text = header.read_text()
    assert text.splitlines()[0] == HEADER_FIRST_LINE
    assert text.splitlines()[1] == ("// regenerate: python -m predictor.export_cpp --models-dir "
                                    f"{synthetic_models.models} --slug synthetic --export-dir {synthetic_models.export}")
    assert "// trained " not in text  # no date: the header is a function of the models only
    from predictor.schema import file_sha256

    assert file_sha256(synthetic_models.sweep) in text
    for f in synthetic_models.families:
        assert file_sha256(synthetic_models.models / f"synthetic-{f}.tree.json") in text
        assert f"constexpr int select_{f}(" in text and f"kConfigs_{f}[" in text
    assert "kInvalidShape = -1" in text and "kUnsupportedShape = -2" in text
    assert "#include <cstdint>" in text and text.count("#include") == 1


def test_training_random_and_boundary_shapes_agree(driver: Path, models, synthetic_models) -> None:
    rows: list[Row] = []
    coverage = {}
    for k, fam in enumerate(synthetic_models.families):
        train = training_rows(synthetic_models.sweep, fam)
        rand = random_rows(fam, 6000, seed=k)
        rows += train + rand
        b, status = boundary_rows(fam, models[fam][0], train + rand[:2000])
        rows += b
        coverage[fam] = status
    assert len(rows) >= 12000
    counts = check_agreement(rows, run_driver(driver, rows), models)
    assert counts["valid"] > 10000 and counts["invalid"] > 0 and counts["unsupported"] > 0
    for fam, status in coverage.items():
        ir = models[fam][0]
        missed = [(n, FEATURE_NAMES[ir.nodes[n].feature]) for n, s in status.items() if s == "missed"]
        assert not missed, f"{fam}: no crossing pair for split nodes {missed}"
        reached = sum(s in ("exact", "crossed") for s in status.values())
        exact = sum(s == "exact" for s in status.values())
        assert reached >= 0.75 * len(status) and exact >= 0.5 * len(status), (fam, status)
        for n in status:  # raw arguments: T - 1, T and T + 1 themselves were all run
            name = FEATURE_NAMES[ir.nodes[n].feature]
            if name in ARGS:
                t = ir.nodes[n].threshold
                vals = {r[1][ARGS.index(name)] for r in rows if r[0] == fam}
                assert {t - 1, t, t + 1} <= vals, (fam, n, name, t)


def test_extreme_values_ubsan(ubsan_driver: Path, models, synthetic_models) -> None:
    rows: list[Row] = []
    for k, fam in enumerate(synthetic_models.families):
        rows += extreme_rows(fam) + random_rows(fam, 500, seed=10 + k)
    cpp = run_driver(ubsan_driver, rows)
    counts = check_agreement(rows, cpp, models)
    assert counts["invalid"] > 50 and counts["valid"] > 0
    # documented error values
    by_row = dict(zip([(f, a) for f, a in rows], cpp))
    for fam in synthetic_models.families:
        assert by_row[(fam, (INT64_MAX,) * 11)][0] == -1
        assert by_row[(fam, (INT64_MIN,) * 11)][0] == -1
        assert by_row[(fam, (0,) * 11)][0] == -1
        cm = FAMILY_SPECS[Family(fam)].channel_multiple
        top = LIMITS["C"][1] // cm * cm
        assert by_row[(fam, (65536, top, 65536, 65536, top, 1, 1, 1, 0, 1, 1))][0] >= 0


def test_unsupported_channels(driver: Path, models, synthetic_models) -> None:
    rows: list[Row] = []
    for fam in synthetic_models.families:
        cm = FAMILY_SPECS[Family(fam)].channel_multiple
        for c in (1, cm - 1, cm + 1, 3 * cm + 5):
            rows.append((fam, (1, c, 28, 28, 64, 3, 3, 1, 1, 1, SMS)))
            rows.append((fam, (1, 64, 28, 28, c, 3, 3, 1, 1, 1, SMS)))
    cpp = run_driver(driver, rows)
    assert all(r == (-2, "-", (-2,)) for r in cpp)
    check_agreement(rows, cpp, models)


def test_compiles_without_optional_flags(header: Path, synthetic_models, tmp_path: Path) -> None:
    """The header alone (no driver code) compiles as C++17 with -O0 and warnings as errors."""
    src = f'#include "{header}"\nint main() {{ return 0; }}\n'
    compile_driver(src, tmp_path / "only", [*WARN, "-O0"])


def test_a_grafted_model_compiles_and_agrees(synthetic_models, tmp_path: Path) -> None:
    """A model whose router leaves share member subtrees (:func:`predictor.tree_ir.graft`): the header writes
    each shared subtree once (a lambda), stays a constant expression and answers what the Python selector does."""
    from predictor.tree_ir import Leaf, graft

    fam = "f16nhwc"
    trained = TreeIR.load(synthetic_models.models / f"synthetic-{fam}.tree.json")
    f = FEATURE_NAMES.index
    other = TreeIR(trained.feature_names, trained.classes[:2], (Split(f("C"), 128, 1, 2), Leaf(trained.classes[1]),
                                                                   Leaf(trained.classes[0]))).validate()
    router = TreeIR(trained.feature_names, ("t", "o"), (Split(f("K"), 64, 1, 2), Leaf("o"), Split(f("N"), 4, 3, 4),
                                                        Leaf("t"), Leaf("o"))).validate()
    g = graft(router, {"t": trained, "o": other}, classes=trained.classes, meta=trained.meta)
    assert g.shared
    header = _export_and_compare(g, fam, random_rows(fam, 3000, seed=5), tmp_path)
    assert header.read_text().count("[&]() -> int {") == 2 * len(g.shared)  # select_ and candidates_


def _export_and_compare(model: TreeIR, fam: str, rows: Sequence[Row], tmp_path: Path) -> Path:
    """Save ``model`` as ``fam``'s only model, export its header, compile a driver with warnings as errors and
    check that on ``rows`` the header answers what the Python selector answers and, where a problem is valid
    (over 1000 of them must be), what the IR predicts; returns the header."""
    from predictor.export_cpp import export_models_dir

    models_dir = tmp_path / "models"
    models_dir.mkdir()
    path = models_dir / f"synthetic-{fam}.tree.json"
    model.save(path)
    header = export_models_dir(models_dir, "synthetic", tmp_path / "export")
    exe = compile_driver(driver_source(header, namespace_name("synthetic"), (fam,)), tmp_path / "driver", [*WARN, "-O1"])
    valid = 0
    for (_, args), (ci, cname, cc) in zip(rows, run_driver(exe, rows)):
        py = python_result(path, args)
        assert ci == py and cc == python_candidates(path, args), args
        if py >= 0:
            valid += 1
            feats = compute(dict(zip(ARGS, args)))
            assert cname == model.predict(feats)
            assert cc == tuple(model.classes.index(c) for c in model.candidates(feats))
    assert valid > 1000
    return header


def test_a_model_over_the_tiles_features_compiles_and_agrees(synthetic_models, tmp_path: Path) -> None:
    """A member tree over the ``tiles`` feature set (a full binary tree splitting at the median of each of that set's
    31 features beyond ``base``), grafted beside a trained ``base`` model: the header computes every such feature as
    Python does (a wrong expression would send about half the problems reaching its split the other way) and answers
    what the Python selector and the IR answer."""
    from predictor.features import FEATURE_SETS
    from predictor.tree_ir import Leaf, graft

    fam = "f16nhwc"
    trained = TreeIR.load(synthetic_models.models / f"synthetic-{fam}.tree.json")
    assert trained.feature_names == FEATURE_SETS["base"]
    names = FEATURE_SETS["tiles"]
    extra = names[len(FEATURE_SETS["base"]):]
    assert len(extra) == 31  # the 31 splits of a full binary tree of depth 5
    rows = random_rows(fam, 5000, seed=7)
    feats = np.array([compute(dict(zip(ARGS, a))) for _, a in rows if _valid(a)])
    nodes: list = [None] * 63  # heap order: node i's children 2i+1, 2i+2; the last 32 are leaves
    reach = {0: np.arange(len(feats))}
    for i in range(31):  # each split at the value that halves the problems reaching it
        col = feats[reach[i], FEATURE_NAMES.index(extra[i])]
        t = min(np.unique(col).tolist(), key=lambda v: abs(2 * int((col <= v).sum()) - len(col)))
        nodes[i] = Split(FEATURE_NAMES.index(extra[i]), int(t), 2 * i + 1, 2 * i + 2)
        reach[2 * i + 1], reach[2 * i + 2] = reach[i][col <= t], reach[i][col > t]
    for i in range(31, 63):
        nodes[i] = Leaf(trained.classes[i % len(trained.classes)])
    assert min(len(reach[i]) for i in range(31, 63)) >= 5  # every split sends problems both ways
    wide = TreeIR(names, trained.classes, tuple(nodes)).validate()
    f = FEATURE_NAMES.index
    router = TreeIR(trained.feature_names, ("t", "w"), (Split(f("K"), 64, 1, 2), Leaf("t"), Leaf("w"))).validate()
    g = graft(router, {"t": trained, "w": wide}, classes=trained.classes, meta=trained.meta)
    assert g.feature_names == names
    _export_and_compare(g, fam, rows, tmp_path)


def _valid(args: Sequence[int]) -> bool:
    try:
        validate(dict(zip(ARGS, args)))
    except ValueError:
        return False
    return True

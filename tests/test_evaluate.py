"""predictor.evaluate / predictor.baselines: wave heuristic and snapping units, the nvMatmulHeuristics
subprocess protocol, and the evaluation end to end on a SYNTHETIC sweep (tests/synthetic.py)."""
from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from synthetic import write_synthetic_sweep

from predictor import baselines
from predictor.baselines import GemmConfig, snap, snap_distance, wave_estimate, wave_pick
from predictor.config import (
    EpilogueFunctor, Family, IteratorAlgorithm, KernelConfig, Swizzle,
)
from predictor.evaluate import METHODS, best_of, main, missing_mask, run_nvmmh, short_name
from predictor.portfolio import ShapeTable

SMS = 132


def _cfg(tb: tuple[int, int, int], warp: tuple[int, int, int], stages: int = 3, **kw: object) -> KernelConfig:
    c = KernelConfig(family=Family.FP16_NHWC, tb=tb, warp=warp, inst=(16, 8, 16), stages=stages, align=(8, 8, 8),
                     epilogue=EpilogueFunctor.LinearCombination)
    split = kw.pop("split_k", 1)
    return dataclasses.replace(c, **kw).with_split_k(split)  # type: ignore[arg-type]


T128 = _cfg((128, 128, 32), (64, 64, 32))
T256x128 = _cfg((256, 128, 32), (64, 64, 32))
T128x256 = _cfg((128, 256, 32), (64, 64, 32))
T128x64 = _cfg((128, 64, 32), (64, 32, 32))
T64 = _cfg((64, 64, 32), (32, 32, 32), stages=4)
T64x32 = _cfg((64, 32, 32), (32, 32, 32))
GRID = [T128, T256x128, T128x256, T128x64, T64, T64x32]


# --------------------------------------------------------------------------- wave heuristic
def test_wave_full_wave_of_128x128() -> None:
    # 132 x 1 CTAs of 128x128 fill the 132 SMs exactly once at full tile efficiency; 256x128 and
    # 128x256 also need one wave but do twice the work per CTA; 64x64 needs 4 waves of half-efficient
    # tiles; 128x64: 2 waves at 2/3 efficiency
    m, n, k = 128 * SMS, 128, 4096
    assert wave_pick(m, n, k, GRID, SMS) == T128
    est, util = wave_estimate(T128, m, n, k, SMS)
    assert util == 1.0 and est == 128 * 128 * 4096
    assert wave_estimate(T64, m, n, k, SMS) == (4 * 64 * 64 * 4096 / 0.5, 1.0)


def test_wave_partial_last_wave() -> None:
    # one CTA more than the SMs: 2 waves, the last 1/132 busy
    est, util = wave_estimate(T128, 128 * (SMS + 1), 128, 64, SMS)
    assert util == pytest.approx(1 / SMS) and est == 2 * 128 * 128 * 64
    # M = 64*264, N = 64: 64x64 needs 2 full waves at efficiency 1/2 (16384 K), 128x64 one full wave
    # at efficiency 2/3 (12288 K), 128x128 one wave of half-empty tiles (16384 K)
    assert wave_pick(64 * 264, 64, 512, GRID, SMS) == T128x64


def test_wave_small_problem_and_candidates() -> None:
    # a single CTA of any tile: the least work / efficiency wins (64x32: 2048/(1/3) < 64x64: 4096/(1/2))
    assert wave_pick(64, 64, 64, GRID, SMS) == T64x32
    assert wave_pick(64, 64, 64, [T128, T64], SMS) == T64
    # split-k, analytic and swizzled configs are not candidates
    others = [T128.with_split_k(2), dataclasses.replace(T64, iterator=IteratorAlgorithm.Analytic),
              dataclasses.replace(T64, swizzle=Swizzle.Identity4)]
    assert wave_pick(64, 64, 64, others + [T256x128], SMS) == T256x128
    with pytest.raises(ValueError):
        wave_pick(64, 64, 64, others, SMS)
    # ties (same tile, other stages) are broken deterministically (stages closest to 4)
    t128_s4 = dataclasses.replace(T128, stages=4)
    assert wave_pick(128 * SMS, 128, 64, [T128, t128_s4], SMS) == t128_s4


# --------------------------------------------------------------------------- snapping
def _g(cta: tuple[int, int, int], warp: tuple[int, int, int], stages: int = 3, split_k: int = 1,
       swizzle: int = 1) -> GemmConfig:
    return GemmConfig(cta, warp, (16, 8, 16), stages, split_k, swizzle)


def test_snap_exact_and_distance_zero() -> None:
    for c in GRID:
        g = _g(c.tb, c.warp, c.stages)
        assert snap_distance(g, c) == 0.0
        assert snap(g, GRID) == c
        assert all(snap_distance(g, o) > 0 for o in GRID if o != c)


def test_snap_nearest() -> None:
    # a tile the grid lacks (16x8, 1 stage) goes to the smallest output tile
    assert snap(_g((16, 8, 64), (16, 8, 64), stages=1), GRID).tb == (64, 32, 32)
    # the output tile outweighs warp and stages: 128x128 with another warp shape and 8 stages
    assert snap(_g((128, 128, 32), (32, 32, 32), stages=8), GRID).tb == (128, 128, 32)
    # 80x72 (not a power of two) -> nearest in log space: 64x64
    assert snap(_g((80, 72, 32), (80, 24, 32)), GRID).tb == (64, 64, 32)
    # split-k 3 is nearer to 4 than to 2 (in log2)
    grid = [T64.with_split_k(2), T64.with_split_k(4), T64]
    assert snap(_g(T64.tb, T64.warp, 4, split_k=3), grid).split_k_slices == 4
    assert snap(_g(T64.tb, T64.warp, 4, split_k=1), grid).split_k_slices == 1
    # the analytic twin of a config is never preferred
    ana = dataclasses.replace(T64, iterator=IteratorAlgorithm.Analytic)
    assert snap(_g(T64.tb, T64.warp, 4), [ana, T64]) == T64
    # swizzle is matched when the tile is equal
    sw = dataclasses.replace(T64, swizzle=Swizzle.Identity2)
    assert snap(_g(T64.tb, T64.warp, 4, swizzle=2), [T64, sw]) == sw


# --------------------------------------------------------------------------- scoring helpers
def _table(times: list[list[float]]) -> ShapeTable:
    t = np.array(times, dtype=float)
    n, m = t.shape
    return ShapeTable(np.array([f"s{i}" for i in range(n)]), np.array(["grid"] * n),
                      pd.DataFrame({"N": np.arange(1, n + 1)}), tuple(f"c{j}" for j in range(m)), t)


def test_best_of_and_missing() -> None:
    t = _table([[1.0, np.nan, 4.0], [2.0, 3.0, np.nan]])
    # a missing candidate scores the shape's worst time; on a tie the available one wins
    np.testing.assert_array_equal(best_of(t, [[1, 2], [2, 1]]), [2, 1])
    np.testing.assert_array_equal(best_of(t, [[0, 2], [1, 0]]), [0, 0])
    np.testing.assert_array_equal(best_of(t, [[1], [-1]]), [1, -1])  # all missing: first; none: -1
    np.testing.assert_array_equal(missing_mask(t, np.array([1, 0])), [True, False])
    np.testing.assert_array_equal(missing_mask(t, np.array([-1, 2])), [True, True])


def test_short_name() -> None:
    assert short_name(T64.name) == "64x64x32_w32x32x32_s4"
    assert short_name(T64.with_split_k(2).name) == "64x64x32_w32x32x32_s4_sk2"


# --------------------------------------------------------------------------- nvMatmulHeuristics protocol
class _Proc:
    def __init__(self, rc: int, out: str, err: str = "") -> None:
        self.returncode, self.stdout, self.stderr = rc, out, err


def _answer() -> str:
    conf = {"cta": [128, 128, 32], "warp": [64, 64, 32], "instr": [16, 8, 16], "stages": 3, "split_k": 1,
            "swizzle": 1, "cta_order": 0, "runtime_s": 1e-5}
    return json.dumps({"batches": [{"family": "f16nhwc", "precision": "HSH", "top1": [[conf]], "topk": [[conf, conf]],
                                    "model": [[1.0] * len(GRID)], "alt_precision": None, "alt_top1": None}],
                       "version": "test", "complete": True}) + "\n"


def test_nvmmh_crash_after_output_is_accepted(monkeypatch: pytest.MonkeyPatch,
                                              caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: _Proc(-11, _answer(), "Segmentation fault"))
    res = baselines.run_nvmmh({"f16nhwc": [(64, 64, 64)]}, {"f16nhwc": GRID}, "H200_SXM", 2)
    assert res.batches["f16nhwc"].top1[0][0].cta == (128, 128, 32) and res.info["returncode"] == -11
    assert "AFTER complete JSON output" in caplog.text


def test_nvmmh_failure_without_output_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: _Proc(1, "", "ImportError: no module"))
    with pytest.raises(baselines.NvmmhError, match="rc=1"):
        baselines.run_nvmmh({"f16nhwc": [(64, 64, 64)]}, {"f16nhwc": GRID}, "H200_SXM", 2)


def test_nvmmh_real_worker() -> None:
    pytest.importorskip("nvMatmulHeuristics")
    res = baselines.run_nvmmh({"f16nhwc": [(25088, 256, 2304), (49, 64, 288)]}, {"f16nhwc": GRID}, "H200_SXM", 4)
    b = res.batches["f16nhwc"]
    assert len(b.top1) == len(b.topk) == 2 and all(b.top1) and all(1 <= len(k) <= 4 for k in b.topk)
    assert b.model is not None and all(len(m) == len(GRID) for m in b.model)
    assert all(snap(g[0], GRID) in GRID for g in b.top1)


def test_nvmmh_skips_families_without_a_precision(caplog: pytest.LogCaptureFixture) -> None:
    # the SM90 families have no precision string: no baseline for them, and no subprocess at all
    assert Family.F16_NHWC_SM90 not in baselines.NVMMH_PRECISION
    result, error = run_nvmmh([], {"f16nhwc90": [(64, 64, 64)]}, "H200_SXM", 2)
    assert result is None and error is not None and "f16nhwc90" in error
    assert "no nvMatmulHeuristics precision for f16nhwc90" in caplog.text


# --------------------------------------------------------------------------- end to end (SYNTHETIC)
def _evaluate(tmp_path: Path, n_shapes: int, *extra: str) -> tuple[str, pd.DataFrame, pd.DataFrame]:
    sweep = write_synthetic_sweep(tmp_path / "synthetic.parquet", n_shapes=n_shapes)
    out = tmp_path / "report"
    argv = [str(sweep), "--out", str(out), "--folds", "3", "--grid", "small", "--k-max", "4", *extra]
    assert main(argv) == 0
    return ((out / "REPORT.md").read_text(), pd.read_csv(out / "metrics.csv"), pd.read_csv(out / "per_shape.csv"))


def test_evaluate_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")  # the [test] extra
    report, m, per = _evaluate(tmp_path, 100, "--no-nvmmh")
    assert "sha256" in report and "python -m predictor.evaluate" in report and "Missing data rule" in report
    assert "nvMatmulHeuristics diagnostics" not in report and "(not run)" in report
    for fam in ("i8nc32", "f16nhwc"):
        for set_name in ("cv", "net"):
            sub = m[(m["family"] == fam) & (m["set"] == set_name)].set_index("method")
            expect = {"tree", "portfolio_oracle", "best_single", "generator_default", "wave"}
            expect |= {"seed"} if fam == "i8nc32" else set()
            assert set(sub.index) == expect
            assert (sub["geomean"] <= 1 + 1e-9).all() and (sub["worst"] <= sub["p10"] + 1e-12).all()
            # the portfolio oracle bounds the tree
            assert sub.loc["portfolio_oracle", "geomean"] >= sub.loc["tree", "geomean"] - 1e-12
            rows = per[(per["family"] == fam) & (per["set"] == set_name)]
            assert len(rows) == sub.loc["tree", "shapes"] and rows["shape_key"].is_unique
            assert ((rows["tree_ratio"] > 0) & (rows["tree_ratio"] <= 1 + 1e-9)).all()
            assert rows["tree_missing"].sum() == sub.loc["tree", "missing"]
            assert (rows["source"].str.startswith("net:") == (set_name == "net")).all()
        cv = per[(per["family"] == fam) & (per["set"] == "cv")]
        assert set(cv["fold"]) == {0, 1, 2}
    # the fp16 generator default (256x128x32, 3 stages) is not among the fixture's configs: every
    # shape scores as missing (with its worst time)
    gd = m[(m["method"] == "generator_default") & (m["family"] == "f16nhwc")]
    assert (gd["missing"] == gd["shapes"]).all() and (gd["exact"] == 0).all()
    gd_rows = per[per["family"] == "f16nhwc"]
    np.testing.assert_allclose(gd_rows["generator_default_ratio"], gd_rows["oracle_us"] / gd_rows["worst_us"],
                               atol=2e-5)
    for name in ("cdf_i8nc32.png", "cdf_f16nhwc.png", "portfolio_k.png", "winner_map_i8nc32.png"):
        assert (tmp_path / "report" / name).stat().st_size > 1000
        assert name in report


def test_evaluate_with_nvmmh_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("nvMatmulHeuristics")  # the [eval] extra
    report, m, _ = _evaluate(tmp_path, 60, "--nvmmh-gpu", "H200_SXM", "--nvmmh-k", "4", "--no-plots")
    assert "nvMatmulHeuristics diagnostics" in report and "GPU preset `H200_SXM`" in report
    for (fam, set_name), sub in m.groupby(["family", "set"]):
        sub = sub.set_index("method")
        assert {"nvmmh_top1", "nvmmh_topk", "nvmmh_model"} <= set(sub.index) <= set(METHODS), (fam, set_name)
        # best of top-k bounds top-1
        assert sub.loc["nvmmh_topk", "geomean"] >= sub.loc["nvmmh_top1", "geomean"] - 1e-12
    assert len(m.groupby(["family", "set"])) == 4

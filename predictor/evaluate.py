"""Offline evaluation of the kernel picker against baselines, from a measured sweep (CPU only).

    python -m predictor.evaluate SWEEP.parquet [--family F] [--out reports/offline] [--folds 5] [--seed 0]
        [--grid trainer|small] [--k-max 16] [--no-nvmmh] [--nvmmh-gpu PRESET] [--nvmmh-k 8] [--no-plots]

Per family, two sets of held-out shapes:

* **CV** -- nested, grouped cross-validation over the training shapes (every ``source`` not starting
  with ``net:``): the folds are the trainer's own ``GroupKFold`` splits by ``shape_key``
  (:func:`predictor.train._folds`, same ``--folds`` and ``--seed``); for every fold the whole
  trainer (:func:`predictor.train.train_family`: its own inner cross-validation of the
  hyper-parameters, greedy portfolio, decision tree, integer tree IR) runs on the other folds (with
  the configs the whole sweep leaves eligible) and the resulting tree IR picks on the fold;
* **net** -- the real-network layers (``source`` starts with ``net:``), never trained on: the
  trainer runs on all training shapes (what ``python -m predictor.train`` ships) and picks on them.

Methods (:data:`METHODS`): our tree, the oracle of its portfolio, the best single config of the
training shapes, ``SEED_CONFIG`` (int8), the ``cutlass_library`` generator default, a
wave-quantisation heuristic and NVIDIA nvMatmulHeuristics (top-1, best of top-k, and its perf
model ranking our grid) -- see :mod:`predictor.baselines`.

Scoring (:mod:`predictor.portfolio`): only ``status == "ok"`` and verified rows count; a row's time
is :func:`predictor.portfolio.effective_times`; the score of a pick is ``oracle_time /
picked_time``; a pick with no such row for the shape is scored with the shape's worst ok time
(counted per method as "missing").  Writes ``REPORT.md``, PNG figures, ``per_shape.csv`` and
``metrics.csv`` under ``--out``.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import logging
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from . import baselines, train
from .cli import MissingDependencyError, display_path, install_hint, refuse_overwrite, require, run_main
from .config import SEED_CONFIG, Family, KernelConfig
from .features import DEFAULT_SMS, LIMITS
from .portfolio import ShapeTable, best_single, build_table, eligible_rows, greedy_portfolio, metrics, picked_times
from .schema import SHAPE_COLUMNS, file_sha256, read_metadata, read_sweep

_LOG = logging.getLogger(__name__)

HOLDOUT_PREFIXES = ("net:",)

#: Method key -> label, in report order.
METHODS: dict[str, str] = {
    "tree": "our tree (trained portfolio)",
    "portfolio_oracle": "portfolio oracle (best member)",
    "best_single": "best single config (training shapes)",
    "seed": "SEED_CONFIG",
    "generator_default": "cutlass_library generator default",
    "wave": "wave-quantisation heuristic",
    "nvmmh_top1": "nvMatmulHeuristics top-1 (snapped)",
    "nvmmh_topk": "nvMatmulHeuristics best of top-k (snapped)",
    "nvmmh_model": "nvMatmulHeuristics perf model over our grid",
    "nvmmh_top1_alt": "nvMatmulHeuristics top-1, alt. precision (sensitivity)",
}
#: The baselines our tree should beat (geomean and P10), per the evaluation issue.
TARGET_BASELINES = ("nvmmh_top1", "seed", "best_single")
TARGET_ORACLE_FRACTION = 0.98
BUCKETS = ((1.0, 1.0 + 1e-12, "exact"), (0.99, 1.0, "[0.99, 1)"), (0.95, 0.99, "[0.95, 0.99)"),
           (0.90, 0.95, "[0.90, 0.95)"), (0.80, 0.90, "[0.80, 0.90)"), (0.50, 0.80, "[0.50, 0.80)"),
           (0.0, 0.50, "< 0.50"))


@dataclass(frozen=True)
class HyperGrid:
    """Hyper-parameter grid handed to the trainer (``k_grid=None``: the trainer's default)."""

    name: str
    k_grid: tuple[int, ...] | None
    depth_grid: tuple[int, ...]
    min_leaf_grid: tuple[int, ...]
    weightings: tuple[str, ...]

    def describe(self) -> str:
        k = "trainer default (K_GRID up to --max-portfolio)" if self.k_grid is None else list(self.k_grid)
        return (f"`{self.name}`: k {k}, max_depth {list(self.depth_grid)}, min_samples_leaf "
                f"{list(self.min_leaf_grid)}, weighting {list(self.weightings)}")


GRIDS: dict[str, HyperGrid] = {
    "trainer": HyperGrid("trainer", None, tuple(train.DEPTH_GRID), tuple(train.MIN_LEAF_GRID), tuple(train.WEIGHTINGS)),
    "small": HyperGrid("small", (2, 4, 8, 12), (3, 5, 7, 10), (2, 8), ("uniform", "regret")),
}


def short_name(name: str) -> str:
    """Compact config name for tables/CSV: tile, warp, stages, swizzle, iterator, split-k (the
    family fixes instruction, alignment and epilogue)."""
    c = KernelConfig.from_name(name)
    sk = "" if c.split_k_slices == 1 else f"_sk{c.split_k_slices}"
    it = "" if c.iterator.value == "optimized" else f"_{c.iterator.value}"
    return (f"{'x'.join(map(str, c.tb))}_w{'x'.join(map(str, c.warp))}_s{c.stages}"
            f"{'' if c.swizzle.value == 1 else f'_sw{c.swizzle.value}'}{it}{sk}")


# --------------------------------------------------------------------------- data
@dataclass
class FamilyData:
    """One family's measurements, ready to evaluate."""

    family: Family
    rows: pd.DataFrame  # all rows of the family (any status)
    table: ShapeTable  # eligible rows, every shape with at least one ok row
    dropped: int
    sms: int
    gpu: str
    configs: list[KernelConfig]
    gemm: np.ndarray  # (n, 3) implicit GEMM M, N, K
    X: np.ndarray  # (n, F) features
    net: np.ndarray  # (n,) bool: held-out real-network layer
    sweep_configs: int = 0  # configs of the family in the sweep (eligible or not)

    def gemm_of(self, i: int) -> tuple[int, int, int]:
        """Implicit GEMM (M, N, K) of shape ``i``."""
        m, n, k = (int(v) for v in self.gemm[i])
        return (m, n, k)

    def problems(self) -> list[tuple[int, int, int]]:
        """The distinct implicit GEMMs of the family, sorted."""
        return sorted({self.gemm_of(i) for i in range(self.table.n_shapes)})

    def index(self, name: str | None) -> int:
        if name is None:
            return -1
        j = self.table.config_index(name)
        return -1 if j is None else j


def load_family(df: pd.DataFrame, family: Family) -> FamilyData:
    """Eligible rows of ``family`` as a :class:`FamilyData` (raises ``train.TrainError`` if unusable)."""
    fam_rows = df[df["family"] == family.value]
    rows = eligible_rows(fam_rows)
    if rows.empty:
        raise train.TrainError(f"{family.value}: no rows with status == 'ok' and verified == True")
    gpus = sorted(set(rows["gpu"].astype(str)))
    if len(gpus) != 1:
        raise train.TrainError(f"{family.value}: the sweep mixes GPUs {gpus}")
    sms = int(rows["sms"].astype(int).value_counts().index[0])
    lo, hi = LIMITS["sms"]
    if not lo <= sms <= hi:
        sms = DEFAULT_SMS
    table, dropped = build_table(rows, sms)
    feats = table.features()
    gemm = feats[["gemm_m", "gemm_n", "gemm_k"]].to_numpy(dtype=np.int64)
    net = np.array([any(s.startswith(p) for p in HOLDOUT_PREFIXES) for s in table.sources], dtype=bool)
    return FamilyData(family, fam_rows, table, dropped, sms, gpus[0],
                      [KernelConfig.from_name(c) for c in table.configs], gemm, feats.to_numpy(dtype=np.int64), net,
                      int(fam_rows["config"].nunique()))


# --------------------------------------------------------------------------- picks
def best_of(table: ShapeTable, candidates: Sequence[Sequence[int]]) -> np.ndarray:
    """Per shape, the candidate config index with the lowest effective time (missing -> the shape's
    worst time; ties go to an available candidate); -1 where no candidate is a grid config."""
    out = np.full(table.n_shapes, -1, dtype=np.int64)
    for i, cands in enumerate(candidates):
        cs = [int(c) for c in cands if c >= 0]
        if not cs:
            continue
        t = table.times[i, cs]
        # a missing candidate scores the worst time; on a tie an available one is preferred
        out[i] = cs[int(np.argmin(np.where(np.isnan(t), table.worst[i] * (1 + 1e-9), t)))]
    return out


def missing_mask(table: ShapeTable, picks: np.ndarray) -> np.ndarray:
    """Shapes whose pick has no ok row (or is not a grid config)."""
    picks = np.asarray(picks, dtype=np.int64)
    m = picks < 0
    ok = ~m
    m[ok] = np.isnan(table.times[np.nonzero(ok)[0], picks[ok]])
    return m


@dataclass
class NvmmhPicks:
    """nvMatmulHeuristics picks for one family (indices into the family's full table) + diagnostics."""

    picks: dict[str, np.ndarray]
    stats: dict[str, Any]


def nvmmh_picks(data: FamilyData, batch: baselines.NvmmhBatch, problems: list[tuple[int, int, int]]) -> NvmmhPicks:
    """Snap the library's answers to the grid and map them to the family's shapes."""
    rank = baselines.generator_rank(data.family)
    pos = {p: i for i, p in enumerate(problems)}
    cache: dict[Any, tuple[int, float]] = {}

    def snapped(g: baselines.GemmConfig) -> tuple[int, float]:
        key = (g.cta, g.warp, g.stages, g.split_k, g.swizzle)
        if key not in cache:
            c = baselines.snap(g, data.configs, rank)
            cache[key] = (data.index(c.name), baselines.snap_distance(g, c))
        return cache[key]

    n = data.table.n_shapes
    top1 = np.full(n, -1, dtype=np.int64)
    topk_sets: list[list[int]] = []
    model = np.full(n, -1, dtype=np.int64)
    alt = np.full(n, -1, dtype=np.int64) if batch.alt_top1 else None
    dist1, exact1, no_answer, distinct_k, model_fail = [], 0, 0, [], 0
    grid_tiles = {c.tb for c in data.configs}
    off_tile = split = stage1 = 0
    for i in range(n):
        j = pos[data.gemm_of(i)]
        if batch.top1[j]:
            g = batch.top1[j][0]
            off_tile += g.cta not in grid_tiles
            split += g.split_k > 1
            stage1 += g.stages < 2
            idx, d = snapped(g)
            top1[i] = idx
            dist1.append(d)
            exact1 += d == 0
        else:
            no_answer += 1
        ks = [snapped(g)[0] for g in batch.topk[j]]
        topk_sets.append(ks)
        distinct_k.append(len(set(ks)))
        if batch.model is not None:
            c = baselines.model_pick(batch.model[j], data.configs, rank)
            if c is None:
                model_fail += 1
            else:
                model[i] = data.index(c.name)
        if alt is not None and batch.alt_top1 is not None and batch.alt_top1[j]:
            alt[i] = snapped(batch.alt_top1[j][0])[0]
    picks = {"nvmmh_top1": top1, "nvmmh_topk": best_of(data.table, topk_sets)}
    if batch.model is not None:
        picks["nvmmh_model"] = model
    if alt is not None:
        picks["nvmmh_top1_alt"] = alt
    stats = {
        "precision": batch.precision, "alt_precision": batch.alt_precision, "problems": len(problems),
        "top1_no_answer": no_answer, "top1_in_grid": exact1 / max(1, n - no_answer),
        "top1_tile_not_in_grid": off_tile / max(1, n - no_answer), "top1_split_k": split / max(1, n - no_answer),
        "top1_single_stage": stage1 / max(1, n - no_answer),
        "top1_mean_snap_distance": float(np.mean(dist1)) if dist1 else float("nan"),
        "topk_mean_answers": float(np.mean([len(s) for s in topk_sets])) if topk_sets else 0.0,
        "topk_mean_distinct_snapped": float(np.mean(distinct_k)) if distinct_k else 0.0,
        "model_no_estimate": model_fail,
    }
    return NvmmhPicks(picks, stats)


def static_picks(data: FamilyData, nv: NvmmhPicks | None) -> dict[str, np.ndarray]:
    """Picks that need no training, for every shape of the family."""
    n = data.table.n_shapes
    out: dict[str, np.ndarray] = {}
    if data.family is SEED_CONFIG.family:
        out["seed"] = np.full(n, data.index(SEED_CONFIG.name), dtype=np.int64)
    try:
        from .space import default_config

        out["generator_default"] = np.full(n, data.index(default_config(data.family).name), dtype=np.int64)
    except ImportError:  # pragma: no cover - nvidia-cutlass missing
        _LOG.warning("cutlass_library is not installed: no generator-default baseline")
    rank = baselines.generator_rank(data.family)
    wave_cache: dict[tuple[int, int, int], int] = {}
    wave = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        key = data.gemm_of(i)
        if key not in wave_cache:
            wave_cache[key] = data.index(baselines.wave_pick(*key, data.configs, data.sms, rank).name)
        wave[i] = wave_cache[key]
    out["wave"] = wave
    if nv is not None:
        out.update(nv.picks)
    return out


# --------------------------------------------------------------------------- evaluation
@dataclass
class SetResult:
    """Picks of every method on one set of held-out shapes."""

    name: str
    table: ShapeTable
    idx: np.ndarray  # rows of the family's full table
    picks: dict[str, np.ndarray] = field(default_factory=dict)
    fold: np.ndarray | None = None

    def metrics(self) -> dict[str, dict[str, Any]]:
        out = {}
        for m in METHODS:
            if m not in self.picks:
                continue
            t = picked_times(self.table, self.picks[m])
            base = metrics(self.table.oracle, t)
            if base is None:
                continue
            ratio = self.table.oracle / t
            out[m] = {**base, "missing": int(missing_mask(self.table, self.picks[m]).sum()),
                      "buckets": {label: float(np.mean((ratio >= lo) & (ratio < hi))) for lo, hi, label in BUCKETS}}
        return out


@dataclass
class FamilyEval:
    data: FamilyData
    cv: SetResult
    net: SetResult
    folds: list[dict[str, Any]]
    shipped: dict[str, Any]  # summary of the model trained on all training shapes
    kcurve: dict[str, Any]
    nvmmh: dict[str, Any] | None
    seconds: dict[str, float]


@dataclass
class Settings:
    sweep: Path
    sha: str
    folds: int
    seed: int
    grid: HyperGrid
    k_max: int
    max_portfolio: int
    tolerance: float


def _train(rows: pd.DataFrame, family: Family, s: Settings, note: str) -> train.FamilyModel:
    g = s.grid
    return train.train_family(rows, family, sweep=s.sweep, sweep_sha=s.sha, target=None,
                              max_portfolio=s.max_portfolio, seed=s.seed, holdout_prefixes=HOLDOUT_PREFIXES,
                              folds=s.folds, tolerance=s.tolerance, k_grid=g.k_grid, depth_grid=g.depth_grid,
                              min_leaf_grid=g.min_leaf_grid, weightings=g.weightings,
                              command=f"predictor.evaluate ({note})")


def _model_picks(data: FamilyData, m: train.FamilyModel, rows: np.ndarray) -> tuple[np.ndarray, list[int]]:
    names = m.ir.predict_many(data.X[rows].tolist())
    port = [data.index(n) for n in m.summary["portfolio"]]
    return np.array([data.index(n) for n in names], dtype=np.int64), port


def evaluate_family(data: FamilyData, s: Settings, static: Mapping[str, np.ndarray],
                    nv_stats: dict[str, Any] | None) -> FamilyEval:
    """Nested CV, the held-out network layers and the portfolio-size curve of one family."""
    fam = data.family
    secs: dict[str, float] = {}
    cv_idx, net_idx = np.nonzero(~data.net)[0], np.nonzero(data.net)[0]
    cv_fold = np.full(len(cv_idx), -1, dtype=np.int64)
    cv = SetResult("cv", data.table.subset(cv_idx), cv_idx, fold=cv_fold)
    net = SetResult("net", data.table.subset(net_idx), net_idx)
    for res in (cv, net):
        for k, v in static.items():
            res.picks[k] = v[res.idx]

    # ---- (a) nested grouped CV over the training shapes
    t0 = time.time()
    splits = train._folds(cv.table, s.folds, s.seed)  # the trainer's own folds
    for k in ("tree", "portfolio_oracle", "best_single"):
        cv.picks[k] = np.full(len(cv_idx), -1, dtype=np.int64)
    folds: list[dict[str, Any]] = []
    for f, (tr, te) in enumerate(splits):
        _LOG.info("%s: CV fold %d/%d (%d training, %d test shapes)", fam.value, f + 1, len(splits), len(tr), len(te))
        sub = cv.table.subset(tr)
        keys = set(sub.keys)
        # the fold's training shapes, with the configs the whole sweep leaves eligible (a config that
        # computed a wrong result on any shape -- maybe a test shape -- is excluded, as for the shipped model)
        fold_rows = data.rows[data.rows["shape_key"].isin(keys) & data.rows["config"].isin(data.table.configs)]
        m = _train(fold_rows, fam, s, f"fold {f + 1}/{len(splits)}")
        tree, port = _model_picks(data, m, cv_idx[te])
        cv.picks["tree"][te] = tree
        cv.picks["portfolio_oracle"][te] = best_of(cv.table.subset(te), [port] * len(te))
        cv.picks["best_single"][te] = best_single(sub)
        cv_fold[te] = f
        folds.append({"fold": f, "train": int(len(tr)), "test": int(len(te)), **m.summary["hyperparameters"],
                      "leaves": m.summary["tree"]["leaves"], "depth": m.summary["tree"]["depth"],
                      "inner_cv_geomean": m.summary["cv"]["model"]["geomean"]})
    secs["nested_cv"] = time.time() - t0

    # ---- (b) held-out network layers: the model trained on all training shapes
    t0 = time.time()
    full = _train(data.rows, fam, s, "all training shapes")
    if len(net_idx):
        tree, port = _model_picks(data, full, net_idx)
        net.picks["tree"] = tree
        net.picks["portfolio_oracle"] = best_of(net.table, [port] * len(net_idx))
        net.picks["best_single"] = np.full(len(net_idx), best_single(cv.table), dtype=np.int64)
    secs["full_model"] = time.time() - t0
    shipped = {k: full.summary[k] for k in ("portfolio", "hyperparameters", "tree", "cv", "holdout")}
    shipped["repository_model"] = compare_repository_model(data, full, s.sha)

    # ---- portfolio size k vs quality (same folds)
    t0 = time.time()
    kcurve = portfolio_curve(cv.table, data.X[cv_idx], s, splits)
    kcurve["chosen_k"] = int(full.summary["hyperparameters"]["k"])
    secs["k_curve"] = time.time() - t0
    return FamilyEval(data, cv, net, folds, shipped, kcurve, nv_stats, secs)


def compare_repository_model(data: FamilyData, model: train.FamilyModel, sha: str) -> dict[str, Any] | None:
    """Compare the model trained here with the repository's ``models/<gpu>-<family>.tree.json``
    (what ``predictor.select`` loads), when there is one for this sweep: same portfolio, and the
    share of all shapes on which the two pick the same config."""
    from .resources import models_dir
    from .tree_ir import TreeIR

    path = models_dir() / f"{train.gpu_slug(data.gpu)}-{data.family.value}.tree.json"
    if not path.exists():
        return None
    try:
        ir = TreeIR.load(path)
    except (OSError, ValueError) as exc:
        return {"path": path.name, "error": str(exc)}
    if ir.meta.get("sweep_sha256") != sha:
        return {"path": path.name, "same_sweep": False}
    rows = data.X.tolist()
    a, b = ir.predict_many(rows), model.ir.predict_many(rows)
    return {"path": path.name, "same_sweep": True, "same_portfolio": list(ir.classes) == list(model.ir.classes),
            "agreement": float(np.mean([x == y for x, y in zip(a, b, strict=True)])), "shapes": len(rows)}


def portfolio_curve(table: ShapeTable, X: np.ndarray, s: Settings,
                    splits: Sequence[tuple[np.ndarray, np.ndarray]]) -> dict[str, Any]:
    """CV geomean against portfolio size k = 1..k_max: the tree (best over the other
    hyper-parameters of the grid, the trainer's :func:`train.cross_validate`) and the portfolio's
    oracle (greedy portfolio of the training folds, best member on the test fold)."""
    ks = list(range(1, s.k_max + 1))
    g = s.grid
    res = train.cross_validate(table, X, k_grid=ks, depth_grid=g.depth_grid, min_leaf_grid=g.min_leaf_grid,
                               weightings=g.weightings, folds=s.folds, seed=s.seed, tolerance=s.tolerance)
    tree = {k: max((v for c, v in res.scores.items() if c[0] == k), default=float("nan")) for k in ks}
    oracle = {}
    for k in ks:
        picks = np.full(table.n_shapes, -1, dtype=np.int64)
        for tr, te in splits:
            port = greedy_portfolio(table.subset(tr), k)
            picks[te] = best_of(table.subset(te), [port] * len(te))
        oracle[k] = float(np.exp(np.mean(np.log(table.oracle / picked_times(table, picks)))))
    return {"k": ks, "tree": [tree[k] for k in ks], "portfolio_oracle": [oracle[k] for k in ks]}


# --------------------------------------------------------------------------- outputs
def metrics_frame(evals: Sequence[FamilyEval]) -> pd.DataFrame:
    """One row per (family, set, method) with the summary metrics."""
    out = []
    for ev in evals:
        for res in (ev.cv, ev.net):
            for m, r in res.metrics().items():
                out.append({"family": ev.data.family.value, "set": res.name, "method": m,
                            **{k: r[k] for k in ("shapes", "geomean", "p10", "worst", "exact", "missing")},
                            **{f"share {b}": v for b, v in r["buckets"].items()}})
    return pd.DataFrame(out)


def per_shape_frame(evals: Sequence[FamilyEval]) -> pd.DataFrame:
    """One row per (family, set, shape): shape, implicit GEMM, oracle, every method's pick."""
    frames = []
    for ev in evals:
        d = ev.data
        for res in (ev.cv, ev.net):
            t = res.table
            if t.n_shapes == 0:
                continue
            f = pd.DataFrame({"family": d.family.value, "set": res.name,
                              "fold": res.fold if res.fold is not None else -1,
                              "shape_key": t.keys, "source": t.sources})
            for c in SHAPE_COLUMNS:
                f[c] = t.shapes[c].to_numpy()
            f["gemm_m"], f["gemm_n"], f["gemm_k"] = d.gemm[res.idx, 0], d.gemm[res.idx, 1], d.gemm[res.idx, 2]
            orc = np.nanargmin(t.times, axis=1)
            f["oracle_config"] = [short_name(t.configs[j]) for j in orc]
            f["oracle_us"] = np.round(t.oracle, 4)
            f["worst_us"] = np.round(t.worst, 4)
            for m in METHODS:
                if m not in res.picks:
                    continue
                p = res.picks[m]
                pt = picked_times(t, p)
                f[f"{m}_config"] = [short_name(t.configs[j]) if j >= 0 else "" for j in p]
                f[f"{m}_ratio"] = np.round(t.oracle / pt, 5)
                f[f"{m}_missing"] = missing_mask(t, p).astype(int)
            frames.append(f)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _tile(name: str) -> str:
    return "x".join(map(str, KernelConfig.from_name(name).tb))


def write_plots(evals: Sequence[FamilyEval], out: Path, seed: int) -> list[Path]:
    """CDF of picked/oracle per method, portfolio size vs quality, winner maps. Returns the files."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files: list[Path] = []
    styles = {"tree": ("C0", "-", 2.4), "portfolio_oracle": ("C0", ":", 1.6), "best_single": ("C2", "-", 1.4),
              "seed": ("C3", "-", 1.4), "generator_default": ("C5", "-", 1.2), "wave": ("C4", "-", 1.4),
              "nvmmh_top1": ("C1", "-", 1.8), "nvmmh_topk": ("C1", "--", 1.4), "nvmmh_model": ("C1", ":", 1.4),
              "nvmmh_top1_alt": ("C8", "-.", 1.0)}
    for ev in evals:
        fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
        for ax, res in zip(axes, (ev.cv, ev.net), strict=True):
            lo = 1.0
            for m, label in METHODS.items():
                if m not in res.picks or res.table.n_shapes == 0:
                    continue
                r = np.sort(res.table.oracle / picked_times(res.table, res.picks[m]))
                lo = min(lo, float(r[0]))
                y = np.arange(1, len(r) + 1) / len(r)
                c, ls, lw = styles[m]
                gm = float(np.exp(np.mean(np.log(r))))
                ax.step(r, y, where="post", color=c, ls=ls, lw=lw, label=f"{label} (geomean {gm:.3f})")
            ax.set_xlim(max(0.0, lo - 0.02), 1.005)
            ax.set_xlabel("picked / oracle  (oracle_time / picked_time; 1 = fastest measured)")
            what = "nested CV (training shapes)" if res.name == "cv" else "held-out network layers"
            ax.set_title(f"{ev.data.family.value}: {what}, {res.table.n_shapes} shapes")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="upper left")
        axes[0].set_ylabel("fraction of shapes with score <= x")
        fig.tight_layout()
        p = out / f"cdf_{ev.data.family.value}.png"
        fig.savefig(p, dpi=110)
        plt.close(fig)
        files.append(p)

    fig, axes = plt.subplots(1, len(evals), figsize=(6.5 * len(evals), 4.5), squeeze=False)
    for ax, ev in zip(axes[0], evals, strict=True):
        kc = ev.kcurve
        ax.plot(kc["k"], kc["tree"], "o-", color="C0", label="tree (CV, best other hyper-parameters)")
        ax.plot(kc["k"], kc["portfolio_oracle"], "s:", color="C0", alpha=0.7, label="portfolio oracle (CV)")
        ax.axvline(kc["chosen_k"], color="grey", ls="--", lw=1, label=f"trainer's k = {kc['chosen_k']}")
        ax.axhline(TARGET_ORACLE_FRACTION, color="C3", ls=":", lw=1, label=f"{TARGET_ORACLE_FRACTION} of oracle")
        ax.set_xlabel("portfolio size k")
        ax.set_ylabel("CV geomean of picked / oracle")
        ax.set_title(f"{ev.data.family.value}: portfolio size vs quality")
        ax.set_xticks(kc["k"])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    p = out / "portfolio_k.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    files.append(p)

    rng = np.random.default_rng(seed)
    for ev in evals:
        d = ev.data
        t = d.table
        orc_tile = np.array([_tile(t.configs[j]) for j in np.nanargmin(t.times, axis=1)])
        ours = np.full(t.n_shapes, "", dtype=object)
        for res in (ev.cv, ev.net):
            if "tree" in res.picks:
                ours[res.idx] = [_tile(t.configs[j]) if j >= 0 else "?" for j in res.picks["tree"]]
        tiles = sorted(set(orc_tile) | set(ours) - {"", "?"},
                       key=lambda s: (int(s.split("x")[0]) * int(s.split("x")[1]), s))
        cmap = plt.get_cmap("tab20")
        color = {s: cmap(i % 20) for i, s in enumerate(tiles)}
        jitter = np.exp(rng.uniform(-0.04, 0.04, size=(t.n_shapes, 2)))
        x, y = d.gemm[:, 0] * jitter[:, 0], d.gemm[:, 1] * jitter[:, 1]
        fig, axes = plt.subplots(1, 2, figsize=(14, 6), sharex=True, sharey=True)
        for ax, lab, title in ((axes[0], orc_tile, "oracle winner's threadblock tile"),
                               (axes[1], ours, "our tree's pick (out-of-fold CV / held-out)")):
            for s in tiles:
                sel = lab == s
                if sel.any():
                    ax.scatter(x[sel], y[sel], s=10, color=color[s], label=f"{s} ({int(sel.sum())})", alpha=0.8,
                               edgecolors="none")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("implicit GEMM M = N*P*Q")
            ax.set_title(f"{d.family.value}: {title}")
            ax.grid(alpha=0.3, which="both", lw=0.3)
            ax.legend(fontsize=7, markerscale=1.8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        axes[0].set_ylabel("implicit GEMM N = K (output channels)")
        fig.tight_layout()
        p = out / f"winner_map_{d.family.value}.png"
        fig.savefig(p, dpi=110)
        plt.close(fig)
        files.append(p)
    return files


def _fmt(r: Mapping[str, Any] | None) -> str:
    if not r:
        return "| - | - | - | - | - | - |"
    return (f"| {r['shapes']} | {r['geomean']:.4f} | {r['p10']:.4f} | {r['worst']:.4f} | {100 * r['exact']:.1f}% "
            f"| {r['missing']} |")


def headline_markdown(evals: Sequence[FamilyEval]) -> str:
    """The headline tables (per family and set)."""
    lines = []
    for ev in evals:
        for res in (ev.cv, ev.net):
            title = ("nested grouped CV over the training shapes" if res.name == "cv"
                     else "held-out real-network layers (`net:*`, never trained on)")
            lines += [f"**{ev.data.family.value} -- {title}**", "",
                      "| method | shapes | geomean | P10 | worst | exact | missing |", "|---|---|---|---|---|---|---|"]
            for m, r in res.metrics().items():
                lines.append(f"| {METHODS[m]} {_fmt(r)}")
            lines.append("")
    return "\n".join(lines)


def targets_lines(evals: Sequence[FamilyEval]) -> list[str]:
    lines = ["| family | set | tree >= 0.98 of oracle | " + " | ".join(
        f"tree ahead of {METHODS[b]} (geomean / P10)" for b in TARGET_BASELINES) + " |",
        "|---|---|---|" + "---|" * len(TARGET_BASELINES)]
    for ev in evals:
        for res in (ev.cv, ev.net):
            ms = res.metrics()
            t = ms.get("tree")
            if not t:
                continue
            cells = [f"{'yes' if t['geomean'] >= TARGET_ORACLE_FRACTION else 'NO'} ({t['geomean']:.4f})"]
            for b in TARGET_BASELINES:
                r = ms.get(b)
                if not r:
                    cells.append("n/a")
                    continue
                g = "yes" if t["geomean"] > r["geomean"] else "NO"
                p = "yes" if t["p10"] > r["p10"] else "NO"
                cells.append(f"{g} / {p} ({r['geomean']:.3f} / {r['p10']:.3f})")
            lines.append(f"| {ev.data.family.value} | {res.name} | " + " | ".join(cells) + " |")
    return lines


def report_markdown(evals: Sequence[FamilyEval], *, command: str, sweep: Path, sha: str, meta: Mapping[str, Any],
                    s: Settings, nvmmh_info: Mapping[str, Any] | None, nvmmh_error: str | None, seconds: float,
                    files: Sequence[Path]) -> str:
    """REPORT.md."""
    dev = meta.get("device", {}) if isinstance(meta.get("device"), Mapping) else {}
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    gpu = dev.get("gpu") or (evals[0].data.gpu if evals else "?")
    lines = [
        f"# Offline evaluation: kernel picks vs baselines ({gpu})",
        "",
        f"- command: `{command}`",
        f"- date: {now} (run time {seconds:.0f} s on {_cpu_count()} CPU core(s))",
        f"- sweep: `{sweep}`, sha256 `{sha}`",
        f"- GPU (sweep metadata): {gpu}, {dev.get('sms', '?')} SMs, {dev.get('arch', meta.get('arch', '?'))}, driver "
        f"{dev.get('driver', '?')}, CUDA runtime {dev.get('cuda_runtime', '?')}, max SM clock "
        f"{dev.get('clock_max_sm', '?')}; measured {meta.get('date', '?')}, CUTLASS {meta.get('cutlass', '?')}",
        f"- sets: **CV** = nested `GroupKFold` by `shape_key` over the training shapes ({s.folds} folds, seed "
        f"{s.seed}; the trainer's own splits), every fold re-running the whole trainer "
        f"(`predictor.train.train_family`, its inner {s.folds}-fold CV included) on the other folds; **net** = the "
        f"real-network layers (`source` starting with `net:`), scored with the model trained on all training "
        f"shapes (what `python -m predictor.train` ships)",
        f"- hyper-parameter grid: {s.grid.describe()}; max portfolio {s.max_portfolio}, CV tolerance {s.tolerance}",
        "- scoring: only `status == \"ok\"` and verified rows; time = `time_us` (timing method 1) or "
        "`retime_us` else `time_us` (method 2), `predictor.portfolio.effective_times`; score = "
        "oracle_time / picked_time (1 = the fastest measured config); geomean, P10 (10th percentile), worst, "
        "exact = picked the fastest config. **Missing data rule**: a pick with no ok row for a shape (not "
        "implementable, wrong result, or not in the grid) is scored with that shape's *worst* ok time; the "
        "`missing` column counts how often that happened.",
        "",
    ]
    for ev in evals:
        d = ev.data
        lines.append(f"- {d.family.value}: {d.table.n_shapes} shapes with an ok row ({int((~d.net).sum())} training, "
                     f"{int(d.net.sum())} network layers; {d.dropped} dropped with no ok row); {len(d.configs)} "
                     f"eligible configs of the {d.sweep_configs} in the sweep (the trainer never selects a config "
                     f"that computed a wrong result on any shape; snapping and the heuristics choose among the "
                     f"same eligible configs, and a fixed config that is not eligible would score as missing)")
    lines += ["", "## Headline", "", headline_markdown(evals), "### Targets", "",
              "Aim: our pick ahead of nvMatmulHeuristics top-1, `SEED_CONFIG` and the best single config in "
              "geomean and P10, and >= 0.98 of oracle (geomean). Measured:", "", *targets_lines(evals), ""]
    lines += ["Methods ranked by geomean:", ""]
    for ev in evals:
        for res in (ev.cv, ev.net):
            ms = res.metrics()
            if ms:
                order = sorted(ms, key=lambda m: -ms[m]["geomean"])
                lines.append(f"- {ev.data.family.value} / {res.name}: " + " > ".join(
                    f"{m} {ms[m]['geomean']:.3f}" for m in order))
    lines += ["", "### Distribution of picked / oracle (share of shapes)", ""]
    for ev in evals:
        for res in (ev.cv, ev.net):
            ms = res.metrics()
            if not ms:
                continue
            labels = [b[2] for b in BUCKETS]
            lines += [f"**{ev.data.family.value} / {res.name}**", "", "| method | " + " | ".join(labels) + " |",
                      "|---|" + "---|" * len(labels)]
            for m, r in ms.items():
                lines.append(f"| {METHODS[m]} | " + " | ".join(f"{100 * r['buckets'][b]:.1f}%" for b in labels) + " |")
            lines.append("")
    fig = {p.name for p in files}
    lines += ["## Figures", ""]
    for ev in evals:
        f = ev.data.family.value
        if f"cdf_{f}.png" in fig:
            lines += [f"CDF of picked/oracle, {f} (curves further right and lower are better):", "",
                      f"![cdf {f}](cdf_{f}.png)", ""]
    if "portfolio_k.png" in fig:
        lines += ["Portfolio size k vs CV quality (tree: for each k the best CV geomean over the other "
                  "hyper-parameters of the grid, on the trainer's folds -- selected on those folds, so slightly "
                  "optimistic; portfolio oracle: greedy portfolio of the training folds, best member on the test "
                  "fold):", "", "![portfolio k](portfolio_k.png)", ""]
        for ev in evals:
            kc = ev.kcurve
            pts = zip(kc["k"], kc["tree"], kc["portfolio_oracle"], strict=True)
            lines.append(f"- {ev.data.family.value}: " + ", ".join(f"k={k}: {t:.4f} / {o:.4f}" for k, t, o in pts)
                         + " (tree / portfolio oracle)")
        lines.append("")
    for ev in evals:
        f = ev.data.family.value
        if f"winner_map_{f}.png" in fig:
            lines += [f"Winning threadblock tile over the implicit-GEMM (M, N) plane, {f} (log axes; points "
                      "jittered by up to +-4% so that shapes with the same M and N stay visible; shapes that "
                      "differ only in GEMM K overlap):", "", f"![winner map {f}](winner_map_{f}.png)", ""]
    lines += ["## Methods", "",
              "- **our tree**: the trainer's portfolio + decision tree (integer tree IR, what `predictor.select` "
              "runs); **portfolio oracle**: the best member of that portfolio on each shape (the tree's ceiling).",
              "- **best single config**: `predictor.portfolio.best_single` on the training shapes (of the fold, "
              "for CV); **SEED_CONFIG** (int8 only): 128x128x64, warp 64x64x64, 4 stages; **generator default**: "
              "`predictor.space.default_config` (cutlass_library's first, largest tile).",
              f"- **wave-quantisation heuristic** ({evals[0].data.sms if evals else DEFAULT_SMS} SMs, the sweep's "
              f"`sms`): {baselines.WAVE_FORMULA}",
              "- **nvMatmulHeuristics**: the conv's implicit GEMM (M = N*P*Q, N = K, K = C*R*S) is given to "
              "`nvMatmulHeuristicsGetGemmConfig` "
              + (f"(package version {nvmmh_info.get('version')}, GPU preset `{nvmmh_info.get('gpu')}`, target "
                 f"`{nvmmh_info.get('target')}` = CUTLASS 2.x kernels, flags `{nvmmh_info.get('flags')}`, layout "
                 f"`{nvmmh_info.get('layout')}` (A row-major, B column-major, D row-major, as cutlass_library's "
                 f"heuristics_provider maps them), precision per family "
                 f"{ {f.value: p for f, p in baselines.NVMMH_PRECISION.items()} }; run on the CPU in one "
                 f"subprocess for all shapes)" if nvmmh_info else "(not run)")
              + f". Its top-1 and top-{_nvmmh_k(nvmmh_info)} answers are snapped to the nearest grid config: "
              f"{baselines.SNAP_FORMULA} Top-k is scored as the best of the k snapped configs. **perf model over "
              "our grid**: the library's `RUNTIME_RELATIVE_FAST_S` estimate "
              "(`nvMatmulHeuristicsEstimateSiliconMetricEx`) of every grid config, lowest wins (ties, e.g. stage "
              "counts it does not distinguish, broken as for the wave heuristic) -- this ranks our own grid, so "
              "no snapping is involved.",
              ""]
    if nvmmh_error:
        lines += [f"**nvMatmulHeuristics could not be evaluated**: {nvmmh_error}", ""]
    if any(ev.nvmmh for ev in evals):
        lines += ["### nvMatmulHeuristics diagnostics", "",
                  "Per shape (top-1 answers): how often the answer is already a grid config, has a threadblock "
                  "tile the grid lacks, asks for split-k, or asks for a single stage (CUTLASS 2.x multistage "
                  "kernels need >= 2).", "",
                  "| family | precision | GEMM problems | top-1 is a grid config | tile not in grid | split-k | "
                  "1 stage | mean snap distance (top-1) | answers per top-k query | distinct snapped configs in "
                  "top-k | no answer | alt. precision |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for ev in evals:
            st = ev.nvmmh
            if not st:
                continue
            cells = [ev.data.family.value, st["precision"], st["problems"]]
            cells += [f"{100 * st[k]:.1f}%" for k in ("top1_in_grid", "top1_tile_not_in_grid", "top1_split_k",
                                                       "top1_single_stage")]
            cells += [f"{st['top1_mean_snap_distance']:.2f}", f"{st['topk_mean_answers']:.2f}",
                      f"{st['topk_mean_distinct_snapped']:.2f}", st["top1_no_answer"], st["alt_precision"] or "-"]
            lines.append("| " + " | ".join(map(str, cells)) + " |")
        lines.append("")
    lines += ["## Nested CV details", "",
              "| family | fold | train | test | k | weighting | min_samples_leaf | max_depth | leaves "
              "| inner CV geomean |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for ev in evals:
        for fd in ev.folds:
            lines.append(f"| {ev.data.family.value} | {fd['fold']} | {fd['train']} | {fd['test']} | {fd['k']} | "
                         f"{fd['weighting']} | {fd['min_samples_leaf']} | {fd['max_depth']} | {fd['leaves']} | "
                         f"{fd['inner_cv_geomean']:.4f} |")
    lines += ["", "The model trained on all training shapes (what the trainer ships with these settings):", ""]
    for ev in evals:
        sh = ev.shipped
        hp = sh["hyperparameters"]
        cvm, hm = sh["cv"]["model"], sh["holdout"]["model"]
        ours = ev.net.metrics().get("tree")
        same = (hm is not None and ours is not None and abs(hm["geomean"] - ours["geomean"]) < 1e-9)
        lines.append(f"- {ev.data.family.value}: k = {hp['k']}, weighting {hp['weighting']}, min_samples_leaf "
                     f"{hp['min_samples_leaf']}, max_depth {hp['max_depth']}, {sh['tree']['leaves']} leaves; the "
                     f"trainer's own (non-nested: hyper-parameters chosen on the same folds) CV geomean "
                     f"{cvm['geomean']:.4f}, P10 {cvm['p10']:.4f} vs nested {ev.cv.metrics()['tree']['geomean']:.4f}; "
                     f"held-out numbers {'identical to' if same else 'DIFFERENT from'} the trainer's summary")
        rep = sh.get("repository_model")
        if rep is None:
            lines.append("  - no repository model (`models/`) for this GPU and family")
        elif not rep.get("same_sweep", False):
            lines.append(f"  - repository model `models/{rep['path']}` was trained on another sweep "
                         f"({rep.get('error', 'different sha256')}): not compared")
        else:
            lines.append(f"  - repository model `models/{rep['path']}` (same sweep): same portfolio "
                         f"{'yes' if rep['same_portfolio'] else 'NO'}, same pick on {100 * rep['agreement']:.1f}% of "
                         f"the {rep['shapes']} shapes")
        lines.append("  - portfolio: " + ", ".join(f"`{short_name(n)}`" for n in sh["portfolio"]))
    lines += ["", "## Time", ""]
    for ev in evals:
        lines.append(f"- {ev.data.family.value}: " + ", ".join(f"{k} {v:.1f} s" for k, v in ev.seconds.items()))
    lines += ["", "## Files", "",
              "- `per_shape.csv`: one row per (family, set, shape): shape, implicit GEMM, oracle config and time, "
              "worst time, and per method `<method>_config` (tile_wwarp_sstages[_swN][_analytic][_skN]), "
              "`<method>_ratio` (oracle/picked, missing scored with the worst time) and `<method>_missing`",
              "- `metrics.csv`: the headline numbers and distribution buckets", *[f"- `{p.name}`" for p in files], ""]
    return "\n".join(lines)


def _nvmmh_k(info: Mapping[str, Any] | None) -> int | str:
    return info.get("count", "k") if info else "k"


def _cpu_count() -> int:
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        return os.cpu_count() or 1


# --------------------------------------------------------------------------- driver
def run(sweep: Path, out: Path, *, families: Sequence[str] | None = None, folds: int = 5, seed: int = 0,
        grid: str = "trainer", k_max: int = 16, nvmmh: bool = True, nvmmh_gpu: str | None = None,
        nvmmh_k: int = 8, plots: bool = True, command: str = "") -> list[FamilyEval]:
    """The whole evaluation; writes the report under ``out`` and returns the per-family results."""
    t_start = time.time()
    df = read_sweep(sweep)
    sha = file_sha256(sweep)
    meta = read_metadata(sweep)
    if meta.get("synthetic"):
        _LOG.warning("%s is a SYNTHETIC sweep: the report describes no real GPU", sweep)
    present = sorted(set(df["family"].astype(str)))
    fams = list(families or present)
    missing = [f for f in fams if f not in present]
    if missing:
        raise train.TrainError(f"{sweep}: no rows of family {missing} (present: {present})")
    parser = train.build_parser()
    s = Settings(sweep, sha, folds, seed, GRIDS[grid], k_max, int(parser.get_default("max_portfolio")),
                 float(parser.get_default("cv_tolerance")))
    datas = [load_family(df, Family(f)) for f in fams]

    # ---- nvMatmulHeuristics: one subprocess for every family's GEMM problems
    nv_result: baselines.NvmmhResult | None = None
    nv_error: str | None = None
    problems = {d.family.value: d.problems() for d in datas}
    if nvmmh:
        gpu = datas[0].gpu if datas else ""
        preset = nvmmh_gpu or baselines.NVMMH_GPU_PRESETS.get(gpu)
        if not baselines.nvmmh_available():
            nv_error = "the `nvMatmulHeuristics` module is not installed (pip install nvidia-matmul-heuristics)"
        elif preset is None:
            nv_error = f"no nvMatmulHeuristics GPU preset for {gpu!r} (pass --nvmmh-gpu)"
        else:
            t0 = time.time()
            try:
                nv_result = baselines.run_nvmmh(problems, {d.family.value: d.configs for d in datas}, preset, nvmmh_k)
                _LOG.info("nvMatmulHeuristics: %d GEMM problems in %.1fs", sum(map(len, problems.values())),
                          time.time() - t0)
            except baselines.NvmmhError as exc:
                nv_error = str(exc)
        if nv_error:
            _LOG.error("nvMatmulHeuristics baseline skipped: %s", nv_error)

    evals = []
    for d in datas:
        nv = (nvmmh_picks(d, nv_result.batches[d.family.value], problems[d.family.value])
              if nv_result and d.family.value in nv_result.batches else None)
        static = static_picks(d, nv)
        evals.append(evaluate_family(d, s, static, nv.stats if nv else None))

    out.mkdir(parents=True, exist_ok=True)
    per_shape_frame(evals).to_csv(out / "per_shape.csv", index=False)
    metrics_frame(evals).to_csv(out / "metrics.csv", index=False, float_format="%.6g")
    files: list[Path] = []
    if plots:
        try:
            files = write_plots(evals, out, seed)
        except ImportError as exc:
            _LOG.error("no plots: %s (pip install matplotlib)", exc)
    report = report_markdown(evals, command=command, sweep=sweep, sha=sha, meta=meta, s=s,
                             nvmmh_info=nv_result.info if nv_result else None, nvmmh_error=nv_error,
                             seconds=time.time() - t_start, files=files)
    (out / "REPORT.md").write_text(report)
    _LOG.info("wrote %s (%.0f s)", out / "REPORT.md", time.time() - t_start)
    return evals


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m predictor.evaluate", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sweep", type=Path, help="sweep parquet file (predictor.schema format)")
    p.add_argument("--family", choices=[f.value for f in Family], action="append",
                   help="evaluate only this family (repeatable; default: every family in the sweep)")
    p.add_argument("--out", type=Path, default=Path("reports/offline"),
                   help="folder of REPORT.md, metrics.csv, per_shape.csv and the plots; existing files there are "
                        "replaced only with --overwrite")
    p.add_argument("--overwrite", action="store_true", help="replace the report files already in --out")
    p.add_argument("--folds", type=int, default=5, help="GroupKFold splits (outer and the trainer's inner CV)")
    p.add_argument("--seed", type=int, default=0, help="seed of the folds and the trees")
    p.add_argument("--grid", choices=sorted(GRIDS), default="trainer",
                   help="hyper-parameter grid handed to the trainer (small: for quick runs and tests)")
    p.add_argument("--k-max", type=int, default=16, help="largest portfolio size of the k-vs-quality curve")
    p.add_argument("--no-nvmmh", action="store_true",
                   help="skip the nvMatmulHeuristics baseline (otherwise it must be installed: the [eval] extra)")
    p.add_argument("--nvmmh-gpu", default=None,
                   help="nvMatmulHeuristics GPU preset (default: from the sweep's GPU name, e.g. H200_SXM)")
    p.add_argument("--nvmmh-k", type=int, default=8, help="top-k of nvMatmulHeuristics")
    p.add_argument("--no-plots", action="store_true", help="do not draw the plots (no matplotlib needed)")
    return p


#: The files :func:`run` writes under ``out`` (plots: ``*.png`` besides).
OUTPUTS = ("REPORT.md", "metrics.csv", "per_shape.csv")


def _main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.folds < 2:
        raise ValueError("--folds must be >= 2")
    if args.sweep.is_dir():
        raise ValueError(f"{args.sweep} is a folder: pass a sweep parquet file, e.g. sweeps/h200.parquet")
    # the baselines are part of the figures: a missing one is an error, not a silently shorter table
    require("cutlass_library", "eval", "the generator-default baseline of predictor.evaluate")
    if not args.no_nvmmh and not baselines.nvmmh_available():
        raise MissingDependencyError("the nvMatmulHeuristics baseline needs the 'nvMatmulHeuristics' module: "
                                     f"{install_hint('eval')} (or pass --no-nvmmh)")
    if not args.no_plots:
        require("matplotlib", "eval", "the plots of predictor.evaluate (or pass --no-plots)")
    refuse_overwrite([args.out / f for f in OUTPUTS] + sorted(args.out.glob("*.png")), [args.out], args.overwrite,
                     f"pass --overwrite to replace the report in {display_path(args.out)}, or --out DIR")
    command = "python -m predictor.evaluate " + " ".join(shlex.quote(a) for a in argv)
    evals = run(args.sweep, args.out, families=args.family, folds=args.folds, seed=args.seed, grid=args.grid,
                k_max=args.k_max, nvmmh=not args.no_nvmmh, nvmmh_gpu=args.nvmmh_gpu, nvmmh_k=args.nvmmh_k,
                plots=not args.no_plots, command=command)
    print(headline_markdown(evals))
    print("\n".join(targets_lines(evals)))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point: runs the evaluation and prints the headline tables; unusable input ends in
    one line on stderr (exit 2)."""
    return run_main("predictor.evaluate", _main, argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

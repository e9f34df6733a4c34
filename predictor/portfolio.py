"""Shape x config time tables, greedy portfolio selection and the picked/oracle metrics.

Conventions used throughout (the trainer's summary documents them too):

* Only rows with ``status == "ok"`` and ``verified`` count.  A row's time is
  :func:`effective_times`: ``time_us`` for rows of timing method 1 (``timing_method`` missing or 1:
  the re-timing of those sweeps reads 2-7% high, so only the first pass is one consistent timing),
  ``retime_us`` when present else ``time_us`` for rows of timing methods 2 and 3 (the re-timing is
  the same measurement, repeated); each problem's rows from one method (:func:`one_method_per_problem`).
* A (shape, config) pair without such a row is *missing*: the config is not available for that
  shape.  Shapes with no available config at all are dropped (and counted).
* When a pick is missing for a shape, the shape is scored as if the pick took the shape's
  *worst* ok time (a dispatcher would have to fall back to something; the worst measured config
  is a pessimistic stand-in).  The same rule is used by the greedy portfolio objective, by
  cross-validation and by every reported metric.
* The score of a pick is ``oracle_time / picked_time`` (1.0 = the fastest measured config, 0.5 =
  twice as slow); sets of shapes are summarised by the geometric mean, the 10th percentile, the
  minimum ("worst") and the exact-match rate (picked time equals the oracle time).
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from . import targets, timing
from .config import Family, KernelConfig
from .features import DEFAULT_SMS, LIMITS
from .features import frame as feature_frame
from .model_key import ModelKey
from .schema import SHAPE_COLUMNS, sm_keys

_LOG = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class ShapeTable:
    """One family's measurements as a dense matrix: ``times[i, j]`` is the effective time (us) of
    config ``configs[j]`` on shape ``keys[i]``, NaN where missing."""

    keys: np.ndarray  # (n,) shape_key
    sources: np.ndarray  # (n,) source of the shape
    shapes: pd.DataFrame  # (n, N..dilation + sms), index 0..n-1
    configs: tuple[str, ...]  # (m,)
    times: np.ndarray  # (n, m) float64

    @property
    def n_shapes(self) -> int:
        return len(self.keys)

    @property
    def oracle(self) -> np.ndarray:
        return np.nanmin(self.times, axis=1)

    @property
    def worst(self) -> np.ndarray:
        return np.nanmax(self.times, axis=1)

    def features(self) -> pd.DataFrame:
        """Integer feature matrix (``predictor.features.frame``) of the shapes."""
        return feature_frame(self.shapes)

    def subset(self, rows: Any) -> "ShapeTable":
        rows = np.asarray(rows)
        return ShapeTable(self.keys[rows], self.sources[rows],
                          self.shapes.iloc[rows].reset_index(drop=True), self.configs, self.times[rows])

    def config_index(self, name: str) -> int | None:
        try:
            return self.configs.index(name)
        except ValueError:
            return None


#: Timing methods (``timing_method`` column, :mod:`predictor.timing`) whose ``retime_us`` measures
#: the same quantity as ``time_us``; rows of other methods (1, or no column) use ``time_us`` only.
RETIME_COMPARABLE_METHODS = frozenset({2, 3})


def effective_times(df: pd.DataFrame) -> pd.Series:
    """The label time of each row (the one rule, used by training, evaluation and reports):
    ``retime_us`` where present and the row's ``timing_method`` makes it comparable with the first
    pass (method 2), else ``time_us``.  A frame without ``timing_method`` is method 1."""
    method = (df["timing_method"].fillna(1).astype(int) if "timing_method" in df.columns
              else pd.Series(1, index=df.index))
    use_retime = method.isin(RETIME_COMPARABLE_METHODS) & df["retime_us"].notna()
    return df["retime_us"].where(use_retime, df["time_us"]).astype(float)


def _tensor_group(family: str) -> str:
    """The tensors a family's kernels read and write (families of one group may share a model), or the family's
    own name for one this package does not know."""
    try:
        return "/".join(Family(family).spec.tensors)
    except ValueError:
        return family


def one_method_per_problem(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of each problem (``shape_key``, ``sms``) timed one way (``predictor.timing.METHOD_MODE`` of
    ``timing_method``: eager stream launches or graph replays): the way that measured the most of its
    configs, graph replays on a tie.  A problem
    re-swept as graph replays over every config of a choice's families is labelled by them alone; one
    they cover only in part keeps its eager rows, so no label compares the two (graph batches read
    1-2 µs below eager ones on µs-size problems).  Eager rows of methods 1 and 2 (configs added to a
    problem by a later sweep) stay together, as before."""
    if "timing_method" not in df.columns:
        return df
    graph = (df["timing_method"].fillna(1).astype(int).map(timing.METHOD_MODE) == timing.GRAPH).astype(int)
    if graph.nunique() < 2:
        return df
    # families compete within their tensor group (those a choice may join: an int8 family's rows of the same
    # shape never decide an fp16 one's), every family of a group that has graph rows, re-swept or not
    family = df["family"].astype(str)
    group = family.map({f: _tensor_group(f) for f in family.unique()})  # once per family, not per row
    mine = group.isin(set(group[graph == 1])).to_numpy()
    keys = ["shape_key", "sms", "_g"] if "sms" in df.columns else ["shape_key", "_g"]
    # a config's name holds its family: configs count across the families of a group
    part = df[mine].assign(_m=graph[mine], _g=group[mine])
    cover = (part.groupby([*keys, "_m"], observed=True)["config"].nunique()
             .rename("_n").reset_index().sort_values([*keys, "_n", "_m"], kind="stable")
             .drop_duplicates(keys, keep="last"))
    chosen = part.merge(cover[[*keys, "_m"]], on=[*keys, "_m"], how="left", indicator=True)
    keep = np.ones(len(df), bool)
    keep[np.flatnonzero(mine)] = (chosen["_merge"] == "both").to_numpy()
    dropped = int((~keep).sum())
    if dropped:
        _LOG.info("%d rows of an older or partial timing method left out (one method per problem)", dropped)
    return df[keep]


def check_no_overlap(df: pd.DataFrame) -> None:
    """Refuse concatenated sweeps that hold one (family, shape, config, sms) twice, unless the rows were
    timed by different methods (a re-sweep as graph replays: :func:`one_method_per_problem` picks one)."""
    key = ["family", "shape_key", "config", "sms"] + (["timing_method"] if "timing_method" in df.columns else [])
    if df.duplicated(key).any():
        raise TrainError("the sweeps overlap: the same (family, shape, config, sms) appears twice"
                         + (" with the same timing method" if "timing_method" in df.columns else ""))


def eligible_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows with ``status == "ok"``, ``verified`` and a positive finite time, of configs that never
    computed a wrong result: a config with a ``wrong_result`` row on any shape of its family (e.g.
    serial split-k, whose int8 partial sums are clamped between slices) is unsafe on shapes nobody
    checked, so it is never eligible.  Each problem's rows come from one timing method
    (:func:`one_method_per_problem`)."""
    wrong = df.loc[df["status"].astype(str) == "wrong_result", ["family", "config"]].drop_duplicates()
    unsafe = set(zip(wrong["family"].astype(str), wrong["config"].astype(str)))
    if unsafe:
        _LOG.info("%d config(s) excluded for computing a wrong result on some shape", len(unsafe))
    df = one_method_per_problem(df)
    pairs = pd.Series(list(zip(df["family"].astype(str), df["config"].astype(str))), index=df.index)
    ok = ((df["status"].astype(str) == "ok") & df["verified"].fillna(False).astype(bool)
          & ~pairs.isin(unsafe))
    out = df[ok].copy()
    out["t_eff"] = effective_times(out)
    good = np.isfinite(out["t_eff"].to_numpy()) & (out["t_eff"].to_numpy() > 0)
    if (~good).any():
        _LOG.warning("%d ok rows without a positive finite time ignored", int((~good).sum()))
    return out[good]


def build_table(rows: pd.DataFrame, sms: int, configs: Sequence[str] | None = None) -> tuple[ShapeTable, int]:
    """Dense table from one family's *eligible* rows (see :func:`eligible_rows`).

    ``configs`` fixes the column set (default: every config with an eligible row).  Returns the
    table and the number of shapes dropped because none of ``configs`` ran on them."""
    if configs is None:
        configs = sorted(rows["config"].unique())
    configs = tuple(configs)
    shapes = (rows.sort_values("shape_key", kind="stable")
              .drop_duplicates("shape_key")[["shape_key", "source", *SHAPE_COLUMNS]].reset_index(drop=True))
    col = {c: j for j, c in enumerate(configs)}
    row = {k: i for i, k in enumerate(shapes["shape_key"])}
    times = np.full((len(shapes), len(configs)), np.nan)
    sel = rows[rows["config"].isin(col)]
    times[sel["shape_key"].map(row).to_numpy(), sel["config"].map(col).to_numpy()] = sel["t_eff"].to_numpy()
    has = ~np.all(np.isnan(times), axis=1) if len(configs) else np.zeros(len(shapes), bool)
    dropped = int((~has).sum())
    if dropped:
        _LOG.info("dropped %d shape(s) with no ok+verified row among the %d configs", dropped, len(configs))
    shapes = shapes[has].reset_index(drop=True)
    frame = shapes[SHAPE_COLUMNS].astype(np.int64).copy()
    if "sms" in rows.columns and rows["sms"].nunique() > 1:  # one SM count per problem key
        per_key = rows.drop_duplicates("shape_key").set_index("shape_key")["sms"]
        frame["sms"] = shapes["shape_key"].map(per_key).to_numpy(dtype=np.int64)
    else:
        frame["sms"] = np.int64(sms)
    return ShapeTable(shapes["shape_key"].to_numpy(), shapes["source"].astype(str).to_numpy(), frame,
                      configs, times[has]), dropped


#: Log-ratios that steer training (regrets, portfolio and CV scores, sample weights; soft labels) are rounded to
#: multiples of ``2**-LOG_BITS``: sums of such numbers are exact in float64 for any order (up to
#: ~2**29 of them of magnitude < 1), so a fitted model cannot depend on the summation order of a
#: BLAS/SIMD path; their ``log``/``exp`` are the C library's (:func:`scalar_log`), not numpy's SIMD loops, whose
#: last bit depends on the CPU (retraining reproduces a model byte for byte on any x86-64 machine).
LOG_BITS = 24


def dyadic(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to the nearest multiple of ``2**-LOG_BITS`` (see :data:`LOG_BITS`)."""
    return np.ldexp(np.round(np.ldexp(np.asarray(x, dtype=np.float64), LOG_BITS)), -LOG_BITS)


def _log(v: float) -> float:
    return math.log(v) if v > 0 else (-math.inf if v == 0 else math.nan)


def scalar_log(x: np.ndarray) -> np.ndarray:
    """``np.log(x)``, element by element with Python's ``math.log`` (the C library's): numpy's SIMD loops
    differ in the last bit between AVX-512 and other CPUs (numpy issue 23523), the C library does not."""
    return np.frompyfunc(_log, 1, 1)(np.asarray(x, dtype=np.float64)).astype(np.float64)


def scalar_exp(x: np.ndarray) -> np.ndarray:
    """``np.exp(x)`` with ``math.exp``, for the reason :func:`scalar_log` gives."""
    return np.frompyfunc(math.exp, 1, 1)(np.asarray(x, dtype=np.float64)).astype(np.float64)


def scalar_pow2(x: np.ndarray) -> np.ndarray:
    """``np.exp2(x)`` with the C library's ``pow(2, x)``, for the reason :func:`scalar_log` gives."""
    return np.frompyfunc(lambda e: 2.0 ** e, 1, 1)(np.asarray(x, dtype=np.float64)).astype(np.float64)


def log_ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``log(a / b)`` (:func:`scalar_log`), :func:`dyadic`."""
    return dyadic(scalar_log(np.asarray(a, dtype=np.float64) / b))


def geomean(r: np.ndarray) -> float:
    """Geometric mean of the positive ratios ``r``: their logs (:func:`scalar_log`) :func:`dyadic` and summed
    exactly (``math.fsum``), so the score does not depend on the CPU's SIMD or a summation order (the CV choice
    compares such scores, and the model files store them)."""
    r = np.asarray(r, dtype=np.float64)
    return math.exp(math.fsum(dyadic(scalar_log(r))) / len(r))


class TrainError(ValueError):
    """The sweep cannot train a model (no usable rows, unknown family, ...)."""


def measured_smem(rows: pd.DataFrame) -> pd.Series:
    """Per config of ``rows``: the largest ``smem_bytes`` measured (> 0), -1 where none was."""
    return rows.groupby("config")["smem_bytes"].agg(lambda s: int(s[s > 0].max()) if (s > 0).any() else -1)


def configs_fit(smem: pd.Series, target: str) -> dict[str, bool]:
    """Per config (index of ``smem``, :func:`measured_smem`): whether a GPU of ``target``
    (:mod:`predictor.targets`) runs it (:meth:`~predictor.config.KernelConfig.fits`)."""
    return {str(c): KernelConfig.from_name(str(c)).fits(target, int(b)) for c, b in smem.items()}


@dataclass(frozen=True, eq=False)
class FamilyTable:
    """One family's problems as the trainer sees them (:func:`family_table`)."""

    table: ShapeTable
    fam_rows: pd.DataFrame  # every row of the family, any status
    gpu: str
    sms: int  # the model's default SM count (the largest measured)
    n_shapes_all: int  # problems (shape, sms) in the sweep, before dropping those without an ok row
    configs_dropped_for_target: list[str]
    n_eligible_rows: int
    n_not_common: int = 0  # a choice: problems dropped for not being measured in every member family


def common_problems(df: pd.DataFrame, key: ModelKey) -> tuple[pd.DataFrame, int]:
    """The rows of ``key``'s families (any status) -- for a choice only those of the problems
    (``shape_key``, ``sms``) measured in every member family that implements them
    (:meth:`~predictor.config.FamilySpec.implements`: a member that runs only some convolutions,
    e.g. the GEMM family, is not needed where it cannot run; its configs are then missing) -- and
    how many problems were dropped for being measured in only some (logged)."""
    rows = df[df["family"].isin([f.value for f in key.families])]
    if len(key.families) == 1:
        return rows, 0
    geometry = ["R", "S", "stride", "pad", "dilation"]
    geo = [tuple(g) for g in rows[geometry].to_numpy(dtype=np.int64)]
    implementers = {g: {f.value for f in key.families if f.spec.implements(*g)} for g in set(geo)}
    fam = rows["family"].astype(str).to_numpy()
    implemented = np.array([f in implementers[g] for f, g in zip(fam, geo)], dtype=bool)
    if (~implemented).any():
        _LOG.info("%s: %d row(s) of problems their family does not implement ignored", key.value,
                  int((~implemented).sum()))
        rows, fam = rows[implemented], fam[implemented]
        geo = [g for g, ok in zip(geo, implemented) if ok]
    problem = pd.MultiIndex.from_frame(rows[["shape_key", "sms"]].astype({"shape_key": str, "sms": int}))
    sets = [set(problem[fam == f.value]) for f in key.families]
    every = set.union(*sets)
    common = {p for p, g in dict(zip(problem, geo)).items()
              if all(p in got for f, got in zip(key.families, sets) if f.value in implementers[g])}
    _LOG.info("%s: %d problem(s) measured in every member family that implements them; %d measured in only "
              "some dropped (%s)", key.value, len(common), len(every) - len(common),
              ", ".join(f"{f.value}: {len(s)}" for f, s in zip(key.families, sets)))
    return rows[problem.isin(list(common))], len(every) - len(common)


def family_table(df: pd.DataFrame, family: ModelKey, target: str | None = None) -> FamilyTable:
    """The problem table of one family, or of a choice of families (:mod:`predictor.model_key`: the
    problems measured in every member, :func:`common_problems`, each config of its own family),
    from its sweep rows (any status; see the module docstring).

    Several SM counts (green-context partitions) make each (shape, sms) a problem of its own, keyed
    ``<shape_key>@sm<count>`` (:func:`predictor.schema.sm_key`), with ``sms`` a feature; the default
    SM count is the largest.  ``target`` (a :data:`predictor.targets.TARGETS` name, e.g. ``sm_87``)
    keeps only the configs that run there, judged from their measured shared memory."""
    fam_rows, n_not_common = common_problems(df, family)
    n_shapes_all = int(fam_rows["shape_key"].nunique())
    rows = eligible_rows(fam_rows)
    if rows.empty:
        raise TrainError(f"{family.value}: no rows with status == 'ok' and verified == True "
                         f"({len(fam_rows)} rows in the sweep)")
    gpus = sorted(set(rows["gpu"].astype(str)))
    if len(gpus) != 1:
        raise TrainError(f"{family.value}: the sweep mixes GPUs {gpus}; train one GPU at a time")
    sms_values = rows["sms"].astype(int).value_counts()
    sms = int(sms_values.index[0])
    if len(sms_values) > 1:
        sms = int(max(sms_values.index))
        rows = rows.assign(shape_key=sm_keys(rows["shape_key"], rows["sms"]))
        n_shapes_all = int(fam_rows.drop_duplicates(["shape_key", "sms"]).shape[0])
        _LOG.info("%s: SM counts %s are a feature; default sms = %d", family.value,
                  sorted(int(v) for v in sms_values.index), sms)
    lo, hi = LIMITS["sms"]
    if not lo <= sms <= hi:
        _LOG.warning("%s: sms=%d is out of range; using %d", family.value, sms, DEFAULT_SMS)
        sms = DEFAULT_SMS
    configs = sorted(rows["config"].unique())
    dropped_target: list[str] = []
    if target:
        if target not in targets.TARGETS:
            raise TrainError(f"unknown --target {target!r} (supported: {', '.join(targets.TARGETS)})")
        fit = configs_fit(measured_smem(fam_rows[fam_rows["config"].isin(configs)]), target)
        dropped_target = [c for c in configs if not fit.get(c, False)]
        configs = [c for c in configs if c not in dropped_target]
        _LOG.info("%s: --target %s drops %d config(s) that do not run there (shared memory or architecture)",
                  family.value, target, len(dropped_target))
        if not configs:
            raise TrainError(f"{family.value}: no config fits {target}")
    for c in configs:
        if KernelConfig.from_name(c).family not in family.families:
            raise TrainError(f"config {c} is not of family {family.value}")
    table, _ = build_table(rows, sms, configs)
    dropped = n_shapes_all - table.n_shapes
    if dropped:
        _LOG.info("%s: %d of %d shape(s) dropped: no ok+verified row", family.value, dropped, n_shapes_all)
    if table.n_shapes == 0:
        raise TrainError(f"{family.value}: no shape has an ok+verified row among the allowed configs")
    return FamilyTable(table, fam_rows, gpus[0], sms, n_shapes_all, dropped_target, len(rows), n_not_common)


# --------------------------------------------------------------------------- scoring
def picked_times(table: ShapeTable, picks: np.ndarray) -> np.ndarray:
    """Effective time of config index ``picks[i]`` on shape ``i``; missing (or ``-1``) -> worst."""
    picks = np.asarray(picks, dtype=np.int64)
    t = np.full(table.n_shapes, np.nan)
    ok = picks >= 0
    t[ok] = table.times[np.nonzero(ok)[0], picks[ok]]
    return np.where(np.isnan(t), table.worst, t)


def best_of(table: ShapeTable, configs: Sequence[str]) -> np.ndarray:
    """Each shape's fastest effective time among ``configs`` (a config the table lacks is skipped; a missing time
    counts the shape's worst, as :func:`picked_times` does): a model's bound, a member's best."""
    index = {c: j for j, c in enumerate(table.configs)}
    cols = [index[c] for c in configs if c in index]
    if not cols:
        raise ValueError("none of the configs is in the table")
    sub = table.times[:, cols]
    return np.min(np.where(np.isnan(sub), table.worst[:, None], sub), axis=1)


def metrics(oracle: np.ndarray, picked: np.ndarray) -> dict[str, float] | None:
    """Summary of ``oracle / picked`` over shapes (None for an empty set)."""
    oracle, picked = np.asarray(oracle, float), np.asarray(picked, float)
    if len(oracle) == 0:
        return None
    r = oracle / picked
    return {
        "shapes": int(len(r)),
        "geomean": geomean(r),
        "p10": float(np.percentile(r, 10)),
        "worst": float(np.min(r)),
        "exact": float(np.mean(picked <= oracle * (1 + 1e-12))),
    }


def geomean_score(oracle: np.ndarray, picked: np.ndarray) -> float:
    """:func:`geomean` of ``oracle / picked``."""
    return geomean(np.asarray(oracle, float) / np.asarray(picked, float))


# --------------------------------------------------------------------------- portfolio
def _cover_size(avail: np.ndarray, need: np.ndarray, exclude: Sequence[int]) -> float:
    """Greedy set-cover estimate of how many more configs cover the shapes in ``need``
    (inf if impossible)."""
    need = need.copy()
    cols = np.ones(avail.shape[1], bool)
    cols[list(exclude)] = False
    count = 0
    while need.any():
        gain = (avail[need] & cols).sum(axis=0)
        j = int(np.argmax(gain))
        if gain[j] == 0:
            return math.inf
        need &= ~avail[:, j]
        cols[j] = False
        count += 1
    return count


def greedy_portfolio(table: ShapeTable, k: int, candidates: Sequence[int] | None = None,
                     cover: bool = True) -> list[int]:
    """Config indices of a portfolio of at most ``k`` configs, chosen greedily to maximise the
    geomean over shapes of ``oracle / best available portfolio time`` (a shape without an
    available portfolio config counts its worst time).

    Coverage comes first when it must (``cover``): once the configs still needed to give every
    shape at least one available config (greedy set-cover estimate) exactly fill the remaining
    slots, only configs that cover the most uncovered shapes are considered (if full coverage is
    out of reach anyway, the geomean alone decides).  Stops early when no config improves the
    objective and every coverable shape is covered."""
    times = table.times
    n, m = times.shape
    cand = np.arange(m) if candidates is None else np.asarray(candidates, dtype=np.int64)
    if len(cand) == 0 or n == 0:
        return []
    avail = ~np.isnan(times)
    t_inf = np.where(avail, times, np.inf)
    oracle, worst = table.oracle, table.worst
    best = np.full(n, np.inf)
    chosen: list[int] = []
    current = -np.inf
    coverable = avail[:, cand].any(axis=1)
    for step in range(k):
        remaining = [j for j in cand if j not in chosen]
        if not remaining:
            break
        rem = np.asarray(remaining)
        uncovered = np.isinf(best) & coverable
        slots = k - step
        pool = rem
        if cover and uncovered.any() and _cover_size(avail[:, cand], uncovered,
                                                     [list(cand).index(j) for j in chosen]) == slots:
            gain = avail[uncovered][:, rem].sum(axis=0)
            pool = rem[gain == gain.max()]
        trial = np.minimum(best[:, None], t_inf[:, pool])
        eff = np.where(np.isinf(trial), worst[:, None], trial)
        scores = np.mean(-log_ratio(eff, oracle[:, None]), axis=0)
        j = int(np.argmax(scores))  # first best: deterministic (configs are sorted by name)
        if scores[j] <= current + 1e-12 and not uncovered.any() and chosen:
            break
        chosen.append(int(pool[j]))
        current = float(scores[j])
        best = np.minimum(best, t_inf[:, pool[j]])
    left = int((np.isinf(best) & coverable).sum())
    if left and cover:
        _LOG.info("portfolio of %d leaves %d shape(s) without an available config", len(chosen), left)
    return chosen


def best_single(table: ShapeTable) -> int:
    """Index of the config with the best geomean over the table's shapes (missing -> worst); -1 if
    the table is empty."""
    return (greedy_portfolio(table, 1, cover=False) or [-1])[0]


def portfolio_targets(table: ShapeTable, portfolio: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per shape: the label (position in ``portfolio`` of its fastest available member, -1 if
    none) and the log-regret matrix ``log(time / best portfolio time)`` (missing -> worst time)."""
    sub = table.times[:, list(portfolio)]
    eff = np.where(np.isnan(sub), table.worst[:, None], sub)
    avail = ~np.isnan(sub)
    label = np.where(avail.any(axis=1), np.argmin(np.where(avail, sub, np.inf), axis=1), -1)
    best = np.min(eff, axis=1)
    return label, log_ratio(eff, best[:, None])


__all__ = ["ShapeTable", "FamilyTable", "TrainError", "common_problems", "family_table", "build_table", "eligible_rows", "check_no_overlap", "one_method_per_problem", "effective_times", "picked_times", "best_of", "metrics",
           "geomean_score", "greedy_portfolio", "best_single", "portfolio_targets", "measured_smem", "configs_fit", "dyadic", "log_ratio", "geomean", "scalar_log", "scalar_exp", "scalar_pow2", "LOG_BITS"]

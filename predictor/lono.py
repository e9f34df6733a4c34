"""Leave-one-network-out evaluation: every network's layers scored by a model that never saw them.

    python -m predictor.lono SWEEP.parquet [SWEEP ...] [--kind class --kind repick] [--family F]
        [--target sm_87] [--max-portfolio 24] [--k-grid K ...] [--folds 5] [--seed 0] [--cv-tolerance 0] --out reports/lono
        [--groups 6] [--jobs 6] [--threads 3] [--parts DIR]

(``--jobs``: processes, one held-out fold each; ``--threads``: inner CV folds per process; ``--parts``: keep each
finished held-out fold so that a stopped run resumes; none of them changes the result.)

For every family (or choice of families, ``--family f16nhwc+f16nhwc90``: :mod:`predictor.model_key`;
its problems are those measured in every member, scored against the fastest config of all members)
and every network ``X`` (problems whose ``source`` is ``net:X``):

1. the held-out set is X's layers; the training set is every other problem of the family *except*
   any problem whose shape equals one of X's layers, whatever its source or SM count
   (:func:`lono_split`);
2. the hyper-parameters of each model kind (:mod:`predictor.fitting`) are chosen by grouped
   cross-validation inside that training set only, and the model is fitted on all of it, exactly as
   :mod:`predictor.train` fits a shipped model (:func:`predictor.fitting.fit_key`: a choice with a
   member that runs only some convolutions fits two models routed by ``pointwise``);
3. X's layers are scored: ``fastest time of the whole grid / time of the pick`` (a pick with no
   ok row counts the layer's worst time), with the bound of the model's own configs (the best of
   them on each layer) and the best single config of the training set.

Writes ``REPORT.md`` (per family: a row per network, all networks pooled, layers above and at or
below :data:`BIG_GFLOP` apart; the hyper-parameters of every fold) and ``layers.csv`` (one row per
layer and model kind).  Deterministic for given sweeps, options and library versions.
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
from typing import Any, NamedTuple, Sequence

import numpy as np
import pandas as pd

from .model_key import CLI_HELP, Key, cli_model_key, default_families, model_key
from .features import DEFAULT_FEATURE_SET, FEATURE_SETS, ConvProblem
from .fitting import (
    CV_GROUPS, CV_TOLERANCE, DEFAULT_KIND, DEPTH_GRID, KINDS, MAX_CANDIDATES, MIN_LEAF_GRID, WEIGHTINGS, base_keys,
    fit_key, model_ir, portfolio_sizes,
)
from .cli import setup_logging
from .portfolio import ShapeTable, TrainError, best_of, best_single, check_no_overlap, family_table, metrics, picked_times
from .report_header import header_lines
from .schema import SHAPE_COLUMNS, SweepFormatError, file_sha256, read_metadata, read_sweep
from .shapes import NET_PREFIX
from .targets import TARGETS

_LOG = logging.getLogger(__name__)

#: Layers above this many GFLOP are reported apart (the work bound of the first sweeps: no model
#: trained on them had seen a bigger problem).
BIG_GFLOP = 8.0
#: Run-to-run noise floor of the pick / fastest geomean (``sweeps/README.md``).
NOISE_FLOOR = 0.99


@dataclass(frozen=True)
class Settings:
    """What every fold's model is chosen from (the same grid as :mod:`predictor.train`)."""

    kinds: tuple[str, ...] = ("class", DEFAULT_KIND)
    max_portfolio: int = 24
    #: portfolio sizes to cross-validate (empty: predictor.train's default grid)
    k_sizes: tuple[int, ...] = ()
    folds: int = 5
    seed: int = 0
    tolerance: float = CV_TOLERANCE
    depth_grid: tuple[int, ...] = DEPTH_GRID
    min_leaf_grid: tuple[int, ...] = MIN_LEAF_GRID
    weightings: tuple[str, ...] = WEIGHTINGS
    #: networks dealt into this many groups, each held out together (0: one network at a time)
    groups: int = 0
    #: what the inner CV keeps in one fold (:data:`predictor.fitting.CV_GROUPS`); out of ``repr`` (which names a
    #: kept fold) unless changed, so folds kept before it existed are still found
    cv_groups: str = field(default="problem", repr=False)
    #: the features the trees read (:data:`predictor.features.FEATURE_SETS`); the kept folds' names hash them
    features: str = field(default=DEFAULT_FEATURE_SET, repr=False)

    @property
    def k_grid(self) -> list[int]:
        return portfolio_sizes(self.k_sizes, self.max_portfolio)


def _catalog_keys() -> dict[str, frozenset[str]]:
    """Problem keys of every catalog network (:func:`predictor.shapes.network_index`): a layer
    that several networks share is named after one of them in a sweep, but belongs to all."""
    from .shapes import network_index

    out: dict[str, set[str]] = {}
    for p, nets in network_index().items():
        for n in nets:
            out.setdefault(n, set()).add(p.key)
    return {n: frozenset(k) for n, k in out.items()}


def members(table: ShapeTable, network: str) -> np.ndarray:
    """Rows of ``table`` that are layers of ``network``: its ``net:`` source or a catalog layer of it."""
    own = np.asarray(table.sources == NET_PREFIX + network)
    keys = _catalog_keys().get(network)
    return own | np.isin(base_keys(table.keys), list(keys)) if keys else own


def networks(table: ShapeTable) -> list[str]:
    """Names of the networks with layers in ``table`` (sources ``net:<name>``), sorted; each one's
    layers are :func:`members`."""
    return sorted({str(s)[len(NET_PREFIX):] for s in table.sources if str(s).startswith(NET_PREFIX)})


def lono_split(table: ShapeTable, network: str | Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(training rows, held-out rows) of ``table`` for holding out ``network`` (a name, or a group
    of names held out together): held out are their layers (every SM count; :func:`members`);
    training are all other rows whose shape (key without ``@sm``) is none of theirs."""
    names = [network] if isinstance(network, str) else list(network)
    test = np.zeros(table.n_shapes, dtype=bool)
    for n in names:
        m = members(table, n)
        if not m.any():
            raise TrainError(f"no layer of network {n!r} in the table")
        test |= m
    base = base_keys(table.keys)
    train = ~np.isin(base, base[test])
    return np.nonzero(train)[0], np.nonzero(test)[0]


def network_groups(names: Sequence[str], n_groups: int) -> list[list[str]]:
    """``names`` dealt round-robin (sorted) into ``n_groups`` groups held out together; 0 or at
    least ``len(names)``: one network a group (plain leave-one-network-out)."""
    names = sorted(names)
    if n_groups <= 0 or n_groups >= len(names):
        return [[n] for n in names]
    return [names[i::n_groups] for i in range(n_groups)]


def gflop(shapes: pd.DataFrame) -> np.ndarray:
    """GFLOP of every problem (``predictor.features.ConvProblem.flops``)."""
    return np.array([ConvProblem(*(int(r[c]) for c in SHAPE_COLUMNS)).flops / 1e9
                     for r in shapes[SHAPE_COLUMNS].to_dict("records")])


def evaluate_network(table: ShapeTable, X: np.ndarray, network: str | Sequence[str], settings: Settings,
                     family: str = "", threads: int = 1) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Hold out ``network`` (or a group of networks together) of one family's ``table`` (features
    ``X``): (per-layer score records, one per network a layer belongs to; per-kind choice records);
    ``threads``: inner CV folds fitted in parallel (same result)."""
    group = [network] if isinstance(network, str) else list(network)
    partial = model_key(family).partial if family else ()
    tr, te = lono_split(table, group)
    member_of = {n: set(np.nonzero(members(table, n))[0]) for n in group}
    train_t, test_t = table.subset(tr), table.subset(te)
    flops = gflop(test_t.shapes)
    index = {c: j for j, c in enumerate(table.configs)}
    single_t = picked_times(test_t, np.full(len(te), best_single(train_t)))
    layers, folds = [], []
    for kind in settings.kinds:
        t0 = time.time()
        cv, fitted = fit_key(train_t, X[tr], kind, partial=partial, k_grid=settings.k_grid,
                             depth_grid=settings.depth_grid, min_leaf_grid=settings.min_leaf_grid,
                             weightings=settings.weightings, folds=settings.folds, seed=settings.seed,
                             tolerance=settings.tolerance, threads=threads, cv_groups=settings.cv_groups)
        picks = np.array([index[c] for c in fitted.model.predict(X[te])])
        # first-call tuning: the fastest of the candidates of the leaf each layer lands in (the exported
        # IR's leaves, as the dispatcher's tuned mode times them; its label is the pick, the first one)
        ir = model_ir(fitted.model, fitted.classes)
        cands = [ir.candidates(x) for x in X[te].tolist()]
        assert all(c[0] == table.configs[p] for c, p in zip(cands, picks))
        width = max(len(c) for c in cands)
        cand_t = np.stack([picked_times(test_t, np.array([index[c[min(j, len(c) - 1)]] for c in cands]))
                           for j in range(width)], axis=1)
        tuned_t = cand_t.min(axis=1)
        bound = best_of(test_t, fitted.classes)
        k, weighting, min_leaf, depth = cv.chosen
        folds.append({"family": family, "network": " ".join(group), "kind": kind, "train": len(tr),
                      "excluded_same_shape": int(table.n_shapes - len(tr) - len(te)), "layers": len(te),
                      "k": k, "weighting": weighting, "min_samples_leaf": min_leaf, "max_depth": depth,
                      "configs": len(fitted.classes), "cv_geomean": round(cv.scores[cv.chosen], 5)})
        _LOG.info("%s / %s / %s: %d training problems, chose %s, %d configs (%.1fs)", family, " ".join(group), kind,
                  len(tr), cv.chosen, len(fitted.classes), time.time() - t0)
        pick_t = picked_times(test_t, picks)
        for i, row in enumerate(te):
            for network in (n for n in group if row in member_of[n]):
                layers.append({"family": family, "network": network, "kind": kind, "shape_key": table.keys[row],
                               **{c: int(table.shapes.at[row, c]) for c in (*SHAPE_COLUMNS, "sms")},
                               "gflop": round(float(flops[i]), 6), "fastest_us": test_t.oracle[i],
                               "pick": table.configs[picks[i]], "pick_us": pick_t[i],
                               "score": test_t.oracle[i] / pick_t[i],
                               "tuned": test_t.oracle[i] / tuned_t[i], "candidates": len(cands[i]),
                               "bound": test_t.oracle[i] / bound[i],
                               "best_single": test_t.oracle[i] / single_t[i]})
    return layers, folds


def _task(args: tuple[ShapeTable, np.ndarray, list[str], Settings, str, int]
          ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return evaluate_network(*args)


def _one_openmp_thread() -> None:
    """A ``--jobs`` worker's start: one OpenMP / BLAS thread, so that the processes (and their ``threads``)
    share the cores instead of each spinning up a pool of its own (oversubscribed OpenMP crawls)."""
    import sklearn.ensemble  # noqa: F401  (loads the OpenMP runtime, so that the limit below finds it)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)


def _part_path(parts: Path, task: tuple[ShapeTable, np.ndarray, list[str], Settings, str, int], i: int) -> Path:
    """Where held-out group ``i``'s records are kept: named by its family, position and a hash of
    everything its result depends on (the table's problems, configs and times, the features, the
    group and the settings), so a stale part is never reused."""
    import hashlib

    table, X, group, settings, family, _ = task
    h = hashlib.sha256()
    for a in (np.asarray(table.keys).astype(str), np.asarray(table.configs).astype(str), table.times, X):
        h.update(np.ascontiguousarray(a).tobytes())
    extra = () if settings.cv_groups == "problem" else (settings.cv_groups,)
    h.update(repr((group, settings, family, *extra)).encode())
    return parts / f"{family.replace('+', '_')}-g{i}-{h.hexdigest()[:16]}.json"


def _run_tasks(tasks: list[tuple[ShapeTable, np.ndarray, list[str], Settings, str, int]], jobs: int,
               parts: Path | None, only: Sequence[int] | None = None
               ) -> tuple[list[tuple[list[dict[str, Any]], list[dict[str, Any]]]], int]:
    """(every task's records, in task order; how many were read from ``parts``): with ``parts``, each
    finished task's records are written there as it completes and a task already there is read instead
    of run (a run stopped part-way resumes). With ``only``, just those tasks are run (into ``parts``)
    and the records returned are theirs and any other task already kept."""
    import json

    paths = [_part_path(parts, t, i) if parts else None for i, t in enumerate(tasks)]
    done: dict[int, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
    for i, path in enumerate(paths):
        if path is not None and path.is_file():
            layers, folds = json.loads(path.read_text())
            done[i] = (layers, folds)
            _LOG.info("held-out group %d: read from %s", i, path)

    def keep(i: int, result: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
        done[i] = result
        path = paths[i]
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(result, default=lambda o: o.item()))  # numpy scalars
            tmp.replace(path)

    todo = [i for i in range(len(tasks)) if i not in done and (only is None or i in only)]
    n_read = len(done)
    if jobs > 1 and len(todo) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        # spawned, not forked: a child forked after the parent ran OpenMP (scikit-learn's histogram
        # gradient boosting, the cost teacher) hangs in its first OpenMP region
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=spawn,
                                 initializer=_one_openmp_thread) as pool:
            futures = {pool.submit(_task, tasks[i]): i for i in todo}
            for fut in as_completed(futures):
                keep(futures[fut], fut.result())
    else:
        for i in todo:
            keep(i, _task(tasks[i]))
    return [done[i] for i in range(len(tasks)) if i in done], n_read


class FamilyResult(NamedTuple):
    """One model key's leave-network-out result: per-layer scores, per-fold choices, and how many of its
    held-out folds were read from ``--parts`` (computed by an earlier run) of how many."""

    layers: pd.DataFrame
    folds: pd.DataFrame
    folds_read: int
    folds_total: int


def evaluate_family(df: pd.DataFrame, family: Key, settings: Settings, target: str | None = None,
                    jobs: int = 1, threads: int = 1, parts: Path | None = None,
                    only: Sequence[int] | None = None) -> FamilyResult:
    """Every network of ``family`` (a family or a choice, :mod:`predictor.model_key`) held out in turn (or, with ``settings.groups``, that many groups
    of networks, each held out together: stricter, and fewer models to fit): (per-layer scores,
    per-fold choices); ``jobs`` processes share the folds, each fitting ``threads`` inner CV folds at once
    (the result depends on neither); ``parts``: a folder that keeps each finished fold, so that a run
    stopped part-way resumes where it stopped; ``only``: compute just these held-out folds (0-based) into
    ``parts``, to share one run between machines (the result then holds only the folds kept so far)."""
    table = family_table(df, family, target).table
    X = table.features().to_numpy(dtype=np.int64)[:, :len(FEATURE_SETS[settings.features])]
    tasks = [(table, X, g, settings, family.value, threads) for g in network_groups(networks(table), settings.groups)]
    if only is not None and parts is None:
        raise TrainError("--only-folds needs --parts")
    if only is not None and any(not 0 <= i < len(tasks) for i in only):
        raise TrainError(f"--only-folds {list(only)}: folds in 0..{len(tasks) - 1}")
    results, n_read = _run_tasks(tasks, jobs, parts, only)
    return FamilyResult(pd.DataFrame([r for p in results for r in p[0]]), pd.DataFrame([r for p in results for r in p[1]]),
                        n_read, len(tasks))


# --------------------------------------------------------------------------- report
def _summ(d: pd.DataFrame, col: str) -> dict[str, float] | None:
    """Metrics of the scores ``d[col]``; None (a ``–`` cell) for no layers or where a layer has none."""
    return metrics(np.ones(len(d)), 1.0 / d[col].to_numpy()) if len(d) and d[col].notna().all() else None


def _cell(m: dict[str, float] | None, worst: bool = True) -> str:
    if not m:
        return "–"
    return f"{m['geomean']:.3f} / {m['p10']:.3f}" + (f" / {m['worst']:.3f}" if worst else "")


def groups(d: pd.DataFrame, big_gflop: float = BIG_GFLOP) -> list[tuple[str, pd.DataFrame]]:
    """Row groups of a family's table: each network, all networks, above and at or below ``big_gflop``."""
    out = [(f"`{n}`", g) for n, g in d.groupby("network", sort=True)]
    out.append(("**all networks**", d))
    out.append((f"> {big_gflop:g} GFLOP", d[d["gflop"] > big_gflop]))
    out.append((f"≤ {big_gflop:g} GFLOP", d[d["gflop"] <= big_gflop]))
    if d["sms"].nunique() > 1:  # several SM counts (partitions): each apart, and its big layers
        for sms, g in d.groupby("sms", sort=True):
            out.append((f"{sms} SMs", g))
            out.append((f"{sms} SMs, > {big_gflop:g} GFLOP", g[g["gflop"] > big_gflop]))
    return out


def report_markdown(layers: pd.DataFrame, folds: pd.DataFrame, *, command: str, sweeps: Sequence[tuple[Path, str]],
                    settings: Settings, seconds: float, big_gflop: float = BIG_GFLOP, resumed: str = "",
                    generator: str = "predictor.lono", kinds_line: str = "") -> str:
    """REPORT.md text from the per-layer and per-fold frames; ``resumed``: what of it an earlier run computed;
    ``generator``, ``kinds_line``: another module's report of these tables (its name, how its models were chosen)."""
    kinds = list(settings.kinds)
    date = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d")
    lines = [
        *header_lines("Leave-one-network-out evaluation", generator, command,
                      f"{date}; wall time {seconds / 60:.1f} min" + (f" ({resumed})" if resumed else "")),
        *[f"- sweep `{p}` sha256 `{file_sha256(p)}` ({gpu})" for p, gpu in sweeps],
        kinds_line or f"- model kinds (`predictor.fitting`): {', '.join(f'`{k}`' for k in kinds)}; hyper-parameters of every "
        f"fold chosen by {settings.folds}-fold grouped CV inside its training set (depth, min_samples_leaf, "
        f"weighting; k from {settings.k_grid}; tolerance {settings.tolerance}), as predictor.train chooses them"
        + (f" except k, which it searches in {portfolio_sizes(None, settings.max_portfolio)}" if settings.k_sizes else "")
        + (" and except the CV's groups: each network's layers kept in one fold (`--cv-groups network`), where it "
           "keeps each problem" if settings.cv_groups != "problem" else "")
        + (f"; the trees read the feature set `{settings.features}` (`--features`)"
           if settings.features != DEFAULT_FEATURE_SET else "")
        + (f"; tree depths searched: {list(settings.depth_grid)} (`--depth-grid`; predictor.train's: {list(DEPTH_GRID)})"
           if settings.depth_grid != DEPTH_GRID else ""),
        ("- held out: one network's layers" if settings.groups <= 0 else
         f"- held out: the networks dealt (sorted, round-robin) into {settings.groups} groups, each group's layers "
         "together (every network's layers are scored by a model that saw neither it nor the rest of its group)")
        + " (`source == net:<name>`, and the catalog layers it shares with networks named earlier in the sweep); "
        "also left out of training: every problem whose shape equals one of them (any source, any SM count). "
        "A layer shared by several networks is scored in each",
        "- score of a layer = fastest time of the whole grid / time of the pick (a pick with no ok row: the "
        "layer's worst time); cells are geomean / P10 / worst over the layers; **bound** = the best of the "
        "model's own configs on each layer (what a perfect leaf choice among them would score); "
        "best single = the training set's best single config; **tuned** = the first-call tuning of the "
        "dispatcher's tuned mode: the fastest (in the same sweep times) of the up to "
        f"{MAX_CANDIDATES} candidates of the leaf the layer lands in (its label, the pick, first; then the "
        "model's configs of least summed regret over the leaf's training problems)",
        f"- noise floor: re-measuring the same problems scores the first run's winners at about "
        f"{NOISE_FLOOR} geomean (`sweeps/README.md`): figures above it are within measurement noise",
        "",
        "## Summary: every network pooled",
        "",
        "| family | model | layers | geomean / P10 / worst | tuned | bound (geomean / P10) | "
        f"> {big_gflop:g} GFLOP: layers, geomean / P10 / worst | > {big_gflop:g} GFLOP, tuned |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for fam, d in layers.groupby("family", sort=False):
        for kind in kinds:
            dk = d[d["kind"] == kind]
            big = dk[dk["gflop"] > big_gflop]
            lines.append(f"| {fam} | `{kind}` | {len(dk)} | {_cell(_summ(dk, 'score'))} | {_cell(_summ(dk, 'tuned'))} | "
                         f"{_cell(_summ(dk, 'bound'), False)} | {len(big)}: {_cell(_summ(big, 'score'))} | "
                         f"{_cell(_summ(big, 'tuned'))} |")
    for fam, d in layers.groupby("family", sort=False):
        head = " | ".join(f"`{k}`" for k in kinds)
        lines += ["", f"## {fam}", "",
                  f"| layers of | layers | {head} | {' | '.join(f'tuned `{k}`' for k in kinds)} | "
                  f"{' | '.join(f'bound `{k}`' for k in kinds)} | best single |",
                  "|---|---|" + "---|" * (3 * len(kinds) + 1)]
        for name, g in groups(d, big_gflop):
            cells = [_cell(_summ(g[g["kind"] == k], "score")) for k in kinds]
            tuned = [_cell(_summ(g[g["kind"] == k], "tuned")) for k in kinds]
            bounds = [_cell(_summ(g[g["kind"] == k], "bound"), False) for k in kinds]
            single = _cell(_summ(g[g["kind"] == kinds[0]], "best_single"))
            lines.append(f"| {name} | {len(g) // len(kinds)} | {' | '.join(cells)} | {' | '.join(tuned)} | "
                         f"{' | '.join(bounds)} | {single} |")
    lines += ["", "## Chosen per fold", "",
              "| family | held out | model | training problems (same-shape excluded) | k | weighting | "
              "min leaf | depth | configs | CV geomean |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in folds.itertuples(index=False):
        lines.append(f"| {r.family} | `{r.network}` | `{r.kind}` | {r.train} ({r.excluded_same_shape}) | {r.k} | "
                     f"{r.weighting} | {r.min_samples_leaf} | {r.max_depth} | {r.configs} | {r.cv_geomean:.4f} |")
    lines += ["", "`layers.csv`: one row per (family, model, layer): the layer, its GFLOP, the fastest and "
              "picked times (µs), the pick, score, tuned score (and the leaf's number of candidates), bound and "
              "best-single score."]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- CLI
def load_sweeps(paths: Sequence[Path]) -> tuple[pd.DataFrame, list[tuple[Path, str]]]:
    """Read and concatenate sweeps (several SM counts of one GPU make ``sms`` a feature); also
    (path, "GPU names, SM counts") of each file."""
    frames = [read_sweep(p) for p in paths]
    for p in paths:
        if read_metadata(p).get("synthetic"):
            _LOG.warning("%s is a SYNTHETIC sweep: its figures are not measurements", p)
    described = [(p, ", ".join(sorted(set(f["gpu"].astype(str)))) + "; sms "
                  + ", ".join(str(v) for v in sorted(set(f["sms"].astype(int))))) for p, f in zip(paths, frames)]
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if df.empty:
        raise TrainError("the sweep has no rows")
    if len(frames) > 1:
        check_no_overlap(df)
    return df, described


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m predictor.lono", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sweep", type=Path, nargs="+", help="sweep parquet file(s), as for predictor.train")
    p.add_argument("--out", type=Path, required=True, help="output directory (REPORT.md, layers.csv)")
    p.add_argument("--kind", choices=KINDS, action="append",
                   help=f"model kind to evaluate (repeatable; default: class and {DEFAULT_KIND})")
    p.add_argument("--family", type=cli_model_key, action="append", metavar="FAMILY",
                   help="only this model key (repeatable; default: every family in the sweeps that runs every "
                        "convolution): " + CLI_HELP)
    p.add_argument("--target", choices=list(TARGETS), default=None, help="restrict configs as predictor.train does")
    p.add_argument("--max-portfolio", type=int, default=Settings.max_portfolio, help="largest k considered")
    p.add_argument("--k-grid", type=int, nargs="+", default=(), metavar="K",
                   help="portfolio sizes to cross-validate (default: predictor.train's; --k-grid 24 fits a ninth of "
                        "the trees, and is the same choice wherever the CV of every k would choose 24)")
    p.add_argument("--folds", type=int, default=Settings.folds, help="inner GroupKFold splits")
    p.add_argument("--seed", type=int, default=Settings.seed)
    p.add_argument("--cv-tolerance", type=float, default=Settings.tolerance)
    p.add_argument("--cv-groups", choices=CV_GROUPS, default="problem",
                   help="what the inner CV keeps in one fold: each problem (as predictor.train), or also each "
                        "network's layers")
    p.add_argument("--features", choices=list(FEATURE_SETS), default=DEFAULT_FEATURE_SET,
                   help="the features the trees read, as predictor.train --features")
    p.add_argument("--depth-grid", type=int, nargs="+", default=DEPTH_GRID, metavar="D",
                   help="tree depths to cross-validate (default: predictor.train's; an experiment's grid)")
    p.add_argument("--big-gflop", type=float, default=BIG_GFLOP, help="layers above this are reported apart")
    p.add_argument("--groups", type=int, default=0,
                   help="hold out the networks in this many groups, each group together (stricter than one at "
                        "a time, and fewer models to fit); 0: one network at a time")
    p.add_argument("--jobs", type=int, default=1, help="processes (held-out folds in parallel; same result)")
    p.add_argument("--threads", type=int, default=1,
                   help="threads per process (inner CV folds in parallel; same result)")
    p.add_argument("--parts", type=Path, default=None,
                   help="keep each finished held-out fold in this folder; a run stopped part-way and started "
                        "again with the same inputs resumes there (same result)")
    p.add_argument("--only-folds", type=int, nargs="+", default=None, metavar="I",
                   help="with --parts: compute only these held-out folds (0-based: groups, or networks with "
                        "--groups 0) into --parts and write no report (to share one run between machines; a later "
                        "run without it reads them)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; raises ``SystemExit`` with a message on unusable input."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    setup_logging()
    if args.max_portfolio < 1:
        raise SystemExit("predictor.lono: --max-portfolio must be >= 1")
    if min(args.depth_grid) < 1:
        raise SystemExit("predictor.lono: --depth-grid depths must be >= 1")
    kinds = tuple(dict.fromkeys(args.kind or ("class", DEFAULT_KIND)))
    settings = Settings(kinds=kinds, max_portfolio=args.max_portfolio, k_sizes=tuple(args.k_grid), folds=args.folds,
                        seed=args.seed, groups=args.groups, tolerance=args.cv_tolerance, cv_groups=args.cv_groups,
                        features=args.features, depth_grid=tuple(sorted(set(args.depth_grid))))
    command = "python -m predictor.lono " + " ".join(shlex.quote(a) for a in argv)
    t0 = time.time()
    try:
        df, described = load_sweeps(args.sweep)
        present = sorted(set(df["family"].astype(str)))
        fams = args.family or default_families(present)
        keys = [model_key(f) for f in fams]
        missing = sorted({m.value for k in keys for m in k.families} - set(present))
        if missing:
            raise TrainError(f"no rows of family {missing} (present: {present})")
        parts = [evaluate_family(df, k, settings, args.target, args.jobs, args.threads, args.parts,
                                 args.only_folds) for k in keys]
    except (SweepFormatError, TrainError, FileNotFoundError) as exc:
        raise SystemExit(f"predictor.lono: error: {exc}") from exc
    if args.only_folds is not None:
        _LOG.info("kept held-out folds %s in %s; no report written", args.only_folds, args.parts)
        return 0
    layers = pd.concat([p.layers for p in parts], ignore_index=True)
    folds = pd.concat([p.folds for p in parts], ignore_index=True)
    n_read, n_total = sum(p.folds_read for p in parts), sum(p.folds_total for p in parts)
    args.out.mkdir(parents=True, exist_ok=True)
    layers.to_csv(args.out / "layers.csv", index=False, float_format="%.6g")
    text = report_markdown(layers, folds, command=command, sweeps=described, settings=settings,
                           seconds=time.time() - t0, big_gflop=args.big_gflop,
                           resumed=f"{n_read} of the {n_total} held-out folds read from `{args.parts}`, computed "
                                   "by an earlier run" if n_read else "")
    (args.out / "REPORT.md").write_text(text)
    _LOG.info("wrote %s and %s (%.1f min)", args.out / "REPORT.md", args.out / "layers.csv", (time.time() - t0) / 60)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

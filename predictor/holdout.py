"""The shipped models scored on network layers the project never trained on.

    python -m predictor.holdout SWEEP [SWEEP ...] --layers-dir bench/holdout/layers [--gpu h200]
        [--family KEY ...] [--models-dir DIR --run h200] --out reports/holdout

``SWEEP``: whole-grid sweeps of held-out layers (``python -m predictor.collect --layers ...``, every
config of each family measured); ``--layers-dir``: their ``--layers`` CSVs, one per network
(``python -m predictor.layers``), which name the networks each layer belongs to.  Every model key of
the shipped run ``--gpu`` (:data:`predictor.shipped.SHIPPED_RUNS`: its families and choices) whose
families were all swept is scored as shipped (``models/<gpu>-<key>.tree.json``, no refit):

* score of a layer = fastest time of the key's whole grid / time of the config the shipped dispatcher
  runs: the pick, or where the pick's kernel cannot implement the layer (``cannot_implement``, e.g. an
  SM80 kernel on a tensor of 2 GiB or more) the next of the leaf's candidates, then (a choice) its member
  families' own models' picks, then the model's other configs in order, as the generated dispatchers do
  (:func:`dispatched`; a config with no ok row counts the layer's worst time); **tuned** = the fastest of
  the pick's leaf candidates whose kernels take the layer (first-call tuning; none: what the static path
  runs);
  **bound** = the best of the model's own configs;
* each layer is marked **new shape** when no training sweep of the run holds its shape (any source).

``--models-dir DIR --run h200`` scores models that are not shipped (an experiment's, trained as the run
``h200`` under the slug ``--gpu``, e.g. ``predictor.train --slug``) the same way.

Writes ``REPORT.md`` (per key: a row per network, all layers, new shapes, above and at or below 8
GFLOP) and ``layers.csv``.  Deterministic for given files.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import logging
import shlex
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .cli import setup_logging
from .lono import BIG_GFLOP, NET_PREFIX, _cell, _summ, gflop, load_sweeps
from .model_key import CLI_HELP, Key, cli_model_key, members_with_models, model_key
from .portfolio import TrainError, best_of, family_table, picked_times
from .report_header import header_lines
from .resources import models_dir, source_root
from .schema import SHAPE_COLUMNS, SweepFormatError, file_sha256
from .selector import LoadedModel, load_model, model_path
from .shapes import read_layers_csv
from .tree_ir import TreeIR

_LOG = logging.getLogger(__name__)


def layer_networks(layers_dir: Path) -> dict[str, list[str]]:
    """shape_key -> the networks (CSV ``network`` column, else file stem) whose layer it is."""
    out: dict[str, list[str]] = {}
    files = sorted(layers_dir.glob("*.csv"))
    if not files:
        raise FileNotFoundError(f"no layer CSV in {layers_dir}")
    for f in files:
        for s in read_layers_csv(f):
            name = s.source[len(NET_PREFIX):] if s.source.startswith(NET_PREFIX) else f.stem
            nets = out.setdefault(s.problem.key, [])
            if name not in nets:
                nets.append(name)
    return out


def training_keys(paths: Sequence[Path]) -> dict[str, set[str]]:
    """family -> shape keys of every problem in the training sweeps (any source, any SM count)."""
    out: dict[str, set[str]] = {}
    for p in paths:
        d = pd.read_parquet(p, columns=["family", "shape_key"]).drop_duplicates()
        for fam, g in d.groupby("family"):
            out.setdefault(str(fam), set()).update(g["shape_key"].astype(str))
    return out


def cannot_implement(df: pd.DataFrame, key: Key) -> dict[str, set[str]]:
    """Per shape key, the configs of ``key``'s families whose kernels refused the problem (``cannot_implement``)."""
    rows = df[(df["status"].astype(str) == "cannot_implement") & df["family"].isin([f.value for f in key.families])]
    out: dict[str, set[str]] = {}
    for k, c in zip(rows["shape_key"].astype(str), rows["config"].astype(str)):
        out.setdefault(k, set()).add(c)
    return out


def dispatched(candidates: Sequence[str], configs: Sequence[str], refused: set[str],
               members: Sequence[str] = ()) -> str:
    """The config a generated dispatcher runs: the first of the leaf's ``candidates``, then of ``members`` (a
    choice's members' own picks, :func:`predictor.dispatcher.member_models`), then of the model's other ``configs``
    in order, whose kernel does not refuse the problem (the pick when all refuse)."""
    for c in dict.fromkeys((*candidates, *(m for m in members if m in configs), *configs)):
        if c not in refused:
            return c
    return candidates[0]


def member_models(gpu: str, key: Key, models: Path | None = None) -> list[LoadedModel]:
    """The models of a choice's member families that the run holds (:func:`_path`;
    :func:`predictor.model_key.members_with_models`), in family order: their picks are the dispatchers' fall-back
    after the leaf's candidates."""
    return [_model(gpu, model_key(f), models)
            for f in members_with_models(key, lambda f: _path(gpu, model_key(f), models).is_file())]


def score_key(df: pd.DataFrame, key: Key, gpu: str, nets: dict[str, list[str]], trained: dict[str, set[str]],
              target: str | None = None, models: Path | None = None) -> pd.DataFrame:
    """One row per (layer, network) of ``key``'s held-out table, scored with the shipped model of slug ``gpu``
    (``models``: ``<gpu>-<key>.tree.json`` of that folder instead)."""
    table = family_table(df, key, target).table
    model = _model(gpu, key, models)
    X = table.features().to_numpy(dtype=np.int64).tolist()
    index = {c: j for j, c in enumerate(table.configs)}
    missing = sorted(set(model.ir.classes) - set(index))
    if missing:
        _LOG.warning("%s: %d shipped config(s) not in the held-out sweep count the layer's worst time: %s",
                     key.value, len(missing), missing)
    col = lambda name: index.get(name, -1)  # noqa: E731  (picked_times: -1 -> the layer's worst time)
    cands = [model.ir.candidates(x) for x in X]
    refused = cannot_implement(df, key)
    refusing = [refused.get(str(k), set()) for k in table.keys]
    members = member_models(gpu, key, models)
    member_picks = [[m.ir.predict(x) for m in members] for x in X]
    runs = [dispatched(c, model.ir.classes, no, mp) for c, no, mp in zip(cands, refusing, member_picks)]
    pick_t = picked_times(table, np.array([col(r) for r in runs]))
    # first-call tuning times the leaf's candidates whose kernels take the layer, else runs as the static path
    tried = [[c for c in cs if c not in no] or [r] for cs, no, r in zip(cands, refusing, runs)]
    width = max(len(c) for c in tried)
    tuned_t = np.min(np.stack([picked_times(table, np.array([col(c[min(j, len(c) - 1)]) for c in tried]))
                               for j in range(width)], axis=1), axis=1)
    bound = best_of(table, model.ir.classes)
    flops = gflop(table.shapes)
    seen = set().union(*(trained.get(f.value, set()) for f in key.families))
    rows: list[dict[str, Any]] = []
    for i, k in enumerate(table.keys):
        for net in nets.get(str(k), [str(table.sources[i])[len(NET_PREFIX):]]):
            rows.append({"model": key.value, "network": net, "shape_key": k,
                         **{c: int(table.shapes.at[i, c]) for c in (*SHAPE_COLUMNS, "sms")},
                         "gflop": round(float(flops[i]), 6), "new_shape": str(k) not in seen,
                         "fastest_us": table.oracle[i], "pick": cands[i][0], "runs": runs[i], "pick_us": pick_t[i],
                         "score": table.oracle[i] / pick_t[i], "tuned": table.oracle[i] / tuned_t[i],
                         "bound": table.oracle[i] / bound[i]})
    return pd.DataFrame(rows)


def report_markdown(layers: pd.DataFrame, *, command: str, sweeps: Sequence[tuple[Path, str]],
                    models: Sequence[Path], big_gflop: float = BIG_GFLOP) -> str:
    """The report (module docstring) of :func:`score_key` rows."""
    lines = header_lines("The shipped models on held-out networks", "predictor.holdout", command,
                         _dt.date.today().isoformat())
    lines += [f"- sweep `{p}` sha256 `{file_sha256(p)}` ({what})" for p, what in sweeps]
    lines += [f"- model `{p}` sha256 `{file_sha256(p)}`" for p in models]
    lines += ["- score of a layer = fastest time of the whole grid / time of the shipped pick (where its kernel cannot "
              "implement the layer, of the config the generated dispatcher falls back to: the next of the leaf's "
              "candidates, then a choice's members' own picks, then the model's other configs, column `runs` of "
              "layers.csv); **tuned** = the "
              "fastest of the leaf's candidates whose kernels take the layer (first-call tuning; none: what the "
              "static path runs); **bound** = the best of the model's own "
              "configs; **new shapes** = layers whose shape is in no training sweep of the shipped run; a layer "
              "of several networks counts once per network in their rows, once in the pooled rows; cells are "
              "geomean / P10 / worst", "", "## Summary", "",
              "| model | layers | geomean / P10 / worst | tuned | bound | new shapes: layers, score | tuned | "
              f"> {big_gflop:g} GFLOP: layers, score | tuned |", "|---|---|---|---|---|---|---|---|---|"]
    for key, d in layers.groupby("model", sort=False):
        u = d.drop_duplicates("shape_key")
        new, big = u[u["new_shape"]], u[u["gflop"] > big_gflop]
        lines.append(f"| {key} | {len(u)} | {_cell(_summ(u, 'score'))} | {_cell(_summ(u, 'tuned'))} | "
                     f"{_cell(_summ(u, 'bound'), worst=False)} | {len(new)}: {_cell(_summ(new, 'score'))} | "
                     f"{_cell(_summ(new, 'tuned'))} | {len(big)}: {_cell(_summ(big, 'score'))} | "
                     f"{_cell(_summ(big, 'tuned'))} |")
    for key, d in layers.groupby("model", sort=False):
        u = d.drop_duplicates("shape_key")
        lines += ["", f"## {key}", "", "| layers of | layers | shipped pick | tuned | bound |", "|---|---|---|---|---|"]
        parts = [(f"`{n}`", g) for n, g in d.groupby("network", sort=True)]
        parts += [("**all layers**", u), ("new shapes", u[u["new_shape"]]),
                  (f"> {big_gflop:g} GFLOP", u[u["gflop"] > big_gflop]), (f"≤ {big_gflop:g} GFLOP", u[u["gflop"] <= big_gflop])]
        for name, g in parts:
            lines.append(f"| {name} | {len(g)} | {_cell(_summ(g, 'score'))} | {_cell(_summ(g, 'tuned'))} | "
                         f"{_cell(_summ(g, 'bound'), worst=False)} |")
    lines += ["", "`layers.csv`: one row per (model, network, layer): the layer, GFLOP, whether its shape is new, "
              "fastest and picked times (µs), the pick, score, tuned and bound."]
    return "\n".join(lines) + "\n"


def _model(gpu: str, key: Key, models: Path | None) -> LoadedModel:
    if models is None:
        return load_model(gpu, key)
    path = _path(gpu, key, models)
    return LoadedModel.from_ir(TreeIR.load(path), str(path))


def _path(gpu: str, key: Key, models: Path | None) -> Path:
    return model_path(gpu, key) if models is None else models / f"{gpu}-{key.value}.tree.json"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m predictor.holdout", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sweep", type=Path, nargs="+", help="whole-grid sweeps of the held-out layers")
    p.add_argument("--layers-dir", type=Path, required=True, help="the held-out layers' CSVs, one per network")
    p.add_argument("--gpu", default="h200", help="shipped run (models/<gpu>-<key>.tree.json) to score")
    p.add_argument("--models-dir", type=Path, help="score <DIR>/<gpu>-<key>.tree.json instead (models not shipped)")
    p.add_argument("--run", help="the shipped run those models were trained as (its sweeps mark the new shapes, its "
                                 "target picks the rows; default: --gpu)")
    p.add_argument("--family", type=cli_model_key, action="append", metavar="FAMILY",
                   help="only this model key (repeatable; default: the run's keys whose families were swept): "
                        + CLI_HELP)
    p.add_argument("--big-gflop", type=float, default=BIG_GFLOP, help="layers above this are reported apart")
    p.add_argument("--out", type=Path, required=True, help="output directory (REPORT.md, layers.csv)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; raises ``SystemExit`` with a message on unusable input."""
    from .shipped import SHIPPED_RUNS

    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    setup_logging()
    runs = {r.slug: r for r in SHIPPED_RUNS}
    if (args.run or args.gpu) not in runs:
        which = f"--run {args.run!r}" if args.run else f"--gpu {args.gpu!r}"
        raise SystemExit(f"predictor.holdout: error: {which} is not a shipped run ({sorted(runs)})")
    run = runs[args.run or args.gpu]
    root = source_root()
    try:
        df, described = load_sweeps(args.sweep)
        present = set(df["family"].astype(str))
        run_fams = sorted({str(f) for p in run.sweeps for f in pd.read_parquet(root / p, columns=["family"])["family"].unique()})
        keys = [model_key(k) for k in (args.family or (*run_fams, *run.choices))]
        if not args.family:  # the run's shipped models whose families were all swept
            keys = [k for k in keys if all(f.value in present for f in k.families)
                    and _path(args.gpu, k, args.models_dir).exists()]
        if not keys:
            raise TrainError(f"no model key of run {run.slug!r} has all its families in the sweeps ({sorted(present)}) "
                             f"and a model {args.models_dir or models_dir()}/{args.gpu}-<key>.tree.json")
        nets = layer_networks(args.layers_dir)
        trained = training_keys([root / p for p in run.sweeps])
        layers = pd.concat([score_key(df, k, args.gpu, nets, trained, run.target, args.models_dir) for k in keys],
                           ignore_index=True)
    except (SweepFormatError, TrainError, FileNotFoundError, ValueError) as exc:
        raise SystemExit(f"predictor.holdout: error: {exc}") from exc
    args.out.mkdir(parents=True, exist_ok=True)
    layers.to_csv(args.out / "layers.csv", index=False, float_format="%.6g")
    command = "python -m predictor.holdout " + " ".join(shlex.quote(a) for a in argv)
    models = [_path(args.gpu, k, args.models_dir) for k in keys]
    models = [p.resolve().relative_to(root) if p.resolve().is_relative_to(root) else p for p in models]
    (args.out / "REPORT.md").write_text(report_markdown(layers, command=command, sweeps=described, models=models,
                                                        big_gflop=args.big_gflop))
    _LOG.info("wrote %s and %s", args.out / "REPORT.md", args.out / "layers.csv")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

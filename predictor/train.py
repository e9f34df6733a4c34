"""Train one kernel-selection model per family from a sweep.

    python -m predictor.train --all       # regenerate every shipped model, header and dispatcher
    python -m predictor.train --all --family f16nhwc90 [--slug h200]   # only those shipped keys (and routed choices
                                                                      # over them), as --all trains them
    python -m predictor.train SWEEP.parquet [--family F] [--models-dir models] [--export-dir export]
        [--max-portfolio 12] [--seed 0] [--holdout-sources PREFIX ...] [--target sm_87] [--folds 5]
        [--family CHOICE --route MEMBER MEMBER ...]   # a choice routed over its members' models (predictor.route)

Per family, and per *choice* of families with identical tensors (``--family f16nhwc+f16nhwc90``,
:mod:`predictor.model_key`: one model over the configs of all its members, trained on the problems
(``shape_key``, ``sms``) measured in every member, the others dropped and counted) (rows with
``status == "ok"`` and ``verified`` only; time = :func:`predictor.portfolio.effective_times`):

1. shapes whose ``source`` starts with a ``--holdout-sources`` prefix are set aside (none by
   default: the shipped models learn from every measured problem, network layers included, and
   their quality on networks they never saw is measured by :mod:`predictor.lono`, leave one
   network out); the rest are the training shapes;
2. hyper-parameters (portfolio size k, tree ``max_depth``, ``min_samples_leaf``, sample weighting)
   are chosen by ``GroupKFold`` cross-validation grouped by ``shape_key``: inside every fold the
   portfolio is chosen greedily on the training part (:func:`predictor.portfolio.greedy_portfolio`),
   a ``DecisionTreeClassifier`` learns each shape's fastest portfolio member with regret-aware
   weights, and the held-out part is scored by the geomean of ``oracle_time / picked_time``
   (a pick with no ok row for a shape scores that shape's worst ok time).  Depths are evaluated by
   truncating the deepest fitted tree (the same splits as fitting with that ``max_depth``, up to
   random tie-breaking); the chosen combination is then cross-validated exactly and those are the
   reported CV metrics.  Among combinations within ``--cv-tolerance`` of the best geomean the
   smallest (k, depth, -min_samples_leaf) wins;
3. the final portfolio and tree are fitted on all training shapes, flattened to the exact integer
   IR (:mod:`predictor.tree_ir`) and saved as ``<models-dir>/<gpu-slug>-<family>.joblib``
   (scikit-learn model + metadata) and ``.tree.json`` (what :func:`predictor.select` loads), with a
   summary (``.summary.json`` and ``.summary.md``) that also reports the best single config and,
   for int8, ``SEED_CONFIG``;
4. the C++ header of the GPU (all families with a model in ``--models-dir``) is written to
   ``--export-dir`` (:mod:`predictor.export_cpp`).

The written files depend only on the sweeps and the options: retraining reproduces them byte for
byte (run information -- the command, durations -- goes to the log only).  The shipped models
(``models/h200*``) and their headers are replaced only by ``--all`` (which regenerates all of
them, see :data:`SHIPPED_RUNS`) or with ``--overwrite``; other runs write another slug
(``--slug``) or other folders (``--models-dir``, ``--export-dir``).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import logging
import re
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .cli import cores, display_path, refuse_overwrite, run_main
from .config import SEED_CONFIG, Family, KernelConfig
from .cv_folds import CV_GROUPS
from .features import DEFAULT_FEATURE_SET, FEATURE_NAMES, FEATURE_SETS
from .model_key import CLI_HELP, Key, cli_model_key, default_families, model_key
from .fitting import (  # noqa: F401 - re-exported: the fitting API predictor.train has always offered
    CV_TOLERANCE, DEFAULT_KIND, DEPTH_GRID, K_GRID, KINDS, MIN_LEAF_GRID, WEIGHTINGS, CVResult, Fitted, _folds, base_keys,
    cross_validate, fit_key, fit_model, model_ir, portfolio_sizes, training_set,
)
from .portfolio import (
    FamilyTable, ShapeTable, TrainError, best_single, eligible_rows, family_table, metrics, picked_times,
)
from .portfolio import check_no_overlap, configs_fit, measured_smem
from .schema import file_sha256, read_metadata, read_sweep
from .shipped import (  # noqa: F401 - re-exported: the shipped runs were defined here until session 36
    SHIPPED_DISPATCHERS, SHIPPED_RUNS, SHIPPED_SLUGS, Method, ShippedRun, shipped_selection,
)
from .targets import TARGETS
from .route import RoutedModel, fit_routed, can_route, routed_ir
from .tree_ir import Leaf, TreeIR
from .summary import SCORING_NOTE, summary_markdown  # noqa: F401 - re-exported

_LOG = logging.getLogger(__name__)



def gpu_slug(gpu: str) -> str:
    """``"NVIDIA H200"`` -> ``"h200"``: lowercase, drop a leading ``nvidia ``, non-alnum -> ``-``."""
    s = gpu.strip().lower()
    if s.startswith("nvidia "):
        s = s[len("nvidia "):]
    s = re.sub(r"[^a-z0-9]+", "-", s).strip("-")
    return s or "unknown"


def target_slug(gpu: str, target: str | None) -> str:
    """Model slug: the GPU's, plus ``-sm87`` style suffix for a restricted target."""
    base = gpu_slug(gpu)
    return base if not target else f"{base}-{re.sub(r'[^a-z0-9]+', '', target.lower())}"


# --------------------------------------------------------------------------- one family
@dataclass
class FamilyModel:
    """Everything :func:`train_family` produces."""

    family: Key  # a Family or a Choice (predictor.model_key)
    slug: str
    clf: Any
    ir: TreeIR
    summary: dict[str, Any]
    meta: dict[str, Any]


@dataclass
class TrainingSets:
    """One family's problems split into training and held-out shapes, with their features."""

    ft: FamilyTable
    train: ShapeTable
    hold: ShapeTable
    X: np.ndarray  # features of the training shapes
    Xh: np.ndarray  # features of the held-out shapes (0 rows if none)


def training_sets(df: pd.DataFrame, family: Key, target: str | None,
                  holdout_prefixes: Sequence[str]) -> TrainingSets:
    """The family's table (:func:`predictor.portfolio.family_table`) split by ``holdout_prefixes``
    of the shapes' ``source``; at least 2 training shapes."""
    ft = family_table(df, family, target)
    table = ft.table
    hold = np.array([any(s.startswith(p) for p in holdout_prefixes) for s in table.sources], dtype=bool)
    train_t, hold_t = table.subset(np.nonzero(~hold)[0]), table.subset(np.nonzero(hold)[0])
    if train_t.n_shapes < 2:
        raise TrainError(f"{family.value}: {train_t.n_shapes} training shape(s) after holding out "
                         f"{hold_t.n_shapes}; need at least 2")
    X = train_t.features().to_numpy(dtype=np.int64)
    Xh = (hold_t.features().to_numpy(dtype=np.int64) if hold_t.n_shapes
          else np.zeros((0, len(FEATURE_NAMES)), np.int64))
    return TrainingSets(ft, train_t, hold_t, X, Xh)


def _model_meta(family: Key, sets: TrainingSets, fitted: Fitted, cv: CVResult, *, slug: str, target: str | None,
                sweep: Path, sweep_sha: str, seed: int, kind: str) -> dict[str, Any]:
    """The metadata stored with the model (tree IR and joblib), before the scores are added."""
    fam_rows, names = sets.ft.fam_rows, list(fitted.classes)
    k, weighting, min_leaf, depth = cv.chosen
    smem = measured_smem(fam_rows[fam_rows["config"].isin(names)])
    sm87 = configs_fit(smem, "sm_87")  # the header's sm87_ok, judged from the measured shared memory
    return {
        "family": family.value, "gpu": sets.ft.gpu, "gpu_slug": slug, "target": target, "sms": sets.ft.sms,
        "sms_trained": sorted(int(v) for v in fam_rows.loc[fam_rows["status"] == "ok", "sms"].unique()),
        "sweep": sweep.name, "sweep_sha256": sweep_sha, "feature_names": [],  # the model's (train_family)
        "portfolio": names, "hyperparameters": {"kind": kind, "k": k, "max_depth": depth,
                                                "min_samples_leaf": min_leaf, "weighting": weighting,
                                                "seed": seed, "grown_on": list(fitted.portfolio)},
        **({"routed": {"feature": "pointwise", "partial_families": [f.value for f in family.partial],
                       **{part: {"k": r.chosen[0], "weighting": r.chosen[1], "min_samples_leaf": r.chosen[2],
                                 "max_depth": r.chosen[3], "cv_geomean": round(r.scores[r.chosen], 5)}
                          for part, r in cv.parts.items()}}} if cv.parts else {}),
        "smem_bytes": {n: int(smem.get(n, -1)) for n in names},
        "sm87_ok": {n: bool(sm87.get(n, False)) for n in names},
        "versions": _versions(),
    }


def _fixed_pick(t: ShapeTable, config: int | None) -> dict[str, float] | None:
    """Metrics of picking the config of index ``config`` on every shape of ``t`` (None: no such config)."""
    return metrics(t.oracle, picked_times(t, np.full(t.n_shapes, config))) if config is not None else None


def score_model(t: ShapeTable, Xs: np.ndarray, ir: TreeIR, single: int, seed_idx: int | None) -> dict[str, Any]:
    """Metrics of the model, the best single config (index ``single``) and ``SEED_CONFIG``
    (``seed_idx``, None if not of the family) on the shapes of ``t`` (features ``Xs``)."""
    if t.n_shapes == 0:
        return {"model": None, "best_single": None, "seed": None}
    model_idx = np.array([t.configs.index(n) for n in ir.predict_many(Xs.tolist())])
    return {"model": metrics(t.oracle, picked_times(t, model_idx)), "best_single": _fixed_pick(t, single),
            "seed": _fixed_pick(t, seed_idx)}


def _cv_block(train_t: ShapeTable, cv: CVResult, single_all: int, seed_idx: int | None) -> dict[str, Any]:
    return {
        "model": metrics(train_t.oracle, picked_times(train_t, cv.model_picks)),
        "best_single": metrics(train_t.oracle, picked_times(train_t, cv.single_picks)),
        # SEED_CONFIG is not fitted: its "CV" numbers are over all training shapes
        "seed": _fixed_pick(train_t, seed_idx),
        "best_single_config": train_t.configs[single_all] if single_all >= 0 else None,
    }


def _summary(family: Key, sets: TrainingSets, meta: dict[str, Any], ir: TreeIR, cv: CVResult,
             cv_block: dict[str, Any], scores: dict[str, dict[str, Any]], *, sweep: Path,
             holdout_prefixes: Sequence[str]) -> dict[str, Any]:
    """The model's summary (``.summary.json``; :func:`summary_markdown` renders it)."""
    ft, train_t, hold_t = sets.ft, sets.train, sets.hold
    return {
        "family": family.value, "gpu": ft.gpu, "gpu_slug": meta["gpu_slug"], "target": meta["target"],
        "sms": ft.sms, "sweep": str(sweep), "sweep_sha256": meta["sweep_sha256"],
        "shapes": {"all": ft.n_shapes_all, "dropped_no_ok": ft.n_shapes_all - ft.table.n_shapes,
                   "train": train_t.n_shapes, "holdout": hold_t.n_shapes},
        **({"choice": {"families": [f.value for f in family.families], "not_in_every_family": ft.n_not_common,
                       "portfolio_by_family": {f.value: sum(KernelConfig.from_name(n).family is f for n in meta["portfolio"])
                                               for f in family.families}}}
           if len(family.families) > 1 else {}),
        "holdout_prefixes": list(holdout_prefixes), "configs": len(ft.table.configs),
        "configs_dropped_for_target": ft.configs_dropped_for_target,
        "rows": {"all": int(len(ft.fam_rows)), "eligible": ft.n_eligible_rows},
        "portfolio": meta["portfolio"], "hyperparameters": meta["hyperparameters"],
        "tree": {"splits": len(ir.nodes) - ir.n_leaves, "leaves": ir.n_leaves, "depth": ir.depth,
                 "features_used": [FEATURE_NAMES[f] for f in ir.used_features()],
                 "configs_predicted": sorted({n.label for n in ir.nodes if isinstance(n, Leaf)})},
        "cv": cv_block, "holdout": scores["holdout"], "in_sample": scores["in_sample"],
        "cv_grid": {**cv.grid, "combinations": len(cv.scores),
                    "top": [{"k": c[0], "weighting": c[1], "min_samples_leaf": c[2], "max_depth": c[3],
                             "geomean": round(s, 5)}
                            for c, s in sorted(cv.scores.items(), key=lambda kv: -kv[1])[:10]]},
        "scoring": SCORING_NOTE,
    }


def train_family(df: pd.DataFrame, family: Key, *, sweep: Path, sweep_sha: str, target: str | None,
                 max_portfolio: int, seed: int, holdout_prefixes: Sequence[str], folds: int = 5,
                 tolerance: float = CV_TOLERANCE, k_grid: Sequence[int] | None = None,
                 depth_grid: Sequence[int] = DEPTH_GRID, min_leaf_grid: Sequence[int] = MIN_LEAF_GRID,
                 weightings: Sequence[str] = WEIGHTINGS, command: str = "",
                 slug_override: str | None = None, kind: str = DEFAULT_KIND, threads: int = 1,
                 cv_groups: str = "problem", route: Sequence[str] = (),
                 models_dir: Path = Path("models"), keep_pointwise: bool = False,
                 features: str = DEFAULT_FEATURE_SET) -> FamilyModel:
    """Train the model of one family, or of a choice of families with identical tensors
    (:mod:`predictor.model_key`), from its sweep rows (any status); ``kind``: see :mod:`predictor.fitting`;
    ``threads``: CV folds fitted in parallel (the model does not depend on it); ``cv_groups``: what one CV fold
    keeps together (:data:`predictor.cv_folds.CV_GROUPS`); ``route``: members of a choice whose own models
    (``models_dir/<slug>-<member>.tree.json``) a router sends its problems to (:mod:`predictor.route`); ``features``:
    the feature set its trees read (:data:`predictor.features.FEATURE_SETS`; a routed choice's members read theirs)."""
    t0 = time.time()
    sets = training_sets(df, family, target, holdout_prefixes)
    train_t, hold_t = sets.train, sets.hold
    if features not in FEATURE_SETS:
        raise TrainError(f"features {features!r}: one of {', '.join(FEATURE_SETS)}")
    own = len(FEATURE_SETS[features])
    slug = slug_override or target_slug(sets.ft.gpu, target)
    members = route_members(family, route, models_dir, slug) if route else {}
    width = max([own, *(len(m.feature_names) for m in members.values())])  # the members read theirs
    X, Xh = sets.X[:, :width], sets.Xh[:, :width]
    # ---- hyper-parameters by CV, then the final model on all training shapes (a choice with members
    # that run only some convolutions: two models routed by the pointwise feature, fitting.fit_key)
    settings = dict(k_grid=portfolio_sizes(k_grid, max_portfolio), depth_grid=depth_grid, min_leaf_grid=min_leaf_grid,
                    weightings=weightings, folds=folds, seed=seed, tolerance=tolerance, threads=threads,
                    cv_groups=cv_groups)
    router_meta: dict[str, Any] = {}
    if route:
        cv, fitted, rf = fit_routed(train_t, X, kind, members=members, partial=family.partial,
                                    keep_pointwise=keep_pointwise, features=own, **settings)  # type: ignore[arg-type]
        router_meta = {"router": {
            "members": {m: file_sha256(models_dir / f"{slug}-{m}.tree.json") for m in route},
            "max_depth": rf.chosen[0], "min_samples_leaf": rf.chosen[1], "leaves": int(rf.clf.get_n_leaves()),
            "cv_mean_log_ratio": round(rf.scores[rf.chosen], 6), **({"keep_pointwise": True} if keep_pointwise else {})}}
    else:
        cv, fitted = fit_key(train_t, X[:, :own], kind, partial=family.partial, **settings)  # type: ignore[arg-type]
    for part, res in (cv.parts or {"": cv}).items():
        k, weighting, min_leaf, depth = res.chosen
        if res.kind == "router":
            _LOG.info("%s: router over %s chosen with depth %d, min leaf %d (out-of-fold geomean %.4f)",
                      family.value, list(route), depth, min_leaf, res.scores[res.chosen])
            continue
        _LOG.info("%s%s: CV over %d combinations in %.1fs; chosen kind=%s k=%d weighting=%s min_samples_leaf=%d "
                  "max_depth=%d (geomean %.4f)", family.value, f" ({part} problems)" if part else "", len(res.scores),
                  res.seconds, kind, k, weighting, min_leaf, depth, res.scores[res.chosen])
    meta = _model_meta(family, sets, fitted, cv, slug=slug, target=target, sweep=sweep, sweep_sha=sweep_sha,
                       seed=seed, kind=kind)
    if route:
        meta["hyperparameters"]["route"] = list(route)
        meta.update(router_meta)
    if features != DEFAULT_FEATURE_SET:
        meta["hyperparameters"]["features"] = features
    ir = (routed_ir if isinstance(fitted.model, RoutedModel) else model_ir)(
        fitted.model, meta["portfolio"], meta=meta, check_X=X)  # type: ignore[arg-type]
    meta["feature_names"] = list(ir.feature_names)
    if len(Xh):
        ir.check_against(fitted.model, Xh)

    # ---- scores: CV (out of fold), held-out shapes, in-sample
    single_all = best_single(train_t)
    seed_idx = train_t.config_index(SEED_CONFIG.name) if family is SEED_CONFIG.family else None
    cv_block = _cv_block(train_t, cv, single_all, seed_idx)
    scores = {"holdout": score_model(hold_t, Xh, ir, single_all, seed_idx),
              "in_sample": score_model(train_t, X, ir, single_all, seed_idx)}
    summary = _summary(family, sets, meta, ir, cv, cv_block, scores, sweep=sweep, holdout_prefixes=holdout_prefixes)
    _LOG.info("%s: trained in %.1f s%s", family.value, time.time() - t0, f" by {command}" if command else "")
    meta["cv"] = cv_block
    meta["holdout"] = summary["holdout"]
    ir = TreeIR(ir.feature_names, ir.classes, ir.nodes, meta).validate()
    return FamilyModel(family, slug, fitted.model, ir, summary, meta)


def route_members(family: Key, route: Sequence[str], models_dir: Path, slug: str) -> dict[str, TreeIR]:
    """The models (``models_dir/<slug>-<member>.tree.json``) a choice routes over: members running every conv (one
    where the choice holds a GEMM family: the pointwise problems then get the choice's own tree)."""
    conv = [f.value for f in family.families if f not in family.partial]
    if not can_route(family, route):
        raise TrainError(f"--route {' '.join(route)}: name two or more members of a choice that run every "
                         f"convolution, or one of a choice with a GEMM family (here: {', '.join(conv)})")
    paths = {m: models_dir / f"{slug}-{m}.tree.json" for m in route}
    absent = [str(p) for p in paths.values() if not p.is_file()]
    if absent:
        raise TrainError(f"--route: no model {absent[0]}: train the members first (--family {' --family '.join(route)})")
    return {m: TreeIR.load(p) for m, p in paths.items()}


def _versions() -> dict[str, str]:
    import joblib
    import sklearn

    return {"sklearn": sklearn.__version__, "numpy": np.__version__, "pandas": pd.__version__,
            "joblib": joblib.__version__, "python": sys.version.split()[0]}


def save_model(m: FamilyModel, models_dir: Path) -> dict[str, Path]:
    """Write the joblib model, the tree IR JSON and the summary (JSON + markdown)."""
    import joblib

    models_dir.mkdir(parents=True, exist_ok=True)
    stem = models_dir / f"{m.slug}-{m.family.value}"
    paths = {"joblib": stem.with_suffix(".joblib"), "tree": Path(f"{stem}.tree.json"),
             "summary_json": Path(f"{stem}.summary.json"), "summary_md": Path(f"{stem}.summary.md")}
    m.ir.save(paths["tree"])
    tree_sha = file_sha256(paths["tree"])
    joblib.dump({"model": m.clf, "ir": m.ir.to_dict(), "meta": {**m.meta, "tree_json_sha256": tree_sha}},
                paths["joblib"])
    summary = _rounded({**m.summary, "files": {k: v.name for k, v in paths.items()}, "tree_json_sha256": tree_sha})
    paths["summary_json"].write_text(json.dumps(summary, indent=1, sort_keys=True, default=str) + "\n")
    paths["summary_md"].write_text(summary_markdown(summary))
    return paths


def _rounded(obj: Any) -> Any:
    """``obj`` with every float rounded to 12 significant digits: a geomean's last bit depends on the
    numpy build's summation order, and the summary must be the same on every machine."""
    if isinstance(obj, float):
        return float(f"{obj:.12g}")
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_rounded(v) for v in obj]
    return obj


# --------------------------------------------------------------------------- CLI
_REFUSE_HINT = ("train into another folder (--models-dir DIR --export-dir DIR) or under another name (--slug NAME), "
                "pass --overwrite to replace it, or run python -m predictor.train --all to regenerate every shipped file")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m predictor.train", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sweep", type=Path, nargs="*",
                   help="sweep parquet file(s) (predictor.schema format); several files of one GPU measured "
                        "at different SM counts (collector --sm-count) train one model with sms as a feature")
    p.add_argument("--all", action="store_true",
                   help="regenerate every shipped file from the shipped sweeps, run from the repository root: "
                        + "; ".join(f"{' '.join(r.sweeps)}{' --target ' + r.target if r.target else ''}"
                                    f"{' (every family, and the choice ' + ', '.join(r.choices) + ')' if r.choices else ''}"
                                    for r in SHIPPED_RUNS)
                        + " into models/ and export/, then the dispatchers (export/dispatch*/, needs nvidia-cutlass); "
                        "with --family F (and --slug S): only those keys of the shipped runs, each trained as --all "
                        "does, and the routed choices over them, then their slugs' headers and dispatchers")
    p.add_argument("--overwrite", action="store_true",
                   help="allow replacing the shipped models and headers (models/h200*, export/h200*) without --all")
    p.add_argument("--slug", default=None, help="model name prefix (default: from the GPU name and --target)")
    p.add_argument("--family", type=cli_model_key, action="append", metavar="FAMILY",
                   help="train only this model key (repeatable; default: every family in the sweep): " + CLI_HELP)
    p.add_argument("--models-dir", type=Path, default=Path("models"),
                   help="where the models go (<slug>-<family>.tree.json, .joblib, .summary.json/.md)")
    p.add_argument("--export-dir", type=Path, default=Path("export"),
                   help="where the C++ header goes (<slug>_conv_heuristics.hpp, from every model of the slug "
                        "in --models-dir)")
    p.add_argument("--no-export", action="store_true", help="do not write the C++ header")
    p.add_argument("--max-portfolio", type=int, default=12, help="largest portfolio (k) considered")
    p.add_argument("--k-grid", type=int, nargs="+", default=None, metavar="K",
                   help="portfolio sizes to cross-validate (default: predictor.fitting.K_GRID up to --max-portfolio, "
                        "and it)")
    p.add_argument("--kind", choices=KINDS, default=DEFAULT_KIND,
                   help="model kind (predictor.fitting; --all: each shipped key's own, SHIPPED_RUNS)")
    p.add_argument("--route", nargs="+", default=None, metavar="MEMBER",
                   help="a choice's problems routed between these members' own models (trained before it, read "
                        "from --models-dir): a router tree picks the member (predictor.route); --kind fits only "
                        "the pointwise problems of a choice holding a GEMM family (--all: SHIPPED_RUNS)")
    p.add_argument("--keep-pointwise", action="store_true",
                   help="with --route, a choice without a GEMM family: its pointwise (1x1) problems keep its own tree, "
                        "fitted on all its problems; the router routes the others")
    p.add_argument("--features", choices=list(FEATURE_SETS), default=DEFAULT_FEATURE_SET,
                   help="the features the trees read (predictor.features.FEATURE_SETS: each extends the one before "
                        "it; --all: each shipped key's own, SHIPPED_RUNS)")
    p.add_argument("--seed", type=int, default=0, help="seed of the cross-validation folds and the trees")
    p.add_argument("--holdout-sources", nargs="*", default=[], metavar="PREFIX",
                   help="shapes whose source starts with one of these are held out (default: net:)")
    p.add_argument("--target", choices=list(TARGETS), default=None,
                   help="restrict to configs that run on this arch (predictor.targets: its family runs there and "
                        "its measured shared memory fits a block); default: all configs of the sweep's GPU")
    p.add_argument("--folds", type=int, default=5, help="GroupKFold splits")
    p.add_argument("--cv-tolerance", type=float, default=CV_TOLERANCE,
                   help="prefer the smallest model within this much CV geomean of the best (0: the best; "
                        "0.002 gives k=8 instead of 12 for i8nc32 on the H200 sweep at -0.002 geomean)")
    p.add_argument("--cv-groups", choices=CV_GROUPS, default="problem",
                   help="what one cross-validation fold keeps together: each problem (all its SM counts), or also "
                        "each network's layers (source net:NAME), so hyper-parameters are chosen for networks "
                        "the fold has not seen (--all: each shipped key's own, SHIPPED_RUNS)")
    p.add_argument("--threads", type=int, default=cores(most=5),
                   help="cross-validation folds fitted in parallel (the models do not depend on it; default: "
                        "the CPU cores, at most the folds)")
    p.add_argument("--quiet", action="store_true", help="do not print the summaries")
    return p


def _read_sweeps(paths: Sequence[Path]) -> tuple[pd.DataFrame, list[pd.DataFrame], list[str]]:
    """The concatenated sweeps, each file's frame and each file's sha256 (one-line errors)."""
    frames = []
    for path in paths:
        if path.is_dir():
            raise TrainError(f"{path} is a folder: pass sweep parquet file(s), e.g. sweeps/h200.parquet")
        part = read_sweep(path)
        if part.empty:
            raise TrainError(f"{path}: the sweep has no rows")
        if read_metadata(path).get("synthetic"):
            _LOG.warning("%s is a SYNTHETIC sweep: do not ship models trained on it", path)
        frames.append(part)
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if len(frames) > 1:
        check_no_overlap(df)
    return df, frames, [file_sha256(p) for p in paths]


def _outputs(models_dir: Path, export_dir: Path | None, slugs: set[str], fams: Sequence[str]) -> list[Path]:
    """The files a run would write (models, and the header unless ``export_dir`` is None)."""
    from .export_cpp import header_path

    out = [models_dir / f"{slug}-{f}{ext}" for slug in sorted(slugs) for f in fams
           for ext in (".joblib", ".tree.json", ".summary.json", ".summary.md")]
    if export_dir is not None:
        out += [header_path(export_dir, slug) for slug in sorted(slugs)]
    return out


def train_sweeps(args: argparse.Namespace, sweeps: Sequence[Path], *, command: str, overwrite: bool,
                 choices: Sequence[str] = (), methods: Sequence[Method] = ()) -> list[FamilyModel]:
    """Train every requested family (``args.family``: families or choices, default every family of
    the sweeps) and the ``choices`` of ``sweeps``, and write the models and the header; ``methods``: the keys
    trained otherwise than ``args.kind`` / ``args.max_portfolio`` / ``args.cv_groups``."""
    method = {model_key(m.key).value: m for m in methods}
    sweeps = [Path(display_path(p)) for p in sweeps]  # provenance without host paths
    df, frames, shas = _read_sweeps(sweeps)
    sha = shas[0] if len(shas) == 1 else hashlib.sha256("".join(shas).encode()).hexdigest()
    sweep_name = sweeps[0] if len(sweeps) == 1 else Path("+".join(p.name for p in sweeps))
    present = sorted(set(df["family"].astype(str)))
    unknown = [f for f in present if f not in {x.value for x in Family}]
    if unknown:
        raise TrainError(f"{sweep_name}: unknown family value(s) {unknown}")
    fams = keys_to_train(present, args.family, choices)
    keys = [model_key(f) for f in fams]
    if (args.route and all(len(k.families) < 2 for k in keys)) or (args.keep_pointwise and not args.route):
        raise TrainError("--route routes a choice between its members' models: give a choice with --family "
                         "(--keep-pointwise goes with --route)")
    members = sorted({m.value for k in keys for m in k.families})
    missing = [f for f in members if f not in present]
    if missing:
        raise TrainError(f"{sweep_name}: no rows of family {missing} (present: {present})")
    if not eligible_rows(df[df["family"].isin(members)]).shape[0]:
        raise TrainError(f"{sweep_name}: no rows with status == 'ok' and verified == True")
    slugs = {args.slug or target_slug(g, args.target)
             for g in df[df["family"].isin(members)]["gpu"].astype(str).unique()}
    from .resources import export_dir, models_dir

    shipped = _outputs(args.models_dir, None if args.no_export else args.export_dir, slugs & SHIPPED_SLUGS, fams)
    refuse_overwrite(shipped, [models_dir(), export_dir()], overwrite, _REFUSE_HINT)
    models = []
    for f, key in zip(fams, keys):
        # provenance: the file(s) holding this key's rows (one file: its own sha256)
        own = [i for i, fr in enumerate(frames) if fr["family"].astype(str).isin([m.value for m in key.families]).any()]
        f_name = sweeps[own[0]] if len(own) == 1 else sweep_name
        f_sha = shas[own[0]] if len(own) == 1 else sha
        m_key = method.get(key.value, Method(key.value, args.kind, args.max_portfolio, args.cv_groups,
                                             tuple(args.route or ()) if len(key.families) > 1 else (),
                                             args.keep_pointwise, args.features))
        m = train_family(df, key, sweep=f_name, sweep_sha=f_sha, target=args.target,
                         slug_override=args.slug, kind=m_key.kind,
                         max_portfolio=m_key.max_portfolio, seed=args.seed,
                         holdout_prefixes=tuple(args.holdout_sources), folds=args.folds,
                         tolerance=args.cv_tolerance, k_grid=args.k_grid, command=command, threads=args.threads,
                         cv_groups=m_key.cv_groups, route=m_key.route, models_dir=args.models_dir,
                         keep_pointwise=m_key.keep_pointwise, features=m_key.features)
        paths = save_model(m, args.models_dir)
        _LOG.info("%s: wrote %s", f, ", ".join(str(p) for p in paths.values()))
        if not args.quiet:
            print(summary_markdown({**m.summary}))
        models.append(m)
    if not args.no_export:
        from .export_cpp import export_models_dir

        for slug in sorted({m.slug for m in models}):
            _LOG.info("wrote %s", export_models_dir(args.models_dir, slug, args.export_dir))
    return models


def keys_to_train(present: Sequence[str], family: Sequence[str] | None, choices: Sequence[str] = ()) -> list[str]:
    """The keys a training run writes, in training order: ``family`` (default: every family of the sweeps,
    ``present``) and ``choices``, plain families first (a routed choice reads its members' models)."""
    fams = list(family or default_families(sorted(present)))
    fams += [c for c in choices if c not in fams]
    return sorted(fams, key=lambda f: len(model_key(f).families))


def shipped_keys(run: ShippedRun) -> list[str]:
    """Every model key that ``run`` trains (:func:`keys_to_train` over its sweeps' family column and its choices)."""
    present = set()
    for s in run.sweeps:
        present |= set(pd.read_parquet(s, columns=["family"])["family"].astype(str))
    return keys_to_train(sorted(present), None, run.choices)


def train_shipped(args: argparse.Namespace) -> None:
    """``--all``: every run of :data:`SHIPPED_RUNS` into models/ and export/, then the dispatchers; with ``--family``
    (and ``--slug``), only those keys of the shipped runs (:func:`shipped_selection`), each trained as ``--all``
    trains it, and the routed choices over them; the headers and dispatchers of their slugs are regenerated."""
    if args.sweep or args.target or args.no_export:
        raise TrainError("--all trains the shipped runs: it takes no sweep, --target or --no-export")
    if args.slug and not args.family:
        raise TrainError("--all --slug S retrains some keys of that run: give them with --family")
    parser = build_parser()
    changed = [a for a in ("kind", "max_portfolio", "k_grid", "seed", "holdout_sources", "folds", "cv_tolerance", "cv_groups",
                           "route", "keep_pointwise", "features", "models_dir", "export_dir") if getattr(args, a) != parser.get_default(a)]
    if changed:
        raise TrainError(f"--all uses the default settings; it cannot be combined with --{changed[0].replace('_', '-')}")
    need = sorted({s for r in SHIPPED_RUNS for s in r.sweeps})
    absent = [s for s in need if not Path(s).is_file()]
    if absent:
        raise FileNotFoundError(f"--all needs the shipped sweeps {absent} (missing): run it from the repository root")
    runs: list[tuple[ShippedRun, list[str] | None]] = (
        [(r, None) for r in SHIPPED_RUNS] if not args.family else list(shipped_selection(args.family, args.slug, shipped_keys)))
    for run, keys in runs:
        if keys is not None:
            _LOG.info("%s: retraining %s", run.slug, ", ".join(keys))
        run_args = argparse.Namespace(**{**vars(args), "target": run.target, "family": keys, "slug": None})
        models = train_sweeps(run_args, [Path(s) for s in run.sweeps], command="python -m predictor.train --all",
                              overwrite=True, choices=run.choices if keys is None else (), methods=run.methods)
        slugs = {m.slug for m in models}
        if slugs != {run.slug}:
            raise TrainError(f"the shipped run {run} produced the slug(s) {sorted(slugs)}, not {run.slug}")
    try:
        import cutlass_library  # noqa: F401 - kernel emission

        from .dispatcher import generate
    except ImportError as exc:
        _LOG.warning("dispatchers export/dispatch*/ not regenerated (%s): pip install 'cutlass-conv-predictor[build]'",
                     exc)
        return
    done = {run.slug for run, _ in runs}
    for slug, fams, folder in SHIPPED_DISPATCHERS:
        if slug in done:
            generate(args.models_dir, slug, args.export_dir, args.export_dir / folder, families=fams)


def _main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    if args.max_portfolio < 1:
        raise TrainError("--max-portfolio must be >= 1")
    command = "python -m predictor.train " + " ".join(shlex.quote(a) for a in argv)  # logged per family
    if args.all:
        train_shipped(args)
    elif not args.sweep:
        raise TrainError("give sweep file(s), e.g. sweeps/h200.parquet, or --all for the shipped models")
    else:
        train_sweeps(args, args.sweep, command=command, overwrite=args.overwrite)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point (``python -m predictor.train``); unusable input ends in one line on stderr, exit 2."""
    return run_main("predictor.train", _main, argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

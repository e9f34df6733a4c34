"""Leave-network-group-out for a choice routed over its members' own models (:mod:`predictor.route`).

    python -m predictor.route_lono --choice reports/lono/h200-i8choice3 \\
        --member i8nhwc=reports/lono/h200-i8nhwc --member i8nhwc90=reports/lono/h200-i8nhwc90 \\
        --out reports/lono/h200-i8choice3-route

A routed choice's model is a router tree in front of its members' models (and, for a choice holding a GEMM
family, the choice's own tree on the pointwise problems).  Its leave-out figures come from the reports of its
parts, each a :mod:`predictor.lono` report of the same network groups:

1. the choice's report (``--choice``) names the sweeps, the model key, the target and the groups; its table is
   rebuilt from them, and for every group the router is fitted on that fold's training problems
   (:func:`predictor.lono.lono_split`, :func:`predictor.route.fit_router`, its depth and minimum leaf by a
   network-grouped CV inside them; labels: the member family whose configs hold the faster time; one member, for a
   choice holding a GEMM family: a router of one leaf, every conv layer goes to it);
2. each held-out layer the router sends to a member gets that member's pick for the same layer from the
   member's report (``--member``: a model of that member that never saw the layer's network), timed in the
   choice's table; a pointwise layer of a choice holding a GEMM family keeps the choice report's pick (the
   same fold's pointwise tree, which the routed model keeps), unless that pick is a config of a member family:
   then that member's pick for the layer (the routed model hands such an answer to the member);
3. tuned: the member report's tuned time where its picks' times equal the choice table's (the same sweep
   times), else none; the **bound** of the fold's own configs is not known (the members' fold portfolios are
   not in their reports): ``–``.

Writes ``REPORT.md`` (:func:`predictor.lono.report_markdown`'s tables, model ``route``) and ``layers.csv``
(with the member each layer was routed to).  Deterministic for given reports and sweeps.
"""
from __future__ import annotations

import argparse
import logging
import math
import shlex
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .cli import setup_logging
from .features import DEFAULT_FEATURE_SET, FEATURE_NAMES, FEATURE_SETS
from .fitting import POINTWISE
from .lono import Settings, load_sweeps, lono_split, network_groups, networks, report_markdown
from .model_key import model_key
from .portfolio import TrainError, family_table
from .report_header import lono_protocol, report_command
from .route import ROUTER_CV_GROUPS, can_route, family_best, fit_router, handed_to
from .schema import SweepFormatError, file_sha256

_LOG = logging.getLogger(__name__)
KIND = "route"
KEY = ["network", "shape_key"]


def _option(cmd: Sequence[str], name: str, default: str | None = None) -> str | None:
    return cmd[cmd.index(name) + 1] if name in cmd else default


def held_out_groups(report: Path) -> set[frozenset[str]]:
    """The network groups a ``predictor.lono`` report held out (its per-fold table)."""
    out = set()
    for line in (report / "REPORT.md").read_text().splitlines()[::-1]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 10 and cells[1].startswith("`"):
            out.add(frozenset(cells[1].strip("`").split()))
    return out


def evaluate(choice: Path, member_reports: dict[str, Path], keep_pointwise: bool = False
             ) -> tuple[pd.DataFrame, pd.DataFrame, list, str]:
    """(per-layer rows, per-fold rows, the sweeps read, the choice's key) of the routed choice (``keep_pointwise``: a
    choice without a GEMM family whose pointwise layers keep its own tree's choice of family,
    ``predictor.train --keep-pointwise``)."""
    cmd = report_command(choice, "predictor.lono")
    key = model_key(str(_option(cmd, "--family")))
    target = _option(cmd, "--target")
    n_groups = int(_option(cmd, "--groups", "0"))  # type: ignore[arg-type]
    conv = [f.value for f in key.families if f not in key.partial]
    if not can_route(key, list(member_reports)):
        raise TrainError(f"--member: give reports of two or more of {conv}, or of one where the choice holds a GEMM "
                         f"family, as predictor.train --route routes (got {sorted(member_reports)})")
    df, described = load_sweeps([Path(p) for p in cmd if p.endswith(".parquet")])
    table = family_table(df, key, target).table
    # the router reads the choice's features (its report's --features), as predictor.train fits it
    X = table.features().to_numpy(dtype=np.int64)[:, :len(FEATURE_SETS[str(_option(cmd, "--features", DEFAULT_FEATURE_SET))])]
    names = list(member_reports)
    best = family_best(table, names)  # the router's labels, as predictor.train's
    routable = X[:, FEATURE_NAMES.index(POINTWISE)] <= 0 if key.partial or keep_pointwise else np.ones(len(X), bool)
    own = pd.read_csv(choice / "layers.csv")
    row_of = {k: i for i, k in enumerate(table.keys)}
    rows = np.array([row_of[k] for k in own.shape_key])
    if not np.allclose(own.fastest_us, table.oracle[rows], rtol=1e-5):
        raise TrainError(f"{choice}: its fastest times are not those of the sweeps it names")
    eff = np.where(np.isnan(table.times), table.worst[:, None], table.times)
    col = {c: j for j, c in enumerate(table.configs)}
    groups = network_groups(networks(table), n_groups)
    out = own.copy()
    out["kind"], out["bound"], out["member"] = KIND, np.nan, POINTWISE
    folds = []
    for m, rep in member_reports.items():
        if held_out_groups(rep) != {frozenset(g) for g in groups}:
            _LOG.warning("%s held out other network groups than %s: each layer is still scored by a model that "
                         "never saw its network", rep, choice)
        mine = pd.read_csv(rep / "layers.csv")[KEY + ["pick", "pick_us", "fastest_us", "tuned", "candidates"]]
        out = out.merge(mine.rename(columns={c: f"{m}:{c}" for c in mine.columns if c not in KEY}), on=KEY, how="left")
    for g in groups:
        tr_all, te = lono_split(table, g)
        tr = tr_all[routable[tr_all]]
        fit = fit_router(table.subset(tr), X[tr], best[tr], names, cv_groups=ROUTER_CV_GROUPS)
        sel = np.nonzero(out.network.isin(g).to_numpy() & routable[rows])[0]
        sent = list(fit.clf.predict(X[rows[sel]])) if len(sel) else []
        # a pointwise layer whose choice pick is of a member family: that member's pick (RoutedModel.member_of)
        handed = [(i, f) for i in np.nonzero(out.network.isin(g).to_numpy() & ~routable[rows])[0]
                  if (f := handed_to(str(out.at[i, "pick"]), member_reports)) is not None]
        for i, m in [*zip(sel, sent), *handed]:
            pick = out.at[i, f"{m}:pick"]
            if not isinstance(pick, str):
                raise TrainError(f"{member_reports[m]}: no pick for layer {out.at[i, 'shape_key']} of "
                                 f"{out.at[i, 'network']}")
            t = eff[rows[i], col[pick]] if pick in col else table.worst[rows[i]]
            same = math.isclose(t, out.at[i, f"{m}:pick_us"], rel_tol=1e-5)
            # the member's tuned time, where its report times its picks as this table does
            tuned = out.at[i, f"{m}:fastest_us"] / out.at[i, f"{m}:tuned"] if same else math.nan
            out.loc[i, ["member", "pick", "pick_us", "score", "tuned", "candidates"]] = [
                m, pick, t, out.at[i, "fastest_us"] / t, out.at[i, "fastest_us"] / tuned,
                out.at[i, f"{m}:candidates"]]
        folds.append({"family": key.value, "network": " ".join(g), "kind": KIND, "train": len(tr),
                      "excluded_same_shape": int(table.n_shapes - len(tr_all) - len(te)),
                      "layers": int(out.network.isin(g).sum()), "k": len(names), "weighting": "router",
                      "min_samples_leaf": fit.chosen[1], "max_depth": fit.chosen[0],
                      "configs": int(fit.clf.get_n_leaves()), "cv_geomean": round(math.exp(fit.scores[fit.chosen]), 5)})
        _LOG.info("%s / %s: router depth %d, min leaf %d on %d problems", key.value, " ".join(g), *fit.chosen, len(tr))
    keep = [c for c in own.columns] + ["member"]
    return out[keep], pd.DataFrame(folds), described, key.value


def kinds_line(choice: Path, members: dict[str, Path], keep_pointwise: bool = False) -> str:
    """The report's ``- model kinds`` line (how the routed model's parts were chosen), and the reports it read."""
    cmd = report_command(choice, "predictor.lono")
    return ("- model kinds: `route`: a router tree (`predictor.route.fit_router`; depth and minimum leaf by 5-fold "
            "CV inside each fold's training problems, each network's layers kept in one CV fold) sends a layer to "
            "one member, whose pick is that member's leave-out pick for the layer ("
            + ", ".join(f"`{m}`: `{p}`" for m, p in members.items()) + ")"
            + (f"; pointwise layers keep the `{_option(cmd, '--kind')}` pick of `{choice}`, or where that is a "
               "config of a member family, that member's pick (the choice chooses the family)" if keep_pointwise or
               model_key(str(_option(cmd, "--family"))).partial else "")
            + ("; that report's folds keep each network's layers in one inner CV fold (`--cv-groups network`)"
               if _option(cmd, "--cv-groups") == "network" else "")
            + f"; hyper-parameters of every fold chosen by grouped CV inside its training set ({lono_protocol(choice).k_and_tolerance}"
            "), as predictor.train chooses them; in the per-fold table a `route` fold's k is its members, its depth and min leaf the "
            "router's, its configs the router's leaves and its CV geomean that of best member / routed member"
            + "".join(f"\n- leave-out picks `{r / 'layers.csv'}` sha256 `{file_sha256(r / 'layers.csv')}`"
                      for r in (choice, *members.values())))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m predictor.route_lono", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--choice", type=Path, required=True, help="the choice's predictor.lono report folder")
    p.add_argument("--member", action="append", required=True, metavar="FAMILY=DIR",
                   help="a member's predictor.lono report folder, for each member the router chooses between")
    p.add_argument("--keep-pointwise", action="store_true",
                   help="a choice without a GEMM family trained with --keep-pointwise: its pointwise layers keep the "
                        "choice report's choice of family")
    p.add_argument("--out", type=Path, required=True, help="output folder (REPORT.md, layers.csv)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; unusable input ends in ``SystemExit`` with one line."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    setup_logging()
    t0 = time.time()
    bad = [m for m in args.member if "=" not in m]
    if bad:
        raise SystemExit(f"predictor.route_lono: error: --member {bad[0]}: write FAMILY=DIR")
    members = {m.split("=", 1)[0]: Path(m.split("=", 1)[1]) for m in args.member}
    try:
        layers, folds, described, _ = evaluate(args.choice, members, args.keep_pointwise)
    except (SweepFormatError, TrainError, FileNotFoundError, ValueError) as exc:
        raise SystemExit(f"predictor.route_lono: error: {exc}") from exc
    cmd = report_command(args.choice, "predictor.lono")
    settings = Settings(kinds=(KIND,), groups=int(_option(cmd, "--groups", "0")))  # type: ignore[arg-type]
    args.out.mkdir(parents=True, exist_ok=True)
    layers.to_csv(args.out / "layers.csv", index=False, float_format="%.6g")
    text = report_markdown(layers, folds, command="python -m predictor.route_lono " + " ".join(
        shlex.quote(a) for a in argv), sweeps=described, settings=settings, seconds=time.time() - t0,
        generator="predictor.route_lono", kinds_line=kinds_line(args.choice, members, args.keep_pointwise))
    (args.out / "REPORT.md").write_text(text)
    _LOG.info("wrote %s and %s", args.out / "REPORT.md", args.out / "layers.csv")
    return 0


__all__ = ["evaluate", "held_out_groups", "kinds_line", "main"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

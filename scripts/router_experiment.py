"""A family router over the shipped single-family models, scored where the choices are scored.

A choice (`f16nhwc+f16nhwc90`, ...) is one tree over its families' configs. This experiment asks how far a small
classifier tree (the *router*: which family runs the problem) in front of the single-family models gets instead,
each family's pick being what its own model picks (a choice holding a GEMM family keeps its own pick on the
pointwise layers, which the GEMM kernels run, and routes the rest):

- leave-out (`reports/lono/`, 6 network groups): per group, the router is fitted on that fold's training problems
  (the choice's table, `predictor.lono.lono_split`), its depth and minimum leaf chosen by grouped 5-fold CV inside
  them (`predictor.cv_folds`, `--cv-groups`; the CV scores the family each router sends a problem to by that family's
  fastest config among the member model's portfolio); it then routes each held-out layer to the pick of the member's
  leave-out report for the same group (`reports/lono/h200-f16nhwc/`, ...: the shipped methods);
- 14 held-out networks (`reports/holdout/h200/`): the router fitted on every training problem, routing to the shipped
  members' picks as that report measured them (the dispatcher's run, `runs`);
- seeds: the leave-out routing again with other seeds of the router (its CV folds' shuffle, its tree's feature
  order), how far the router's own variance moves the figures;
- size: the router's leaves with a copy of the member tree each, pruned to the router leaf's feature box (what one
  exported tree of the composition would hold).

Each layer is scored against the fastest config of all the choice's families (its report). Nothing here is shipped:

    python scripts/router_experiment.py --out reports/lono/experiments/router
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from predictor import features  # noqa: E402
from predictor.lono import load_sweeps, lono_split, network_groups, networks  # noqa: E402
from predictor.model_key import model_key  # noqa: E402
from predictor.portfolio import best_of, family_table, metrics  # noqa: E402
from predictor.report_header import report_sweeps  # noqa: E402
from predictor.shipped import SHIPPED_RUNS  # noqa: E402
from predictor.route import fit_router, route_ir  # noqa: E402
from predictor.tree_ir import Leaf, TreeIR  # noqa: E402

KEY = ["network", "shape_key"]


def grafted_nodes(router: Any, members: dict[str, TreeIR]) -> int:
    """Nodes of one tree: the router's splits, and at each router leaf its member's tree pruned to the leaf's box."""
    sys.setrecursionlimit(20000)
    t = router.tree_

    def pruned(ir: TreeIR, i: int, lo: dict[int, int], hi: dict[int, int]) -> int:
        n = ir.nodes[i]
        if isinstance(n, Leaf):
            return 1
        f, th = n.feature, n.threshold
        if hi[f] <= th:
            return pruned(ir, n.left, lo, hi)
        if lo[f] > th:
            return pruned(ir, n.right, lo, hi)
        h2, l2 = hi.copy(), lo.copy()
        h2[f], l2[f] = th, th + 1
        return 1 + pruned(ir, n.left, lo, h2) + pruned(ir, n.right, l2, hi)

    def walk(i: int, lo: dict[int, int], hi: dict[int, int]) -> int:
        if t.children_left[i] == -1:
            return pruned(members[str(router.classes_[int(np.argmax(t.value[i][0]))])], 0, lo, hi)
        f, th = int(t.feature[i]), int(np.floor(t.threshold[i]))  # integer features: x <= th.5 <=> x <= th
        h2, l2 = hi.copy(), lo.copy()
        h2[f], l2[f] = min(hi[f], th), max(lo[f], th + 1)
        return 1 + walk(int(t.children_left[i]), lo, h2) + walk(int(t.children_right[i]), l2, hi)

    return walk(0, defaultdict(lambda: -(2 ** 62)), defaultdict(lambda: 2 ** 62))


def cell(r: np.ndarray) -> str:
    """geomean / P10 / worst of the scores ``r`` (a layer the picks' model did not run, NaN, left out)."""
    r = np.asarray(r, float)
    r = r[~np.isnan(r)]
    m = metrics(np.ones(len(r)), 1 / r)
    return f"{m['geomean']:.3f} / {m['p10']:.3f} / {m['worst']:.3f}" if m else "-"


def table_rows(name: str, d: pd.DataFrame, cols: dict[str, str]) -> list[str]:
    big = d.gflop > 8
    return [f"| {name} | {label} | {cell(d[c])} | {int(big.sum())}: {cell(d.loc[big, c])} |" for label, c in cols.items()]


#: (choice, its leave-out report, the members the router chooses between with their leave-out reports); a choice
#: holding a GEMM family keeps its own pick on the pointwise problems (its tree's right side) and routes the rest.
CASES = {
    "fp16": ("f16nhwc+f16nhwc90", "h200-choice", {"f16nhwc": "h200-f16nhwc", "f16nhwc90": "h200-f16nhwc90"}),
    "fp16-gemm": ("f16nhwc+f16nhwc90+f16gemm90", "h200-choice3",
                  {"f16nhwc": "h200-f16nhwc", "f16nhwc90": "h200-f16nhwc90"}),
    "int8-gemm": ("i8nhwc+i8nhwc90+i8gemm90", "h200-i8choice3", {"i8nhwc": "h200-i8nhwc", "i8nhwc90": "h200-i8nhwc90"}),
}


def run_case(choice: str, lono_dir: str, member_dirs: dict[str, str], cv_groups: str, seeds: int) -> list[str]:
    """The report section of one choice."""
    run = next(r for r in SHIPPED_RUNS if r.slug == "h200")
    members = list(member_dirs)
    models = {m: TreeIR.load(ROOT / f"models/h200-{m}.tree.json") for m in members}
    ports = [list(models[m].classes) for m in members]
    partial = bool(model_key(choice).partial)
    pw = features.FEATURE_NAMES.index("pointwise")

    # ---- leave-out: the choice report's sweeps and groups, the members' leave-out picks
    df, _ = load_sweeps([ROOT / p for p in report_sweeps(ROOT / f"reports/lono/{lono_dir}", "predictor.lono")])
    table = family_table(df, model_key(choice), None).table
    X = table.features().to_numpy(dtype=np.int64)
    best = np.stack([best_of(table, p) for p in ports], axis=1)
    routable = X[:, pw] <= 0 if partial else np.ones(len(X), bool)
    row_of = {k: i for i, k in enumerate(table.keys)}
    eff = np.where(np.isnan(table.times), table.worst[:, None], table.times)
    lay = pd.read_csv(ROOT / f"reports/lono/{lono_dir}/layers.csv")
    lay = lay[KEY + ["gflop", "fastest_us", "pick_us"]].rename(columns={"pick_us": "choice_us"})
    for m, d in member_dirs.items():
        rep = pd.read_csv(ROOT / f"reports/lono/{d}/layers.csv")
        lay = lay.merge(rep[KEY + ["pick"]].rename(columns={"pick": f"pick_{m}"}), on=KEY, how="left")
    rows = np.array([row_of[k] for k in lay.shape_key])
    col = {c: j for j, c in enumerate(table.configs)}
    for m in members:  # the member's pick timed in the choice's table (the same sweeps' times)
        have = lay[f"pick_{m}"].notna().to_numpy()
        if not have[routable[rows]].all():
            raise SystemExit(f"{choice}: a routable layer has no {m} pick")
        lay[f"{m}_us"] = np.where(have, eff[rows, [col.get(p, 0) for p in lay[f"pick_{m}"].fillna("")]], np.inf)
    groups = network_groups(networks(table), 6)
    group_of = {n: gi for gi, g in enumerate(groups) for n in g}
    us = np.stack([lay[f"{m}_us"] for m in members], axis=1)
    lr = routable[rows]
    seed_lines, chosen = [], []
    for seed in range(seeds):  # the router's seed (its CV folds' shuffle, its tree's feature order)
        route = np.full(len(lay), -1)
        for gi, g in enumerate(groups):
            tr, _ = lono_split(table, g)
            tr = tr[routable[tr]]
            fit = fit_router(table.subset(tr), X[tr], best[tr], members, seed=seed, cv_groups=cv_groups)
            if seed == 0:
                chosen.append(fit.chosen)
            sel = lay.network.map(group_of).to_numpy() == gi
            route[sel] = [members.index(m) for m in fit.clf.predict(X[rows[sel]])]
        score = lay.fastest_us / np.where(lr, us[np.arange(len(lay)), route], lay.choice_us)
        if seed == 0:
            lay["routed"], route0 = score, route
        big = lay.gflop > 8
        seed_lines.append(f"  - seed {seed}: {cell(score)}; above 8 GFLOP {cell(score[big])}")
    route = route0
    lay["choice"] = lay.fastest_us / lay.choice_us
    lay["oracle"] = lay.fastest_us / np.where(lr, us.min(axis=1), lay.choice_us)
    for j, m in enumerate(members):
        lay[m] = lay.fastest_us / np.where(lr, us[:, j], lay.choice_us)

    # ---- 14 held-out networks: the router on every training problem, the shipped members' runs
    dtr, _ = load_sweeps([ROOT / p for p in run.sweeps])
    ttab = family_table(dtr, model_key(choice), run.target).table
    tX = ttab.features().to_numpy(dtype=np.int64)
    keep = np.nonzero(tX[:, pw] <= 0 if partial else np.ones(len(tX), bool))[0]
    tbest = np.stack([best_of(ttab, p) for p in ports], axis=1)
    fit = fit_router(ttab.subset(keep), tX[keep], tbest[keep], members, cv_groups=cv_groups)
    router, h_all = fit.clf, fit.chosen
    ho = pd.read_csv(ROOT / "reports/holdout/h200/layers.csv")
    hl = ho[ho.model == choice][KEY + ["gflop", "fastest_us", "pick_us", *features.ARGS]].rename(
        columns={"pick_us": "choice_us"})
    for m in members:
        hl = hl.merge(ho[ho.model == m][KEY + ["pick_us"]].rename(columns={"pick_us": f"{m}_us"}), on=KEY, how="left")
    Xh = features.frame(hl).to_numpy(dtype=np.int64)
    hr = Xh[:, pw] <= 0 if partial else np.ones(len(Xh), bool)
    hus = np.stack([hl[f"{m}_us"].fillna(np.inf) for m in members], axis=1)
    hroute = np.array([members.index(m) for m in router.predict(Xh)])
    # a layer a member did not run (no row: it cannot implement it) goes to the other member
    sent = hus[np.arange(len(hl)), hroute]
    hl["routed"] = hl.fastest_us / np.where(hr, np.where(np.isfinite(sent), sent, hus.min(axis=1)), hl.choice_us)
    hl["choice"] = hl.fastest_us / hl.choice_us
    hl["oracle"] = hl.fastest_us / np.where(hr, hus.min(axis=1), hl.choice_us)
    for j, m in enumerate(members):  # NaN: the member did not run the layer
        hl[m] = hl.fastest_us / np.where(hr, np.where(np.isfinite(hus[:, j]), hus[:, j], np.nan), hl.choice_us)
    size = grafted_nodes(router, models)
    dag = route_ir(router, models, tuple(dict.fromkeys(c for m in members for c in models[m].classes)))
    Xall = features.frame(hl).to_numpy(dtype=np.int64)  # the one model answers what router + members answer
    if any(dag.predict(x) != models[m].predict(x) for x, m in zip(Xall.tolist(), router.predict(Xall))):
        raise SystemExit(f"{choice}: the grafted model disagrees with its router and members")

    also = " (the choice's own pick on pointwise layers)" if partial else ""
    cols = {f"shipped choice `{model_key(choice).value}`": "choice", f"router over the members{also}": "routed",
            **{f"`{m}` alone{also}": m for m in members}, f"best of the members' picks{also}": "oracle"}
    return [
        f"## `{choice}`: router between " + ", ".join(f"`{m}`" for m in members), "",
        "| set | picks | all layers: geomean / P10 / worst | > 8 GFLOP: layers, geomean / P10 / worst |", "|---|---|---|---|",
        *table_rows(f"leave-out ({len(lay)} layers)", lay, cols),
        *table_rows(f"14 held-out networks ({len(hl)} layers)", hl, cols), "",
        f"- router hyper-parameters (depth, min leaf) chosen per leave-out fold: {chosen}; on every training problem: "
        f"{h_all} ({router.get_n_leaves()} leaves; CV grouped by {cv_groups})",
        f"- the same leave-out routing with other seeds of the router (its CV folds' shuffle and its tree's feature "
        f"order; the table above is seed 0):", *seed_lines,
        f"- one model of that router and its members (`predictor.route.route_ir`, each member's tree shared) holds "
        f"{len(dag.nodes)} nodes; with a copy of the member's tree at each router leaf (pruned to the leaf's feature "
        f"box) it would hold {size} (members: "
        + ", ".join(f"`{m}` {len(models[m].nodes)}" for m in members) + "; the shipped choice's tree "
        f"{len(TreeIR.load(ROOT / f'models/h200-{choice}.tree.json').nodes)})",
        "- layers routed to each member, leave-out: " + ", ".join(
            f"`{m}` {((route == j) & lr).mean():.1%}" for j, m in enumerate(members))
        + "; held-out: " + ", ".join(f"`{m}` {((hroute == j) & hr).mean():.1%}" for j, m in enumerate(members)), "",
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--cv-groups", default="network", choices=("problem", "network"))
    ap.add_argument("--seeds", type=int, default=4, help="router seeds of the leave-out routing (default 4)")
    args = ap.parse_args()
    lines = [
        "# A family router over the single-family models", "",
        "generated by scripts/router_experiment.py, do not edit; regenerate with:", "",
        f"    python scripts/router_experiment.py --out {args.out}"
        + (f" --cv-groups {args.cv_groups}" if args.cv_groups != "network" else "")
        + (f" --seeds {args.seeds}" if args.seeds != 4 else ""), "",
        (__doc__ or "").split("\n\n", 1)[1].split("\n\n    python")[0], "",
    ]
    for choice, lono_dir, member_dirs in CASES.values():
        lines += run_case(choice, lono_dir, member_dirs, args.cv_groups, args.seeds)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "REPORT.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Variants of the shipped ``f16nhwc90`` model's student (kind ``soft``), on networks it never saw.

Re-runs the leave-out folds of ``reports/lono/h200-f16nhwc90`` (same sweeps, 6 network groups, each fold's
hyper-parameters as that report chose them, read from its REPORT.md) once per arm of ``--arms``:

* ``base``: the shipped method; must reproduce the report's picks (the last column);
* ``w=W``: the student tree's training rows of network layers (and their perturbed copies) weighted ``W``;
* ``tau=T``: the soft labels' temperature ``T`` (shipped 0.05);
* ``copies=C``: ``C`` perturbed copies of each training problem labelled by the teacher (shipped 16).

Fixed hyper-parameters, not chosen per fold for each arm: a screen, not a leave-out report.

    python scripts/student_variants.py --arms base w=3 w=10 --out reports/lono/experiments/student-variants/net-weight.md
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from predictor import fitting  # noqa: E402
from predictor.features import FEATURE_SETS  # noqa: E402
from predictor.lono import load_sweeps, lono_split, members, network_groups, networks  # noqa: E402
from predictor.model_key import model_key  # noqa: E402
from predictor.portfolio import family_table, metrics, picked_times  # noqa: E402

REPORT = ROOT / "reports" / "lono" / "h200-f16nhwc90"
FAMILY = "f16nhwc90"


def report_settings(path: Path) -> tuple[list[Path], dict[str, tuple[int, str, int, int]]]:
    """(the sweeps of the report's command, each held-out group's chosen (k, weighting, min leaf, depth))."""
    text = path.read_text()
    command = re.search(r"^    python -m predictor\.lono (.*)$", text, re.M).group(1).split()  # type: ignore[union-attr]
    sweeps = [ROOT / a for a in command if a.endswith(".parquet")]
    chosen = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 10 and cells[0] == FAMILY and cells[2] == "`soft`":
            chosen[cells[1].strip("`")] = (int(cells[4]), cells[5], int(cells[6]), int(cells[7]))
    return sweeps, chosen


class _Weights:
    """The student's sample weights, set per fit (the soft kind's ``DecisionTreeRegressor.fit`` gets them)."""

    rows: np.ndarray | None = None


def _weighted_regressor() -> type:
    from sklearn.tree import DecisionTreeRegressor

    class Weighted(DecisionTreeRegressor):
        def fit(self, X: Any, y: Any, sample_weight: Any = None, check_input: bool = True) -> Any:
            w = _Weights.rows
            assert w is not None and len(w) == len(X), "the weights do not match the student's rows"
            return super().fit(X, y, sample_weight=w, check_input=check_input)

    return Weighted


def main(argv: list[str] | None = None) -> int:
    import sklearn.tree

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arms", nargs="+", default=["base"])
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    t0 = time.time()
    sweeps, chosen = report_settings(REPORT / "REPORT.md")
    df, _ = load_sweeps(sweeps)
    table = family_table(df, model_key(FAMILY)).table
    X = table.features().to_numpy(dtype=np.int64)[:, :len(FEATURE_SETS["tiles"])]
    names = networks(table)
    of = {n: members(table, n) for n in names}
    is_net = np.logical_or.reduce(list(of.values()))
    report = pd.read_csv(REPORT / "layers.csv")
    shipped = report.set_index(["network", "shape_key"])["pick"]
    index = {c: j for j, c in enumerate(table.configs)}
    plain = sklearn.tree.DecisionTreeRegressor
    records = []
    for group in network_groups(names, 6):
        combo = chosen[" ".join(group)]
        tr, te = lono_split(table, group)
        train_t, test_t = table.subset(tr), table.subset(te)
        label, _ = fitting.portfolio_targets(train_t, fitting.greedy_portfolio(train_t, combo[0]))
        keep = label >= 0
        for arm in a.arms:
            what, _, value = arm.partition("=")
            w = float(value) if what == "w" else 1.0
            copies = int(value) if what == "copies" else fitting.COPIES["soft"]
            base = np.where(is_net[tr][keep], w, 1.0)
            _Weights.rows = np.concatenate([base, np.repeat(base, copies)])
            saved = (dict(fitting.SOFT), dict(fitting.COPIES))
            if what == "tau":
                fitting.SOFT["soft"] = float(value)
            fitting.COPIES["soft"] = copies
            sklearn.tree.DecisionTreeRegressor = _weighted_regressor()
            try:
                fitted = fitting.fit_model(train_t, X[tr], "soft", combo, 0)
            finally:
                sklearn.tree.DecisionTreeRegressor = plain
                fitting.SOFT.update(saved[0])
                fitting.COPIES.update(saved[1])
            picks = np.array([index[c] for c in fitted.model.predict(X[te])])
            times = picked_times(test_t, picks)
            for i, row in enumerate(te):
                for n in (n for n in group if of[n][row]):
                    records.append({"arm": arm, "network": n, "shape_key": table.keys[row],
                                    "fastest_us": test_t.oracle[i], "pick_us": times[i],
                                    "pick": table.configs[picks[i]]})
        print(f"group {' '.join(group)} done ({time.time() - t0:.0f} s)", flush=True)
    d = pd.DataFrame(records)
    d = d.merge(report[["network", "shape_key", "gflop"]], on=["network", "shape_key"], validate="many_to_one")
    rows = []
    for arm in a.arms:
        g = d[d.arm == arm]
        same = (g.set_index(["network", "shape_key"])["pick"] == shipped.reindex(
            g.set_index(["network", "shape_key"]).index)).mean()
        cell = lambda s: "{geomean:.4f} / {p10:.3f} / {worst:.3f}".format(  # noqa: E731
            **metrics(s.fastest_us.to_numpy(), s.pick_us.to_numpy()))
        big = g[g.gflop > 8]
        rows.append(f"| `{arm}` | {len(g)} | {cell(g)} | {cell(big)} ({len(big)}) | {same:.3f} |")
    text = "\n".join([
        "# Variants of the `f16nhwc90` model's student (`soft`), on the leave-out folds", "",
        f"- command: `python scripts/student_variants.py --arms {' '.join(a.arms)} --out {a.out}`",
        f"- the leave-out folds of `reports/lono/h200-f16nhwc90` (its sweeps, 6 network groups, each fold's "
        f"hyper-parameters as that report chose them); {int(is_net.sum())} of the {table.n_shapes} problems are "
        f"network layers; {time.time() - t0:.0f} s on this machine", "",
        "| arm | layers | all: geomean / P10 / worst | > 8 GFLOP | same pick as the report |",
        "|---|---|---|---|---|", *rows, ""])
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Experiment: does another setting of the ``cost`` teacher (:mod:`predictor.cost_teacher`) rank configs better on
networks it never saw?  The teacher is what the ``cost`` / ``dense`` / ``blend`` trees learn from, so its own argmin
is about as far as they can get (``reports/lono/experiments/README.md``: the student keeps most of it).

For each of the 6 leave-out network groups of ``reports/lono`` (the same split: :func:`predictor.lono.lono_split`),
every variant is fitted on the training problems over the greedy portfolio of :data:`predictor.fitting.TEACHER_CONFIGS`
configs, and its argmin over those configs (``wide``) and over the greedy portfolio of 24 (``k24``) is scored on the
held-out layers: fastest time of the whole grid / time of the pick, each layer once.  Hyper-parameters are not chosen
inside folds here; this ranks variants, it does not pick a model.

    python scripts/teacher_variants.py SWEEP [SWEEP ...] --family f16nhwc90 --variants base lr05 ... --out DIR
"""
from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from predictor import cost_teacher  # noqa: E402
from predictor.fitting import REGRET_CLIP, TEACHER_CONFIGS, regret_matrix  # noqa: E402
from predictor.lono import gflop, load_sweeps, lono_split, network_groups, networks  # noqa: E402
from predictor.model_key import model_key  # noqa: E402
from predictor.portfolio import family_table, greedy_portfolio, picked_times  # noqa: E402

#: variant name -> (regressor parameters replacing cost_teacher.PARAMS', sample weighting of the pairs)
VARIANTS: dict[str, tuple[dict[str, Any], str]] = {
    "base": ({}, "none"),
    "lr05": ({"learning_rate": 0.05, "max_iter": 2000}, "none"),
    "leaves127": ({"max_leaf_nodes": 127}, "none"),
    "leaf5": ({"min_samples_leaf": 5}, "none"),
    "abs": ({"loss": "absolute_error"}, "none"),
    "near": ({}, "near0.1"),          # pairs near their problem's fastest weigh more: exp(-regret / 0.1) + 0.1
    "near0.05": ({}, "near0.05"),
    "near0.2": ({}, "near0.2"),
    "near0.4": ({}, "near0.4"),
    "near_l127": ({"max_leaf_nodes": 127}, "near0.1"),
    "near_abs": ({"loss": "absolute_error"}, "near0.1"),
    "inv": ({}, "inv"),               # weight 1 / (regret + 0.05)
    "bag3": ({"max_features": 0.7}, "bag3"),  # mean of 3 seeds with feature subsampling at each split
}


def _fit_predict(X_tr: np.ndarray, R: np.ndarray, X_te: np.ndarray, configs: list[str], variant: str) -> np.ndarray:
    from sklearn.ensemble import HistGradientBoostingRegressor

    params, weighting = VARIANTS[variant]
    C, fields = cost_teacher.config_matrix(configs)
    A_tr, A_te = cost_teacher.pair_matrix(X_tr, C, fields), cost_teacher.pair_matrix(X_te, C, fields)
    y = R.ravel()
    w = None
    if weighting.startswith("near"):
        w = np.exp(-y / float(weighting[4:])) + cost_teacher.NEAR_FLOOR  # CostTeacher(near=...)'s weights
    elif weighting == "inv":
        w = 1.0 / (y + 0.05)
    preds = []
    for seed in range(3 if weighting == "bag3" else 1):
        model = HistGradientBoostingRegressor(random_state=seed, **{**cost_teacher.PARAMS, **params})
        model.fit(A_tr, y, sample_weight=w)
        preds.append(model.predict(A_te))
    return np.mean(preds, axis=0).reshape(len(X_te), len(configs))


def _task(args: tuple) -> tuple[str, np.ndarray, dict[str, np.ndarray]]:
    """(variant, held-out rows, picks over ``wide`` and ``k24``) of one group."""
    table, X, group, variant = args
    tr, te = lono_split(table, group)
    sub = table.subset(tr)
    cols = sorted(greedy_portfolio(sub, TEACHER_CONFIGS))
    R = np.minimum(regret_matrix(sub)[:, cols], REGRET_CLIP)
    P = _fit_predict(X[tr], R, X[te], [table.configs[j] for j in cols], variant)
    k24 = greedy_portfolio(sub, 24)
    pos = [cols.index(j) for j in k24]
    return variant, te, {"wide": np.array([cols[j] for j in np.argmin(P, axis=1)]),
                         "k24": np.array([k24[j] for j in np.argmin(P[:, pos], axis=1)])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweeps", nargs="+", type=Path)
    ap.add_argument("--family", required=True)
    ap.add_argument("--variants", nargs="+", default=["base"], choices=sorted(VARIANTS))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    df, _ = load_sweeps(a.sweeps)
    table = family_table(df, model_key(a.family)).table
    X = table.features().to_numpy(dtype=np.int64)
    groups = network_groups(networks(table), 6)
    tasks = [(table, X, g, v) for v in a.variants for g in groups]
    with ProcessPoolExecutor(a.jobs) as pool:
        done = list(pool.map(_task, tasks))
    rows = []
    for variant in a.variants:
        for which in ("wide", "k24"):
            s, big = [], []
            for v, te, picks in done:
                if v != variant:
                    continue
                sub = table.subset(te)
                s.append(sub.oracle / picked_times(sub, picks[which]))
                big.append(gflop(sub.shapes) > 8)
            s, big = np.concatenate(s), np.concatenate(big)
            row = {"variant": variant, "configs": which, "layers": len(s)}
            for name, m in (("all", slice(None)), ("gt8", big)):
                row[f"{name}_geomean"] = float(np.exp(np.mean(np.log(s[m]))))
                row[f"{name}_p10"] = float(np.quantile(s[m], 0.1))
                row[f"{name}_worst"] = float(s[m].min())
                row[f"{name}_under085"] = int((s[m] < 0.85).sum())
            rows.append(row)
    d = pd.DataFrame(rows)
    a.out.mkdir(parents=True, exist_ok=True)
    d.to_csv(a.out / f"teacher_variants-{a.family}.csv", index=False, float_format="%.4f")
    print(d.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

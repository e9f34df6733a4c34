"""Experiment: does a student tree that learns the cost teacher's *soft* answer keep more of it than one that learns
its argmin?  ``dense`` fits a ``DecisionTreeClassifier`` on the teacher's argmin over the portfolio (hard labels);
here also a multi-output ``DecisionTreeRegressor`` on ``softmax(-log-regret / tau)`` over the portfolio (for one-hot
targets its squared error is the Gini impurity, so this is Gini on soft labels; a leaf answers its largest mean),
and one on the predicted log-regrets themselves (a leaf answers its least mean).  Same teacher, training problems,
16 perturbed copies and portfolio for every student of a group (the 6 network groups of ``reports/lono``).
Hyper-parameters are *not* chosen inside the folds: every (student, depth, min leaf) is scored on the held-out
groups, equally optimistic for every student, to see which student to try with the full protocol.

    python scripts/soft_student.py SWEEP [SWEEP ...] --family f16nhwc90 --out DIR [--groups G] [--jobs J]
"""
from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from predictor.cost_teacher import CostTeacher  # noqa: E402
from predictor.fitting import (COPIES, REGRET_CLIP, TEACHER_CONFIGS, regret_matrix, soft_labels,  # noqa: E402
                               synthetic_neighbours)
from predictor.lono import BIG_GFLOP, gflop, load_sweeps, lono_split, network_groups, networks  # noqa: E402
from predictor.model_key import model_key  # noqa: E402
from predictor.portfolio import family_table, greedy_portfolio, picked_times  # noqa: E402

K = 24
DEPTHS = (12, 16, 20)
MIN_LEAF = (8, 16)
TAUS = (0.02, 0.05, 0.1)


def _group(args):
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    table, X, group, copies = args
    t0 = time.time()
    tr, te = lono_split(table, group)
    sub = table.subset(tr)
    wide = greedy_portfolio(sub, TEACHER_CONFIGS)
    port = greedy_portfolio(sub, K)
    cols = sorted(set(wide) | set(port))
    R = np.minimum(regret_matrix(sub)[:, cols], REGRET_CLIP)
    teacher = CostTeacher([table.configs[j] for j in cols], 0).fit(X[tr], R)
    pos = [cols.index(j) for j in port]
    out = {("teacher", 0, 0, 0.0): [port[j] for j in np.argmin(teacher.predict(X[te])[:, pos], axis=1)]}
    Z = np.vstack([X[tr], synthetic_neighbours(X[tr], copies, 0)]).astype(np.float32)
    P = teacher.predict(Z)[:, pos]
    labels = np.argmin(P, axis=1)
    Xte = X[te].astype(np.float32)
    timings = {"teacher": time.time() - t0}
    for depth in DEPTHS:
        for leaf in MIN_LEAF:
            t = time.time()
            clf = DecisionTreeClassifier(max_depth=depth, min_samples_leaf=leaf, random_state=0).fit(Z, labels)
            out[("hard", depth, leaf, 0.0)] = [port[j] for j in clf.classes_[clf.predict_proba(Xte).argmax(1)]]
            timings["hard"] = timings.get("hard", 0) + time.time() - t
            t = time.time()
            reg = DecisionTreeRegressor(max_depth=depth, min_samples_leaf=leaf, random_state=0).fit(Z, P)
            out[("regret", depth, leaf, 0.0)] = [port[j] for j in reg.predict(Xte).argmin(1)]
            timings["regret"] = timings.get("regret", 0) + time.time() - t
            for tau in TAUS:
                t = time.time()
                reg = DecisionTreeRegressor(max_depth=depth, min_samples_leaf=leaf, random_state=0)
                reg.fit(Z, soft_labels(P, tau))
                out[("soft", depth, leaf, tau)] = [port[j] for j in reg.predict(Xte).argmax(1)]
                timings["soft"] = timings.get("soft", 0) + time.time() - t
    print(f"group {group[0]}...: {', '.join(f'{k} {v:.0f} s' for k, v in timings.items())}", flush=True)
    return te, out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("sweeps", nargs="+", type=Path)
    ap.add_argument("--family", default="f16nhwc90")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--groups", type=int, default=6, help="score only the first GROUPS of the 6 groups (a quick check)")
    ap.add_argument("--copies", type=int, default=COPIES["dense"])
    a = ap.parse_args()
    df, _ = load_sweeps(a.sweeps)
    table = family_table(df, model_key(a.family)).table
    X = table.features().to_numpy(dtype=np.int64)
    tasks = [(table, X, g, a.copies) for g in network_groups(networks(table), 6)][:a.groups]
    with ProcessPoolExecutor(a.jobs) as pool:
        parts = list(pool.map(_group, tasks))
    rows = []
    for key in parts[0][1]:
        s, big = [], []
        for te, out in parts:
            sub = table.subset(te)
            s.append(sub.oracle / picked_times(sub, np.asarray(out[key])))
            big.append(gflop(sub.shapes) > BIG_GFLOP)
        s = np.concatenate(s)
        row = {"student": key[0], "depth": key[1], "min_leaf": key[2], "tau": key[3], "layers": len(s),
               "geomean": float(np.exp(np.mean(np.log(s)))), "p10": float(np.quantile(s, 0.1)),
               "worst": float(s.min()), "under_085": int((s < 0.85).sum())}
        b = s[np.concatenate(big)]
        row.update(big=len(b), big_geomean=float(np.exp(np.mean(np.log(b)))), big_p10=float(np.quantile(b, 0.1)))
        rows.append(row)
    d = pd.DataFrame(rows).sort_values("geomean", ascending=False)
    a.out.mkdir(parents=True, exist_ok=True)
    d.to_csv(a.out / "soft_student.csv", index=False, float_format="%.4f")
    print(d.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

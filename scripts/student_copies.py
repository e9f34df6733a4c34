"""Experiment: how much of the ``cost`` teacher's choice a single exported tree keeps, by the number of perturbed
copies of each training problem it learns from and its size (f16nhwc90, the 6 network groups of
``reports/lono``).  Hyper-parameters are *not* chosen inside the folds here: every (copies, k, depth, min leaf)
is scored on the held-out groups, to see how far the student can get, not to pick a model.

    python scripts/student_copies.py SWEEP [SWEEP ...] --family f16nhwc90 --out DIR
"""
from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from predictor.cost_teacher import CostTeacher  # noqa: E402
from predictor.fitting import REGRET_CLIP, TEACHER_CONFIGS, regret_matrix, synthetic_neighbours  # noqa: E402
from predictor.lono import load_sweeps, lono_split, network_groups, networks  # noqa: E402
from predictor.model_key import model_key  # noqa: E402
from predictor.portfolio import family_table, greedy_portfolio, picked_times  # noqa: E402

COPIES = (8, 32)
KS = (16, 24)
DEPTHS = (12, 16, 20, 24)
MIN_LEAF = (1, 4, 16)


def _group(args):
    from sklearn.tree import DecisionTreeClassifier

    table, X, group = args
    tr, te = lono_split(table, group)
    sub = table.subset(tr)
    wide = greedy_portfolio(sub, TEACHER_CONFIGS)
    cols = sorted(wide)
    R = np.minimum(regret_matrix(sub)[:, cols], REGRET_CLIP)
    teacher = CostTeacher([table.configs[j] for j in cols], 0).fit(X[tr], R)
    held_out = teacher.predict(X[te])
    out = {("teacher", 32, 0, 0): [cols[j] for j in np.argmin(held_out, axis=1)]}
    for copies in COPIES:
        Z = np.vstack([X[tr], synthetic_neighbours(X[tr], copies, 0)])
        P = teacher.predict(Z)
        for k in KS:
            port = greedy_portfolio(sub, k)
            pos = [cols.index(j) for j in port]
            labels = np.argmin(P[:, pos], axis=1)
            out[("teacher", copies, k, 0)] = [port[j] for j in np.argmin(held_out[:, pos], axis=1)]
            for depth in DEPTHS:
                for leaf in MIN_LEAF:
                    clf = DecisionTreeClassifier(max_depth=depth, min_samples_leaf=leaf, random_state=0)
                    clf.fit(Z.astype(np.float32), labels)
                    out[("student", copies, k, depth, leaf)] = [port[j] for j in clf.predict(X[te].astype(np.float32))]
                    out[("leaves", copies, k, depth, leaf)] = [clf.get_n_leaves()]
    return te, out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("sweeps", nargs="+", type=Path)
    ap.add_argument("--family", default="f16nhwc90")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--jobs", type=int, default=6)
    ap.add_argument("--groups", type=int, default=6, help="score only the first GROUPS of the 6 groups (a quick check)")
    a = ap.parse_args()
    df, _ = load_sweeps(a.sweeps)
    table = family_table(df, model_key(a.family)).table
    X = table.features().to_numpy(dtype=np.int64)
    tasks = [(table, X, g) for g in network_groups(networks(table), 6)][:a.groups]
    with ProcessPoolExecutor(a.jobs) as pool:
        parts = list(pool.map(_group, tasks))
    rows = []
    for key in parts[0][1]:
        if key[0] == "leaves":
            continue
        s = []
        for te, out in parts:
            sub = table.subset(te)
            s.append(sub.oracle / picked_times(sub, np.asarray(out[key])))
        s = np.concatenate(s)
        leaves = [out[("leaves", *key[1:])][0] for _, out in parts] if key[0] == "student" else [0]
        rows.append({"model": key[0], "copies": key[1], "k": key[2], "depth": key[3] if len(key) > 3 else 0,
                     "min_leaf": key[4] if len(key) > 4 else 0, "geomean": float(np.exp(np.mean(np.log(s)))),
                     "p10": float(np.quantile(s, 0.1)), "worst": float(s.min()), "leaves_mean": float(np.mean(leaves))})
    d = pd.DataFrame(rows).sort_values("geomean", ascending=False)
    a.out.mkdir(parents=True, exist_ok=True)
    d.to_csv(a.out / "student_copies.csv", index=False)
    print(d.head(40).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Experiment (session 20): the ``dense`` student tree with sample weight max(1, log2(GFLOP)) on one held-out
group of ``i8nc32`` (the leave-network-group-out protocol of ``reports/lono/h200-i8nc32``), against the shipped
method's fold.

    python scripts/weighted_student_fold.py run 3 2 OUT.json       # group 3, 2 threads (about 22 min on 2 cores)
    python scripts/weighted_student_fold.py compare SHIPPED.json WEIGHTED.json

The weight reaches the student through a wrapper of scikit-learn's ``DecisionTreeClassifier.fit`` in this
process only (a fit without weights on the feature columns gets them); the library is unchanged. ``SHIPPED.json``:
the fold kept by ``predictor.lono --parts`` for that group.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def run(group_index: int, threads: int, out: Path) -> None:
    import sklearn.tree

    from predictor.features import FEATURE_NAMES
    from predictor.lono import Settings, evaluate_network, load_sweeps, network_groups, networks
    from predictor.model_key import model_key
    from predictor.portfolio import family_table

    col = {f: i for i, f in enumerate(FEATURE_NAMES)}
    plain_fit = sklearn.tree.DecisionTreeClassifier.fit

    def weighted_fit(self, X, y, sample_weight=None, check_input=True):  # type: ignore[no-untyped-def]
        if sample_weight is None and X.shape[1] == len(FEATURE_NAMES):
            x = np.asarray(X, np.float64)
            gflop = 2 * x[:, col["gemm_m"]] * x[:, col["gemm_n"]] * x[:, col["gemm_k"]] / 1e9
            sample_weight = np.maximum(1.0, np.log2(np.maximum(gflop, 1e-9)))
        return plain_fit(self, X, y, sample_weight=sample_weight, check_input=check_input)

    sklearn.tree.DecisionTreeClassifier.fit = weighted_fit
    df, _ = load_sweeps([ROOT / "sweeps/h200.parquet", ROOT / "sweeps/h200-nets.parquet"])
    key = model_key("i8nc32")
    table = family_table(df, key).table
    X = table.features().to_numpy(dtype=np.int64)
    settings = Settings(kinds=("dense",), max_portfolio=24, folds=5, seed=0, groups=6, tolerance=0.002)
    group = network_groups(networks(table), settings.groups)[group_index]
    layers, folds = evaluate_network(table, X, group, settings, key.value, threads)
    out.write_text(json.dumps([layers, folds], default=lambda o: o.item()))


def compare(shipped: Path, weighted: Path) -> None:
    def g(s: pd.Series) -> float:
        return float(np.exp(np.log(s).mean()))

    (bl, bf), (wl, wf) = (json.loads(p.read_text()) for p in (shipped, weighted))
    b, w = pd.DataFrame(bl), pd.DataFrame(wl)
    if not (b["shape_key"].tolist() == w["shape_key"].tolist() and b["network"].tolist() == w["network"].tolist()):
        raise SystemExit("the two folds hold other layers (another group or other inputs)")
    print(f"held-out group: {bf[0]['network']}")
    print("| | layers | shipped `dense`: geomean / P10 / worst | weighted: geomean / P10 / worst | tuned: shipped / weighted |")
    print("|---|---|---|---|---|")
    for name, sel in (("all", b.gflop >= 0), ("> 8 GFLOP", b.gflop > 8), ("<= 8 GFLOP", b.gflop <= 8)):
        x, y = b[sel], w[sel.to_numpy()]
        print(f"| {name} | {len(x)} | {g(x.score):.4f} / {x.score.quantile(.1):.3f} / {x.score.min():.3f} "
              f"| {g(y.score):.4f} / {y.score.quantile(.1):.3f} / {y.score.min():.3f} | {g(x.tuned):.4f} / {g(y.tuned):.4f} |")
    for name, f in (("shipped", bf[0]), ("weighted", wf[0])):
        print(f"- {name} fold chose k = {f['k']}, min_samples_leaf = {f['min_samples_leaf']}, max_depth = "
              f"{f['max_depth']} (CV geomean {f['cv_geomean']})")


if __name__ == "__main__":
    if sys.argv[1:2] == ["run"]:
        run(int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))
    else:
        compare(Path(sys.argv[2]), Path(sys.argv[3]))

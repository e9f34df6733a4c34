"""What a teacher-grown tree's leaves should answer (session 27): the trees of a leave-network-group-out report,
refitted with each fold's chosen hyper-parameters, their leaves answering by several rules, scored on the held-out
layers.

    python scripts/leaf_rules.py REPORT.md FAMILY KIND SWEEP... > OUT.md

REPORT.md: a ``predictor.lono`` report whose "Chosen per fold" table gives each held-out group's (k, weighting, min
leaf, depth) for KIND (a teacher kind: ``cost``, ``dense``); the groups are rebuilt from SWEEP... as ``lono --groups 6``
builds them. Rules (portfolio members only, except ``real_all``):

* ``majority``: the leaf's majority teacher label (what ``cost`` / ``dense`` answer; reproduces the report's picks);
* ``tsum``: least mean teacher-predicted (clipped) log-regret over the leaf's samples (problems and perturbed copies);
* ``real_port`` / ``real_all``: least total measured log-regret over the leaf's training problems, among the
  portfolio / the whole grid (``tsum`` where the leaf holds none); ``real_port_majfb``: ``majority`` there instead;
  ``real_port_m3``: measured only where the leaf holds at least 3 training problems;
* ``mixL``: least mean teacher-predicted + L x mean measured log-regret (``mix2.0`` is the ``blend`` kind:
  ``predictor.fitting.BLEND``);
* ``tailT xM``: ``tsum`` with predicted log-regret above T counted (1 + M) times.

Each layer is scored once (a layer of several networks is not repeated, unlike ``layers.csv``), so the figures differ
slightly from the report's. Picks are not re-chosen by cross-validation per rule: the trees are the majority rule's.
"""
import re
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from predictor import fitting as F  # noqa: E402
from predictor.lono import gflop, load_sweeps, lono_split, network_groups, networks  # noqa: E402
from predictor.model_key import model_key  # noqa: E402
from predictor.portfolio import family_table, greedy_portfolio, picked_times  # noqa: E402


def summary(s: np.ndarray) -> str:
    if not len(s):
        return "–"
    return f"{np.exp(np.log(s).mean()):.4f} / {np.quantile(s, 0.1):.3f} / {s.min():.3f} | {(s < 0.85).sum()}"


def main() -> None:
    report, family, kind = sys.argv[1], sys.argv[2], sys.argv[3]
    sweeps = [Path(p) for p in sys.argv[4:]]
    rows = re.findall(r"^\| " + re.escape(family) + r" \| `([^`]*)` \| `(\w+)` \| \d+ \(\d+\) \| (\d+) \| (\w+) \| (\d+) \| (\d+) \|",
                      Path(report).read_text(), re.M)
    combos = {g: (int(k), w, int(ml), int(d)) for g, kd, k, w, ml, d in rows if kd == kind}
    df, _ = load_sweeps(sweeps)
    table = family_table(df, model_key(family), None).table
    X = table.features().to_numpy(dtype=np.int64)
    out = []
    for gi, group in enumerate(network_groups(networks(table), 6)):
        combo = combos[" ".join(group)]
        tr, te = lono_split(table, group)
        tt, te_t = table.subset(tr), table.subset(te)
        t0 = time.time()
        F._TEACHER_CACHE.clear()
        fitted = F.fit_model(tt, X[tr], kind, combo, 0)
        (Z, pred), = F._TEACHER_CACHE.values()
        port = np.array(greedy_portfolio(tt, combo[0]))
        all_regret = F.regret_matrix(tt)
        teacher = F.cost_teacher_set(tt, port, greedy_portfolio(tt, F.TEACHER_CONFIGS), all_regret)
        est = fitted.model.estimator
        leaf_z, leaf_x = est.apply(Z.astype(np.float32)), est.apply(X[tr].astype(np.float32))
        nodes = est.tree_.node_count

        def sums(M: np.ndarray, leaves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            S = np.zeros((nodes, M.shape[1]))
            np.add.at(S, leaves, M)
            return S, np.bincount(leaves, minlength=nodes)

        P = pred[:, list(teacher.members)]
        S_t, n_t = sums(P, leaf_z)
        S_r, n_r = sums(all_regret[:, port], leaf_x)
        S_a, _ = sums(all_regret, leaf_x)
        index = {c: j for j, c in enumerate(tt.configs)}
        majority = np.array([index[c] for c in fitted.model.node_labels])
        tsum = port[np.argmin(S_t, axis=1)]
        rules = {"majority": majority, "tsum": tsum,
                 "real_port": np.where(n_r > 0, port[np.argmin(S_r, axis=1)], tsum),
                 "real_all": np.where(n_r > 0, np.argmin(S_a, axis=1), tsum),
                 "real_port_majfb": np.where(n_r > 0, port[np.argmin(S_r, axis=1)], majority),
                 "real_port_m3": np.where(n_r >= 3, port[np.argmin(S_r, axis=1)], tsum)}
        for lam in (0.5, 1.0, 2.0, 4.0, 8.0):
            M = S_t / np.maximum(n_t, 1)[:, None] + lam * S_r / np.maximum(n_r, 1)[:, None]
            rules[f"mix{lam}"] = port[np.argmin(M, axis=1)]
        for tau, mu in ((0.105, 2.0), (0.105, 5.0), (0.2, 5.0)):
            rules[f"tail{tau}x{mu}"] = port[np.argmin(sums(P + mu * np.maximum(P - tau, 0), leaf_z)[0], axis=1)]
        leaf_te = est.apply(X[te].astype(np.float32))
        assert (np.array([index[c] for c in fitted.model.predict(X[te])]) == majority[leaf_te]).all()
        fl = gflop(te_t.shapes)
        for name, answers in rules.items():
            score = te_t.oracle / picked_times(te_t, answers[leaf_te])
            out += [{"group": gi, "rule": name, "gflop": fl[i], "score": score[i]} for i in range(len(te))]
        print(f"<!-- group {gi}: {combo}, {time.time() - t0:.0f} s -->", flush=True)
    d = pd.DataFrame(out)
    print(f"\n`{family}`, `{kind}` trees, {d.groupby('rule').size().iloc[0]} layers\n")
    print("| leaf rule | all layers: geomean / P10 / worst \\| layers < 0.85 | > 8 GFLOP |\n|---|---|---|")
    for name, g in d.groupby("rule", sort=False):
        print(f"| `{name}` | {summary(g.score.to_numpy())} | {summary(g[g.gflop > 8].score.to_numpy())} |")


if __name__ == "__main__":
    main()

"""Prototype (session 46): a GEMM choice's pointwise layers routed too, from its leave-out reports. Per network group,
a router (predictor.route.fit_router) on the fold's pointwise training problems over {conv members..., GEMM family}
(labels: the fastest family grid); a held-out pointwise layer sent to the GEMM family keeps the choice report's
pick (its pointwise tree, which may pick any family), one sent to a conv member takes that member's leave-out pick.
Prints the per-fold routers and the figures before / after; writes the new per-layer rows to LAYERS_CSV.

    python scripts/pointwise_router_experiment.py reports/lono/h200-choice3 f16nhwc=reports/lono/h200-f16nhwc \
        f16nhwc90=reports/lono/h200-f16nhwc90 reports/lono/experiments/h200-choice3-pointwise-router/layers.csv
"""
import sys, math
from pathlib import Path
import numpy as np, pandas as pd
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from predictor.route_lono import evaluate, report_command, _option, KEY
from predictor.lono import load_sweeps, lono_split, network_groups, networks
from predictor.model_key import model_key
from predictor.portfolio import family_table
from predictor.features import FEATURE_NAMES, FEATURE_SETS, DEFAULT_FEATURE_SET
from predictor.fitting import POINTWISE
from predictor.route import family_best, fit_router, ROUTER_CV_GROUPS

choice = Path(sys.argv[1]); members = dict(a.split("=") for a in sys.argv[2:] if "=" in a)
members = {k: Path(v) for k, v in members.items()}
feat = next((a.split(":")[1] for a in sys.argv[2:] if a.startswith("features:")), None)
out, folds, described, key_s = evaluate(choice, members)
cmd = report_command(choice, "predictor.lono")
key = model_key(str(_option(cmd, "--family")))
df, _ = load_sweeps([Path(p) for p in cmd if p.endswith(".parquet")])
table = family_table(df, key, _option(cmd, "--target")).table
fs = feat or str(_option(cmd, "--features", DEFAULT_FEATURE_SET))
X = table.features().to_numpy(dtype=np.int64)[:, :len(FEATURE_SETS[fs])]
gemm = [f.value for f in key.partial][0]
names = list(members) + [gemm]
best = family_best(table, names)
pw = X[:, FEATURE_NAMES.index(POINTWISE)] > 0
row_of = {k: i for i, k in enumerate(table.keys)}
rows = np.array([row_of[k] for k in out.shape_key])
eff = np.where(np.isnan(table.times), table.worst[:, None], table.times)
col = {c: j for j, c in enumerate(table.configs)}
mine = {m: pd.read_csv(r / "layers.csv").set_index(KEY)["pick"] for m, r in members.items()}
n_groups = int(_option(cmd, "--groups", "0"))
new = out.copy()
for g in network_groups(networks(table), n_groups):
    tr_all, te = lono_split(table, g)
    tr = tr_all[pw[tr_all]]
    fit = fit_router(table.subset(tr), X[tr], best[tr], names, cv_groups=ROUTER_CV_GROUPS)
    sel = np.nonzero(out.network.isin(g).to_numpy() & pw[rows])[0]
    sent = fit.clf.predict(X[rows[sel]])
    print(" ".join(g)[:40], "router", fit.chosen, "leaves", fit.clf.get_n_leaves(), dict(zip(*np.unique(sent, return_counts=True))))
    for i, m in zip(sel, sent):
        if m == gemm:
            continue
        pick = mine[m].loc[(out.at[i, "network"], out.at[i, "shape_key"])]
        t = eff[rows[i], col[pick]] if pick in col else table.worst[rows[i]]
        new.loc[i, ["member", "pick", "pick_us", "score"]] = [f"pw:{m}", pick, t, out.at[i, "fastest_us"] / t]
g = lambda s: f"{math.exp(np.log(s).mean()):.4f} / {s.quantile(.1):.3f} / {s.min():.3f}"
for name, d in (("old", out), ("new", new)):
    big = d.gflop > 8
    p = pw[rows]
    print(name, "all", g(d.score), "| >8GF", g(d.score[big]), "| pointwise", g(d.score[p]), "| <0.85:", int((d.score < .85).sum()))
new.to_csv(sys.argv[-1], index=False)

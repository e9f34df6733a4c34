"""Tile-feature experiment (reports/lono/experiments/tile-features/): the 14 held-out networks' scores of models
trained as shipped but with ``--features tiles``, against the shipped models, as predictor.holdout scores them.

    python scripts/tile_features_holdout.py --train f16nhwc90     # trains models/h200tiles-f16nhwc90.* (uncommitted)
    python scripts/tile_features_holdout.py f16nhwc90             # scores it and the shipped h200 model

(``predictor.holdout`` scores shipped runs only; this calls its ``score_key`` with the slug ``h200tiles``.)
"""
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np

from predictor.holdout import layer_networks, score_key, training_keys
from predictor.lono import load_sweeps
from predictor.model_key import model_key
from predictor.portfolio import metrics
from predictor.report_header import report_sweeps
from predictor.shipped import SHIPPED_RUNS

run = SHIPPED_RUNS[0]
if sys.argv[1:2] == ["--train"]:
    methods = {m.key: m.cli() for m in run.methods}
    for fam in sys.argv[2:]:
        cmd = [sys.executable, "-m", "predictor.train", *run.sweeps, "--family", fam, *methods[fam], "--features",
               "tiles", "--slug", "h200tiles", "--no-export", "--quiet"]
        print(shlex.join(cmd[1:]), flush=True)
        subprocess.run(cmd, check=True)
    sys.exit(0)
df, _ = load_sweeps(report_sweeps("reports/holdout/h200/REPORT.md", "predictor.holdout"))
nets = layer_networks(Path("bench/holdout/layers"))
trained = training_keys([Path(p) for p in run.sweeps])


def cell(x: np.ndarray) -> str:
    m = metrics(np.ones(len(x)), 1 / x)
    return f"{m['geomean']:.3f} / {m['p10']:.3f} / {m['worst']:.3f} ({len(x)}; {(x < 0.85).sum()} < 0.85)"


for fam in sys.argv[1:]:
    for gpu, name in (("h200", "shipped"), ("h200tiles", "tiles")):
        d = score_key(df, model_key(fam), gpu, nets, trained, run.target)
        r, big = d["score"].to_numpy(), d["gflop"].to_numpy() > 8
        print(f"| {fam} {name} | {cell(r)} | {cell(r[big])} |")
        d.to_csv(f"reports/lono/experiments/tile-features/holdout/{fam}-{name}.csv", index=False)

"""Session 46: where a routed choice's own pointwise tree loses, split by the fastest family of each 1x1 leave-out
layer: the choice report's pick against each conv member's leave-out pick (the figures behind handing a member
family's answer to that member, ``reports/lono/experiments/README.md``).

    python scripts/pointwise_family_split.py reports/lono/h200-choice3 f16nhwc=reports/lono/h200-f16nhwc \\
        f16nhwc90=reports/lono/h200-f16nhwc90
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from predictor.lono import load_sweeps  # noqa: E402
from predictor.model_key import model_key  # noqa: E402
from predictor.portfolio import family_table  # noqa: E402
from predictor.report_header import report_command  # noqa: E402
from predictor.route import family_best  # noqa: E402

choice = Path(sys.argv[1])
members = {m: Path(p) for m, p in (a.split("=", 1) for a in sys.argv[2:])}
cmd = report_command(choice, "predictor.lono")
key = model_key(cmd[cmd.index("--family") + 1])
df, _ = load_sweeps([Path(p) for p in cmd if p.endswith(".parquet")])
table = family_table(df, key).table
fams = [f.value for f in key.families]
best = pd.DataFrame(family_best(table, fams), index=table.keys, columns=fams)
k = ["network", "shape_key"]
r = pd.read_csv(choice / "layers.csv")
r = r[(r.R == 1) & (r.S == 1) & (r.stride == 1) & (r.pad == 0) & (r.dilation == 1)]
for m, rep in members.items():
    r = r.merge(pd.read_csv(rep / "layers.csv")[k + ["pick_us"]].rename(columns={"pick_us": f"{m}_us"}), on=k)
r = r.join(best, on="shape_key")
r["fastest_family"] = r[fams].idxmin(axis=1)


def geo(s: pd.Series) -> str:
    return f"{math.exp(np.log(s).mean()):.3f}"


print(f"{len(r)} pointwise layers; the choice's pick is of the fastest family on "
      f"{int((r.pick.str.split('_').str[0] == r.fastest_family).sum())}")
for f, d in r.groupby("fastest_family"):
    line = f"fastest {f}: {len(d)} layers, choice pick {geo(d.fastest_us / d.pick_us)}"
    if f in members:
        line += f", {f} member's pick {geo(d.fastest_us / d[f'{f}_us'])}"
    print(line)

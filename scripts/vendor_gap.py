"""Where our fp16 kernels lose to cuDNN on the held-out networks' layers, from committed results: the
graph-timed layer runs of the routed fp16 choice's dispatcher against cuDNN
(bench/vendor_layers/<RUN>-shard{0,1}.csv) and the whole-grid sweeps of the same layers
(sweeps/h200-holdout-{f16nhwc,f16nhwc90,f16gemm90,f16gemm90-small}.parquet: the fastest config of all three
grids, in sweep times, as "grid best").

    python scripts/vendor_gap.py [RUN] > bench/vendor_layers/h200-holdout-gap.md

RUN defaults to h200-holdout-choice3s-tuned (the dispatcher with f16gemm90's small tiles, 2026-12-02).
"""
from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from predictor import features  # noqa: E402
PICK = "f16nhwc+f16nhwc90+f16gemm90_us"
SWEEPS = ("f16nhwc", "f16nhwc90", "f16gemm90", "f16gemm90-small")


def gm(x: pd.Series) -> float:
    return float(np.exp(np.mean(np.log(x)))) if len(x) else float("nan")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    run = args[0] if args else "h200-holdout-choice3s-tuned"
    d = pd.concat([pd.read_csv(ROOT / f"bench/vendor_layers/{run}-shard{i}.csv") for i in (0, 1)])
    s = pd.concat([pd.read_parquet(ROOT / f"sweeps/h200-holdout-{f}.parquet") for f in SWEEPS])
    s = s[s["status"] == "ok"]
    best = s.groupby("shape_key")["time_us"].min()
    d = d.join(best.rename("grid_us"), on="shape_key")
    d["pick"] = d["cudnn_us"] / d[PICK]
    d["grid"] = d["cudnn_us"] / d["grid_us"]
    d["kind"] = np.where(features.frame(d)["pointwise"] == 1, "1x1", "other")
    d["cudnn time"] = pd.cut(d["cudnn_us"], [0, 5, 10, 20, 50, 200, np.inf],
                             labels=["<= 5 µs", "5-10 µs", "10-20 µs", "20-50 µs", "50-200 µs", "> 200 µs"])
    lines = ["# Where cuDNN is faster: the held-out networks' fp16 layers", "",
             f"- command: `python scripts/vendor_gap.py {run}` ({dt.date.today().isoformat()})",
             f"- inputs: bench/vendor_layers/{run}-shard{{0,1}}.csv (our static pick through the "
             "routed fp16 choice's dispatcher and cuDNN, CUDA-graph replays on an NVIDIA H200) and "
             "sweeps/h200-holdout-{f16nhwc,f16nhwc90,f16gemm90,f16gemm90-small}.parquet (the fastest config of the three grids, "
             "sweep times on an NVIDIA H200: a different timing method, so \"grid best\" is indicative)",
             "- cells: layers: geomean of cuDNN time / our time (> 1: ours faster)", "",
             "| layers | count | cuDNN / our pick | cuDNN / grid best |", "|---|---|---|---|",
             f"| all | {len(d)} | {gm(d.pick):.3f} | {gm(d.grid):.3f} |"]
    for (kind, t), g in d.groupby(["kind", "cudnn time"], observed=True):
        lines.append(f"| {kind}, cuDNN {t} | {len(g)} | {gm(g.pick):.3f} | {gm(g.grid):.3f} |")
    for kind, g in d.groupby("kind"):
        lines.append(f"| {kind}, all | {len(g)} | {gm(g.pick):.3f} | {gm(g.grid):.3f} |")
    tiny = d[d["cudnn_us"] <= 5]
    lines += ["", f"On the {len(tiny)} layers where cuDNN takes at most 5 µs, cuDNN's median is "
              f"{tiny.cudnn_us.median():.2f} µs and the grid's best {tiny.grid_us.median():.2f} µs; no config of the "
              f"three grids runs any held-out layer in less than {best.min():.2f} µs (sweep times: back-to-back "
              "launches, not graph replays, which charge each call its launch: \"grid best\" reads slow on small layers). "
              "The small layers' graph and CUPTI kernel times, ours against cuDNN's: `bench/small_layers/` (this dispatcher: `h200-holdout-run4.md`)."]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

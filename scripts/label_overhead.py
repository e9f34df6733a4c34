"""What the collector's time of a small layer holds beyond its kernel (no GPU): for each held-out small layer of a
``bench/small_layers.py`` run, the sweep time of the config the shipped model picks (``sweeps/h200-holdout-*.parquet``:
back-to-back launches from the host, timing method 2) against the same kernel's CUPTI time and graph time in that
run, per kernel family.

    python scripts/label_overhead.py [bench/small_layers/<run>.csv] > bench/small_layers/h200-holdout-label-overhead.md

If the excess differs between families, the sweeps' labels on small problems rank families by their launch path,
not by the GPU time a graph-captured network pays.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

import predictor
from predictor.schema import SHAPE_COLUMNS

ROOT = Path(__file__).resolve().parent.parent
CHOICE = "f16nhwc+f16nhwc90+f16gemm90"
SWEEPS = ("f16gemm90-swap", "f16gemm90-small", "f16gemm90", "f16nhwc90", "f16nhwc")
DEFAULT_RUN = "bench/small_layers/h200-holdout-heuristic-run2.csv"


def main(argv: list[str] | None = None) -> int:
    run = (argv if argv is not None else sys.argv[1:]) or [DEFAULT_RUN]
    d = pd.read_csv(ROOT / run[0]).set_index("shape_key")
    s = pd.concat([pd.read_parquet(ROOT / "sweeps" / f"h200-holdout-{f}.parquet", columns=["shape_key", "config", "status",
                                                                                           "time_us"]) for f in SWEEPS])
    s = s[s["status"] == "ok"].set_index(["shape_key", "config"])["time_us"]
    shape = {"stride", "pad", "dilation"}
    d["pick"] = [predictor.select(*(int(r[c]) for c in SHAPE_COLUMNS if c not in shape),
                                  **{c: int(r[c]) for c in shape}, family=CHOICE).name for _, r in d.iterrows()]
    d["sweep_us"] = [s.get((k, c), np.nan) for k, c in zip(d.index, d["pick"])]
    d["family"] = d["pick"].str.split("_").str[0]
    d["excess"] = d["sweep_us"] - d["ours_kernel_us"]
    g = d.dropna(subset=["sweep_us"]).groupby("family")
    lines = ["# The collector's time of small layers beyond their kernels", "",
             f"- command: `python scripts/label_overhead.py {run[0]}`",
             f"- layers: the {len(d)} of `{run[0]}` (held-out networks, cuDNN at most 5 µs); picks: the shipped `{CHOICE}` "
             "model (`predictor.select`); sweep time: that config's `time_us` in `sweeps/h200-holdout-*.parquet`",
             f"- GPU and date: those of `{Path(run[0]).with_suffix('.md')}` (the CUPTI and graph times) and of the sweeps "
             "(`sweeps/README.md`), all NVIDIA H200",
             "- medians over the layers, µs", "",
             "| picked family | layers | sweep time | CUPTI kernel time | graph time | sweep - kernel | graph - kernel |",
             "|---|---|---|---|---|---|---|"]
    for fam, x in g:
        lines.append(f"| {fam} | {len(x)} | {x['sweep_us'].median():.2f} | {x['ours_kernel_us'].median():.2f} | "
                     f"{x['ours_graph_us'].median():.2f} | {x['excess'].median():.2f} | "
                     f"{(x['ours_graph_us'] - x['ours_kernel_us']).median():.2f} |")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

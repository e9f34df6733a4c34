"""Speed of one model's picks relative to another's on the same layers, from committed results:
the leave-network-out layer files of predictor.lono (sweep times of each pick) and a graph-timed
bench/vendor_layers CSV (the GEMM grid's fastest config vs the SM90 conv pick on the 1x1 layers).

    python scripts/compare_picks.py > reports/lono/compare_picks.md
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
from predictor.portfolio import effective_times  # noqa: E402
from predictor.schema import read_sweep  # noqa: E402


def gm(x: pd.Series) -> float:
    return float(np.exp(np.mean(np.log(x))))


def lono(path: str, family: str | None = None) -> pd.DataFrame:
    d = pd.read_csv(ROOT / path)
    if family:
        d = d[d["family"] == family]
    return d.drop_duplicates("shape_key").set_index("shape_key")


def ratio_row(name: str, slow: pd.DataFrame, fast: pd.DataFrame) -> str:
    k = slow.index.intersection(fast.index)
    r = slow.loc[k, "pick_us"] / fast.loc[k, "pick_us"]
    big = fast.loc[k, "gflop"] > 8
    pw = features.frame(fast.loc[k])["pointwise"] == 1
    cells = [f"{len(k)}: {gm(r):.3f}", f"{int(big.sum())}: {gm(r[big]):.3f}",
             f"{int(pw.sum())}: {gm(r[pw]):.3f}" if pw.any() else "–",
             f"{int((pw & big).sum())}: {gm(r[pw & big]):.3f}" if (pw & big).any() else "–",
             f"{int((~pw).sum())}: {gm(r[~pw]):.3f}" if (~pw).any() else "–"]
    return f"| {name} | " + " | ".join(cells) + " |"


def main() -> int:
    sm90 = lono("reports/lono/h200-f16nhwc90/layers.csv")
    choice = lono("reports/lono/h200-choice/layers.csv")
    choice3 = lono("reports/lono/h200-choice3/layers.csv")
    i8sm90 = lono("reports/lono/h200-i8nhwc90/layers.csv")
    i8sm80 = lono("reports/lono/h200-i8nhwc/layers.csv")
    i8choice = lono("reports/lono/h200-i8choice/layers.csv")
    i8choice3 = lono("reports/lono/h200-i8choice3/layers.csv")
    lines = ["# Pick speed of one model over another, same layers", "",
             f"- command: `python scripts/compare_picks.py` ({dt.date.today().isoformat()})",
             "- inputs: reports/lono/{h200-f16nhwc90,h200-i8nhwc90,h200-choice,h200-choice3,h200-i8nhwc,h200-i8choice,h200-i8choice3}/layers.csv (leave-network-group-out picks, "
             "times measured on an NVIDIA H200 in the sweeps those reports name); "
             "bench/vendor_layers/h200-gemm-best-shard0.csv (CUDA-graph timed on an NVIDIA H200)",
             "- cells: layers: geomean of (time of the first model's pick / time of the second's); > 1: the "
             "second is faster", "",
             "| first / second | all layers | > 8 GFLOP | 1x1 (pointwise) | 1x1, > 8 GFLOP | other layers |",
             "|---|---|---|---|---|---|",
             ratio_row("f16nhwc90 / f16nhwc+f16nhwc90", sm90, choice),
             ratio_row("f16nhwc+f16nhwc90 / f16nhwc+f16nhwc90+f16gemm90", choice, choice3),
             ratio_row("f16nhwc90 / f16nhwc+f16nhwc90+f16gemm90", sm90, choice3),
             ratio_row("i8nhwc90 / i8nhwc+i8nhwc90+i8gemm90", i8sm90, i8choice3),
             ratio_row("i8nhwc90+i8gemm90 / i8nhwc+i8nhwc90+i8gemm90", i8choice, i8choice3),
             ratio_row("i8nhwc / i8nhwc+i8nhwc90+i8gemm90", i8sm80, i8choice3)]
    held = pd.read_csv(ROOT / "reports/holdout/h200/layers.csv")
    shipped = {m: g.drop_duplicates("shape_key").set_index("shape_key") for m, g in held.groupby("model")}
    lines += ["", "The shipped models on the held-out networks (reports/holdout/h200/layers.csv: times measured on an "
              "NVIDIA H200 in the sweeps that report names):", "",
              "| first / second | all layers | > 8 GFLOP | 1x1 (pointwise) | 1x1, > 8 GFLOP | other layers |",
              "|---|---|---|---|---|---|"]
    lines += [ratio_row(f"{a} / {b}", shipped[a], shipped[b]) for a, b in (
        ("f16nhwc90", "f16nhwc+f16nhwc90+f16gemm90"), ("i8nhwc90", "i8nhwc+i8nhwc90+i8gemm90"),
        ("i8nhwc90+i8gemm90", "i8nhwc+i8nhwc90+i8gemm90"), ("i8nhwc", "i8nhwc+i8nhwc90+i8gemm90"))]
    s = pd.concat([read_sweep(ROOT / f"sweeps/{f}.parquet") for f in ("h200-i8nhwc", "h200-sm90-i8", "h200-sm90-i8-nets")])
    s = s[s["status"] == "ok"].assign(t=effective_times)  # the label time (the first run's re-timing is not one)
    best = s.groupby(["shape_key", "family"])["t"].min().unstack()
    net = s.groupby("shape_key")["source"].first().str.startswith("net:").reindex(best.index)
    faster = best["i8nhwc"] < best["i8nhwc90"]
    lines += ["", f"Fastest config per problem (sweeps/h200-i8nhwc.parquet, h200-sm90-i8*.parquet; NVIDIA H200): an "
              f"SM80-family int8 NHWC kernel (i8nhwc) beats the fastest SM90 int8 conv kernel (i8nhwc90) on "
              f"{faster.mean():.0%} of the {len(best)} problems ({faster[net].mean():.0%} of the {int(net.sum())} "
              "network layers)."]
    v = pd.read_csv(ROOT / "bench/vendor_layers/h200-gemm-best-shard0.csv")
    one = v[v["best_f16gemm90_us"].notna()]
    lines += ["", "Graph-timed, the 1x1 layers of bench/vendor_layers/h200-gemm-best-shard0 "
              f"({len(one)} layers): cuDNN / shipped SM90 conv pick {gm(one.cudnn_us / one.f16nhwc90_us):.3f}, "
              f"cuDNN / fastest f16gemm90 config {gm(one.cudnn_us / one.best_f16gemm90_us):.3f}, "
              f"SM90 conv pick / fastest f16gemm90 config {gm(one.f16nhwc90_us / one.best_f16gemm90_us):.3f}."]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Session 47: where the fp16 models' leave-out picks miss, the figures behind `sweeps/runs/s47/band.csv`.

    python scripts/miss_bands.py > sweeps/runs/s47/miss-bands.txt

1. The routed `f16nhwc+f16nhwc90+f16gemm90` on its non-1x1 leave-out layers: as routed, and with a perfect router
   over its members' leave-out picks (the better of the two members' picks per layer): the members bound it.
2. `f16nhwc90`'s leave-out layers: the share scoring under 0.95 by the fastest config's time, batch and K.
3. `f16nhwc90`'s training problems (its sweeps in the shipped `h200` run): network layers, random / grid ones, and
   those in the band N >= 8, K >= 256, 5-100 µs (fastest ok time).
"""
from __future__ import annotations

import datetime as dt
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from predictor.lono import NET_PREFIX  # noqa: E402
from predictor.shipped import SHIPPED_RUNS  # noqa: E402

LONO = ROOT / "reports" / "lono"


def cell(s: pd.Series) -> str:
    return f"{math.exp(np.log(s).mean()):.3f} / {s.quantile(0.1):.3f} ({len(s)})"


def main() -> None:
    print(f"# python scripts/miss_bands.py, {dt.date.today().isoformat()}: from the committed leave-out reports and "
          "the h200 run's sweeps (NVIDIA H200)")
    key = ["network", "shape_key"]
    route = pd.read_csv(LONO / "h200-choice3-route" / "layers.csv")
    conv = route[route.member != "pointwise"]
    for m in ("f16nhwc", "f16nhwc90"):
        conv = conv.merge(pd.read_csv(LONO / f"h200-{m}" / "layers.csv")[key + ["pick_us"]]
                          .rename(columns={"pick_us": f"{m}_us"}), on=key, how="left")
    oracle = conv.fastest_us / np.minimum(conv.f16nhwc_us, conv.f16nhwc90_us)
    print("1. f16nhwc+f16nhwc90+f16gemm90, non-1x1 leave-out layers, geomean / P10 (layers)")
    print(f"   routed {cell(conv.score)}; a perfect router over the members' leave-out picks {cell(oracle)}")

    r = pd.read_csv(LONO / "h200-f16nhwc90" / "layers.csv")
    r["miss"] = r.score < 0.95
    print(f"2. f16nhwc90 leave-out layers under 0.95: {int(r.miss.sum())} of {len(r)}; share by")
    for name, by in (("fastest time (us)", pd.cut(r.fastest_us, [0, 5, 10, 30, 100, math.inf])), ("N", r.N),
                     ("K", pd.cut(r.K, [0, 64, 128, 256, 512, math.inf]))):
        t = r.groupby(by, observed=True).miss.agg(["size", "mean"])
        print(f"   {name}: " + ", ".join(f"{i}: {row['mean']:.3f} of {int(row['size'])}" for i, row in t.iterrows()))

    run = next(x for x in SHIPPED_RUNS if x.slug == "h200")
    cols = ["family", "shape_key", "source", "N", "K", "status", "time_us"]
    frames = []
    for s in run.sweeps:
        d = pd.read_parquet(ROOT / s, columns=cols)
        frames.append(d[(d.family == "f16nhwc90") & (d.status == "ok")])
    d = pd.concat(frames)
    p = d.groupby("shape_key").agg(N=("N", "first"), K=("K", "first"), source=("source", "first"),
                                    best=("time_us", "min"))
    net = p.source.astype(str).str.startswith(NET_PREFIX)
    band = (p.N >= 8) & (p.K >= 256) & (p.best > 5) & (p.best < 100)
    print(f"3. f16nhwc90 training problems: {len(p)}, network layers {int(net.sum())}, random / grid "
          f"{int((~net).sum())}; in the band N >= 8, K >= 256, 5-100 us: {int(band.sum())}, random / grid "
          f"{int((band & ~net).sum())}")


if __name__ == "__main__":
    main()

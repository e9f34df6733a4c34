"""Run-to-run noise of the sweep: the same problems re-measured later on another H200.

    python scripts/repeat_noise.py sweeps/h200.parquet sweeps/runs/h200-repeat-shard0.parquet
    python scripts/repeat_noise.py sweeps/h200-nets.parquet sweeps/runs/h200-repeat-big-i8nc32.parquet \
        --picks reports/lono/h200-i8nc32/layers.csv

Prints the per-timing ratio, how the first run's winner scores when timed in the repeat, and with ``--picks``
(a ``predictor.lono`` layers.csv) how that report's picks score in the first run and in the repeat, on the
layers both measured.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from predictor.portfolio import effective_times  # noqa: E402
from predictor.schema import read_metadata, read_sweep  # noqa: E402


def _cells(score: np.ndarray) -> str:
    return (f"geomean {np.exp(np.log(score).mean()):.4f}, P10 {np.quantile(score, 0.1):.4f}, worst {score.min():.4f} "
            f"({int((score < 0.85).sum())} under 0.85)")


def main(first: str, repeat: str, picks: str | None = None) -> None:
    a, b = read_sweep(first), read_sweep(repeat)
    for d in (a, b):
        d["t"] = effective_times(d)
    m = a.merge(b, on=["family", "shape_key", "config"], suffixes=("_a", "_b"))
    m = m[(m["status_a"] == "ok") & (m["status_b"] == "ok")]
    r = m["t_b"] / m["t_a"]
    wa = m.loc[m.groupby("shape_key")["t_a"].idxmin()].set_index("shape_key")["config"]
    piv = m.pivot(index="shape_key", columns="config", values="t_b")
    score = piv.min(axis=1) / np.array([piv.at[k, c] for k, c in wa.items()])
    wb = piv.idxmin(axis=1)
    ma, mb = read_metadata(first), read_metadata(repeat)
    ma = (ma.get("history") or [ma])[0]  # rows extended later keep the first run's metadata in history
    uuids = ", ".join(sorted(set(m["gpu_uuid_a"].astype(str))))
    print(f"first: {first} (its first run {ma.get('date')}; the rows compared measured on {uuids}); "
          f"repeat: {repeat} ({mb.get('date')}, {mb.get('device', {}).get('gpu_uuid')})")
    print(f"{len(r)} timings of {m['shape_key'].nunique()} problems: repeat/first median {r.median():.3f}, "
          f"P5 {r.quantile(0.05):.3f}, P95 {r.quantile(0.95):.3f}")
    print(f"the first run's winner, timed in the repeat: {_cells(score.to_numpy())}; "
          f"same winner on {100 * float((wa == wb.reindex(wa.index)).mean()):.0f}%")
    print(f"status agreement: {100 * float((a.merge(b, on=['family', 'shape_key', 'config']).pipe(lambda x: (x.status_x == x.status_y).mean()))):.1f}%")
    if picks:
        layers = pd.read_csv(picks)
        layers = layers[layers["shape_key"].isin(piv.index) & layers["pick"].isin(piv.columns)]
        rep = np.array([piv.loc[k].min() / piv.at[k, p] for k, p in zip(layers["shape_key"], layers["pick"])])
        print(f"{picks}: {len(layers)} layers ({layers['shape_key'].nunique()} problems) of the repeat; its picks "
              f"scored in the first run: {_cells(layers['score'].to_numpy())}; in the repeat: {_cells(rep)}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("first", nargs="?", default="sweeps/h200.parquet")
    p.add_argument("repeat", nargs="?", default="sweeps/runs/h200-repeat-shard0.parquet")
    p.add_argument("--picks", default=None, help="a predictor.lono layers.csv whose picks to score in both runs")
    args = p.parse_args()
    main(args.first, args.repeat, args.picks)

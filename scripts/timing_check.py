"""Can the re-timing shift the winner?  Compares sweeps of the same problems timed with the earlier
method (``--warmup-batches 0``) and with method 2 (``predictor.timing``), and, given two method-2
runs, how well one run's winner holds in the other.

    python scripts/timing_check.py sweeps/runs/s2call1/m0.parquet sweeps/runs/s2call1/m2a.parquet \
        [sweeps/runs/s2call1/m2b.parquet] > sweeps/runs/s2call1/TIMING_CHECK.md

Per family and file: the median (P10, P90) of ``retime_us / time_us`` over the re-timed configs
(both estimate the same launch time; > 1 means the re-timing reads slow), and the share of
problems whose "retime else time" winner is a config that was *not* re-timed (it won only because
its single timing was not inflated).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from predictor.schema import read_metadata, read_sweep  # noqa: E402


def _ok(path: str) -> pd.DataFrame:
    df = read_sweep(path)
    df = df[(df["status"] == "ok") & df["verified"]].copy()
    df["t"] = df["retime_us"].where(df["retime_us"].notna(), df["time_us"])
    return df


def method_rows(path: str) -> list[str]:
    df = _ok(path)
    meta = read_metadata(path)
    out = []
    for fam, g in df.groupby("family"):
        rt = g[g["retime_us"].notna()]
        ratio = rt["retime_us"] / rt["time_us"]
        win = g.loc[g.groupby("shape_key")["t"].idxmin()]
        outside = float(win["retime_us"].isna().mean())
        out.append(f"| {Path(path).name} | {fam} | {meta.get('warmup_batches')} | {g['shape_key'].nunique()} | "
                   f"{ratio.median():.4f} ({ratio.quantile(0.1):.4f}, {ratio.quantile(0.9):.4f}) | "
                   f"{100 * outside:.1f}% |")
    return out


def agreement(a_path: str, b_path: str) -> list[str]:
    a, b = _ok(a_path), _ok(b_path)
    out = []
    for fam in sorted(set(a["family"]) & set(b["family"])):
        ga, gb = a[a["family"] == fam], b[b["family"] == fam]
        wa = ga.loc[ga.groupby("shape_key")["t"].idxmin()].set_index("shape_key")["config"]
        piv = gb.pivot(index="shape_key", columns="config", values="t")
        keys = [k for k in wa.index if k in piv.index and wa[k] in piv.columns]
        score = np.array([piv.loc[k].min() / piv.at[k, wa[k]] for k in keys])
        score = score[np.isfinite(score)]
        same = np.mean([piv.loc[k].idxmin() == wa[k] for k in keys])
        m = ga.merge(gb, on=["shape_key", "config"], suffixes=("_a", "_b"))
        r = m["time_us_b"] / m["time_us_a"]
        out.append(f"| {Path(a_path).name} → {Path(b_path).name} | {fam} | {len(keys)} | "
                   f"{np.exp(np.log(score).mean()):.4f} | {np.quantile(score, 0.1):.4f} | {100 * same:.0f}% | "
                   f"{r.median():.4f} ({r.quantile(0.05):.4f}, {r.quantile(0.95):.4f}) |")
    return out


def main(paths: list[str]) -> None:
    print("| file | family | warm-up batches | problems | retime / time, median (P10, P90) | "
          "winner not re-timed |")
    print("|---|---|---|---|---|---|")
    for p in paths:
        print("\n".join(method_rows(p)))
    if len(paths) >= 3:
        print("\n| runs | family | problems | first run's winner in the second: geomean | P10 | same winner | "
              "time_us second / first, median (P5, P95) |")
        print("|---|---|---|---|---|---|---|")
        print("\n".join(agreement(paths[1], paths[2])))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    main(sys.argv[1:])

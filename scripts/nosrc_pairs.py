"""Source-less kernels against their twins: the report of ``scripts/device_s23_nosrc.sh``.

    python scripts/nosrc_pairs.py RUN.parquet [RUN.parquet ...] --out REPORT.md

Each RUN is one collector run holding configs with ``KernelConfig.no_source`` and their twins with a source tensor
(the same name without ``_nosrc``), timed in the same process.  Per run: the twin's time / the source-less
config's time over every (problem, pair) both measured (ok and verified), geomean and percentiles; per config pair;
and per problem, the fastest of the sourced configs against the fastest of all.  > 1: the source-less kernel is
faster.
"""
from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd

from predictor.config import KernelConfig
from predictor.portfolio import eligible_rows
from predictor.schema import read_sweep


def _geo(x: pd.Series) -> float:
    return float(np.exp(np.log(x).mean()))


def pairs(df: pd.DataFrame) -> pd.DataFrame:
    """(shape_key, twin, ratio): the twin's time over its source-less config's, both ok and verified."""
    ok = eligible_rows(df)
    cfgs = {n: KernelConfig.from_name(n) for n in ok["config"].astype(str).unique()}
    twin = {n: dataclasses.replace(c, no_source=False).name for n, c in cfgs.items()}
    ok = ok.assign(twin=ok["config"].astype(str).map(twin),
                   ns=ok["config"].astype(str).map(lambda n: cfgs[n].no_source))
    p = ok.pivot_table(index=["shape_key", "twin"], columns="ns", values="time_us", aggfunc="min")
    if True not in p.columns or False not in p.columns:
        raise SystemExit("no (source-less, sourced) pair in the run")
    p = p.dropna()
    return pd.DataFrame({"ratio": p[False] / p[True]}).reset_index()


def best_ratio(df: pd.DataFrame) -> pd.Series:
    """Per problem: the fastest sourced config's time over the fastest config's (all configs of the run)."""
    ok = eligible_rows(df)
    ns = ok["config"].astype(str).str.contains("_nosrc_")
    return (ok[~ns].groupby("shape_key")["time_us"].min() / ok.groupby("shape_key")["time_us"].min()).dropna()


def report(paths: list[Path]) -> str:
    lines = ["# Source-less epilogues against their twins", "",
             f"    python scripts/nosrc_pairs.py {' '.join(str(p) for p in paths)}", "",
             "Ratio = the twin's time (ElementC = half_t / int8, beta = 0) / the source-less config's (ElementC = void), "
             "same run, outputs checked; > 1: the source-less kernel is faster.", "",
             "| run | timing | pairs | geomean | P10 | median | P90 | min | max | best sourced / best of all (problems) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    per_cfg = []
    for path in paths:
        df = read_sweep(path)
        r = pairs(df)
        b = best_ratio(df)
        method = "/".join(sorted(df["timing_method"].astype(str).unique())) if "timing_method" in df else "?"
        q = r["ratio"].quantile([0.1, 0.5, 0.9]).tolist()
        lines.append(f"| `{path.name}` | {method} | {len(r)} | {_geo(r['ratio']):.3f} | {q[0]:.3f} | {q[1]:.3f} | "
                     f"{q[2]:.3f} | {r['ratio'].min():.3f} | {r['ratio'].max():.3f} | {_geo(b):.3f} ({len(b)}) |")
        per_cfg.append((path.name, r.groupby("twin")["ratio"].agg([_geo, "count"])))
    for name, t in per_cfg:
        lines += ["", f"## `{name}`, per config (geomean of twin / source-less)", "", "| config (with source) | pairs | geomean |",
                  "|---|---|---|"]
        lines += [f"| `{c}` | {int(row['count'])} | {row['_geo']:.3f} |" for c, row in t.iterrows()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", type=Path, nargs="+")
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args(argv)
    a.out.write_text(report(a.runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

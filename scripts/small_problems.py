"""Write a problem list (a sweep parquet, one row per problem) for ``collect --problems-from``: the problems of
SWEEPs whose fastest config of FAMILIES ran in [--min-us, --max-us), fastest first, each with its source.

    python scripts/small_problems.py SWEEP [SWEEP ...] --family f16nhwc --family f16nhwc90 --family f16gemm90 \
        --max-us 10 --out sweeps/runs/s12/problems-holdout.parquet

A problem's time is its label's (``--times label``, the default: the ``t_eff`` of ``portfolio.eligible_rows``,
what training and the reports use); ``--times first-pass`` ranks the ok rows
by their first-pass ``time_us``, how the lists of 2026-12-02 (``sweeps/runs/s11``, ``sweeps/runs/s12``) were
made.  ``--source net`` keeps problems whose source starts with ``net`` (network layers); ``--exclude`` drops
the problems of other sweeps (e.g. those already re-timed).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from predictor.portfolio import eligible_rows
from predictor.schema import read_sweep


def problem_times(d: pd.DataFrame, times: str) -> pd.DataFrame:
    """One row per problem (``shape_key``): its fastest row and that row's time in ``time_us``."""
    if times == "label":
        rows = eligible_rows(d)
        rows = rows.assign(time_us=rows["t_eff"])
    else:
        rows = d[d["status"] == "ok"]
    return rows.sort_values(["time_us", "shape_key"]).drop_duplicates("shape_key")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sweeps", nargs="+", type=Path)
    p.add_argument("--family", action="append", required=True)
    p.add_argument("--min-us", type=float, default=0.0)
    p.add_argument("--max-us", type=float, required=True)
    p.add_argument("--times", choices=("label", "first-pass"), default="label",
                   help="a problem's time: its label's (default) or its ok rows' first-pass time_us")
    p.add_argument("--source", default="", help="only problems whose source starts with this (e.g. net)")
    p.add_argument("--exclude", action="append", type=Path, default=[], metavar="SWEEP",
                   help="leave out the problems of this sweep (repeatable)")
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args(argv)
    d = pd.concat([read_sweep(s) for s in a.sweeps], ignore_index=True)
    d = d[d["family"].isin(a.family)]
    best = problem_times(d, a.times)
    best = best[(best["time_us"] >= a.min_us) & (best["time_us"] < a.max_us)]
    if a.source:
        best = best[best["source"].astype(str).str.startswith(a.source)]
    for other in a.exclude:
        best = best[~best["shape_key"].isin(set(read_sweep(other)["shape_key"]))]
    best = best.reset_index(drop=True)
    best.to_parquet(a.out, index=False)
    if best.empty:
        print(f"{a.out}: no problems")
    else:
        print(f"{a.out}: {len(best)} problems, fastest {best['time_us'].min():.2f} to {best['time_us'].max():.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())

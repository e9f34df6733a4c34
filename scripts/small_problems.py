"""Write a problem list (a sweep parquet, one row per problem) for ``collect --problems-from``: the problems of
SWEEPs whose fastest ok config of FAMILIES ran in [--min-us, --max-us), fastest first, each with its source.

    python scripts/small_problems.py SWEEP [SWEEP ...] --family f16nhwc --family f16nhwc90 --family f16gemm90 \
        --max-us 10 --out sweeps/runs/s12/problems-holdout.parquet
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from predictor.schema import read_sweep


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sweeps", nargs="+", type=Path)
    p.add_argument("--family", action="append", required=True)
    p.add_argument("--min-us", type=float, default=0.0)
    p.add_argument("--max-us", type=float, required=True)
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args(argv)
    d = pd.concat([read_sweep(s) for s in a.sweeps], ignore_index=True)
    ok = d[(d["status"] == "ok") & d["family"].isin(a.family)]
    best = ok.sort_values(["time_us", "shape_key"]).drop_duplicates("shape_key")
    best = best[(best["time_us"] >= a.min_us) & (best["time_us"] < a.max_us)].reset_index(drop=True)
    best.to_parquet(a.out, index=False)
    print(f"{a.out}: {len(best)} problems, fastest {best['time_us'].min():.2f} to {best['time_us'].max():.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())

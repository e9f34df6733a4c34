"""How long ``predictor.lono``'s evaluation takes serially, with ``--threads 2`` and with ``--jobs 2`` (on the SYNTHETIC
two-network sweep of tests/test_lono.py, kinds class + blend: the blend kind's cost teacher runs OpenMP), and that
all three give the same result.  Writes a results file naming the command, the machine's CPUs and the date.

    python scripts/lono_parallel_timing.py --out reports/lono_parallel_timing.md
"""
import argparse
import datetime
import os
import platform
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def main() -> None:
    from test_lono import FAM, two_networks

    import predictor.fitting as fitting
    from predictor.lono import Settings, evaluate_family
    from predictor.report_header import header_lines

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args()
    df, _ = two_networks()
    some = Settings(kinds=("class", "blend"), max_portfolio=6, folds=3, depth_grid=(2, 4), min_leaf_grid=(2,),
                    weightings=("regret",))
    rows, results = [], []
    for kw in ({}, {"threads": 2}, {"jobs": 2}):
        fitting._TEACHER_CACHE.clear()  # each run fits its own teachers
        t = time.perf_counter()
        r = evaluate_family(df, FAM, some, **kw)
        rows.append((kw or {"serial": 1}, time.perf_counter() - t))
        results.append(r)
    for r in results[1:]:
        pd.testing.assert_frame_equal(r.layers, results[0].layers)
        pd.testing.assert_frame_equal(r.folds, results[0].folds)
    lines = [*header_lines("lono: serial, --threads 2, --jobs 2", "scripts/lono_parallel_timing.py",
                           f"python scripts/lono_parallel_timing.py --out {a.out}", str(datetime.date.today())),
             f"- machine: {platform.machine()}, {os.cpu_count()} CPUs; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}",
             "- the three runs give the same per-layer and per-fold frames (asserted)", "",
             "| run | seconds |", "|---|---|"]
    lines += [f"| {', '.join(f'{k}={v}' for k, v in kw.items())} | {s:.1f} |" for kw, s in rows]
    a.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

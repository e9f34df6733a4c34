"""Split a sweep that re-measured some configs of an earlier sweep (anchors) next to new configs.

    python scripts/split_anchors.py RAW --old OLD [OLD...] --out NEW [--anchors-out ANCHORS] [--report MD]

``RAW``: the collector's file (new configs and anchors, one run); ``OLD``: the earlier sweep(s) of the same
family (several: read as one, e.g. the two files whose problems RAW re-measured).  Writes ``NEW`` (RAW's rows of configs OLD does not hold: they join OLD's as labels, with no
(family, shape, config) twice), optionally ``ANCHORS`` (RAW's rows of OLD's configs), and reports, per anchor,
the new/old ratio of the label times on the problems both measured and how often the anchors' winner
is the same: the evidence that the two runs' times are comparable before their rows are mixed.
Metadata of both outputs: RAW's, plus where they come from (path and sha256 of RAW and OLD).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from predictor.portfolio import eligible_rows
from predictor.schema import file_sha256, read_metadata, read_sweep, write_sweep


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("raw", type=Path)
    p.add_argument("--old", type=Path, nargs="+", required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--anchors-out", type=Path, default=None)
    p.add_argument("--report", type=Path, default=None, help="markdown comparison of the anchors (default: stdout)")
    a = p.parse_args(argv)
    raw, old = read_sweep(a.raw), pd.concat([read_sweep(o) for o in a.old], ignore_index=True)
    old_cfgs = set(old["config"].astype(str))
    is_anchor = raw["config"].astype(str).isin(old_cfgs)
    if not is_anchor.any():
        raise SystemExit(f"{a.raw}: no config of {', '.join(map(str, a.old))} in it (no anchors)")
    meta = read_metadata(a.raw)
    olds = {"old": str(a.old[0]), "old_sha256": file_sha256(a.old[0])} if len(a.old) == 1 else \
        {"old": [str(o) for o in a.old], "old_sha256": [file_sha256(o) for o in a.old]}
    src = {"raw": str(a.raw), "raw_sha256": file_sha256(a.raw), **olds}
    write_sweep(raw[~is_anchor], a.out, {**meta, "split_anchors": {**src, "kept": "configs not in old"}})
    if a.anchors_out:
        write_sweep(raw[is_anchor], a.anchors_out, {**meta, "split_anchors": {**src, "kept": "configs of old"}})

    n, o = eligible_rows(raw[is_anchor]), eligible_rows(old[old["config"].isin(set(raw.loc[is_anchor, "config"]))])
    m = o.merge(n, on=["family", "shape_key", "config"], suffixes=("_old", "_new")).reset_index(drop=True)
    m["ratio"] = m["t_eff_new"] / m["t_eff_old"]
    q = m.groupby("config")["ratio"].quantile([0.1, 0.5, 0.9]).unstack()
    win_old = m.loc[m.groupby("shape_key")["t_eff_old"].idxmin()].set_index("shape_key")["config"]
    win_new = m.loc[m.groupby("shape_key")["t_eff_new"].idxmin()].set_index("shape_key")["config"]
    t_new = m.set_index(["shape_key", "config"])["t_eff_new"]
    best_new = m.groupby("shape_key")["t_eff_new"].min()
    kept = np.array([best_new[s] / t_new[(s, c)] for s, c in win_old.items()])
    lines = [f"# Anchors: `{a.raw.name}` against {', '.join(f'`{o.name}`' for o in a.old)}", "",
             f"- command: `python scripts/split_anchors.py {' '.join(sys.argv[1:] if argv is None else argv)}`",
             f"- {len(m)} (problem, anchor) pairs measured in both runs; {m['shape_key'].nunique()} problems; "
             f"ratio = new run's label time / old run's", "",
             "| anchor config | P10 | median | P90 |", "|---|---|---|---|"]
    lines += [f"| `{c}` | {r[0.1]:.3f} | {r[0.5]:.3f} | {r[0.9]:.3f} |" for c, r in q.iterrows()]
    lines += ["", f"- same winner among the anchors in both runs: {(win_old == win_new.reindex(win_old.index)).mean():.0%} "
              "of the problems",
              f"- the old run's anchor winner, timed in the new run, against the new run's best anchor: geomean "
              f"{np.exp(np.log(kept).mean()):.3f}, P10 {np.quantile(kept, 0.1):.3f}", ""]
    text = "\n".join(lines)
    if a.report:
        a.report.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

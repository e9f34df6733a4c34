"""A cuDNN reference that is not one process's draw: several runs of ``bench/vendor_layers.py`` (one process
each, ``--cudnn autotuner`` or ``--cudnn heuristic``) pooled layer by layer, and our dispatchers scored
against it (no GPU).

    python bench/cudnn_reference.py bench/vendor_layers/h200-holdout-ref-*.csv --out bench/vendor_layers/h200-holdout-reference

Per layer, each cuDNN mode's time is the median over the processes that timed it, and the reference is the
faster mode; each of our variants (``<variant>_us``) is the median over the processes that ran it.  Also
reported: against each mode alone and against the fastest cuDNN time any process saw, and how far one
mode's draws move between processes.  Where the runs recorded ``cudnn_kernels`` (``--cudnn-kernels``),
whether the two modes ran the same kernels.  CSVs from before the ``cudnn_mode`` column count as the
autotuner; one with ``cudnn_heuristic_us`` (2026-12-02's "cudnnbest" run: heuristic first, so the autotuner
then replayed the heuristic's plan from PyTorch's shared cache) counts as a heuristic draw only.
Writes ``<out>.csv`` (per layer) and ``<out>.md``.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vendor_layers import BIG_GFLOP, CUDNN_MODES  # noqa: E402

MODES = CUDNN_MODES[::-1]  # the heuristic first in the tables
#: the time columns that are cuDNN's, not a variant of ours
CUDNN_COLUMNS = ("cudnn_us", "cudnn_heuristic_us", "cudnn_benchmark_us")


def gm(x: pd.Series) -> float:
    x = x.replace([np.inf, -np.inf], np.nan).dropna()
    return float(np.exp(np.mean(np.log(x)))) if len(x) else float("nan")


def draws(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per (process, layer) with cuDNN's time: columns ``run``, ``shape_key``, ``mode``, ``us``,
    ``kernels`` (their names, empty where not recorded) and ``launches`` (kernels per call)."""
    out = []
    for run, d in frames.items():
        if "cudnn_heuristic_us" in d:
            mode, us = pd.Series("heuristic", index=d.index), d["cudnn_heuristic_us"]
        else:
            mode = d["cudnn_mode"].fillna("autotuner") if "cudnn_mode" in d else pd.Series("autotuner", index=d.index)
            us = d["cudnn_us"]
        kernels = d["cudnn_kernels"].fillna("") if "cudnn_kernels" in d else pd.Series("", index=d.index)
        launches = d["cudnn_launches"] if "cudnn_launches" in d else pd.Series(np.nan, index=d.index)
        out.append(pd.DataFrame({"run": run, "shape_key": d["shape_key"], "mode": mode, "us": us, "kernels": kernels,
                                 "launches": launches}))
    return pd.concat(out, ignore_index=True).dropna(subset=["us"])


def reference(frames: dict[str, pd.DataFrame], cudnn_only: dict[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """Per layer (index ``shape_key``): ``gflop``, ``cudnn_<mode>_us`` (median over that mode's processes),
    ``<mode>_draws``, ``cudnn_reference_us`` (the faster mode), ``cudnn_fastest_us`` (fastest draw) and each
    of our variants' median ``<variant>_us`` over ``frames``; ``cudnn_only``'s runs add cuDNN draws only
    (e.g. runs of another dispatcher)."""
    dr = draws({**frames, **(cudnn_only or {})})
    lay = pd.concat([d.set_index("shape_key")[["gflop"]] for d in frames.values()])
    ref = lay[~lay.index.duplicated()].copy()
    for m in MODES:
        g = dr[dr["mode"] == m].groupby("shape_key")["us"]
        ref[f"cudnn_{m}_us"], ref[f"{m}_draws"] = g.median(), g.size()
    ref[[f"{m}_draws" for m in MODES]] = ref[[f"{m}_draws" for m in MODES]].fillna(0).astype(int)
    ref["cudnn_reference_us"] = ref[[f"cudnn_{m}_us" for m in MODES]].min(axis=1)
    ref["cudnn_fastest_us"] = dr.groupby("shape_key")["us"].min()
    ours = pd.concat([d.set_index("shape_key")[[c for c in d if c.endswith("_us") and c not in CUDNN_COLUMNS]]
                      .rename_axis("shape_key").reset_index() for d in frames.values()], ignore_index=True)
    return ref.join(ours.groupby("shape_key").median())


def spread(dr: pd.DataFrame, mode: str) -> str:
    """A table row: per layer with two or more draws of ``mode``, slowest / fastest draw."""
    g = dr[dr["mode"] == mode].groupby("shape_key")["us"]
    r = (g.max() / g.min())[g.size() > 1]
    if not len(r):
        return f"| {mode} | 0 | | | | |"
    return (f"| {mode} | {len(r)} | {int(g.size().max())} | {r.median():.3f} | {r.quantile(0.95):.3f} | "
            f"{int((r > 1.2).sum())} |")


def kernels_table(dr: pd.DataFrame) -> list[str]:
    """Where both modes recorded their kernels in the same processes' layers: same kernels or not, by how much
    slower the autotuner's median is than the heuristic's."""
    k = dr[dr["kernels"] != ""]
    if k.empty or k["mode"].nunique() < 2:
        return []
    first = k.groupby(["shape_key", "mode"]).agg(kernels=("kernels", "first"), launches=("launches", "first"),
                                                  us=("us", "median")).unstack()
    first = first.dropna()
    slow = first[("us", "autotuner")] / first[("us", "heuristic")]
    same = first[("kernels", "autotuner")] == first[("kernels", "heuristic")]
    lines = ["", "The kernels each mode ran (first recorded draw), by autotuner time / heuristic time:", "",
             "| autotuner / heuristic | layers | same kernels | autotuner launches more kernels |", "|---|---|---|---|"]
    for name, sel in (("< 0.95", slow < 0.95), ("0.95 - 1.05", (slow >= 0.95) & (slow <= 1.05)),
                      ("> 1.05", slow > 1.05), ("> 1.2", slow > 1.2)):
        more = first[("launches", "autotuner")][sel] > first[("launches", "heuristic")][sel]
        lines.append(f"| {name} | {int(sel.sum())} | {int(same[sel].sum())} | {int(more.sum())} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path, help="bench/vendor_layers.py CSVs, one per process")
    p.add_argument("--cudnn-from", nargs="+", type=Path, default=[], metavar="CSV",
                   help="more runs whose cuDNN draws count but whose variants do not (another dispatcher's)")
    p.add_argument("--out", required=True, type=Path, help="writes <out>.csv and <out>.md")
    args = p.parse_args(argv)
    frames = {str(f): pd.read_csv(f) for f in args.runs}
    extra = {str(f): pd.read_csv(f) for f in args.cudnn_from}
    ref = reference(frames, extra)
    dr = draws({**frames, **extra})
    ours = [c[:-3] for c in ref.columns if c.endswith("_us") and not c.startswith("cudnn_")]
    big = ref["gflop"] > BIG_GFLOP
    lines = ["# Our dispatchers against a cuDNN reference pooled over processes", "",
             "generated by bench/cudnn_reference.py, do not edit; regenerate with:", "",
             "    python bench/cudnn_reference.py " + " ".join(str(f) for f in args.runs)
             + (" --cudnn-from " + " ".join(str(f) for f in args.cudnn_from) if args.cudnn_from else "")
             + f" --out {args.out}", "",
             f"- {len(frames) + len(extra)} processes (GPU, date and command in each run's .md; our variants from the "
             f"{len(frames)} before `--cudnn-from`): "
             + ", ".join(f"{m} {int(dr[dr['mode'] == m]['run'].nunique())}" for m in MODES),
             f"- layers: {len(ref)} ({int(big.sum())} above {BIG_GFLOP:g} GFLOP); per layer each mode's time is the "
             "median of its draws, the reference the faster mode",
             "- cells: geomean of cuDNN time / our time (> 1: ours faster); the variant's time is its median over "
             "the processes that ran it", "",
             "| variant | layers | vs heuristic | vs autotuner | vs reference | ours faster on | vs fastest draw | "
             f"> {BIG_GFLOP:g} GFLOP: vs reference |", "|---|---|---|---|---|---|---|---|"]
    for v in ours:
        t = ref[f"{v}_us"]
        ok = t.notna() & ref["cudnn_reference_us"].notna()
        r = ref["cudnn_reference_us"] / t
        lines.append(f"| {v} | {int(ok.sum())} | {gm((ref['cudnn_heuristic_us'] / t)[ok]):.3f} | "
                     f"{gm((ref['cudnn_autotuner_us'] / t)[ok]):.3f} | {gm(r[ok]):.3f} | "
                     f"{100 * float((r[ok] > 1).mean()):.0f}% | {gm((ref['cudnn_fastest_us'] / t)[ok]):.3f} | "
                     f"{gm(r[ok & big]):.3f} |")
    both = ref[["cudnn_heuristic_us", "cudnn_autotuner_us"]].dropna()
    a = both["cudnn_autotuner_us"] / both["cudnn_heuristic_us"]
    lines += ["", "cuDNN's two modes (per layer, median draws): autotuner time / heuristic time", "",
              "| layers | geomean | P5 | median | P95 | autotuner > 1.2x slower | heuristic > 1.2x slower |",
              "|---|---|---|---|---|---|---|",
              f"| {len(a)} | {gm(a):.3f} | {a.quantile(0.05):.3f} | {a.median():.3f} | {a.quantile(0.95):.3f} | "
              f"{int((a > 1.2).sum())} | {int((a < 1 / 1.2).sum())} |",
              "", "How far one mode's draws move between processes (per layer: slowest / fastest draw)", "",
              "| mode | layers with 2+ draws | most draws | median | P95 | layers > 1.2 |", "|---|---|---|---|---|---|",
              *(spread(dr, m) for m in MODES), *kernels_table(dr)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    ref.round(4).to_csv(args.out.with_suffix(".csv"))
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

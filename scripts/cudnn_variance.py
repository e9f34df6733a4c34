"""How much cuDNN's own time moves between runs of the same layers, and our dispatchers scored against a
cuDNN reference that is not one process's draw (committed results only, no GPU).

    python scripts/cudnn_variance.py > bench/vendor_layers/h200-holdout-cudnn-variance.md

Inputs: the graph-timed runs of the held-out networks' fp16 layers ``bench/vendor_layers/<run>-shard{0,1}.csv``
(RUNS: each a dispatcher and cuDNN with ``cudnn.benchmark``, in one process per shard) and the half-run
``h200-holdout-choice3d-cudnnbest-shard0.csv`` (cuDNN's autotuner and heuristic both timed).  Writes, per
run, cuDNN / ours against that run's cuDNN, against the per-layer median of the RUNS' cuDNN times and against
the fastest cuDNN time any run saw; and how far cuDNN's and our times move between runs.  Written before the
cause was found (PyTorch's plan cache is shared by cuDNN's two modes, and the autotuner's plan is a draw per
process): the half-run's autotuner column replayed its heuristic's plans.  ``bench/cudnn_reference.py``
pools runs of one mode per process instead (``bench/vendor_layers/h200-holdout-reference.md``).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
VL = ROOT / "bench" / "vendor_layers"
PICK = "f16nhwc+f16nhwc90+f16gemm90_us"
#: (run, what its dispatcher was)
RUNS = (("h200-holdout-choice3-tuned", "50 GEMM configs, repick"),
        ("h200-holdout-choice3s-tuned", "70 GEMM configs (small tiles), repick"),
        ("h200-holdout-choice3d-tuned", "70 GEMM configs, distill (shipped)"))
BEST = "h200-holdout-choice3d-cudnnbest-shard0"


def gm(x: pd.Series) -> float:
    x = x.dropna()
    return float(np.exp(np.mean(np.log(x)))) if len(x) else float("nan")


def load(run: str) -> pd.DataFrame:
    return pd.concat([pd.read_csv(VL / f"{run}-shard{i}.csv") for i in (0, 1)]).set_index("shape_key")


def main() -> int:
    runs = {r: load(r) for r, _ in RUNS}
    best = pd.read_csv(VL / f"{BEST}.csv").set_index("shape_key")
    cud = pd.concat([d["cudnn_us"].rename(r) for r, d in runs.items()], axis=1)
    median = cud.median(axis=1)
    seen = pd.concat([cud, best[["cudnn_benchmark_us", "cudnn_heuristic_us"]].reindex(cud.index)], axis=1).min(axis=1)
    first = runs[RUNS[0][0]]
    lines = ["# cuDNN's time between runs, and our dispatchers against a steadier cuDNN reference", "",
             "- command: `python scripts/cudnn_variance.py`",
             f"- inputs: `bench/vendor_layers/{{{','.join(r for r, _ in RUNS)}}}-shard{{0,1}}.csv`, `{BEST}.csv` "
             "(NVIDIA H200, 2026-12-02, CUDA-graph replays; cuDNN with `cudnn.benchmark` unless said)",
             f"- layers: {len(cud)}; cells: geomean of cuDNN time / our time (> 1: ours faster)", "",
             "| run | dispatcher | vs its own run's cuDNN | vs median of the runs' cuDNN | vs fastest cuDNN seen | "
             "> 8 GFLOP: vs median |", "|---|---|---|---|---|---|"]
    for r, what in RUNS:
        d = runs[r]
        big = d["gflop"] > 8
        lines.append(f"| `{r}` | {what} | {gm(d['cudnn_us'] / d[PICK]):.3f} | {gm(median / d[PICK]):.3f} | "
                     f"{gm(seen / d[PICK]):.3f} | {gm((median / d[PICK])[big]):.3f} |")
    lines += ["", "How far the times move between runs (per layer, later run / first run):", "",
              "| | geomean | P5 | median | P95 | layers > 1.2 | layers < 0.83 |", "|---|---|---|---|---|---|---|"]

    def row(name: str, x: pd.Series) -> str:
        x = x.dropna()
        return (f"| {name} | {gm(x):.3f} | {x.quantile(0.05):.3f} | {x.median():.3f} | {x.quantile(0.95):.3f} | "
                f"{int((x > 1.2).sum())} | {int((x < 1 / 1.2).sum())} |")

    for r, _ in RUNS[1:]:
        lines.append(row(f"cuDNN, `{r}` / `{RUNS[0][0]}`", runs[r]["cudnn_us"] / first["cudnn_us"]))
    last = runs[RUNS[-1][0]]
    lines.append(row(f"cuDNN autotuner, `{BEST}` / `{RUNS[-1][0]}`", best["cudnn_benchmark_us"] / last["cudnn_us"]))
    lines.append(row(f"ours (same dispatcher), `{BEST}` / `{RUNS[-1][0]}`", best[PICK] / last[PICK]))
    lines.append(row(f"cuDNN heuristic / autotuner, `{BEST}` (the autotuner replayed the heuristic's plans: one "
                     "plan cache for both modes)", best["cudnn_heuristic_us"] / best["cudnn_benchmark_us"]))
    lines += ["", "The cuDNN runs above are the autotuner's draws but for the half-run's heuristic; cuDNN's heuristic, "
              "one mode per process, is steadier and faster: `bench/vendor_layers/h200-holdout-reference.md`."]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

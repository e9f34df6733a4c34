"""Layer by layer, cuDNN against our dispatcher, timed two ways in one process: back to back (a CUDA graph of the
same conv call repeated, as ``bench/vendor_layers.py`` times), and separated (each conv call followed by a 1-element
kernel on another tensor, the graph of that pair repeated, the 1-element kernel's own back-to-back time subtracted).

A kernel launched with programmatic dependent launch (PDL) may start while the kernel before it finishes; back to
back, that kernel is itself, and the overlap is counted as the layer's speed.  In a network a conv follows other
kernels (batch norm, activations, additions), and a separated pair is the closer picture.  The two ratios differ
where one side overlaps with itself.

    python bench/separated_layers.py --library build/x.so --family f16nhwc+f16nhwc90+f16gemm90 \\
        --layers-dir DIR --batches 8,32 --out bench/separated/<name>     # GPU: writes <out>.csv and <out>.md
"""
from __future__ import annotations

import argparse
import datetime as dt
import logging
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from predictor import torch_conv  # noqa: E402
from predictor.features import ConvProblem  # noqa: E402
from predictor.gpu_eval import graph_time_us  # noqa: E402
from vendor_layers import CATALOG, catalog_layers, fp16_tensors, measure_layers  # noqa: E402

_LOG = logging.getLogger("separated_layers")


def measure(p: ConvProblem, family: str, tiny_us: float, tiny: Any) -> dict[str, float]:
    """Back-to-back and separated graph times of cuDNN's and the dispatcher's call for ``p`` (µs)."""
    import torch
    import torch.nn.functional as F

    x, w = fp16_tensors(p)
    calls = {"cudnn": lambda: F.conv2d(x, w, stride=p.stride, padding=p.pad, dilation=p.dilation),
             "ours": lambda: torch.ops.predictor.conv2d(x, w, p.stride, p.pad, p.dilation, family, 132)}
    rec: dict[str, float] = {}
    for name, fn in calls.items():
        fn()
        rec[f"{name}_b2b_us"] = graph_time_us(fn)
        rec[f"{name}_sep_us"] = graph_time_us(lambda fn=fn: (fn(), tiny())) - tiny_us
    return rec


def summary(d: pd.DataFrame) -> list[str]:
    """Markdown rows: cuDNN / ours back to back and separated, geomean, by layer kind and batch."""
    gm = lambda s: float(np.exp(np.log(s).mean()))  # noqa: E731
    pw = (d["R"] == 1) & (d["S"] == 1)
    rows = ["| layers | count | cuDNN / ours, back to back | cuDNN / ours, separated | cuDNN separated / back to back "
            "| ours separated / back to back |", "|---|---|---|---|---|---|"]
    for label, m in [("all", pw | ~pw), ("1x1", pw), ("other", ~pw),
                     *((f"N = {n}", d["N"] == n) for n in sorted(d["N"].unique()))]:
        g = d[m]
        if g.empty:
            continue
        rows.append(f"| {label} | {len(g)} | {gm(g['cudnn_b2b_us'] / g['ours_b2b_us']):.3f} | "
                    f"{gm(g['cudnn_sep_us'] / g['ours_sep_us']):.3f} | {gm(g['cudnn_sep_us'] / g['cudnn_b2b_us']):.3f} | "
                    f"{gm(g['ours_sep_us'] / g['ours_b2b_us']):.3f} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--library", required=True, help="built dispatcher (.so)")
    ap.add_argument("--family", required=True, help="the dispatcher's family or choice to time")
    ap.add_argument("--layers-dir", type=Path, default=CATALOG, help="the layers' CSVs, one per network")
    ap.add_argument("--batches", default=None, help="only these batch sizes, e.g. 8,32")
    ap.add_argument("--shard", default="0/1", help="i/n: every n-th layer from the i-th")
    ap.add_argument("--out", required=True, help="writes <out>.csv and <out>.md")
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    import torch

    from predictor.cuda_backend import warm_up

    torch.backends.cudnn.benchmark = False  # cuDNN's heuristic, PyTorch's default
    torch_conv.load(a.library)
    layers = catalog_layers([int(b) for b in a.batches.split(",")] if a.batches else None, folder=a.layers_dir)
    i, n = (int(v) for v in a.shard.split("/"))
    layers = layers.iloc[i::n]
    warm_up(1.0)
    z = torch.zeros(1, device="cuda")
    tiny = lambda: z.add_(1.0)  # noqa: E731

    def one(row: dict[str, Any], p: ConvProblem) -> dict[str, Any] | None:
        tiny_us = graph_time_us(tiny)
        try:
            return {**row, "tiny_us": tiny_us, **measure(p, a.family, tiny_us, tiny)}
        except RuntimeError as exc:  # a layer the dispatcher refuses
            _LOG.warning("%s: %s", p.key, exc)
            return None

    out = Path(a.out)
    d = measure_layers(layers, one, out, 25)
    if d is None:
        return 1
    lines = ["# cuDNN against our dispatcher, back to back and separated", "",
             f"- command: `python bench/separated_layers.py {' '.join(sys.argv[1:] if argv is None else argv)}`",
             f"- GPU: {torch.cuda.get_device_name()}", f"- date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"- layers: {len(d)} of {len(layers)}", f"- cuDNN: heuristic ({torch.backends.cudnn.version()}); the 1-element kernel: "
             f"{d['tiny_us'].median():.2f} µs back to back (median)",
             "- separated: each call followed by the 1-element kernel, whose back-to-back time is subtracted", "",
             *summary(d)]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Where the time of a small fp16 layer goes: cuDNN against our dispatcher's pick on the layers cuDNN
runs fastest, each timed as a CUDA-graph replay (as ``bench/vendor_layers.py``) and profiled with
``torch.profiler`` (CUPTI: the GPU time of each kernel a call launches, without the gaps between
launches), next to the floor of the method (a graph of one-element ``fill_`` kernels).

    python bench/small_layers.py --library h200_dispatch_sm_90a.so --family f16nhwc+f16nhwc90+f16gemm90 \\
        --from bench/vendor_layers/h200-holdout-choice3-tuned-shard0.csv --max-cudnn-us 5 --out OUT/small

Writes ``<out>.csv`` (one row per layer: graph time, kernel time per call and kernel names of cuDNN and
ours) and ``<out>.md`` (medians; command, GPU, date).  "graph - kernel" is what a call costs beyond its
kernels' run time: launch gaps inside the graph, and the idle time between several kernels of one call.
"""
from __future__ import annotations

import argparse
import datetime as dt
import logging
import math
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from predictor import torch_conv  # noqa: E402
from predictor.features import ConvProblem  # noqa: E402
from predictor.gpu_eval import graph_time_us  # noqa: E402
from predictor.schema import SHAPE_COLUMNS  # noqa: E402
from vendor_layers import CUDNN_MODES, PROFILED_CALLS, fp16_tensors, kernels_per_call, rel_err  # noqa: E402

_LOG = logging.getLogger("bench.small_layers")


def measure(p: ConvProblem, family: str) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F

    x, w = fp16_tensors(p)
    disp, shape = torch_conv._DISPATCHERS[family], torch_conv._shape10(p)
    y = torch.empty(p.N, p.K, p.P, p.Q, device="cuda", dtype=torch.float16).contiguous(memory_format=torch.channels_last)
    need = disp.workspace_bytes(family, shape, 132)
    ws = torch.empty(max(need, 1), dtype=torch.uint8, device="cuda")

    def capi() -> Any:  # the same kernel through the C ABI, buffers allocated once (no PyTorch op)
        disp.conv2d(family, shape, 132, x.data_ptr(), w.data_ptr(), y.data_ptr(), 1.0, 0.0, ws.data_ptr(), need,
                    torch.cuda.current_stream().cuda_stream)
        return y

    variants = {"cudnn": lambda: F.conv2d(x, w, stride=p.stride, padding=p.pad, dilation=p.dilation),
                "ours": lambda: torch.ops.predictor.conv2d(x, w, p.stride, p.pad, p.dilation, family, 132),
                "ours_capi": capi}
    ref = variants["cudnn"]()
    rec: dict[str, Any] = {"gflop": p.flops / 1e9}
    for v, fn in variants.items():
        rec[f"{v}_err"] = rel_err(fn(), ref)
        rec[f"{v}_graph_us"] = graph_time_us(fn)
        rec[f"{v}_kernel_us"], rec[f"{v}_kernels"], rec[f"{v}_launches"] = kernels_per_call(fn)
    return rec


def report(d: pd.DataFrame, floor: float, command: str, cudnn: str = "autotuner") -> str:
    import torch

    med = lambda c: float(np.median(d[c])) if len(d) else math.nan  # noqa: E731
    lines = ["# Small fp16 layers: where the time goes (cuDNN against our pick)", "",
             f"- command: `{command}`", f"- GPU: {torch.cuda.get_device_name()}",
             f"- date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"- layers: {len(d)}; graph: CUDA-graph replay of back-to-back calls (per call); kernel: CUPTI GPU time "
             f"of the kernels of one call (torch.profiler, {PROFILED_CALLS} calls)",
             f"- cuDNN: {cudnn} (`--cudnn`)",
             f"- floor: a graph of one-element `fill_` kernels runs at {floor:.2f} µs per kernel", "",
             "| median over the layers | cuDNN | ours (PyTorch op) | ours (C ABI, buffers allocated once) |",
             "|---|---|---|---|"]
    vs = [v for v in ("cudnn", "ours", "ours_capi") if f"{v}_graph_us" in d]
    for what, col in (("graph time per call (µs)", "graph_us"), ("kernel time per call (µs)", "kernel_us"),
                      ("kernels per call", "launches")):
        lines.append(f"| {what} | " + " | ".join(f"{med(v + '_' + col):.2f}" for v in vs) + " |")
    lines.append("| graph - kernel (µs) | " + " | ".join(
        f"{float(np.median(d[v + '_graph_us'] - d[v + '_kernel_us'])):.2f}" for v in vs) + " |")
    r = d["cudnn_graph_us"] / d["ours_graph_us"]
    k = d["cudnn_kernel_us"] / d["ours_kernel_us"]
    lines += ["", f"cuDNN / ours, geomean: graph time {float(np.exp(np.log(r).mean())):.3f}, kernel time "
                  f"{float(np.exp(np.log(k).mean())):.3f}", "",
              "cuDNN's kernels (layers):", ""]
    for name, n in d["cudnn_kernels"].value_counts().head(8).items():
        lines.append(f"- {n}: `{name}`")
    lines += ["", "Our kernels (layers):", ""]
    for name, n in d["ours_kernels"].value_counts().head(8).items():
        lines.append(f"- {n}: `{name}`")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--library", required=True, help="built fp16 dispatcher (.so)")
    p.add_argument("--family", required=True, help="the dispatcher's fp16 family or choice")
    p.add_argument("--from", dest="source", action="append", required=True,
                   help="a bench/vendor_layers.py CSV (its layers and cudnn_us; repeatable)")
    p.add_argument("--max-cudnn-us", type=float, default=5.0, help="only layers cuDNN ran in at most this time")
    p.add_argument("--cudnn", choices=CUDNN_MODES, default="autotuner",
                   help="cuDNN's mode for this process: autotuner (cudnn.benchmark) or heuristic")
    p.add_argument("--out", required=True, help="writes <out>.csv and <out>.md")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    import torch

    torch.backends.cudnn.benchmark = args.cudnn == "autotuner"
    torch_conv.load(args.library)
    src = pd.concat([pd.read_csv(f) for f in args.source], ignore_index=True)
    layers = src[src["cudnn_us"] <= args.max_cudnn_us].drop_duplicates("shape_key")
    from predictor.cuda_backend import warm_up

    warm_up(1.0)
    one = torch.zeros(1, device="cuda")
    floor = graph_time_us(lambda: one.fill_(1.0))
    recs = []
    for row in layers.to_dict("records"):
        prob = ConvProblem(*(int(row[c]) for c in SHAPE_COLUMNS))
        recs.append({"shape_key": prob.key, **{c: row[c] for c in SHAPE_COLUMNS}, **measure(prob, args.family)})
    d = pd.DataFrame(recs)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    d.to_csv(out.with_suffix(".csv"), index=False)
    command = "python bench/small_layers.py " + " ".join(sys.argv[1:] if argv is None else argv)
    text = report(d, floor, command, args.cudnn)
    out.with_suffix(".md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

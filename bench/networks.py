"""Whole-network forward passes with every eligible convolution through our CUTLASS dispatcher
(``torch.ops.predictor.conv2d``, :mod:`predictor.torch_conv`) against the same network on cuDNN.

    python bench/networks.py --library build/h200_dispatch_sm_90a.so --family f16nhwc90 [--family f16nhwc ...] \\
        [--nets resnet50,yolov8m_csp,unet_skip] [--batches 1,8,32] --out bench/networks

fp16, channels_last, eval mode, random weights (seeded).  Both sides are timed as CUDA-graph
replays of the whole forward pass (``predictor.gpu_eval.graph_time_us``), alternately, after a
warm-up (the GPU idles at a low clock); cuDNN in one mode per process (``--cudnn autotuner``, i.e.
``cudnn.benchmark``, or ``--cudnn heuristic``: PyTorch's plan cache is shared by the two modes, so the
first mode to meet a shape decides its plan for the whole process, and the autotuner's plan is a draw).
``bench/median_runs.py`` (no GPU) scores several processes' CSVs against the faster mode, each mode's
time the median of its processes (``bench/cudnn_reference.py`` does the same layer by layer).  Outputs are
compared with cuDNN's (relative L2 error; fp16 tolerance 2e-2).  Only the convolutions change:
batch norm, activations, bias adds stay PyTorch ops on both sides.  Writes ``<out>.csv`` and
``<out>.md`` (command, GPU, date).
"""
from __future__ import annotations

import argparse
import copy
import datetime as dt
import importlib.util
import logging
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from predictor import torch_conv  # noqa: E402
from predictor.gpu_eval import graph_time_us  # noqa: E402
from vendor_layers import CUDNN_MODES  # noqa: E402

_LOG = logging.getLogger("bench.networks")
TOLERANCE = 2e-2
#: network -> (input H, W); the catalog's sizes (scripts/make_network_catalog.py)
NETS = {"resnet50": (224, 224), "yolov8m_csp": (640, 640), "unet_skip": (512, 512)}


def build_net(name: str) -> Any:
    """A network with random (seeded) weights: torchvision's, or the catalog's custom modules."""
    import torch

    torch.manual_seed(0)
    if name in ("yolov8m_csp", "unet_skip"):
        spec = importlib.util.spec_from_file_location("make_network_catalog", ROOT / "scripts" / "make_network_catalog.py")
        mod = importlib.util.module_from_spec(spec)
        assert spec.loader is not None
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        net = mod._custom_module(name)
        if any(t.is_meta for t in net.parameters()):  # the catalog builds them on the meta device
            net = net.to_empty(device="cpu")
            for m in net.modules():
                if hasattr(m, "reset_parameters"):
                    m.reset_parameters()
        return net
    import torchvision

    return getattr(torchvision.models, name)(weights=None)


def _flat(out: Any) -> Any:
    import torch

    if isinstance(out, (list, tuple)):
        return torch.cat([o.float().flatten() for o in out])
    return out.float().flatten()


def measure(name: str, n: int, families: list[str], sms: int, rounds: int, tune: bool = False,
            cudnn: str = "autotuner") -> list[dict[str, Any]]:
    import torch

    h, w = NETS[name]
    base = build_net(name).half().cuda().eval().to(memory_format=torch.channels_last)
    x = torch.randn(n, 3, h, w, device="cuda", dtype=torch.float16).contiguous(memory_format=torch.channels_last)
    convs = sum(isinstance(m, torch.nn.Conv2d) for m in base.modules())
    with torch.no_grad():
        ref = _flat(base(x))
        variants = {"cudnn": (base, None)}
        for fam in families:
            for tuned in (False, True) if tune else (False,):
                net = copy.deepcopy(base)
                rep = torch_conv.convert(net, fam, sms, example_input=x, tuned=tuned)
                variants[f"{fam}_tuned" if tuned else fam] = (net, rep)
        times: dict[str, list[float]] = {k: [] for k in variants}
        errs: dict[str, float] = {}
        for k, (net, _) in variants.items():  # eager: a tuned variant tunes its shapes here, before capture
            out = _flat(net(x))
            errs[k] = float((out - ref).norm() / ref.norm().clamp_min(1e-30))
        for _ in range(rounds):  # alternate: both sides share clocks and drift
            for k, (net, _) in variants.items():
                times[k].append(graph_time_us(lambda net=net: net(x), target_ms=20.0, reps=5) / 1000.0)
    cudnn_ms = sorted(times["cudnn"])[len(times["cudnn"]) // 2]
    rows = []
    for k, (net, rep) in variants.items():
        ms = sorted(times[k])[len(times[k]) // 2]
        rows.append({"network": name, "N": n, "variant": k, "cudnn_mode": cudnn, "convs": convs,
                     "converted": len(rep.converted) if rep else 0, "ms": round(ms, 4),
                     "cudnn_over_ours": round(cudnn_ms / ms, 4), "rel_l2_err": errs[k],
                     "ok": bool(errs[k] <= TOLERANCE), "kept": "; ".join(sorted(set(rep.kept.values()))) if rep else ""})
        _LOG.info("%s N=%d %s: %.3f ms (cuDNN/ours %.3f), err %.2e", name, n, k, ms, cudnn_ms / ms, errs[k])
    return rows


def report(rows: list[dict[str, Any]], command: str, gpu: str, library: str, cudnn: str = "autotuner") -> str:
    import pandas as pd

    d = pd.DataFrame(rows)
    lines = ["# Whole-network forward passes: our CUTLASS dispatcher vs cuDNN", "",
             f"- command: `{command}`", f"- GPU: {gpu}", f"- date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"- dispatcher: `{library}`",
             f"- cuDNN: {cudnn} (one process's draw; `bench/median_runs.py` pools several)",
             "- fp16, channels_last, eval, random weights; CUDA-graph replays of the whole forward pass, "
             "variants alternated; median of the rounds. cuDNN/ours > 1 means ours is faster. "
             f"Output error: relative L2 against cuDNN's output (tolerance {TOLERANCE}).", "",
             "| network | N | variant | convs converted | ms | cuDNN / ours | rel. error |",
             "|---|---|---|---|---|---|---|"]
    for r in d.itertuples():
        lines.append(f"| {r.network} | {r.N} | {r.variant} | {r.converted}/{r.convs} | {r.ms:.3f} | "
                     f"{r.cudnn_over_ours:.3f} | {r.rel_l2_err:.1e}{'' if r.ok else ' FAIL'} |")
    kept = d[d.kept != ""][["network", "variant", "kept"]].drop_duplicates()
    if len(kept):
        lines += ["", "Layers kept on cuDNN, by reason:", ""]
        lines += [f"- {r.network} / {r.variant}: {r.kept}" for r in kept.itertuples()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--library", action="append", required=True, help="built dispatcher (.so; repeatable)")
    p.add_argument("--family", action="append", required=True,
                   help="family (or choice) to run through the dispatcher that holds it (repeatable: one variant each)")
    p.add_argument("--nets", default=",".join(NETS), help=f"comma-separated, of {sorted(NETS)}")
    p.add_argument("--batches", default="1,8,32")
    p.add_argument("--sms", type=int, default=132)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tune", action="store_true",
                   help="also each family with first-call tuning (variant <family>_tuned: tuned on the eager run)")
    p.add_argument("--cudnn", choices=CUDNN_MODES, default="autotuner",
                   help="cuDNN's mode for this process: autotuner (cudnn.benchmark) or heuristic")
    p.add_argument("--out", default="bench/networks", help="writes <out>.csv and <out>.md")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    import torch

    torch.backends.cudnn.benchmark = args.cudnn == "autotuner"
    for lib in args.library:
        torch_conv.load(lib)
    missing = sorted(set(args.family) - set(torch_conv.loaded_families()))
    if missing:
        p.error(f"no --library holds {missing} (loaded: {torch_conv.loaded_families()})")
    warm = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    for _ in range(200):  # leave the idle clock
        warm @ warm
    rows = []
    for name in args.nets.split(","):
        for n in (int(b) for b in args.batches.split(",")):
            rows.extend(measure(name, n, args.family, args.sms, args.rounds, args.tune, args.cudnn))
    import pandas as pd

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(out.with_suffix(".csv"), index=False)
    command = "python bench/networks.py " + " ".join(sys.argv[1:] if argv is None else argv)
    out.with_suffix(".md").write_text(report(rows, command, torch.cuda.get_device_name(), ", ".join(args.library),
                                             args.cudnn))
    print(out.with_suffix(".md").read_text())
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

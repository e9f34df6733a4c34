"""Layer by layer against cuDNN: every distinct fp16 conv layer of the network catalog, timed as
CUDA-graph replays in one run: cuDNN (in one of its modes per process, ``--cudnn``), each dispatcher variant end to end
(``torch.ops.predictor.conv2d``: selection in C++ + the picked kernel) and, optionally, given
configs per layer (e.g. the leave-one-network-out picks of ``python -m predictor.lono``, through
the collector's kernel libraries).

    python bench/vendor_layers.py --library export/.../h200_dispatch_sm_90a.so --family f16nhwc90 \\
        [--picks reports/lono/.../layers.csv --picks-kind repick --picks sweeps/x.parquet --build-dir .dev/build] \\
        [--shard 0/2] [--tune] --out bench/vendor_layers/h200

Writes ``<out>.csv`` (one row per layer: ``cudnn_us``, ``<variant>_us``, ``<variant>_err``) and
``<out>.md`` (geomean cuDNN time / ours per variant, all layers and > 8 GFLOP apart; command, GPU,
date).  Outputs are compared with cuDNN's (relative L2; fp16 tolerance 2e-2).

cuDNN runs in one mode per process: ``--cudnn autotuner`` (``cudnn.benchmark``, the default) or
``--cudnn heuristic``.  PyTorch keeps one plan cache for both modes (its key has no benchmark flag), so
the mode that meets a shape first decides the plan for the rest of the process; and the autotuner's plan
is a draw (it times the candidate plans eagerly, which on µs-size layers measures the host more than the
GPU).  A steady reference takes several processes: ``bench/cudnn_reference.py`` pools them.  Without
``--library``/``--picks`` only cuDNN runs; ``--cudnn-kernels`` also records the kernels cuDNN launches
for each layer (``cudnn_kernels``, ``cudnn_launches``: :func:`kernels_per_call`).

``--vendor cublaslt_int8``: the int8 1x1 layers instead (1x1 / stride 1 / pad 0 / dilation 1, C and K
multiples of 16: what ``i8gemm90`` runs) against cuBLASLt int8 (``torch._int_mm`` on the same GEMM,
graph-timed: ``predictor.gpu_eval.cublaslt_int8_us``), with ``--picks`` (the sweeps' fastest configs,
e.g. ``--picks h200-i8gemm90.parquet``) and/or int8 dispatchers (``--library`` + ``--family``, called
through their C ABI with ``predictor.dispatcher.Dispatcher``: ``torch_conv`` is fp16).  Our kernels'
outputs are checked against the float64 reference (``<variant>_verified``); cuBLASLt's ``_int_mm``
writes int32 (no epilogue, 4x the output bytes of our int8 output) and is not checked.  With
``--every-layer`` the dispatchers run every int8 layer (C, K multiples of 16), all checked, and
cuBLASLt the 1x1 ones (the ratios cover those).

    python bench/vendor_layers.py --vendor cublaslt_int8 --picks h200-i8gemm90.parquet --out OUT/i8gemm
    python bench/vendor_layers.py --vendor cublaslt_int8 --library h200_dispatch_sm_90a.so \\
        --family i8nhwc+i8nhwc90+i8gemm90 --layers-dir bench/holdout/layers --every-layer --out OUT/i8choice
"""
from __future__ import annotations

import argparse
import datetime as dt
import logging
import math
import signal
import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from predictor import torch_conv  # noqa: E402
from predictor.features import ConvProblem  # noqa: E402
from predictor.gpu_eval import graph_time_us  # noqa: E402
from predictor.schema import SHAPE_COLUMNS  # noqa: E402

_LOG = logging.getLogger("bench.vendor_layers")
TOLERANCE = 2e-2
BIG_GFLOP = 8.0
#: Vendor baselines: the time column, the channel multiple of the layers and whether only 1x1 /
#: stride-1 / pad-0 / dilation-1 layers are timed.
VENDORS = {"cudnn": ("cudnn_us", 8, False), "cublaslt_int8": ("cublaslt_int8_us", 16, True)}
TITLES = {"cudnn": "our kernels vs cuDNN (fp16 NHWC)",
          "cublaslt_int8": "our int8 kernels vs cuBLASLt int8 (1x1 layers as GEMMs)"}


CATALOG = ROOT / "predictor" / "data" / "networks"
#: cuDNN's modes, one per process: PyTorch's ``cudnn.benchmark`` on (autotuner) or off (heuristic)
CUDNN_MODES = ("autotuner", "heuristic")
PROFILED_CALLS = 20  # calls per kernels_per_call


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def measure_layers(layers: pd.DataFrame, one: Callable[[dict[str, Any], ConvProblem], dict[str, Any] | None],
                   out: Path, every: int, note: Callable[[dict[str, Any]], str] = lambda rec: "") -> pd.DataFrame | None:
    """``one(row, problem)`` for each layer (a record, or None to leave the layer out), logging progress every
    ``every`` layers (``note(record)`` after the layer's key); a SIGTERM (a ``timeout``) or Ctrl-C keeps the layers
    measured so far.  The records go to ``out.csv`` and come back as a frame; None (logged) if there is none."""
    import torch

    recs = []
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        for k, row in enumerate(layers.to_dict("records")):
            prob = ConvProblem(*(int(row[c]) for c in SHAPE_COLUMNS))
            rec = one(row, prob)
            if rec is not None:
                recs.append(rec)
            if k % every == 0:
                _LOG.info("%d/%d %s%s", k, len(layers), prob.key, note(rec) if rec is not None else "")
            torch.cuda.empty_cache()
    except KeyboardInterrupt:
        _LOG.warning("interrupted after %d of %d layers: writing those", len(recs), len(layers))
    if not recs:
        _LOG.error("no layer measured")
        return None
    d = pd.DataFrame(recs)
    out.parent.mkdir(parents=True, exist_ok=True)
    d.to_csv(out.with_suffix(".csv"), index=False)
    return d


def catalog_calls(folder: Path = CATALOG, nets: list[str] | None = None) -> pd.DataFrame:
    """The rows of the network catalog's CSVs (``predictor/data/networks``, or another ``folder`` of ``--layers``
    CSVs, one per network; only ``nets`` when given), each with its ``network`` and ``shape_key``."""
    paths = [Path(folder) / f"{n}.csv" for n in nets] if nets else sorted(Path(folder).glob("*.csv"))
    frames = []
    for f in paths:
        d = pd.read_csv(f, comment="#")
        d["network"] = f.stem
        frames.append(d)
    d = pd.concat(frames, ignore_index=True)
    d["shape_key"] = [ConvProblem(*(int(r[c]) for c in SHAPE_COLUMNS)).key for r in d.to_dict("records")]
    return d


def catalog_layers(batches: list[int] | None, multiple: int = 8, pointwise: bool = False,
                   folder: Path = CATALOG) -> pd.DataFrame:
    """Distinct problems of the network catalog (:func:`catalog_calls`) with their networks: C and K multiples
    of ``multiple``; with ``pointwise`` only the 1x1 / stride-1 / pad-0 / dilation-1 ones."""
    d = catalog_calls(folder)
    d = d[(d["C"] % multiple == 0) & (d["K"] % multiple == 0)]
    if pointwise:
        d = d[(d["R"] == 1) & (d["S"] == 1) & (d["stride"] == 1) & (d["pad"] == 0) & (d["dilation"] == 1)]
    if batches:
        d = d[d["N"].isin(batches)]
    nets = d.groupby("shape_key")["network"].agg(lambda s: " ".join(sorted(set(s))))
    d = d.drop_duplicates("shape_key").set_index("shape_key")
    d["networks"] = nets
    return d.reset_index()[["shape_key", *SHAPE_COLUMNS, "networks"]]


def rel_err(out: Any, ref: Any) -> float:
    """Relative L2 error of ``out`` against ``ref`` (compared with ``TOLERANCE``)."""
    return float((out.float() - ref.float()).norm() / ref.float().norm().clamp_min(1e-30))


def measure(p: ConvProblem, families: list[str], picks: dict[str, dict[str, str]], backend: Any,
            vendor: str = "cudnn", tune: bool = False, dispatchers: dict[str, Any] | None = None,
            kernels: bool = False) -> dict[str, Any]:
    rec: dict[str, Any] = {"gflop": p.flops / 1e9}
    if vendor == "cudnn":
        rec.update(_measure_cudnn(p, families, tune, kernels))
    else:
        from predictor.gpu_eval import cublaslt_int8_us

        rec["cublaslt_int8_us"] = cublaslt_int8_us(p)
        rec.update(_measure_dispatchers(p, dispatchers or {}, backend))
    if picks:
        rec.update(_measure_picks(p, picks, backend))
    return rec


def _measure_dispatchers(p: ConvProblem, dispatchers: dict[str, Any], backend: Any) -> dict[str, Any]:
    """Each key's dispatcher end to end through its C ABI (``predictor.gpu_eval.dispatch_measure``):
    ``<key>`` the config it ran, ``<key>_us``, ``<key>_verified``."""
    from predictor.gpu_eval import dispatch_measure

    rec: dict[str, Any] = {}
    for key, disp in dispatchers.items():
        m = dispatch_measure(disp, backend, key, p)
        rec[key] = m["dispatch_config"]
        rec[f"{key}_us"] = m.get("dispatch_us", math.nan)
        rec[f"{key}_verified"] = m.get("dispatch_verified", False)
    return rec


def fp16_tensors(p: ConvProblem) -> tuple[Any, Any]:
    """A random fp16 input (NCHW sizes, channels_last) and filter (KCRS sizes, channels_last, scaled so the
    output stays O(1)) for ``p``: what cuDNN and the PyTorch op both take."""
    import torch

    x = torch.randn(p.N, p.C, p.H, p.W, device="cuda", dtype=torch.float16).contiguous(memory_format=torch.channels_last)
    w = (torch.randn(p.K, p.C, p.R, p.S, device="cuda", dtype=torch.float16) / math.sqrt(p.C * p.R * p.S)
         ).contiguous(memory_format=torch.channels_last)
    return x, w


def kernels_per_call(fn: Callable[[], Any], calls: int = PROFILED_CALLS) -> tuple[float, str, int]:
    """(GPU time of the kernels one call launches in µs, their names, kernels per call), from CUPTI."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    ev = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    total = sum(e.time_range.elapsed_us() for e in ev)
    names = sorted({e.name[:80] for e in ev})
    return total / calls, " | ".join(names), round(len(ev) / calls)


def _measure_cudnn(p: ConvProblem, families: list[str], tune: bool = False, kernels: bool = False) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F

    x, w = fp16_tensors(p)
    rec: dict[str, Any] = {}
    fn = lambda: F.conv2d(x, w, stride=p.stride, padding=p.pad, dilation=p.dilation)  # noqa: E731
    ref = fn()  # the process's mode picks the plan here
    rec["cudnn_us"] = graph_time_us(fn)
    if kernels:
        _, rec["cudnn_kernels"], rec["cudnn_launches"] = kernels_per_call(fn, 1)
    for fam in families:
        op = lambda fam=fam: torch.ops.predictor.conv2d(x, w, p.stride, p.pad, p.dilation, fam, 132)  # noqa: E731
        try:
            rec[f"{fam}_err"] = rel_err(op(), ref)
            rec[f"{fam}_us"] = graph_time_us(op)
        except RuntimeError as exc:
            _LOG.warning("%s %s: %s", p.key, fam, exc)
            rec[f"{fam}_us"], rec[f"{fam}_err"] = math.nan, math.nan
        if not tune:
            continue
        # first-call tuning: the first (eager) call times the candidates and keeps the fastest; the
        # graph then replays the kept kernel
        op = lambda fam=fam: torch.ops.predictor.conv2d(x, w, p.stride, p.pad, p.dilation, fam, 132, True)  # noqa: E731
        v = f"{fam}_tuned"
        try:
            rec[f"{v}_err"] = rel_err(op(), ref)
            rec[f"{v}_us"] = graph_time_us(op)
            disp, shape = torch_conv._DISPATCHERS[fam], torch_conv._shape10(p)
            rec[f"{v}_pick"] = disp.tuned_pick(fam, shape, 132)
            rec[f"{fam}_pick"] = disp.select(fam, shape, 132)
            cands = disp.candidates(fam, shape, 132)
            rec[f"{v}_candidates"] = len(cands) if isinstance(cands, list) else 0
        except RuntimeError as exc:
            _LOG.warning("%s %s tuned: %s", p.key, fam, exc)
            rec[f"{v}_us"], rec[f"{v}_err"] = math.nan, math.nan
    return rec


def _measure_picks(p: ConvProblem, picks: dict[str, dict[str, str]], backend: Any) -> dict[str, Any]:
    """Each variant's config for ``p`` through the collector's kernel library, output checked once against
    the float64 reference, graph-timed."""
    from predictor.config import KernelConfig
    from predictor.gpu_eval import graph_config_us

    rec: dict[str, Any] = {}
    tensors: dict[str, Any] = {}  # one set per tensor kind (families with the same tensors share it)
    for variant, chosen in picks.items():
        if p.key not in chosen:
            continue
        cfg = KernelConfig.from_name(chosen[p.key])
        kind = cfg.family.spec.tensor_kind
        if kind not in tensors:
            tensors[kind] = backend.tensors(p, cfg.family)
        rec[variant] = cfg.name
        rec[f"{variant}_us"], rec[f"{variant}_verified"] = graph_config_us(backend, cfg, p, tensors[kind])
    del tensors
    return rec


def read_picks(paths: list[str], kind: str | None) -> dict[str, dict[str, str]]:
    """Per variant, shape_key -> config name: ``lono_<family>`` from each ``predictor.lono``
    layers.csv (rows of ``kind``), ``best_<family>`` (the fastest ok config of the family's rows
    at the largest SM count) from each sweep (``.parquet``)."""
    out: dict[str, dict[str, str]] = {}
    for path in paths:
        if path.endswith(".parquet"):
            from predictor.schema import read_sweep

            d = read_sweep(path)
            d = d[(d["status"] == "ok") & (d["sms"] == d["sms"].max())]
            best = d.loc[d.groupby(["family", "shape_key"])["time_us"].idxmin()]
            for fam, g in best.groupby("family"):
                out.setdefault(f"best_{fam}", {}).update(zip(g["shape_key"], g["config"]))
            continue
        pk = pd.read_csv(path)
        if kind:
            pk = pk[pk["kind"] == kind]
        for fam, g in pk.groupby("family"):
            out.setdefault(f"lono_{fam}", {}).update(zip(g["shape_key"], g["pick"]))
    return out


def summary(d: pd.DataFrame, variants: list[str], vendor: str = "cudnn") -> list[str]:
    name = {"cudnn": "cuDNN", "cublaslt_int8": "cuBLASLt"}[vendor]
    lines = [f"| variant | layers | {name} / ours (geomean) | ours faster on | > 8 GFLOP: layers | {name} / ours |"
             + (" verified |" if vendor != "cudnn" else ""),
             "|---|---|---|---|---|---|" + ("---|" if vendor != "cudnn" else "")]
    for v in variants:
        col = f"{v}_us"
        if col not in d:
            continue
        r = (d[VENDORS[vendor][0]] / d[col]).replace([np.inf, -np.inf], np.nan)
        ok = r.notna()
        big = ok & (d["gflop"] > BIG_GFLOP)
        gm = lambda s: float(np.exp(np.log(s).mean())) if len(s) else math.nan  # noqa: E731
        row = (f"| {v} | {int(ok.sum())} | {gm(r[ok]):.3f} | {100 * float((r[ok] > 1).mean()):.0f}% | "
               f"{int(big.sum())} | {gm(r[big]):.3f} |")
        if vendor != "cudnn":
            ver = d[f"{v}_verified"] if f"{v}_verified" in d else pd.Series(dtype=object)
            row += f" {int(ver.fillna(False).astype(bool).sum())}/{int(d[col].notna().sum())} |"
        lines.append(row)
    return lines


def tuned_summary(d: pd.DataFrame, families: list[str]) -> list[str]:
    """Static pick time / tuned time per family (> 1: tuning made it faster), all layers and > 8 GFLOP."""
    if not families:
        return []
    lines = ["", "First-call tuning: static pick time / tuned time (geomean; > 1: tuned faster)", "",
             "| family | layers | static / tuned | tuned kept another config | > 8 GFLOP: layers | static / tuned |",
             "|---|---|---|---|---|---|"]
    gm = lambda s: float(np.exp(np.log(s).mean())) if len(s) else math.nan  # noqa: E731
    for f in families:
        if f"{f}_tuned_us" not in d:
            continue
        r = (d[f"{f}_us"] / d[f"{f}_tuned_us"]).replace([np.inf, -np.inf], np.nan)
        ok = r.notna()
        big = ok & (d["gflop"] > BIG_GFLOP)
        other = (d[f"{f}_tuned_pick"] != d[f"{f}_pick"])[ok]
        lines.append(f"| {f} | {int(ok.sum())} | {gm(r[ok]):.3f} | {100 * float(other.mean()):.0f}% | "
                     f"{int(big.sum())} | {gm(r[big]):.3f} |")
    return lines


def pool(paths: list[str], vendor: str, out: Path, argv: list[str] | None) -> int:
    """The summary of several runs' CSVs (their layers pooled) as ``<out>.md``."""
    d = pd.concat([pd.read_csv(f) for f in paths], ignore_index=True)
    if d["shape_key"].duplicated().any():
        raise SystemExit(f"--pool: {int(d['shape_key'].duplicated().sum())} layers appear in more than one CSV")
    variants = [c[:-3] for c in d.columns if c.endswith("_us") and c != VENDORS[vendor][0]]
    command = "python bench/vendor_layers.py " + " ".join(sys.argv[1:] if argv is None else argv)
    text = "\n".join([f"# Layer by layer: {TITLES[vendor]} (pooled)", "", f"- command: `{command}`",
                      "- GPU, date and what each run timed: the pooled runs' own reports (`<csv stem>.md`)",
                      f"- layers: {len(d)} (the runs' layers together)", "",
                      *summary(d, variants, vendor)]) + "\n"
    out.with_suffix(".md").write_text(text)
    print(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--library", action="append", default=[], help="built dispatcher (.so; repeatable)")
    p.add_argument("--family", action="append", default=[], help="dispatcher family/choice to time (repeatable)")
    p.add_argument("--picks", action="append", default=[],
                   help="a predictor.lono layers.csv (variants lono_<family>) or a sweep .parquet (variants "
                        "best_<family>: the fastest measured config); repeatable")
    p.add_argument("--picks-kind", default=None, help="keep the picks CSVs' rows of this kind")
    p.add_argument("--build-dir", default="build", help="collector kernel libraries (for --picks)")
    p.add_argument("--batches", default=None, help="only these batch sizes, e.g. 1,8,32")
    p.add_argument("--layers-dir", type=Path, default=CATALOG,
                   help="the layers' CSVs, one per network (default: the catalog; e.g. bench/holdout/layers)")
    p.add_argument("--shard", default="0/1", help="i/n: every n-th layer from the i-th")
    p.add_argument("--limit", type=int, default=0, help="at most this many layers (0: all)")
    p.add_argument("--vendor", choices=sorted(VENDORS), default="cudnn",
                   help="baseline: cudnn (fp16 layers; dispatchers through torch_conv, and picks) or cublaslt_int8 "
                        "(int8 1x1 layers, C and K multiples of 16; picks, and int8 dispatchers through their C ABI)")
    p.add_argument("--every-layer", action="store_true",
                   help="cublaslt_int8: every int8 layer (C, K multiples of 16) for the dispatchers, all checked; "
                        "cuBLASLt times the 1x1 ones")
    p.add_argument("--tune", action="store_true",
                   help="also time each family's first-call tuned mode (variant <family>_tuned: the fastest of "
                        "the model's candidates, timed on the first call, then graph-replayed)")
    p.add_argument("--cudnn", choices=CUDNN_MODES, default="autotuner",
                   help="cuDNN's mode for this process: autotuner (cudnn.benchmark) or heuristic")
    p.add_argument("--cudnn-kernels", action="store_true",
                   help="also record the kernels cuDNN launches per layer (column cudnn_kernels)")
    p.add_argument("--pool", nargs="+", default=None, metavar="CSV",
                   help="no GPU: pool the CSVs of earlier runs (e.g. the shards of one run) into <out>.md")
    p.add_argument("--out", required=True, help="writes <out>.csv and <out>.md")
    args = p.parse_args(argv)
    vendor_col, multiple, pointwise = VENDORS[args.vendor]
    if args.pool:
        return pool(args.pool, args.vendor, Path(args.out), argv)
    if bool(args.family) != bool(args.library) or not (args.family or args.picks or args.vendor == "cudnn"):
        p.error("give --library with --family (dispatchers) and/or --picks")
    if args.every_layer and (args.vendor == "cudnn" or args.picks):
        p.error("--every-layer is for int8 dispatchers (--vendor cublaslt_int8 --library ... --family ...) "
                "without --picks")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    import torch

    torch.backends.cudnn.benchmark = args.cudnn == "autotuner"
    dispatchers: dict[str, Any] = {}
    if args.vendor == "cudnn":
        for lib in args.library:
            torch_conv.load(lib)
    else:  # int8: through the C ABI (torch_conv's op is fp16)
        from predictor.dispatcher import Dispatcher

        libs = [Dispatcher(lib) for lib in args.library]
        for key in args.family:
            held = [d for d in libs if key in [k.value for k in d.families]]
            if not held:
                p.error(f"no --library holds {key}")
            dispatchers[key] = held[0]
    layers = catalog_layers([int(b) for b in args.batches.split(",")] if args.batches else None, multiple,
                            pointwise and not args.every_layer, args.layers_dir)
    picks = read_picks(args.picks, args.picks_kind)
    if args.vendor != "cudnn" and picks:  # only the layers some variant has a pick for (those the sweeps measured)
        layers = layers[layers["shape_key"].isin(set().union(*(set(v) for v in picks.values())))]
    i, n = (int(v) for v in args.shard.split("/"))
    layers = layers.iloc[i::n]
    if args.limit:
        layers = layers.iloc[:args.limit]
    backend = None
    if picks or dispatchers:
        from predictor.config import KernelConfig
        from predictor.cuda_backend import CudaBackend

        keys = set(layers["shape_key"])
        backend = CudaBackend(build_dir=args.build_dir, reps=5, retime_top=1)
    if picks:
        backend.prepare(sorted({KernelConfig.from_name(c) for v in picks.values() for k, c in v.items() if k in keys},
                               key=lambda c: c.name))
    from predictor.cuda_backend import warm_up

    warm_up(1.0)

    def one(row: dict[str, Any], prob: ConvProblem) -> dict[str, Any]:
        rec = {**row, **measure(prob, args.family, picks, backend, args.vendor, args.tune, dispatchers,
                                args.cudnn_kernels)}
        if args.vendor == "cudnn":
            rec["cudnn_mode"] = args.cudnn
        return rec

    out = Path(args.out)
    d = measure_layers(layers, one, out, 50, lambda rec: f" {args.vendor} {rec[vendor_col] or math.nan:.1f} us")
    if d is None:
        return 1
    variants = [v for f in args.family for v in ([f, f"{f}_tuned"] if args.tune else [f])] + sorted(picks)
    best = [f"{v}_us" for v in sorted(picks) if v.startswith("best_")]
    if len(best) > 1:  # the faster of the families' fastest configs, per layer
        d["best_any_us"] = d[best].min(axis=1)
        variants.append("best_any")
    command = "python bench/vendor_layers.py " + " ".join(sys.argv[1:] if argv is None else argv)
    source = "catalog" if Path(args.layers_dir).resolve() == CATALOG.resolve() else f"`{args.layers_dir}`"
    what = (f"fp16 {source} problems (C, K multiples of 8)" if args.vendor == "cudnn" else
            f"int8 {'' if args.every_layer else '1x1 / stride-1 / pad-0 '}{source} problems (C, K multiples of 16)"
            f"{' that the picks cover' if picks else ''}; cuBLASLt (on the 1x1 / stride-1 / pad-0 ones, which the "
            "ratios cover): torch._int_mm, int8 x int8 -> int32 without an epilogue (ours: int8 output, float epilogue)")
    text = "\n".join([f"# Layer by layer: {TITLES[args.vendor]}", "", f"- command: `{command}`",
                      f"- GPU: {torch.cuda.get_device_name()}", f"- date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC",
                      f"- layers: {len(d)} distinct {what}",
                      *([f"- cuDNN: {args.cudnn} (one process's draw; `bench/cudnn_reference.py` pools several)"]
                        if args.vendor == "cudnn" else []),
                      *([f"- interrupted: {len(d)} of {len(layers)} layers measured"] if len(d) < len(layers) else []),
                      "- all CUDA-graph replays in one run; > 1 means our kernel is faster", "",
                      *summary(d, variants, args.vendor), *tuned_summary(d, args.family if args.tune else [])]) + "\n"
    out.with_suffix(".md").write_text(text)
    print(text)
    bad = [v for v in variants if f"{v}_err" in d and (d[f"{v}_err"] > TOLERANCE).any()]
    if bad:
        _LOG.error("outputs outside tolerance for %s", bad)
    unverified = [v for v in [*picks, *dispatchers]
                  if f"{v}_verified" in d and not d[f"{v}_verified"].dropna().astype(bool).all()]
    if args.vendor != "cudnn" and unverified:
        _LOG.error("picked configs with wrong outputs: %s", unverified)
        bad += unverified
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

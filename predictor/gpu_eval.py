"""On-GPU evaluation of the held-out real-network layers: the model's pick, the oracle kernel, the
seed's config and the best single config, timed in one run against the vendor libraries, plus
the generated dispatcher end to end.

    python -m predictor.gpu_eval --sweep sweeps/h200.parquet --gpu h200 --out reports/gpu \\
        [--dispatcher export/dispatch/h200_dispatch_sm_90.so]

* CUTLASS configs of one layer are timed together by :class:`predictor.cuda_backend.CudaBackend`
  (every output checked; re-timed interleaved, so they share clocks and noise).
* cuDNN through PyTorch (fp16, channels_last, ``cudnn.benchmark = True``) and cuBLASLt int8
  (``torch._int_mm`` on the equivalent GEMM, 1x1 stride-1 layers only) are timed as CUDA-graph
  replays: timed as back-to-back Python calls they look ~2x slower than they are on small layers.
* With ``--dispatcher``, every layer also runs through the generated dispatcher (selection in
  C++ + the picked kernel), output checked against the float64 reference, timed as a CUDA graph
  replay of back-to-back dispatcher calls.
Writes ``layers.csv`` and ``REPORT.md`` under ``--out``.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import logging
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
import pandas as pd

from .cli import TIMED_LOG_FORMAT, display_path, refuse_overwrite, require, run_main
from .config import SEED_CONFIG, Family, KernelConfig
from .features import ConvProblem
from .portfolio import effective_times
from .schema import SHAPE_COLUMNS, file_sha256, read_metadata, read_sweep
from .shapes import NET_PREFIX
from .space import family_grid

if TYPE_CHECKING:  # the backend needs torch: imported where a GPU is used
    from .cuda_backend import CudaBackend

_LOG = logging.getLogger("predictor.gpu_eval")


#: calls in the graph that sizes the timed one; most calls in a timed graph
PROBE_CALLS, MAX_CALLS = 10, 400


def graph_time_us(fn: Callable[[], Any], target_ms: float = 0.5, reps: int = 7) -> float:
    """Median GPU time of one ``fn()`` call, replayed inside a CUDA graph of back-to-back calls.

    The graph holds about ``target_ms`` of GPU work, sized from a first small graph's GPU time, and
    each timed replay is enqueued while an untimed one keeps the GPU busy: the time is the GPU's
    alone.  (Until 2026-12-01 the graph was sized from one eager call, whose time is mostly the host's
    launch overhead, and the timed replay started on an idle GPU: the graph's own launch latency,
    spread over few calls where the host path is slow -- a Python op -- was charged to ``fn``.)"""
    import torch

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def capture(n: int) -> Any:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(n):
                fn()
        g.replay()
        torch.cuda.synchronize()
        return g

    def timed(g: Any, n: int) -> float:
        g.replay()  # keeps the GPU busy while the timed replay is enqueued
        start.record()
        g.replay()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) * 1000.0 / n

    trial = capture(PROBE_CALLS)
    one = max(min(timed(trial, PROBE_CALLS) for _ in range(3)), 1e-3)
    del trial
    n = int(max(1, min(MAX_CALLS, math.ceil(target_ms * 1000.0 / one))))
    g = capture(n)
    times = [timed(g, n) for _ in range(reps)]
    del g
    return float(np.median(times))


def cudnn_fp16_us(p: ConvProblem) -> float:
    import torch

    torch.backends.cudnn.benchmark = True
    x = torch.randn(p.N, p.C, p.H, p.W, device="cuda", dtype=torch.float16).to(memory_format=torch.channels_last)
    w = torch.randn(p.K, p.C, p.R, p.S, device="cuda", dtype=torch.float16).to(memory_format=torch.channels_last)
    fn = lambda: torch.nn.functional.conv2d(x, w, stride=p.stride, padding=p.pad, dilation=p.dilation)  # noqa: E731
    return graph_time_us(fn)


def cublaslt_int8_us(p: ConvProblem) -> float | None:
    """torch._int_mm on the implicit GEMM of a 1x1, stride-1, unpadded layer (else None)."""
    import torch

    if not (p.R == p.S == 1 and p.stride == 1 and p.pad == 0):
        return None
    m = p.N * p.H * p.W
    if m <= 16 or p.C % 8 or p.K % 8:
        return None
    a = torch.randint(-8, 9, (m, p.C), device="cuda", dtype=torch.int8)
    b = torch.randint(-8, 9, (p.K, p.C), device="cuda", dtype=torch.int8).t()
    fn = lambda: torch._int_mm(a, b)  # noqa: E731
    return graph_time_us(fn)


def _problem(row: pd.Series) -> ConvProblem:
    return ConvProblem(*(int(row[c]) for c in SHAPE_COLUMNS))


def run(args: argparse.Namespace) -> int:
    import torch

    from .cuda_backend import CudaBackend
    from .selector import load_model, select

    sweep = read_sweep(args.sweep)
    meta = read_metadata(args.sweep)
    df = sweep[sweep["status"] == "ok"].copy()
    df["t"] = effective_times(df)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    backend = CudaBackend(build_dir=args.build_dir, reps=5, retime_top=8)
    disp = None
    if args.dispatcher:
        from .dispatcher import Dispatcher

        disp = Dispatcher(args.dispatcher)
    from .cuda_backend import warm_up

    warm_up(1.0)
    records: list[dict[str, Any]] = []
    families = [Family(f) for f in args.family] if args.family else list(Family)
    for fam in families:
        fdf = df[df["family"] == fam.value]
        if fdf.empty:
            continue
        load_model(args.gpu, fam)  # fail early if the family has no shipped model
        train_rows = fdf[~fdf["source"].str.startswith(NET_PREFIX)]
        piv = train_rows.pivot(index="shape_key", columns="config", values="t")
        worst = piv.max(axis=1)
        filled = piv.apply(lambda c: c.fillna(worst))  # a config with no ok row scores the shape's worst
        best_single = np.log(piv.min(axis=1).values[:, None] / filled.values).mean(0)
        best_single_name = str(piv.columns[int(np.argmax(best_single))])
        net = fdf[fdf["source"].str.startswith(NET_PREFIX)]
        if args.networks:
            net = net[net["source"].isin([f"{NET_PREFIX}{n}" for n in args.networks])]
        if args.batches:
            net = net[net["N"].isin(args.batches)]
        shapes = net.drop_duplicates("shape_key")
        backend.prepare(family_grid(fam))  # the sweep's grid: every object is in the build cache
        for _, row in shapes.iterrows():
            p = _problem(row)
            sel = select(p.N, p.C, p.H, p.W, p.K, p.R, p.S, stride=p.stride, pad=p.pad, dilation=p.dilation,
                         family=fam.value, gpu=args.gpu)
            rows_shape = fdf[fdf["shape_key"] == row["shape_key"]]
            oracle = str(rows_shape.loc[rows_shape["t"].idxmin(), "config"])
            roles = {"picked": sel.name, "oracle": oracle, "best_single": best_single_name}
            if fam is SEED_CONFIG.family:
                roles["seed"] = SEED_CONFIG.name
            uniq = sorted(set(roles.values()))
            meas = {r.config: r for r in backend.measure(p, [KernelConfig.from_name(n) for n in uniq])}
            rec: dict[str, Any] = {"family": fam.value, "shape_key": p.key, "source": row["source"],
                                   "gflop": p.flops / 1e9, "picked_config": sel.name, "oracle_config": oracle,
                                   "fallback": sel.fallback}
            for role, name in roles.items():
                m = meas[name]
                t = m.retime_us if not math.isnan(m.retime_us) else m.time_us
                rec[f"{role}_us"] = t if m.status == "ok" else math.nan
                rec[f"{role}_status"] = m.status
            rec["sweep_oracle_us"] = float(rows_shape["t"].min())
            try:
                if fam.spec.element_a == "f16":
                    rec["cudnn_us"] = cudnn_fp16_us(p)
                else:
                    rec["cublaslt_int8_us"] = cublaslt_int8_us(p)
            except RuntimeError as exc:  # a vendor call that fails is recorded, not fatal
                rec["vendor_error"] = str(exc)[:200]
            if disp is not None and fam.value in [f.value for f in disp.families]:
                try:
                    rec.update(dispatch_measure(disp, backend, fam.value, p))
                except RuntimeError as exc:
                    rec["dispatch_error"] = str(exc)[:300]
            records.append(rec)
            _LOG.info("%s %s picked %.1f oracle %.1f", fam.value, p.key, rec["picked_us"], rec["oracle_us"])
        torch.cuda.empty_cache()
    res = pd.DataFrame(records)
    res.to_csv(out / "layers.csv", index=False)
    (out / "REPORT.md").write_text(report(res, args, meta))
    print((out / "REPORT.md").read_text())
    return 0


def dispatch_measure(disp: Any, backend: CudaBackend, key: str, p: ConvProblem) -> dict[str, Any]:
    """One model key (a family or a choice) of a built dispatcher end to end through its C ABI: the
    status, the config it ran, its output checked once against the float64 reference, then its time as
    a CUDA-graph replay (``dispatch_status``, ``dispatch_config``, ``dispatch_verified``, ``dispatch_us``)."""
    import torch

    from .cuda_backend import check_output, poison
    from .model_key import model_key

    fam = model_key(key).families[0]  # a choice's members read and write the same tensors
    t = backend.tensors(p, fam)
    shape = [int(getattr(p, c)) for c in SHAPE_COLUMNS]
    sms = int(backend.info.get("sms", 132))
    ws_bytes = disp.workspace_bytes(key, shape, sms)
    ws = torch.zeros(max(ws_bytes, 1), dtype=torch.uint8, device="cuda")
    poison(t["d"], fam)
    stream = torch.cuda.current_stream().cuda_stream
    st, chosen = disp.conv2d(key, shape, sms, t["a"].data_ptr(), t["b"].data_ptr(), t["d"].data_ptr(),
                             t["alpha"], 0.0, ws.data_ptr(), ws_bytes, stream)
    torch.cuda.synchronize()
    out: dict[str, Any] = {"dispatch_status": st, "dispatch_config": disp.name(key, chosen)}
    if st != 0:
        return out
    out["dispatch_verified"] = check_output(t["d"], t["ref"], fam).ok

    def call() -> None:
        s = torch.cuda.current_stream().cuda_stream
        disp.conv2d(key, shape, sms, t["a"].data_ptr(), t["b"].data_ptr(), t["d"].data_ptr(),
                    t["alpha"], 0.0, ws.data_ptr(), ws_bytes, s)

    out["dispatch_us"] = graph_time_us(call)
    return out


def _gm(x: pd.Series) -> float:
    x = x.dropna()
    return float(np.exp(np.log(x).mean())) if len(x) else math.nan


def report(res: pd.DataFrame, args: argparse.Namespace, meta: dict[str, Any]) -> str:
    import torch

    lines = [
        "# On-GPU evaluation on held-out real-network layers",
        "",
        f"- command: `python -m predictor.gpu_eval {' '.join(sys.argv[1:])}`",
        f"- GPU: {torch.cuda.get_device_name()} ({torch.cuda.get_device_properties(0).multi_processor_count} SMs), "
        f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}",
        f"- date: {_dt.datetime.now(_dt.timezone.utc).isoformat(timespec='seconds')}",
        f"- sweep: {args.sweep} (sha256 {file_sha256(args.sweep)[:16]}…), measured on {meta.get('device', {}).get('gpu', '?')}",
        "- layers: the sweep's `net:` problems, which the shipped model never trained on.",
        "- ratios are time(other) / time(picked): > 1 means our pick is faster. Geomean over layers.",
        "",
        "| family | layers | oracle/picked | seed/picked | best single/picked | vendor/picked | vendor faster on | dispatcher/picked | dispatcher verified |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for fam, g in res.groupby("family"):
        vend = "cudnn_us" if "cudnn_us" in g and g["cudnn_us"].notna().any() else "cublaslt_int8_us"
        v = g[vend] / g["picked_us"] if vend in g else pd.Series(dtype=float)
        disp = g["dispatch_us"] / g["picked_us"] if "dispatch_us" in g else pd.Series(dtype=float)
        ver = (f"{int(g['dispatch_verified'].fillna(False).sum())}/{int(g['dispatch_status'].notna().sum())}"
               if "dispatch_verified" in g else "-")
        seed = _gm(g["seed_us"] / g["picked_us"]) if "seed_us" in g else math.nan
        lines.append(
            f"| {fam} | {len(g)} | {_gm(g['oracle_us'] / g['picked_us']):.3f} | {seed:.3f} | "
            f"{_gm(g['best_single_us'] / g['picked_us']):.3f} | {_gm(v):.3f} ({vend.replace('_us', '')}, "
            f"{int(v.notna().sum())} layers) | {100 * float((v.dropna() < 1).mean()) if v.notna().any() else math.nan:.0f}% | "
            f"{_gm(disp):.3f} | {ver} |")
    lines += ["", "Per layer: `layers.csv` (times in µs). CUTLASS kernels in the first columns are timed as "
              "back-to-back launches between events (as in the sweep); the dispatcher and the vendor "
              "libraries as CUDA-graph replays, which removes launch gaps: compare those two with each other.",
              "", fair_summary(res)]
    if "dispatch_us" in res:
        lines += ["", "## Whole networks through the dispatcher (sum of layer times, µs)", "",
                  "| family | network | batch | dispatcher | picked kernel | oracle | seed | vendor |", "|---|---|---|---|---|---|---|---|"]
        res = res.assign(batch=res["shape_key"].str.extract(r"^n(\d+)_")[0].astype(int))
        for (fam, src, b), g in res.groupby(["family", "source", "batch"]):
            vend = g["cudnn_us"].sum() if "cudnn_us" in g and g["cudnn_us"].notna().all() else math.nan
            lines.append(f"| {fam} | {src} | {b} | {g['dispatch_us'].sum():.1f} | {g['picked_us'].sum():.1f} | "
                         f"{g['oracle_us'].sum():.1f} | {g['seed_us'].sum() if 'seed_us' in g else math.nan:.1f} | {vend:.1f} |")
    return "\n".join(lines) + "\n"


def graph_config_us(backend: CudaBackend, cfg: KernelConfig, p: ConvProblem, t: dict[str, Any]) -> tuple[float, bool]:
    """(time, verified) of one config through the C ABI, checked once, then timed as a CUDA-graph
    replay of back-to-back launches (like the vendor calls)."""
    import torch

    from .cuda_backend import check_output, poison

    st, ws = backend.query(cfg, p, t)  # allocates the workspace before any capture
    if st != 0:
        return math.nan, False
    poison(t["d"], cfg.family)
    if backend.launch(cfg, p, t, ws) != 0:
        return math.nan, False
    ok = check_output(t["d"], t["ref"], cfg.family).ok
    torch.cuda.synchronize()
    return graph_time_us(lambda: backend.launch(cfg, p, t, ws)), ok


def run_cross_family(args: argparse.Namespace) -> int:
    """fp16 network layers: the SM80 model's pick vs the SM90 family (its model's pick and its best
    measured config) vs cuDNN, all CUDA-graph timed in one run."""
    import torch

    from .cuda_backend import CudaBackend, warm_up
    from .selector import select

    base = read_sweep(args.sweep)
    other = read_sweep(args.sm90_sweep)
    fam80, fam90 = Family(args.base_family), Family(args.sm90_family)
    o = other[(other["status"] == "ok") & (other["family"] == fam90.value)].copy()
    o["t"] = effective_times(o)
    best90 = o.loc[o.groupby("shape_key")["t"].idxmin()].set_index("shape_key")["config"]
    net = base[(base["family"] == fam80.value) & base["source"].str.startswith(NET_PREFIX)].drop_duplicates("shape_key")
    net = net[net["shape_key"].isin(best90.index)]
    backend = CudaBackend(build_dir=args.build_dir, reps=5, retime_top=1)
    backend.prepare(family_grid(fam80) + family_grid(fam90))
    warm_up(1.0)
    fp16 = fam80.spec.element_a == "f16"
    recs = []
    for _, row in net.iterrows():
        p = _problem(row)
        kw = dict(stride=p.stride, pad=p.pad, dilation=p.dilation, gpu=args.gpu)
        cfgs = {"sm80_pick": select(p.N, p.C, p.H, p.W, p.K, p.R, p.S, family=fam80.value, **kw).config,
                "sm90_best": KernelConfig.from_name(best90[row["shape_key"]])}
        try:
            cfgs["sm90_pick"] = select(p.N, p.C, p.H, p.W, p.K, p.R, p.S, family=fam90.value, **kw).config
        except (FileNotFoundError, ValueError) as exc:
            _LOG.warning("no %s pick: %s", fam90.value, exc)
        tensors = {f: backend.tensors(p, f) for f in {c.family for c in cfgs.values()}}  # each family's layouts
        rec: dict[str, Any] = {"shape_key": p.key, "source": row["source"], "gflop": p.flops / 1e9}
        for role, cfg in cfgs.items():
            rec[f"{role}_config"] = cfg.name
            rec[f"{role}_us"], rec[f"{role}_verified"] = graph_config_us(backend, cfg, p, tensors[cfg.family])
        rec["vendor"] = "cudnn" if fp16 else "cublaslt_int8"
        rec["vendor_us"] = cudnn_fp16_us(p) if fp16 else cublaslt_int8_us(p)
        recs.append(rec)
        _LOG.info("%s sm80 %.1f sm90 %.1f vendor %s", p.key, rec["sm80_pick_us"], rec.get("sm90_pick_us", math.nan),
                  rec["vendor_us"])
        del tensors
        torch.cuda.empty_cache()
    res = pd.DataFrame(recs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    res.to_csv(out / f"cross_family_{fam90.value}.csv", index=False)
    text = cross_family_report(res, args)
    (out / f"CROSS_FAMILY_{fam90.value}.md").write_text(text)
    print(text)
    return 0


def cross_family_report(res: pd.DataFrame, args: argparse.Namespace) -> str:
    vendor = str(res["vendor"].iloc[0]) if len(res) else "vendor"
    lines = [f"# {args.base_family} network layers: SM80 vs SM90 CUTLASS kernels vs {vendor} "
             "(H200, all CUDA-graph timed)", "",
             f"- command: `python -m predictor.gpu_eval {' '.join(sys.argv[1:])}`",
             f"- date: {_dt.datetime.now(_dt.timezone.utc).isoformat(timespec='seconds')}",
             f"- ratios: time({vendor}) / time(kernel), > 1 means the CUTLASS kernel is faster; geomean over the "
             f"layers {vendor} can run" + ("" if vendor == "cudnn" else " (1x1, stride 1, unpadded: a plain GEMM)"),
             "",
             f"| kernel | layers | verified | {vendor} / kernel | kernel faster on | < 1 GFLOP | 1-20 GFLOP |",
             "|---|---|---|---|---|---|---|"]
    for role in ("sm80_pick", "sm90_pick", "sm90_best"):
        if f"{role}_us" not in res:
            continue
        ratio = res["vendor_us"] / res[f"{role}_us"]
        r = ratio.dropna()
        small, mid = ratio[res["gflop"] < 1].dropna(), ratio[(res["gflop"] >= 1) & (res["gflop"] < 20)].dropna()
        lines.append(f"| {role} | {len(r)} | {int(res[f'{role}_verified'].fillna(False).sum())}/{len(res)} | "
                     f"{_gm(r):.3f} | {100 * float((r > 1).mean()):.0f}% | {_gm(small):.3f} | {_gm(mid):.3f} |")
    lines += ["", "`sm80_pick`: the shipped SM80-family model's pick; `sm90_pick`: the SM90 family's model (trained "
              "without these layers); `sm90_best`: the fastest SM90 config of the SM90 sweep for the layer.", ""]
    return "\n".join(lines) + "\n"


def fair_summary(res: pd.DataFrame) -> str:
    """Vendor library vs our dispatcher, both timed as CUDA-graph replays, by layer size."""
    lines = ["## Vendor library vs the dispatcher, both graph-timed", "",
             "Ratios are vendor time / dispatcher time (< 1: the vendor library is faster). The dispatcher "
             "runs the model's pick (selection in C++ included), timed exactly like the vendor call.", "",
             "| family | vendor | layer size | layers | vendor / dispatcher | vendor faster on |",
             "|---|---|---|---|---|---|"]
    for fam, g in res.groupby("family"):
        vend = "cudnn_us" if fam.startswith("f16") else "cublaslt_int8_us"
        if vend not in g or "dispatch_us" not in g:
            continue
        for label, lo, hi in (("all", 0, math.inf), ("< 1 GFLOP", 0, 1), ("1-20 GFLOP", 1, 20), ("> 20 GFLOP", 20, math.inf)):
            s = g[(g["gflop"] >= lo) & (g["gflop"] < hi)]
            r = (s[vend] / s["dispatch_us"]).dropna()
            if len(r):
                lines.append(f"| {fam} | {vend[:-3]} | {label} | {len(r)} | {_gm(r):.3f} | {100 * float((r < 1).mean()):.0f}% |")
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m predictor.gpu_eval", description=__doc__.split("\n\n")[0])
    p.add_argument("--sweep", default="sweeps/h200.parquet",
                   help="sweep whose net: layers are evaluated (and whose measurements give the oracle)")
    p.add_argument("--gpu", default="h200", help="model slug (models/<gpu>-<family>.tree.json)")
    p.add_argument("--family", action="append", choices=[f.value for f in Family],
                   help="evaluate only this family (repeatable; default: every family of the sweep)")
    p.add_argument("--networks", nargs="*", default=None, help="only these networks (default: all net: layers)")
    p.add_argument("--batches", nargs="*", type=int, default=None, help="only these batch sizes")
    p.add_argument("--dispatcher", default=None, help="built dispatcher library to run end to end")
    p.add_argument("--build-dir", default="build", help="where compiled kernels are cached")
    p.add_argument("--out", default="reports/gpu",
                   help="folder of the report; files already there are replaced only with --overwrite")
    p.add_argument("--overwrite", action="store_true", help="replace the report files already in --out")
    p.add_argument("--sm90-sweep", default=None, help="compare with this SM90 sweep's family on fp16 layers "
                   "(graph-timed SM80 pick, SM90 pick and best, cuDNN)")
    p.add_argument("--base-family", default=Family.FP16_NHWC.value, choices=[f.value for f in Family],
                   help="with --sm90-sweep: the SM80 family whose model's pick is compared")
    p.add_argument("--sm90-family", default="f16nhwc90", choices=[f.value for f in Family],
                   help="with --sm90-sweep: the SM90 family compared")
    p.add_argument("--summarize", default=None, metavar="CSV",
                   help="no GPU: print the graph-timed comparison of an earlier run's layers.csv")
    return p


def _main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.summarize:
        print(fair_summary(pd.read_csv(args.summarize)))
        return 0
    require("torch", "gpu", "predictor.gpu_eval (timing on a GPU)")
    require("cutlass_library", "gpu", "predictor.gpu_eval (emitting the kernels)")
    out = Path(args.out)
    names = ([f"cross_family_{args.sm90_family}.csv", f"CROSS_FAMILY_{args.sm90_family}.md"] if args.sm90_sweep
             else ["layers.csv", "REPORT.md"])
    refuse_overwrite([out / n for n in names], [out], args.overwrite,
                     f"pass --overwrite to replace the report in {display_path(out)}, or --out DIR")
    if args.sm90_sweep:
        return run_cross_family(args)
    return run(args)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; unusable input (or a missing extra) ends in one line on stderr (exit 2)."""
    return run_main("predictor.gpu_eval", _main, argv, TIMED_LOG_FORMAT)


if __name__ == "__main__":
    sys.exit(main())

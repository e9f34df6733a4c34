"""The collector on several GPUs of one host (``python -m predictor.collect --gpus all|N``): one collector
process per GPU, each a sub-shard with its own ``CUDA_VISIBLE_DEVICES`` and parts folder, merged into ``--out``."""
from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from . import emit
from .config import Family, KernelConfig
from .schema import merge_frames, read_metadata, read_sweep, validate_frame, write_sweep

_LOG = logging.getLogger("predictor.collect")


def visible_gpus() -> list[str]:
    """``CUDA_VISIBLE_DEVICES`` if set, else the indices ``nvidia-smi`` lists (none without it)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [d for d in env.split(",") if d.strip() != ""]
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], check=True,
                           capture_output=True, text=True, timeout=60).stdout.split()
        return [d.strip() for d in q if d.strip()]
    except (OSError, subprocess.SubprocessError):
        return []


def run_multi_gpu(args: argparse.Namespace, argv: list[str],
                  plan: Callable[[argparse.Namespace, str], list[tuple[Family, list[KernelConfig]]]]) -> int:
    """One collector process per GPU: sub-shard ``i*G + g`` of ``n*G`` for GPU g, each with its
    own CUDA_VISIBLE_DEVICES and parts folder; then merge everything into ``--out``.  ``plan(args, arch)``:
    the collector's families and their configs for the target, ``--configs`` and ``--extra-configs`` applied
    (built once, before the workers start)."""
    gpus = visible_gpus()
    if args.gpus != "all":
        gpus = gpus[: int(args.gpus)]
    if len(gpus) < 2:
        raise SystemExit(f"--gpus {args.gpus}: found {len(gpus)} GPU(s); run without --gpus for one")
    out = Path(args.out)
    parts_root = Path(args.parts) if args.parts else out.with_name(out.stem + ".parts")
    i, n = args.shard
    G = len(gpus)
    if args.backend == "cuda" and not args.dry_run:  # build once, before the workers start
        from .cuda_backend import default_arch

        arch = args.arch or default_arch()
        emit.build_libraries([c for _, cfgs in plan(args, arch) for c in cfgs], arch, args.build_dir, args.jobs)
    base = strip_options(argv, {"--gpus": 1, "--shard": 1, "--out": 1, "--parts": 1})
    procs = []
    t0 = time.time()
    for g, dev in enumerate(gpus):
        sub = f"{i * G + g}/{n * G}"
        wout = parts_root / f"gpu{g}.parquet"
        cmd = [sys.executable, "-m", "predictor.collect", *base, "--shard", sub, "--out", str(wout),
               "--parts", str(parts_root / f"gpu{g}"), *([] if args.fresh else ["--done-from", str(out)]),
               *(["--arch", args.arch] if args.arch and "--arch" not in base else [])]
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": dev}
        _LOG.info("GPU %s: %s", dev, " ".join(cmd[1:]))
        procs.append((g, subprocess.Popen(cmd, env=env)))
    codes = {g: p.wait() for g, p in procs}
    _LOG.info("workers finished in %.1f s: exit codes %s", time.time() - t0, codes)
    frames = [read_sweep(out)] if out.exists() and not args.fresh else []
    metas = []
    for g, _ in procs:
        w = parts_root / f"gpu{g}.parquet"
        if w.exists():
            frames.append(read_sweep(w))
            metas.append(read_metadata(w))
    merged = validate_frame(merge_frames(frames), "merged sweep")
    history: list[Any] = []
    if out.exists() and not args.fresh:
        old = read_metadata(out)
        history = [*old.pop("history", []), old]
    meta = {**(metas[0] if metas else {}), "workers": [{k: v for k, v in m.items() if k != "history"} for m in metas],
            "history": history, "gpus": gpus,
            "command": " ".join([os.path.basename(sys.executable), "-m", "predictor.collect", *argv]),
            "problems": int(merged.groupby("family")["shape_key"].nunique().sum()) if len(merged) else 0,
            "multi_gpu_wall_seconds": round(time.time() - t0, 1),
            "complete": all(m.get("complete") for m in metas) and all(c == 0 for c in codes.values())}
    write_sweep(merged, out, meta)
    _LOG.info("wrote %s: %d rows from %d GPUs", out, len(merged), G)
    return max(codes.values())


def strip_options(argv: list[str], opts: dict[str, int]) -> list[str]:
    """``argv`` without the options of ``opts`` (name -> number of values; ``--name=value`` takes none)."""
    out, skip = [], 0
    for a in argv:
        if skip:
            skip -= 1
            continue
        name = a.split("=", 1)[0]
        if name in opts:
            skip = 0 if "=" in a else opts[name]
            continue
        out.append(a)
    return out

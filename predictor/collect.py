"""Sweep collector: time a grid of real CUTLASS conv2d fprop kernels over many problems on a GPU,
check every result, and write parquet.

    python -m predictor.collect --out sweeps/h200.parquet            # both families, default sets
    python -m predictor.collect --family i8nc32 --layers my_net.csv --out sweeps/mine.parquet
    python -m predictor.collect --arch sm_87 --out sweeps/orin.parquet   # on a Jetson AGX Orin
    python -m predictor.collect merge sweeps/parts/h200 sweeps/other.parquet --out sweeps/all.parquet

Work is saved in chunks of whole problems under ``<out>.parts/`` (atomic writes); re-running the
same command after an interruption (even ``kill -9``) skips the problems already saved, so no row
is lost or duplicated.  ``--shard i/n`` takes every n-th problem, for several GPUs or hosts; the
``merge`` command combines shards and rejects or drops duplicates.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import importlib
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from . import emit, timing
from .backend import Backend
from .cli import TIMED_LOG_FORMAT, require, run_main
from .config import Family, KernelConfig
from .schema import (SHAPE_COLUMNS, Row, merge_frames, read_metadata, read_sweep, rows_frame, validate_frame,
                     write_sweep)
from .shapes import (
    DEFAULT_MAX_GFLOP, DEFAULT_MAX_MBYTES, Shape, default_shapes, fits, read_layers_csv, sweep_shapes,
)
from .space import family_grid

_LOG = logging.getLogger("predictor.collect")


def _git_commit() -> str:
    """HEAD of the checkout (``PREDICTOR_COMMIT`` overrides: device machines get a copy without .git)."""
    if os.environ.get("PREDICTOR_COMMIT"):
        return os.environ["PREDICTOR_COMMIT"]
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True,
                             cwd=Path(__file__).resolve().parent)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, check=True, cwd=Path(__file__).resolve().parent).stdout.strip()
        return out.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def parse_shard(text: str) -> tuple[int, int]:
    try:
        i, n = (int(v) for v in text.split("/"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--shard must look like i/n, got {text!r}") from exc
    if n < 1 or not 0 <= i < n:
        raise argparse.ArgumentTypeError(f"--shard {text}: need 0 <= i < n")
    return i, n


def parse_batch_sizes(text: str) -> frozenset[int]:
    try:
        out = frozenset(int(v) for v in text.split(","))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--batch-sizes must look like 1,2,4,8, got {text!r}") from exc
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"--batch-sizes {text}: batch sizes are >= 1")
    return out


def load_backend(spec: str, **kwargs: Any) -> Backend:
    """``cuda`` or ``module:factory`` (a class or function returning a :class:`~predictor.backend.Backend`)."""
    if spec == "cuda":
        from .cuda_backend import CudaBackend

        return CudaBackend(**kwargs)
    mod, _, attr = spec.partition(":")
    if not attr:
        raise ValueError(f"--backend must be 'cuda' or 'module:factory', got {spec!r}")
    backend = getattr(importlib.import_module(mod), attr)(**kwargs)
    if not isinstance(backend, Backend):
        missing = [m for m in ("name", "arch", "info", "timed_ms", "prepare", "warm_up", "measure", "close")
                   if not hasattr(backend, m)]
        raise ValueError(f"--backend {spec}: not a predictor.backend.Backend (missing {missing})")
    return backend


class PartStore:
    """Chunks of finished problems under one folder; resumable and shard-aware."""

    def __init__(self, folder: Path, shard: tuple[int, int]) -> None:
        self.folder = folder
        self.shard = shard
        folder.mkdir(parents=True, exist_ok=True)
        self._seq = 0

    def parts(self) -> list[Path]:
        """This shard's chunks (another shard's, in the same folder, belong to its own output)."""
        i, n = self.shard
        return sorted(self.folder.glob(f"part-s{i}of{n}-*.parquet"))

    def load(self) -> pd.DataFrame:
        return merge_frames(pd.read_parquet(p) for p in self.parts())

    def write(self, rows: list[Row], meta: dict[str, Any]) -> Path:
        i, n = self.shard
        while True:
            path = self.folder / f"part-s{i}of{n}-{os.getpid()}-{self._seq:05d}.parquet"
            self._seq += 1
            if not path.exists():
                break
        write_sweep(rows_frame(rows), path, meta)
        return path


    @staticmethod
    def crashes(marker: Path) -> int:
        """How often the collector died while measuring this problem (its marker's count)."""
        try:
            return int(marker.read_text() or 0)
        except (FileNotFoundError, ValueError):
            return 0

    @staticmethod
    def mark(marker: Path, count: int) -> None:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(str(count))

    @staticmethod
    def unmark(markers: list[Path]) -> None:
        """Forget the markers of problems whose rows are now saved."""
        for m in markers:
            m.unlink(missing_ok=True)


def crashed_row(cfg: KernelConfig, died: int) -> Row:
    """The row of a config on a problem during which the collector process died ``died`` times
    (e.g. a kernel left a sticky CUDA error): recorded, never selected, and the sweep moves on."""
    return Row.failed(cfg.name, cfg.kernel_name, "launch_error",
                      f"the collector process died {died} time(s) while measuring this problem")


def placed(row: Row, cfg: KernelConfig, shape: Shape, info: dict[str, Any], gpu: str) -> Row:
    """``row`` (a backend's measurement of ``cfg``) with its problem and device columns."""
    prob = shape.problem
    return dataclasses.replace(
        row, family=cfg.family.value, shape_key=prob.key, source=shape.source,
        **{c: getattr(prob, c) for c in SHAPE_COLUMNS},
        sm87_ok=cfg.fits("sm_87", row.smem_bytes),  # for older readers; nothing decides from it
        sms=int(info.get("sms", 0) or 0), gpu=str(info.get("gpu", gpu)), gpu_uuid=str(info.get("gpu_uuid", "")))


def _done_keys(frames: list[pd.DataFrame]) -> set[tuple[str, str]]:
    done: set[tuple[str, str]] = set()
    for df in frames:
        if len(df):
            done.update(zip(df["family"].astype(str), df["shape_key"].astype(str)))
    return done


def _families(args: argparse.Namespace, arch: str | None = None) -> list[Family]:
    """``--family`` as given, or every family the target can run (the SM90 families need sm_90a:
    a default sweep on a Jetson Orin skips them with a note)."""
    if args.family:
        return [Family(f) for f in args.family]
    arch = arch or args.arch
    if arch is None:
        try:
            from .cuda_backend import default_arch

            arch = default_arch()
        except ImportError:  # pragma: no cover - torch missing: no GPU either
            arch = "sm_90"
    out = [f for f in Family if f.spec.supports(arch)]
    skipped = [f.value for f in Family if f not in out]
    if skipped:
        _LOG.info("families %s cannot run on %s: skipped", skipped, arch)
    return out


#: The work of one family: its configs and this shard's problems.
Plan = list[tuple[Family, list[KernelConfig], list[Shape]]]
#: Problems still to measure, in order: (family, its configs, problem).
Todo = list[tuple[Family, list[KernelConfig], Shape]]


def extra_configs(names: Sequence[str], families: Sequence[Family]) -> list[KernelConfig]:
    """``--extra-configs``: configs named in full, outside their family's grid (experiments); ``ValueError``
    for a name that does not parse or whose family is not swept."""
    out = [KernelConfig.from_name(n) for n in names]
    for c in out:
        if c.family not in families:
            raise ValueError(f"--extra-configs {c.name}: its family {c.family.value} is not a --family of this sweep")
    return out


def _family_configs(args: argparse.Namespace, fam: Family, extra: Sequence[KernelConfig] = ()) -> list[KernelConfig]:
    """The family's grid, narrowed by ``--configs`` and ``--max-configs``, then the configs of ``extra``
    (:func:`extra_configs`) of the family not in it."""
    cfgs = family_grid(fam)
    if args.configs:
        wanted = set(args.configs)
        cfgs = [c for c in cfgs if c.name in wanted or c.kernel_name in wanted]
    if args.max_configs:
        cfgs = cfgs[: args.max_configs]
    names = {c.name for c in cfgs}
    return cfgs + list({c.name: c for c in extra if c.family is fam and c.name not in names}.values())


def _planned_configs(args: argparse.Namespace, arch: str | None = None) -> list[tuple[Family, list[KernelConfig]]]:
    """Each family the sweep plans on ``arch`` with its configs (:func:`_family_configs`; ``--extra-configs``
    parsed once)."""
    fams = _families(args, arch)
    extra = extra_configs(args.extra_configs, fams)
    return [(fam, _family_configs(args, fam, extra)) for fam in fams]


def _family_shapes(args: argparse.Namespace, fam: Family) -> list[Shape]:
    """This shard's problems of the family: the ``--layers`` files' (those it can run) or the
    default set."""
    if args.layers or args.problems_from:
        shapes = [s for path in args.layers for s in read_layers_csv(path)]
        shapes += [s for path in args.problems_from for s in sweep_shapes(read_sweep(path))]
        skipped = [s for s in shapes if not fits(s.problem, fam, float("inf"), float("inf"))]
        for s in skipped:
            _LOG.warning("%s: %s cannot run %s (C and K must be multiples of %d%s)", s.source, fam.value,
                         s.problem.key, fam.spec.channel_multiple,
                         "" if fam.spec.operation == "conv" else "; 1x1, stride 1, pad 0, dilation 1 only")
        shapes = [s for s in shapes if s not in skipped]
    else:
        count = args.shapes if args.shapes else fam.spec.default_problems
        shapes = default_shapes(fam, count, args.seed, args.max_gflop, args.max_mbytes,
                                min_gflop=args.min_gflop)
    if args.batch_sizes:
        shapes = [s for s in shapes if s.problem.N in args.batch_sizes]
    i, n = args.shard
    return [s for j, s in enumerate(shapes) if j % n == i]


def plan_sweep(args: argparse.Namespace) -> Plan:
    """Every family's configs and problems in this shard, saved or not."""
    return [(fam, cfgs, _family_shapes(args, fam)) for fam, cfgs in _planned_configs(args)]


def _check_same_grid(previous: list[pd.DataFrame], plan: Plan, out: Path) -> None:
    """A resumed family's saved rows must hold exactly the configs this run plans: a problem counts as
    done once saved, so a changed grid (or ``--configs``) would silently keep the old configs."""
    for fam, cfgs, _ in plan:
        planned = {c.name for c in cfgs}
        saved = set().union(*(set(df.loc[df["family"].astype(str) == fam.value, "config"].astype(str))
                              for df in previous if len(df)))
        if saved and saved != planned:
            extra, missing = sorted(saved - planned), sorted(planned - saved)
            what = (f"configs this run does not plan (e.g. {extra[0]})" if extra
                    else f"no rows of planned configs (e.g. {missing[0]})")
            raise SystemExit(f"resuming {out}: its saved {fam.value} rows have {what}: the grid changed since they "
                             "were measured; write to another --out (and --parts), or delete the old ones")


def resume(args: argparse.Namespace, out: Path, store: PartStore, plan: Plan) -> tuple[list[pd.DataFrame], Todo]:
    """The rows of ``out`` (unless ``--fresh``) and the problems of the plan that neither they, nor this
    shard's parts, nor a ``--done-from`` file hold."""
    previous = [read_sweep(out)] if out.exists() and not args.fresh else []
    saved = [store.load(), *previous]  # write_output merges the parts again, with those of this run
    _check_same_grid(saved, plan, out)
    done = _done_keys(saved + [read_sweep(p) for p in args.done_from if Path(p).exists()])
    todo = [(fam, cfgs, s) for fam, cfgs, shapes in plan for s in shapes if (fam.value, s.problem.key) not in done]
    total = sum(len(shapes) for _, _, shapes in plan)
    _LOG.info("%d problems in this shard, %d already saved, %d to run", total, total - len(todo), len(todo))
    return previous, todo


def prepare_backend(args: argparse.Namespace, plan: Plan, todo: Todo) -> tuple[Backend, dict[str, Any], float]:
    """The backend with every planned config prepared (built) where there is work: the backend, its
    build stats and the build time in seconds."""
    backend = load_backend(args.backend, **({"arch": args.arch, "build_dir": args.build_dir, "jobs": args.jobs,
                                              "target_ms": args.target_ms, "reps": args.reps,
                                              "retime_top": args.retime_top, "seed": args.seed,
                                              "sm_count": args.sm_count or None,
                                              "warmup_batches": args.warmup_batches,
                                              "timing_mode": args.timing}
                                             if args.backend == "cuda" else {"arch": args.arch}))
    all_cfgs = [c for _, cfgs, _ in plan for c in cfgs]
    t_build = time.time()
    build_stats = backend.prepare(all_cfgs) if todo else {}
    return backend, build_stats, time.time() - t_build


def sweep_metadata(args: argparse.Namespace, backend: Backend, plan: Plan, info: dict[str, Any]) -> dict[str, Any]:
    """The provenance every part and the output file carry (command, date, commit, device, toolchain,
    timing settings)."""
    return {
        "command": " ".join([os.path.basename(sys.executable), "-m", "predictor.collect", *sys.argv[1:]]),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "commit": _git_commit(), "backend": args.backend, "device": info, "arch": backend.arch,
        "shard": f"{args.shard[0]}/{args.shard[1]}", "seed": args.seed, "max_gflop": args.max_gflop,
        "max_mbytes": args.max_mbytes, "min_gflop": args.min_gflop,
        "batch_sizes": sorted(args.batch_sizes) if args.batch_sizes else None, "target_ms": args.target_ms, "reps": args.reps,
        "retime_top": args.retime_top, "l2": "warm (back-to-back launches on the same buffers)",
        "timing_method": timing.method(args.warmup_batches, args.timing), "timing": args.timing, "warmup_batches": args.warmup_batches,
        "nvcc": _metadata(lambda: emit.nvcc_version(), "unknown"),
        "cutlass": _metadata(lambda: emit.cutlass_version(), "unknown"),
        "nvcc_flags": {fam.value: _metadata(lambda fam=fam: _flags(fam, backend.arch), []) for fam, _, _ in plan},
    }


def measure_problems(args: argparse.Namespace, backend: Backend, store: PartStore, todo: Todo,
                     info: dict[str, Any], meta: dict[str, Any], t_start: float) -> tuple[int, bool]:
    """Measure the problems of ``todo`` in order, saving a part every ``--flush-seconds`` and at the
    end; a problem during which the process died ``--max-crashes`` times is recorded as failed rows.
    Returns the number of problems done and whether ``--time-limit`` (counted from ``t_start``)
    stopped the loop early."""
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        tqdm = None  # type: ignore[assignment]
    bar = tqdm(total=len(todo), desc="sweep", unit="problem", disable=tqdm is None or args.quiet) if tqdm else None
    pending: list[Row] = []
    markers: list[Path] = []
    last_flush = time.time()
    n_done = 0
    stopped_early = False
    for fam, cfgs, shape in todo:
        if args.time_limit and time.time() - t_start > args.time_limit:
            stopped_early = True
            _LOG.warning("time limit reached after %d problems; re-run the same command to resume", n_done)
            break
        marker = store.folder / "inflight" / f"{fam.value}__{shape.problem.key}"
        died = store.crashes(marker)
        if died >= args.max_crashes:
            _LOG.error("%s %s: the collector died %d time(s) while measuring it; recorded as launch_error",
                       fam.value, shape.problem.key, died)
            rows = [crashed_row(c, died) for c in cfgs]
        else:
            store.mark(marker, died + 1)  # survives a crash: the next run knows which problem did it
            rows = backend.measure(shape.problem, cfgs)
            store.mark(marker, 0)
        markers.append(marker)
        by_name = {c.name: c for c in cfgs}
        pending.extend(placed(r, by_name[r.config], shape, info, args.backend) for r in rows)
        n_done += 1
        if bar is not None:
            bar.update(1)
        if time.time() - last_flush > args.flush_seconds:
            store.write(pending, meta)
            store.unmark(markers)
            pending, last_flush, markers = [], time.time(), []
    if pending:
        store.write(pending, meta)
        store.unmark(markers)
    if bar is not None:
        bar.close()
    return n_done, stopped_early


def write_output(args: argparse.Namespace, out: Path, previous: list[pd.DataFrame], store: PartStore,
                 meta: dict[str, Any], remaining: int) -> None:
    """Merge the rows saved before this run and the parts into ``out``, with ``meta`` (and the
    metadata of the file it replaces as ``history``); ``remaining``: problems of this shard left."""
    merged = merge_frames([*previous, store.load()])
    if out.exists() and not args.fresh:  # keep the provenance of the rows already in the file
        old = read_metadata(out)
        meta["history"] = [*old.pop("history", []), old]
    merged = validate_frame(merged, "merged sweep")
    meta["complete"] = remaining == 0
    meta["problems"] = int(merged.groupby("family")["shape_key"].nunique().sum()) if len(merged) else 0
    write_sweep(merged, out, meta)
    _LOG.info("wrote %s: %d rows, %d problems%s", out, len(merged), meta["problems"],
              "" if remaining == 0 else f" ({remaining} problems of this shard left: re-run to resume)")


def run_sweep(args: argparse.Namespace) -> int:
    """Plan, skip what is saved, build, measure and write the output (exit 3: ``--time-limit`` stopped it)."""
    t_start = time.time()
    out = Path(args.out)
    parts_dir = Path(args.parts) if args.parts else out.with_name(out.stem + ".parts")
    store = PartStore(parts_dir, args.shard)
    plan = plan_sweep(args)
    previous, todo = resume(args, out, store, plan)
    if args.dry_run:
        for fam, cfgs, shapes in plan:
            print(f"{fam.value}: {len(cfgs)} configs ({len({c.kernel_name for c in cfgs})} kernels) x "
                  f"{len(shapes)} problems")
        return 0

    backend, build_stats, build_s = prepare_backend(args, plan, todo)
    info = dict(backend.info)
    meta = sweep_metadata(args, backend, plan, info)
    clocks = backend.warm_up()  # the GPU idles at low clocks: record them after the warm-up
    if clocks:
        meta["clocks_after_warm_up"] = clocks

    t_sweep = time.time()
    n_done, stopped_early = measure_problems(args, backend, store, todo, info, meta, t_start)
    sweep_s = time.time() - t_sweep
    timed_ms = float(backend.timed_ms)
    stats = {"problems_run": n_done, "build_seconds": round(build_s, 1), "sweep_seconds": round(sweep_s, 1),
             "timed_kernel_seconds": round(timed_ms / 1000, 1),
             "timed_share": round(timed_ms / 1000 / sweep_s, 3) if sweep_s > 0 else None, **build_stats}
    _LOG.info("sweep stats: %s", json.dumps(stats))
    meta["stats"] = stats

    write_output(args, out, previous, store, meta, len(todo) - n_done)
    backend.close()
    return 0 if not stopped_early else 3


def _metadata(fn: Any, default: Any) -> Any:
    """``fn()`` for the sweep's metadata, or ``default`` where the toolchain cannot say."""
    try:
        return fn()
    except Exception:  # noqa: BLE001 - metadata only
        return default


def _flags(family: Family, arch: str | None) -> list[str]:
    """nvcc flags of the family's kernels for target ``arch`` (include paths left out)."""
    return [f for f in emit.nvcc_flags(family.spec.compile_arch(arch or "sm_90")) if not f.startswith("-I")]


def run_merge(args: argparse.Namespace) -> int:
    frames, metas = [], []
    for src in args.inputs:
        p = Path(src)
        files = sorted(p.glob("*.parquet")) if p.is_dir() else [p]
        for f in files:
            frames.append(pd.read_parquet(f) if p.is_dir() else read_sweep(f))
            metas.append(read_metadata(f))
    merged = validate_frame(merge_frames(frames, strict=args.strict), "merged sweep")
    meta = {"merged_from": [str(s) for s in args.inputs], "parts": metas,
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    if metas:
        meta = {**metas[0], **meta}
    write_sweep(merged, args.out, meta)
    _LOG.info("merged %d files into %s: %d rows", len(frames), args.out, len(merged))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m predictor.collect",
        description="Time real CUTLASS conv2d fprop kernels over many problems, check every output "
                    "against a float64 reference, and write a parquet sweep. Sub-command 'merge' "
                    "combines shards.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--out", required=True, help="output parquet file (e.g. sweeps/h200.parquet); re-running "
                   "resumes into it")
    p.add_argument("--family", action="append", choices=[f.value for f in Family],
                   help="family to sweep (repeatable); default: all")
    p.add_argument("--arch", default=None, help="nvcc target, e.g. sm_90 (H100/H200) or sm_87 (Jetson Orin); "
                   "default: the visible GPU's")
    p.add_argument("--layers", action="append", default=[], metavar="CSV",
                   help="sweep a layer list instead of the default problem set: CSV with columns "
                        "N,C,H,W,K,R,S[,stride,pad,dilation] (pad may be 'same'); repeatable")
    p.add_argument("--problems-from", action="append", default=[], metavar="PARQUET",
                   help="sweep the problems of these sweep files (with their sources; e.g. a new family on "
                        "another's problems, so that the two can form a choice) instead of the default set; "
                        "repeatable, with --layers too")
    p.add_argument("--shapes", type=int, default=0, help="problems per family in the default set (0: "
                   + ", ".join(f"{f.spec.default_problems} for {f.value}" for f in Family) + ")")
    p.add_argument("--max-gflop", type=float, default=DEFAULT_MAX_GFLOP,
                   help="skip default-set grid/random problems above this many GFLOP (network layers have no "
                        "work bound)")
    p.add_argument("--max-mbytes", type=float, default=DEFAULT_MAX_MBYTES,
                   help="skip default-set problems whose tensors exceed this many MB")
    p.add_argument("--min-gflop", type=float, default=0.0,
                   help="run only the default-set problems above this many GFLOP (the same set, its big part)")
    p.add_argument("--batch-sizes", type=parse_batch_sizes, default=None, metavar="N,N,...",
                   help="only the problems of these batch sizes, from any problem set (e.g. 1,2,4,8: what a small "
                        "GPU runs; before --shard)")
    p.add_argument("--configs", nargs="*", default=None, help="only these config or kernel names")
    p.add_argument("--max-configs", type=int, default=0, help="only the first N configs of each family (smoke tests)")
    p.add_argument("--extra-configs", nargs="*", default=[], metavar="NAME",
                   help="configs outside their family's grid, named in full (experiments), measured and checked "
                        "like the grid's")
    p.add_argument("--shard", type=parse_shard, default=(0, 1), metavar="i/n",
                   help="run only problems j with j %% n == i (one shard per GPU or host); merge later")
    p.add_argument("--parts", default=None, help="folder for resumable chunks (default: <out stem>.parts next to --out)")
    p.add_argument("--build-dir", default="build", help="where compiled kernels are cached")
    p.add_argument("--jobs", type=int, default=None, help="parallel nvcc processes (default: CPU count)")
    p.add_argument("--sm-count", type=int, default=0, help="run kernels on a green-context partition of at "
                   "least this many SMs (0: whole GPU); the count obtained is recorded in every row")
    p.add_argument("--target-ms", type=float, default=timing.TARGET_MS,
                   help="length of one timed batch of back-to-back launches")
    p.add_argument("--reps", type=int, default=timing.REPS, help="timed batches per (config, problem); the median is kept")
    p.add_argument("--warmup-batches", type=int, default=None,
                   help=f"batches dropped at the start of every timing call (default: predictor.timing's, "
                        f"{timing.WARMUP_BATCHES}; 0 reproduces the earlier, biased re-timing, for comparisons)")
    p.add_argument("--timing", choices=timing.TIMING_MODES, default=timing.DEFAULT_TIMING, help="a timed batch as one "
                   "CUDA-graph replay (method 3) or as back-to-back stream launches (method 2; adds the launch path)")
    p.add_argument("--retime-top", type=int, default=timing.RETIME_TOP,
                   help="re-time this many fastest configs per problem")
    p.add_argument("--seed", type=int, default=0, help="seed of the random problems and input data")
    p.add_argument("--time-limit", type=float, default=0, help="stop cleanly after this many seconds (0: none)")
    p.add_argument("--flush-seconds", type=float, default=20.0, help="save a chunk at least this often")
    p.add_argument("--backend", default="cuda", help="'cuda', or module:factory for another runner (tests)")
    p.add_argument("--gpus", default="1", help="worker processes, one per GPU ('all': every visible GPU); each "
                   "takes a sub-shard of this shard with its own CUDA_VISIBLE_DEVICES, then the parts are merged")
    p.add_argument("--done-from", action="append", default=[], metavar="PARQUET",
                   help="also skip problems already in these sweep files (used by --gpus workers)")
    p.add_argument("--max-crashes", type=int, default=2,
                   help="after the process died this often while measuring one problem (a sticky CUDA error), "
                        "record its configs as launch_error instead of trying again")
    p.add_argument("--fresh", action="store_true", help="ignore rows already in --out (chunks are still resumed)")
    p.add_argument("--dry-run", action="store_true", help="print the work list and exit")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def _main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "merge":
        mp = argparse.ArgumentParser(prog="python -m predictor.collect merge",
                                     description="Combine sweep shards/parts into one parquet file.")
        mp.add_argument("inputs", nargs="+", help="parquet files or folders of parts")
        mp.add_argument("--out", required=True, help="merged parquet file")
        mp.add_argument("--strict", action="store_true", help="fail on duplicated rows instead of keeping the first")
        return run_merge(mp.parse_args(argv[1:]))
    args = build_parser().parse_args(argv)
    if args.backend == "cuda" and not args.dry_run:
        require("torch", "gpu", "the collector's cuda backend (timing kernels on a GPU)")
        require("cutlass_library", "gpu", "the collector (emitting the kernels)")
    if args.gpus not in ("1", "0"):
        from .collect_multi import run_multi_gpu

        return run_multi_gpu(args, argv, _planned_configs)
    return run_sweep(args)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; unusable input (or a missing extra) ends in one line on stderr (exit 2)."""
    return run_main("predictor.collect", _main, argv, TIMED_LOG_FORMAT)


if __name__ == "__main__":
    sys.exit(main())

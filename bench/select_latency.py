"""Latency of kernel selection: the public Python ``predictor.select`` (us/call) and the generated
C++ header (ns/call), on varied valid shapes.  Writes ``bench/select_latency.md``.

    python bench/select_latency.py                      # the shipped h200 models and export/ header
    python bench/select_latency.py --slug h200-sm87
    python bench/select_latency.py --models-dir D/models --export-dir D/export --slug S   # other models
    python bench/select_latency.py --synthetic          # train on a SYNTHETIC sweep first (tmp dir)

The shipped models are timed exactly as a user calls them, ``predictor.select(N, C, H, W, K, R, S,
stride=..., family=...)`` through the package's public name; other models with ``model=<path>``.
Targets: <= 1.5 us per Python call, <= 50 ns per C++ call (issue #12).
"""
from __future__ import annotations

import argparse
import datetime as dt
import functools
import inspect
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import predictor  # noqa: E402
from predictor.config import Family  # noqa: E402
from predictor.model_key import Key, all_keys  # noqa: E402
from predictor.export_cpp import header_path, namespace_name  # noqa: E402
from predictor.features import ARGS, compute, same_pad  # noqa: E402
from predictor.schema import file_sha256  # noqa: E402
from predictor.resources import export_dir as shipped_export_dir  # noqa: E402
from predictor.resources import models_dir as shipped_models_dir  # noqa: E402
from predictor.selector import LoadedModel  # noqa: E402
from predictor.tree_ir import TreeIR  # noqa: E402

N_SHAPES = 4096
Job = TypeVar("Job")


def shapes(family: Key, sms: int, n: int = N_SHAPES, seed: int = 0) -> list[tuple[int, ...]]:
    """Varied valid shapes of the family (fixed seed), as ARGS tuples."""
    rng = random.Random(seed)
    cm = family.channel_multiple
    out: list[tuple[int, ...]] = []
    while len(out) < n:
        r = rng.choice((1, 1, 3, 3, 5, 7))
        hw = max(1, round(2 ** rng.uniform(1, 8)))
        a = (rng.choice((1, 2, 4, 8, 16, 32, 64)), cm * max(1, round(2 ** rng.uniform(0, 6))), hw, hw,
             cm * max(1, round(2 ** rng.uniform(0, 6))), r, r, rng.choice((1, 1, 2)), same_pad(r), 1, sms)
        try:
            compute(dict(zip(ARGS, a)))
        except ValueError:
            continue
        out.append(a)
    return out


def _loop(call: str) -> Callable[..., None]:
    """A loop over the shapes making the call exactly as written in ``call`` (no ``*``/``**``)."""
    src = ("def run(rows, select, fn, model, compute, ARGS):\n"
           "    for N, C, H, W, K, R, S, stride, pad, dilation, sms in rows:\n"
           f"        {call}\n")
    ns: dict[str, Any] = {}
    exec(src, ns)  # noqa: S102 - our own fixed text
    return ns["run"]


def python_loops(model: LoadedModel, kw: dict[str, object]) -> dict[str, Callable[[list[tuple[int, ...]]], None]]:
    """The four Python columns' loops over a list of shapes: ``predictor.select`` with the padding given and
    without, the generated function alone, ``features.compute`` + ``TreeIR.predict``.  ``kw`` names the model as a
    user would: ``family=`` for a shipped model (nothing for the default family), ``model=<path>`` otherwise."""
    select = predictor.select  # the public name (predictor/__init__.py binds it on first access)
    assert "args" not in str(inspect.signature(select)), "predictor.select lost its signature"
    extra = "".join(f", {k}={v!r}" for k, v in kw.items())
    loops = {
        "select(..., pad=p)": _loop(f"select(N, C, H, W, K, R, S, stride=stride, pad=pad, dilation=dilation{extra})"),
        "select(...) same padding": _loop(f"select(N, C, H, W, K, R, S, stride=stride{extra})"),
        "generated function only": _loop("fn(N, C, H, W, K, R, S, stride, pad, dilation, sms)"),
        "features.compute + TreeIR.predict": _loop(
            "model.ir.predict(compute(dict(zip(ARGS, (N, C, H, W, K, R, S, stride, pad, dilation, sms)))))"),
    }
    return {label: functools.partial(run, select=select, fn=model.fn, model=model, compute=compute, ARGS=ARGS)
            for label, run in loops.items()}


#: :func:`spread_us`'s defaults: 5 bursts of 5 passes per chunk of 256 shapes (25 timed passes, as before session 50)
ROUNDS, BURST, CHUNK = 5, 5, 256


def spread_us(jobs: Mapping[Job, tuple[Callable[[list[tuple[int, ...]]], None], list[tuple[int, ...]]]],
              rounds: int = ROUNDS, burst: int = BURST, chunk: int = CHUNK) -> dict[Job, float]:
    """Mean microseconds per row of each job ``run(part)`` over its ``rows``: every chunk of ``chunk`` rows is run
    once to warm, then timed in ``rounds`` bursts of ``burst`` passes, and its fastest pass kept; the chunks summed.
    Each round times every chunk of every job in turn, so a chunk's bursts lie apart over the whole measurement
    and a slow spell of a shared machine (seconds long, session 50) cannot cover all of them; within a burst the
    chunk's paths are warm, as in one process selecting for a network's layers."""
    parts = {k: [rows[i:i + chunk] for i in range(0, len(rows), chunk)] for k, (_, rows) in jobs.items()}
    best = {k: [float("inf")] * len(v) for k, v in parts.items()}
    for k, (run, _) in jobs.items():
        for part in parts[k]:
            run(part)  # warm
    for _ in range(rounds):
        for k, (run, _) in jobs.items():
            for j, part in enumerate(parts[k]):
                best[k][j] = min(best[k][j], *(_timed(run, (part,)) for _ in range(burst)))
    return {k: sum(best[k]) / len(jobs[k][1]) * 1e6 for k in jobs}


def _timed(fn: Callable[..., None], args: tuple[Any, ...]) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


CPP = """\
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <vector>
#include "{header}"

namespace ns = cutlass_conv_predictor::{ns};

int main() {{
  std::vector<std::array<std::int64_t, 11>> v;
  std::array<std::int64_t, 11> a{{}};
  while (std::cin >> a[0]) {{
    for (int i = 1; i < 11; ++i) std::cin >> a[i];
    v.push_back(a);
  }}
  volatile int sink = 0;
  const int reps = {reps};
  double best = 1e30;
  for (int trial = 0; trial < 7; ++trial) {{
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) {{
      for (const auto& x : v) {{
        sink = sink + ns::select_{family}(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10]);
      }}
    }}
    auto t1 = std::chrono::steady_clock::now();
    double ns_per = std::chrono::duration<double, std::nano>(t1 - t0).count() / (double(reps) * double(v.size()));
    if (ns_per < best) best = ns_per;
  }}
  std::printf("%.3f\\n", best);
  return sink == 123456789 ? 1 : 0;
}}
"""


def time_cpp(header: Path, slug: str, family: Key, rows: list[tuple[int, ...]], workdir: Path) -> float | None:
    gxx = shutil.which("g++")
    if gxx is None:
        return None
    src = workdir / f"bench_{family.identifier}.cpp"
    exe = workdir / f"bench_{family.identifier}"
    src.write_text(CPP.format(header=header.resolve(), ns=namespace_name(slug), family=family.identifier, reps=200))
    subprocess.run([gxx, "-std=c++17", "-O2", str(src), "-o", str(exe)], check=True)
    text = "".join(" ".join(map(str, a)) + "\n" for a in rows)
    out = subprocess.run([str(exe)], input=text, capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def machine() -> dict[str, str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gxx = shutil.which("g++")
    gv = subprocess.run([gxx, "--version"], capture_output=True, text=True).stdout.splitlines()[0] if gxx else "-"
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    return {"uname -m": platform.machine(), "cpu": cpu, "cores": str(os.cpu_count()),
            "load average (1 / 5 / 15 min) at the start": load, "python": sys.version.split()[0], "g++": gv}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--slug", default="h200", help="model slug (<slug>-<family>.tree.json)")
    p.add_argument("--models-dir", type=Path, default=None,
                   help="folder of the models (default: the shipped ones, selected by family)")
    p.add_argument("--export-dir", type=Path, default=None, help="folder of the C++ header (default: the shipped one)")
    p.add_argument("--synthetic", action="store_true",
                   help="train on a SYNTHETIC sweep (tests/synthetic.py) in a tmp dir and measure that")
    p.add_argument("--synthetic-shapes", type=int, default=3000, help="shapes per family of the synthetic sweep")
    p.add_argument("--synthetic-configs", type=int, default=100, help="configs per family of the synthetic sweep")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "select_latency.md", help="results file")
    args = p.parse_args(argv)
    cmd = "python bench/select_latency.py " + " ".join(sys.argv[1:] if argv is None else argv)
    m = machine()  # before the timings: the load average they ran under
    tmp = Path(tempfile.mkdtemp(prefix="select_latency_"))
    try:
        shipped = args.models_dir is None and not args.synthetic
        slug = args.slug
        models_dir = args.models_dir or shipped_models_dir()
        export_dir = args.export_dir or shipped_export_dir()
        note = ""
        if args.synthetic:
            sys.path.insert(0, str(ROOT / "tests"))
            from synthetic import write_synthetic_sweep  # type: ignore[import-not-found]

            from predictor.train import main as train_main

            sweep = write_synthetic_sweep(tmp / "synthetic.parquet", n_shapes=args.synthetic_shapes,
                                          n_configs=args.synthetic_configs)
            models_dir, export_dir, slug = tmp / "models", tmp / "export", "synthetic"
            train_main([str(sweep), "--models-dir", str(models_dir), "--export-dir", str(export_dir), "--quiet"])
            note = (f"Models trained on a SYNTHETIC sweep (tests/synthetic.py, {args.synthetic_shapes} shapes x "
                    f"{args.synthetic_configs} configs per family), not measurements: the latency depends on the "
                    "tree's depth, so re-run on the shipped models once they exist.")
        results = []
        for fam in all_keys():
            path = models_dir / f"{slug}-{fam.value}.tree.json"
            if not path.exists():
                continue
            ir = TreeIR.load(path)
            model = LoadedModel.from_ir(ir, str(path))
            rows = shapes(fam, model.sms)
            kw: dict[str, object] = {"model": str(path)}
            if shipped:  # as a user calls it: the default family needs no argument
                kw = {} if (slug == "h200" and fam is Family.INT8_NC32HW32) else {"family": fam.value}
                if slug != "h200":
                    kw["gpu"] = slug
            results.append((fam, ir, model, kw, rows))
        if not results:
            raise SystemExit(f"no {slug}-<family>.tree.json in {models_dir} (use --synthetic to measure a "
                             "synthetic model)")
        jobs = {(fam, label): (run, rows) for fam, _, model, kw, rows in results
                for label, run in python_loops(model, kw).items()}
        us = spread_us(jobs)
        header = header_path(export_dir, slug)
        results = [(fam, ir, [v for (f, _), v in us.items() if f is fam],
                    time_cpp(header, slug, fam, rows, tmp) if header.exists() else None)
                   for fam, ir, _, _, rows in results]
        lines = ["# Selection latency", "", f"- command: `{cmd}`",
                 f"- date: {dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')}",
                 *(f"- {k}: {v}" for k, v in m.items()),
                 f"- inputs: {N_SHAPES} varied valid shapes per family (fixed seed), each call on a different shape",
                 "- Python: the public `predictor.select(N, C, H, W, K, R, S, stride=..., [pad=..., dilation=...,] "
                 + ("family=...)` of the shipped models (no `family` for the default, i8nc32)"
                    if shipped else "model=<path>)`")
                 + f"; mean per call, each chunk of {CHUNK} shapes timed in {ROUNDS} bursts of {BURST} passes, "
                 "the bursts of every model's chunks taken in turn (spread over the run: a shared machine), its "
                 "fastest pass kept; C++: g++ -O2, best of 7 x 200 passes, volatile sink",
                 ""]
        for fam, ir, _, _ in results:
            lines.append(f"- model {slug}-{fam.value}: gpu {ir.meta.get('gpu')}, sweep {ir.meta.get('sweep')} "
                         f"sha256 {str(ir.meta.get('sweep_sha256'))[:16]}..., tree.json sha256 "
                         f"{file_sha256(models_dir / f'{slug}-{fam.value}.tree.json')[:16]}...")
        lines.append("")
        if note:
            lines += [f"**{note}**", ""]
        lines += ["| family | tree depth | leaves | Python select (us) | select, pad=None (us) | generated fn (us) "
                  "| compute + IR walk (us) | C++ (ns) |", "|---|---|---|---|---|---|---|---|"]
        for fam, ir, vals, cpp in results:
            lines.append(f"| {fam.value} | {ir.depth} | {ir.n_leaves} | {vals[0]:.2f} | {vals[1]:.2f} | "
                         f"{vals[2]:.2f} | {vals[3]:.2f} | {'-' if cpp is None else f'{cpp:.1f}'} |")
        lines += ["", "Targets: <= 1.5 us per Python `select` call, <= 50 ns per C++ call (issue #12).", ""]
        text = "\n".join(lines)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(text)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

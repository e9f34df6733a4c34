"""A/B of the generated Python selection function: this checkout's code generator against another checkout's
(e.g. ``git worktree add /tmp/base HEAD~1``), on the same shipped models and the same varied shapes, the two
functions timed in alternation in one process (so machine noise hits both alike).  Writes a Markdown table.

    python bench/select_codegen_ab.py --base /tmp/base --out bench/select_codegen_ab-amd-s49.md

Each function is the bare generated one (``LoadedModel.fn``: validation, features, tree), without
``predictor.select``'s argument handling; both must give the same answer on every shape.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from select_latency import machine, shapes  # noqa: E402
from predictor.export_py import BUILTINS  # noqa: E402
from predictor.model_key import all_keys, model_key  # noqa: E402
from predictor.tree_ir import TreeIR  # noqa: E402

_DUMP = """\
import sys
from predictor.export_py import python_source
from predictor.model_key import model_key
from predictor.tree_ir import TreeIR
ir = TreeIR.load(sys.argv[1])
sys.stdout.write(python_source(ir, model_key(ir.meta["family"]).channel_multiple))
"""


def source(checkout: Path, model: Path) -> str:
    """The generated selection function's source, written by the code generator of ``checkout``."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    return subprocess.run([sys.executable, "-c", _DUMP, str(model)], cwd=checkout, env=env, check=True,
                          capture_output=True, text=True).stdout


def compiled(src: str, name: str) -> Callable[..., int]:
    ns: dict[str, Any] = {"__builtins__": dict(BUILTINS)}
    exec(compile(src, name, "exec"), ns)  # noqa: S102 - generated from a shipped model
    return ns["_select"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=Path, required=True, help="the other checkout (its code generator is 'base')")
    ap.add_argument("--slug", default="h200")
    ap.add_argument("--rounds", type=int, default=30, help="alternating passes over the shapes; the fastest is kept")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    env = machine()  # the load average before the timings
    rev = lambda p: subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=p, capture_output=True,  # noqa: E731
                                   text=True, check=True).stdout.strip()
    fns, rows = {}, {}
    for key in all_keys():
        model = ROOT / "models" / f"{a.slug}-{key.value}.tree.json"
        if not model.exists():
            continue
        both = {tag: compiled(source(p, model), tag) for tag, p in (("base", a.base), ("this", ROOT))}
        args = shapes(model_key(key.value), int(TreeIR.load(model).meta["sms"]))
        differ = sum(both["base"](*r) != both["this"](*r) for r in args)
        if differ:
            raise SystemExit(f"{key.value}: the two generated functions disagree on {differ} shapes")
        fns[key.value], rows[key.value] = both, args
    best = {(k, tag): float("inf") for k, both in fns.items() for tag in both}
    for n in range(a.rounds):  # every model's two functions in turn each round: a slow spell hits a few passes only
        for k, both in fns.items():
            for tag, fn in (both.items() if n % 2 else reversed(both.items())):  # either first, half the rounds
                t0 = time.perf_counter()
                for r in rows[k]:
                    fn(*r)
                best[k, tag] = min(best[k, tag], time.perf_counter() - t0)
    table = []
    for k in fns:
        us = {tag: best[k, tag] / len(rows[k]) * 1e6 for tag in ("base", "this")}
        table.append(f"| {k} | {us['base']:.3f} | {us['this']:.3f} | {us['this'] / us['base'] - 1:+.1%} |")
        print(table[-1], flush=True)
    head = [
        "# Generated Python selection function: A/B of the code generator", "",
        f"- command: `python bench/select_codegen_ab.py {' '.join(sys.argv[1:] if argv is None else argv)}`",
        f"- date: {dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')}",
        f"- base: {rev(a.base)} ({a.base}); this: {rev(ROOT)} plus the working tree",
        *(f"- {k}: {v}" for k, v in env.items() if k != "g++"),
        f"- {len(args)} varied valid shapes per model (bench/select_latency.py's), the two functions timed in "
        f"alternation, fastest of {a.rounds} passes each, every round passing over every model in turn, either function "
        "first in half the rounds (since session 50; before, a model's rounds ran back to back, base first: the "
        "second read 2-3% faster with the same code); same answer on every shape", "",
        "| model | base (us) | this (us) | change |", "|---|---|---|---|",
    ]
    a.out.write_text("\n".join(head + table) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

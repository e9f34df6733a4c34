"""Where a Python selection call's time goes: the generated function's prologue (argument types, ranges, output
size, the GEMM extents) cut out of the shipped model's own generated source, the whole generated function, and
``predictor.select``; plus the time to compile a model's function on first use.  Writes a Markdown table.

    python bench/select_parts.py --out bench/select_parts-amd-s49.md
"""
from __future__ import annotations

import argparse
import datetime as dt
import functools
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from select_latency import BURST, CHUNK, ROUNDS, _loop, machine, shapes, spread_us  # noqa: E402
import predictor  # noqa: E402
from predictor.export_py import BUILTINS, compile_selector, python_source  # noqa: E402
from predictor.model_key import all_keys  # noqa: E402
from predictor.tree_ir import TreeIR  # noqa: E402


def prologues(src: str) -> dict[str, str]:
    """Functions made of the leading statements of the generated ``_select`` in ``src`` (each returning 0 after
    them): the type and range check, then the output size, then the GEMM extents."""
    lines = src.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("def _select("))
    body = lines[start + 1:]
    ends = {"checks": 2,  # `if not (types and ranges):` and its return
            "checks + output size": next(i for i, line in enumerate(body) if line.strip().startswith("if P < 1")) + 2,
            "checks + output size + GEMM extents": next(i for i, line in enumerate(body) if "gemm_k = " in line) + 1}
    return {name: "\n".join([lines[start], *body[:end], "    return 0"]) + "\n" for name, end in ends.items()}


def each(fn: Callable[..., Any]) -> Callable[[list[tuple[int, ...]]], None]:
    def run(rows: list[tuple[int, ...]]) -> None:
        for r in rows:
            fn(*r)
    return run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--slug", default="h200")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    env = machine()
    models, jobs = [], {}
    for key in all_keys():
        path = ROOT / "models" / f"{a.slug}-{key.value}.tree.json"
        if not path.exists():
            continue
        ir = TreeIR.load(path)
        t0 = time.perf_counter()
        fn = compile_selector(ir, key.channel_multiple)
        compile_s = time.perf_counter() - t0
        rows = shapes(key, int(ir.meta["sms"]))
        for name, text in prologues(python_source(ir, key.channel_multiple)).items():
            ns: dict[str, Any] = {"__builtins__": dict(BUILTINS)}
            exec(compile(text, name, "exec"), ns)  # noqa: S102 - cut out of the generated source
            jobs[key.value, name] = (each(ns["_select"]), rows)
        jobs[key.value, "generated function"] = (each(fn), rows)
        run = _loop(f"select(N, C, H, W, K, R, S, stride=stride, pad=pad, dilation=dilation, family={key.value!r}, "
                    f"gpu={a.slug!r})")  # written out, as a user calls it
        jobs[key.value, "predictor.select"] = (functools.partial(run, select=predictor.select, fn=fn, model=None,
                                                                 compute=None, ARGS=None), rows)
        models.append((key.value, compile_s))
    us = spread_us(jobs)
    out = [(k, c, {name: v for (m, name), v in us.items() if m == k}) for k, c in models]
    names = list(out[0][2])
    text = "\n".join([
        "# Where a Python selection call's time goes", "",
        f"- command: `python bench/select_parts.py {' '.join(sys.argv[1:] if argv is None else argv)}`",
        f"- date: {dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')}",
        *(f"- {k}: {v}" for k, v in env.items() if k != "g++"),
        f"- {len(rows)} varied valid shapes per model (bench/select_latency.py's); each chunk of {CHUNK} timed in "
        f"{ROUNDS} bursts of {BURST} passes taken in turn with every other chunk of every column and model, its "
        "fastest pass kept (bench/select_latency.py's spread_us), µs per call; the prologue columns run the generated source's own leading statements, "
        "then return; `predictor.select` called as written in the loop; compile: the model's generated function "
        "built from its IR, first in this process", "",
        "| model | compile (s) | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names),
        *(f"| {k} | {c:.2f} | " + " | ".join(f"{p[n]:.3f}" for n in names) + " |" for k, c, p in out), ""])
    a.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

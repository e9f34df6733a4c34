"""Bytecode instructions a generated selection call runs, by part: the prologue (argument checks, output size, GEMM
extents: the generated ``_select``'s leading statements up to the GEMM extents), the router's tree and, for a routed
model, its members' subtrees after the router (``sys.settrace`` opcode events; no timing).  Writes a Markdown table.

    python bench/select_opcodes.py --out bench/select_opcodes-amd-s50.md
"""
from __future__ import annotations

import argparse
import collections
import datetime as dt
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from select_latency import machine, shapes  # noqa: E402
from predictor.export_py import BUILTINS, python_source  # noqa: E402
from predictor.model_key import all_keys  # noqa: E402
from predictor.tree_ir import TreeIR  # noqa: E402


def counts(src: str, rows: list[tuple[int, ...]]) -> dict[str, float]:
    """Mean opcodes per call of the generated ``_select`` of ``src`` over ``rows``, by part."""
    lines = src.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("def _select("))
    end_prologue = next(i for i in range(start, len(lines)) if "gemm_k = " in lines[i]) + 1  # 1-based last line
    # a routed model's members follow the router's top statement: the first top-level line after its `else:`
    top = [i for i in range(end_prologue, len(lines)) if lines[i].startswith("    ") and lines[i][4] != " "]
    after = [i for i in top if i > next((j for j in top if lines[j] == "    else:"), len(lines))]
    members = after[0] + 1 if "_t = " in src and after else None
    ns: dict[str, Any] = {"__builtins__": dict(BUILTINS)}
    exec(compile(src, "<generated>", "exec"), ns)  # noqa: S102 - generated from a shipped model
    got: collections.Counter[str] = collections.Counter()

    def trace(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        if event == "opcode":
            n = frame.f_lineno
            got["prologue" if frame.f_code.co_name == "_select" and n <= end_prologue else
                "router / tree" if members is None or n < members else "members"] += 1
        return trace

    sys.settrace(trace)
    try:
        for r in rows:
            ns["_select"](*r)
    finally:
        sys.settrace(None)
    return {k: got[k] / len(rows) for k in ("prologue", "router / tree", "members")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--slug", default="h200")
    ap.add_argument("--shapes", type=int, default=1000)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    env = machine()
    table = []
    for key in all_keys():
        path = ROOT / "models" / f"{a.slug}-{key.value}.tree.json"
        if not path.exists():
            continue
        ir = TreeIR.load(path)
        c = counts(python_source(ir, key.channel_multiple), shapes(key, int(ir.meta["sms"]), a.shapes))
        total = sum(c.values())
        table.append(f"| {key.value} | {c['prologue']:.0f} | {c['router / tree']:.0f} | {c['members']:.0f} | "
                     f"{total:.0f} | {c['prologue'] / total:.0%} |")
    text = "\n".join([
        "# Bytecode instructions per generated selection call", "",
        f"- command: `python bench/select_opcodes.py {' '.join(sys.argv[1:] if argv is None else argv)}`",
        f"- date: {dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')}",
        *(f"- {k}: {v}" for k, v in env.items() if k not in ("g++", "load average (1 / 5 / 15 min) at the start")),
        f"- {a.shapes} varied valid shapes per model (bench/select_latency.py's), mean opcodes per call "
        "(`sys.settrace` opcode events); prologue: the argument checks, output size and GEMM extents", "",
        "| model | prologue | router / tree | members | total | prologue share |", "|---|---|---|---|---|---|",
        *table, ""])
    a.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

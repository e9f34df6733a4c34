"""Latency of the argument checks that open every generated Python selector (``predictor.export_py``): one
``type(a) is int`` per argument (until session 44) against one chained identity test (``type(N) is type(C) is ... is
int``, since), each followed by the same range checks of ``predictor.features.LIMITS``, on the shapes of
``bench/select_latency.py``.

    python bench/validation_checks.py --out bench/validation_checks-<machine>.md
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from select_latency import shapes  # noqa: E402

from predictor.features import ARGS, LIMITS  # noqa: E402
from predictor.model_key import model_key  # noqa: E402

RANGES = [f"{lo} <= {a} <= {hi}" for a, (lo, hi) in LIMITS.items()]
VARIANTS = {
    "one `type(a) is int` per argument": " and ".join(f"type({a}) is int and {lo} <= {a} <= {hi}"
                                                      for a, (lo, hi) in LIMITS.items()),
    "one chained identity test, then the ranges": " and ".join([" is ".join(f"type({a})" for a in LIMITS) + " is int",
                                                                *RANGES]),
    "the ranges alone (no type test; not valid: admits bool)": " and ".join(RANGES),
}


def compiled(checks: str):  # type: ignore[no-untyped-def]
    ns: dict[str, object] = {"__builtins__": {"type": type, "int": int}}
    exec(f"def f({', '.join(ARGS)}):\n    if not ({checks}):\n        return -1\n    return 0\n", ns)  # noqa: S102
    return ns["f"]


def per_call(fn, rows, repeat: int) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for a in rows:
            fn(*a)
        best = min(best, time.perf_counter() - t0)
    return best / len(rows) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--repeat", type=int, default=50)
    args = ap.parse_args()
    rows = shapes(model_key("f16nhwc90"), 132)
    empty = compiled("True")
    lines = ["# Argument checks of the generated Python selector", "",
             f"- command: `python bench/validation_checks.py --out {args.out}`",
             f"- date: {dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')}",
             f"- cpu: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; load average at the start "
             f"{' / '.join(f'{x:.2f}' for x in os.getloadavg())}; python {platform.python_version()}",
             f"- {len(rows)} shapes (`bench/select_latency.py`'s, f16nhwc90), a function of the 11 arguments that runs "
             f"only the checks; best of {args.repeat} passes, per call; the empty function (same call, no checks) "
             "is subtracted", "", "| checks | us per call |", "|---|---|"]
    base = per_call(empty, rows, args.repeat)
    for name, checks in VARIANTS.items():
        lines.append(f"| {name} | {per_call(compiled(checks), rows, args.repeat) - base:.3f} |")
    lines.append(f"| (the empty function itself) | {base:.3f} |")
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

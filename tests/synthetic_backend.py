"""SYNTHETIC backend for CPU-only tests of the collector's bookkeeping (resume, shards, merge).

Its timings are made up by a formula, never measurements; rows it produces carry
gpu="synthetic".  It sleeps a little per problem so a test can kill the collector mid-sweep.
"""
from __future__ import annotations

import math
import os
import time
from typing import Any

from predictor.config import KernelConfig
from predictor.features import ConvProblem


class SyntheticBackend:
    name = "synthetic"

    def __init__(self, arch: str | None = None, delay: float | None = None) -> None:
        self.arch = arch or "sm_90"
        self.delay = float(os.environ.get("SYNTHETIC_DELAY", "0.0")) if delay is None else delay
        self.info = {"gpu": "synthetic", "sms": 132}
        self.timed_ms = 0.0

    def prepare(self, configs: list[KernelConfig]) -> dict[str, Any]:
        return {"compiled": len({c.kernel_name for c in configs}), "compile_errors": 0}

    def measure(self, prob: ConvProblem, configs: list[KernelConfig]) -> list[dict[str, Any]]:
        time.sleep(self.delay)
        if prob.key == os.environ.get("SYNTHETIC_CRASH_KEY"):
            os._exit(17)  # like a process killed by a sticky CUDA error
        rows = []
        for cfg in configs:
            tm, tn = cfg.tb[0], cfg.tb[1]
            ctas = math.ceil(prob.N * prob.P * prob.Q / tm) * math.ceil(prob.K / tn)
            waves = math.ceil(ctas / 132)
            t = 3.0 + waves * tm * tn * prob.C * prob.R * prob.S / 2e6 / max(cfg.stages, 2) ** 0.1
            status = "cannot_implement" if (cfg.split_k_slices > 1 and prob.C * prob.R * prob.S < 64) else "ok"
            rows.append({"config": cfg.name, "kernel": cfg.kernel_name, "status": status,
                         "verified": status == "ok", "max_abs_err": 0.0, "bad_frac": 0.0,
                         "time_us": t if status == "ok" else math.nan, "time_p20_us": t, "time_p80_us": t,
                         "time_min_us": t, "retime_us": math.nan, "iters": 1, "reps": 1,
                         "smem_bytes": cfg.smem_bytes_estimate, "error": ""})
        return rows

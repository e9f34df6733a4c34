"""SYNTHETIC backend for CPU-only tests of the collector's bookkeeping (resume, shards, merge) and
of the timing method (:mod:`predictor.timing`).

Its timings are made up by a formula, never measurements; rows it produces carry
gpu="synthetic".  It sleeps a little per problem so a test can kill the collector mid-sweep.
Timing runs the real method of :mod:`predictor.timing` against a simulated timing loop in which
the first batch of every call pays a start latency (``start_us``) and every batch a little
multiplicative noise, as on a real GPU; eager batches (timing method 2) also pay ``launch_us`` per
launch (the launch path of back-to-back stream launches), graph batches (method 3) do not.
"""
from __future__ import annotations

import math
import os
import random
import time
import zlib
from typing import Any

from predictor import timing
from predictor.config import KernelConfig
from predictor.features import ConvProblem
from predictor.schema import Row


def true_time_us(prob: ConvProblem, cfg: KernelConfig) -> float:
    """The synthetic kernel's noise-free per-launch time."""
    tm, tn = cfg.tb[0], cfg.tb[1]
    ctas = math.ceil(prob.N * prob.P * prob.Q / tm) * math.ceil(prob.K / tn)
    waves = math.ceil(ctas / 132)
    return 3.0 + waves * tm * tn * prob.C * prob.R * prob.S / 2e6 / max(cfg.stages, 2) ** 0.1


class SyntheticBackend:
    name = "synthetic"

    def __init__(self, arch: str | None = None, delay: float | None = None, start_us: float = 8.0,
                 noise: float = 0.01, target_ms: float = timing.TARGET_MS, reps: int = timing.REPS,
                 retime_top: int = timing.RETIME_TOP, seed: int = 0, launch_us: float = 0.0,
                 timing_mode: str = timing.DEFAULT_TIMING) -> None:
        self.arch = arch or "sm_90"
        self.delay = float(os.environ.get("SYNTHETIC_DELAY", "0.0")) if delay is None else delay
        self.info = {"gpu": "synthetic", "sms": 132}
        self.timed_ms = 0.0
        self.start_us, self.noise = start_us, noise
        self.target_ms, self.reps, self.retime_top = target_ms, reps, retime_top
        self.seed = seed
        self.launch_us, self.timing_mode = launch_us, timing_mode
        self.calls = 0  # timing-loop calls, for tests

    def prepare(self, configs: list[KernelConfig]) -> dict[str, Any]:
        return {"compiled": len({c.kernel_name for c in configs}), "compile_errors": 0}

    def warm_up(self, seconds: float = 1.0) -> dict[str, Any]:
        return {}  # no clocks to raise

    def close(self) -> None:
        pass

    def _call(self, t_us: float, rng: random.Random) -> timing.BatchCall:
        per_launch = t_us + (self.launch_us if self.timing_mode == timing.EAGER else 0.0)

        def call(batches: int, iters: int) -> tuple[int, list[float]]:
            self.calls += 1
            out = []
            for b in range(batches):
                total = per_launch * iters * (1 + rng.gauss(0, self.noise)) + (self.start_us if b == 0 else 0.0)
                out.append(total / iters)
            self.timed_ms += sum(out) * iters / 1000
            return 0, out
        return call

    def measure(self, prob: ConvProblem, configs: list[KernelConfig]) -> list[Row]:
        timing.one_family(configs)  # as the CUDA backend
        time.sleep(self.delay)
        if prob.key == os.environ.get("SYNTHETIC_CRASH_KEY"):
            os._exit(17)  # like a process killed by a sticky CUDA error
        rng = random.Random(zlib.crc32(f"{self.seed}/{prob.key}".encode()))
        rows: list[Row] = []
        tp = timing.Problem(self.target_ms, self.reps, mode=self.timing_mode)
        for cfg in configs:
            if cfg.split_k_slices > 1 and prob.C * prob.R * prob.S < 64:
                rows.append(Row.failed(cfg.name, cfg.kernel_name, "cannot_implement", max_abs_err=0.0, bad_frac=0.0,
                                       smem_bytes=cfg.smem_bytes_estimate))
                continue
            row = Row(cfg.name, cfg.kernel_name, verified=True, max_abs_err=0.0, bad_frac=0.0,
                      smem_bytes=cfg.smem_bytes_estimate, timing_method=timing.method(None, self.timing_mode))
            rows.append(row)
            t = true_time_us(prob, cfg)
            one_ms = (t + self.launch_us + self.start_us) / 1000  # an eager launch, and a first batch too
            tp.first_pass(row, self._call(t, rng), one_ms)
        tp.retime_fastest(rows, self.retime_top)
        return rows

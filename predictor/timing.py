"""How one problem's configs are timed: the measurement method, written once and shared by every
backend (the CUDA backend and the synthetic test backend run the same procedure).

A *batch call* is one call into a kernel's timing loop: ``n`` batches of back-to-back launches
between events, one synchronisation at the end; it returns the per-launch time of each batch.

The first batch of a call starts on an idle queue, so it also pays the latency of getting the
first launch onto the GPU (several µs): with batches of a fraction of a millisecond that reads a
few percent slow.  Method 1 (the sweeps of 2026-11-30) timed the first pass as 5 batches in one
call (the median hides that first batch) but re-timed the fastest configs with one-batch calls,
every sample a first batch: the re-timing read 2-7% high and moved winners.  Method 2 (this
module) drops a warm-up batch at the start of *every* call, first pass and re-timing alike, so
both estimate the same quantity and a re-timing cannot shift the winner by construction
(``tests/test_timing.py``).  Long launches pay a negligible start cost and skip the warm-up batch.

Method 3 (the default since 2026-12-02) keeps method 2's plan and warm-up rule but runs each batch as
one replay of a CUDA graph of the batch's launches (``graph`` timing).  Back-to-back launches from the
host carry the launch path: on µs-size problems method 2 read 1.25 µs above the CUPTI kernel time for
CUTLASS 2.x (SM80) kernels and 1.50-1.59 µs for CUTLASS 3.x (SM90) ones, against 0.15-0.26 µs in a
graph (``bench/small_layers/h200-holdout-label-overhead.md``), so its labels favoured the SM80 kernels
by ~0.3 µs over what a graph-captured network pays; measured side by side on one H200, eager batches
read 0.95-1.86 µs (median per family) slower and picked another winner on 86% of 69 problems under 5 µs
(``sweeps/runs/s11/eager-vs-graph.md``).  A graph's launches are sized from a graph: the
eager sizing launch pays the launch path too, so a graph batch of that size would be short, and the
replay's own start cost would weigh more on the configs that read slow eagerly (:meth:`Problem.first_pass`).

Big problems are bounded in time by fewer batches, not by dropping them: a config whose single
sizing launch is far slower than the best seen on that problem (``SLOW_FACTOR``) cannot win and
gets one timed batch; launches longer than ``LONG_LAUNCH_MS`` get ``LONG_REPS`` batches.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Protocol, Sequence

if TYPE_CHECKING:
    from .config import Family, KernelConfig

#: How a batch runs: ``eager`` (back-to-back stream launches, methods 1 and 2) or ``graph`` (one CUDA-graph
#: replay of the batch's launches, method 3); the C ABI's timing modes (``pk_runtime.h``).
EAGER, GRAPH = "eager", "graph"
TIMING_MODES = (GRAPH, EAGER)
DEFAULT_TIMING = GRAPH
ABI_MODE = {EAGER: 2, GRAPH: 3}
#: Method id recorded in every row (``timing_method``) of the defaults; 1 = the earliest method (re-timing
#: biased: use ``time_us``), 2 = eager batches with a warm-up batch per call, 3 = the same as graph replays.
TIMING_METHOD = 3
#: How each method's batches run (``predictor.portfolio.one_method_per_problem`` keeps one kind per problem).
METHOD_MODE = {1: EAGER, 2: EAGER, 3: GRAPH}
#: Graph batches of a size first measured eagerly: launches of the sizing graph (before the plan's).
SIZING_GRAPH_BATCHES = 2
#: Batches dropped at the start of every call (they absorb the idle queue's start latency).
WARMUP_BATCHES = 1
#: A launch at least this long pays a negligible start cost: no warm-up batch.
NO_WARMUP_MS = 2.0
#: Launches longer than this get fewer timed batches.
LONG_LAUNCH_MS = 1.0
LONG_REPS = 3
#: A config whose sizing launch is this many times slower than the problem's best so far gets
#: a single timed batch (it cannot be the winner; its time is still recorded).
SLOW_FACTOR = 3.0
#: Upper bound on launches per batch.
MAX_ITERS = 10000
#: Defaults of every backend and of ``predictor.collect``: length of one timed batch (ms), timed
#: batches per (config, problem), configs re-timed per problem.
TARGET_MS = 0.25
REPS = 5
RETIME_TOP = 3

#: ``call(batches, iters) -> (status, per-launch µs of each batch)``: one call into a timing loop.
BatchCall = Callable[[int, int], tuple[int, list[float]]]


def one_family(configs: Sequence[KernelConfig]) -> Family:
    """The family of ``configs``, which a backend measures on one problem's tensors: ``ValueError`` when they
    are empty or of several families (each family has its own tensors and layouts: one call per family)."""
    fams = sorted({c.family.value for c in configs})
    if len(fams) != 1:
        raise ValueError(f"measure: configs of {len(fams)} families {fams}: one call per family (their tensors differ)")
    return configs[0].family


@dataclass(frozen=True)
class Plan:
    """How to time one config: launches per batch, timed batches, dropped warm-up batches."""

    iters: int
    reps: int
    warmup: int


def plan(one_launch_ms: float, best_ms: float, target_ms: float, reps: int,
         warmup: int | None = None) -> Plan:
    """The batch plan of a config whose single sizing launch took ``one_launch_ms``; ``best_ms``
    is the fastest sizing launch seen so far on this problem (``inf`` for the first); ``warmup``
    overrides :data:`WARMUP_BATCHES` (0 reproduces the earlier method, for comparisons)."""
    one = max(one_launch_ms, 1e-4)
    iters = max(1, min(MAX_ITERS, math.ceil(target_ms / one)))
    if one > SLOW_FACTOR * best_ms:
        reps = 1
    elif one > LONG_LAUNCH_MS:
        reps = min(reps, LONG_REPS)
    w = WARMUP_BATCHES if warmup is None else warmup
    return Plan(iters, max(1, reps), 0 if one >= NO_WARMUP_MS else w)


def timed(call: BatchCall, p: Plan, reps: int | None = None) -> tuple[int, list[float]]:
    """One call of ``p.warmup + reps`` batches; the warm-up batches are dropped."""
    n = p.reps if reps is None else reps
    st, us = call(p.warmup + n, p.iters)
    return st, list(us[p.warmup:])


@dataclass(frozen=True)
class Stats:
    time_us: float
    time_p20_us: float
    time_p80_us: float
    time_min_us: float
    reps: int


def stats(us: Sequence[float]) -> Stats:
    """Median, spread and count of per-launch batch times."""
    s = sorted(us)

    def pct(q: float) -> float:  # linear interpolation, as numpy.percentile
        pos = (len(s) - 1) * q
        lo = math.floor(pos)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (pos - lo)

    return Stats(statistics.median(s), pct(0.2), pct(0.8), s[0], len(s))


def retime(calls: dict[str, tuple[BatchCall, Plan]], rounds: int) -> dict[str, float]:
    """Time the given configs again, interleaved: ``rounds`` rounds, each one call per config (the
    same warm-up rule as the first pass), the starting config rotating; median per config."""
    names = list(calls)
    samples: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            call, p = calls[name]
            st, us = timed(call, p, reps=1)
            if st == 0:
                samples[name].extend(us)
    return {n: statistics.median(v) for n, v in samples.items() if v}


def method(warmup: int | None, mode: str = DEFAULT_TIMING) -> int:
    """The ``timing_method`` of rows timed in ``mode`` (:data:`TIMING_MODES`) with ``warmup`` batches
    dropped (None: the default): 3 for graph batches, 2 for eager ones, 1 for eager ones with
    ``warmup == 0`` (the earliest method, for comparisons)."""
    if mode not in ABI_MODE:
        raise ValueError(f"timing mode {mode!r} is not one of {', '.join(TIMING_MODES)}")
    if mode == GRAPH:
        return 3
    return 2 if warmup != 0 else 1


class TimedRow(Protocol):
    """The fields of a row (``predictor.schema.Row``) that the timing writes."""

    config: str
    time_us: float
    time_p20_us: float
    time_p80_us: float
    time_min_us: float
    retime_us: float
    iters: int
    reps: int


class Problem:
    """The timing of one problem's configs, in the method's order: :meth:`first_pass` for each
    config as it is checked (the plan depends on the fastest sizing launch so far), then
    :meth:`retime_fastest` once.  Rows are ``predictor.schema.Row``; only timing fields are written."""

    def __init__(self, target_ms: float, reps: int, warmup: int | None = None, mode: str = DEFAULT_TIMING) -> None:
        method(warmup, mode)  # validates mode
        self.target_ms, self.reps, self.warmup, self.mode = target_ms, reps, warmup, mode
        self.best_ms = math.inf
        self.plans: dict[str, tuple[BatchCall, Plan]] = {}

    def first_pass(self, row: TimedRow, call: BatchCall, one_launch_ms: float) -> int:
        """Time ``row.config`` (sizing launch ``one_launch_ms``) into ``row``; the call's status.  In
        graph mode the plan is sized from the faster of :data:`SIZING_GRAPH_BATCHES` graph batches of
        the size the eager sizing launch gives, not from that launch."""
        if self.mode == GRAPH and one_launch_ms < NO_WARMUP_MS:
            first = plan(one_launch_ms, math.inf, self.target_ms, 1, 0)
            st, us = call(SIZING_GRAPH_BATCHES, first.iters)
            if st != 0:
                return st
            one_launch_ms = min(us) / 1000.0
        p = plan(one_launch_ms, self.best_ms, self.target_ms, self.reps, self.warmup)
        self.best_ms = min(self.best_ms, one_launch_ms)
        st, us = timed(call, p)
        if st != 0:
            return st
        s = stats(us)
        row.time_us, row.time_p20_us, row.time_p80_us = s.time_us, s.time_p20_us, s.time_p80_us
        row.time_min_us, row.iters, row.reps = s.time_min_us, p.iters, s.reps
        self.plans[row.config] = (call, p)
        return 0

    def retime_fastest(self, rows: Sequence[TimedRow], top: int) -> None:
        """Re-time the ``top`` fastest timed rows (:class:`TimedRow`), interleaved (:func:`retime`),
        into ``retime_us``."""
        ok = sorted((r for r in rows if r.config in self.plans), key=lambda r: r.time_us)[:top]
        if len(ok) > 1:
            again = retime({r.config: self.plans[r.config] for r in ok}, self.reps)
            for r in ok:
                r.retime_us = again.get(r.config, math.nan)

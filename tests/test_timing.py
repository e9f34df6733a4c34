"""The timing method (predictor.timing) on the SYNTHETIC backend: a simulated timing loop whose
first batch per call pays a start latency, as a real GPU's does."""
from __future__ import annotations

import math
import random
import statistics

import numpy as np
import pytest

from predictor import timing
from predictor.config import Family
from predictor.features import ConvProblem
from predictor.space import family_grid
from tests.synthetic_backend import SyntheticBackend, true_time_us

PROBLEMS = [ConvProblem(n, c, hw, hw, k, r, r, 1, r // 2, 1)
            for n, c, hw, k, r in [(1, 64, 56, 64, 3), (8, 256, 14, 256, 3), (32, 512, 7, 2048, 1),
                                   (1, 32, 112, 64, 1), (4, 128, 28, 128, 3), (16, 64, 56, 256, 1)]]
CONFIGS = family_grid(Family.FP16_NHWC)[:40]


def _ok(rows):
    return [r for r in rows if r.status == "ok"]


def test_without_noise_every_timing_is_the_true_time_despite_the_start_latency():
    be = SyntheticBackend(delay=0, start_us=8.0, noise=0.0)
    for prob in PROBLEMS:
        rows = _ok(be.measure(prob, CONFIGS))
        retimed = [r for r in rows if not math.isnan(r.retime_us)]
        assert len(retimed) == 3
        for r in rows:
            cfg = next(c for c in CONFIGS if c.name == r.config)
            assert r.time_us == pytest.approx(true_time_us(prob, cfg), rel=1e-12)
        for r in retimed:  # the re-timing measures the same quantity: it cannot move the winner
            assert r.retime_us == pytest.approx(r.time_us, rel=1e-12)
        true_best = min(true_time_us(prob, c) for c in CONFIGS)
        by_retime = min(retimed, key=lambda r: r.retime_us)
        assert by_retime.retime_us == pytest.approx(true_best, rel=1e-12)


def _retime_ratio(be: SyntheticBackend) -> float:
    ratios = [r.retime_us / r.time_us for prob in PROBLEMS for r in _ok(be.measure(prob, CONFIGS))
              if not math.isnan(r.retime_us)]
    assert len(ratios) == 3 * len(PROBLEMS)
    return statistics.median(ratios)


def test_with_noise_the_retiming_is_unbiased(monkeypatch):
    """Only the selection effect remains (the re-timed configs were chosen for low first-pass
    times, ~0.5% at 1% noise); the earlier method (no warm-up batch) read the start latency."""
    assert abs(_retime_ratio(SyntheticBackend(delay=0, start_us=8.0, noise=0.01)) - 1.0) < 0.01
    monkeypatch.setattr(timing, "WARMUP_BATCHES", 0)
    assert _retime_ratio(SyntheticBackend(delay=0, start_us=8.0, noise=0.01)) > 1.02


def test_a_call_without_the_warmup_batch_reads_high():
    """The negative control: the earlier method's one-batch re-timing calls are biased."""
    be = SyntheticBackend(delay=0, start_us=8.0, noise=0.0)
    call = be._call(20.0, random.Random(0))
    p = timing.plan(0.028, math.inf, 0.25, 5)
    assert p.warmup == 1
    _, fair = timing.timed(call, p, reps=1)
    _, biased = timing.timed(call, timing.Plan(p.iters, 1, 0), reps=1)
    assert fair[0] == pytest.approx(20.0)
    assert biased[0] > 20.0 * 1.02


def test_plan_bounds_big_and_hopeless_configs():
    p = timing.plan(0.01, math.inf, 0.25, 5)
    assert (p.iters, p.reps, p.warmup) == (25, 5, 1)
    assert timing.plan(0.01, 0.001, 0.25, 5).reps == 1  # 10x slower than the best so far
    long = timing.plan(1.5, 1.4, 0.25, 5)
    assert (long.iters, long.reps, long.warmup) == (1, timing.LONG_REPS, 1)
    assert timing.plan(5.0, 5.0, 0.25, 5).warmup == 0
    assert timing.plan(1e-9, math.inf, 10.0, 5).iters == timing.MAX_ITERS


def test_stats_match_numpy():
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 6):
        x = rng.random(n).tolist()
        s = timing.stats(x)
        assert s.time_us == pytest.approx(float(np.median(x)))
        assert s.time_p20_us == pytest.approx(float(np.percentile(x, 20)))
        assert s.time_p80_us == pytest.approx(float(np.percentile(x, 80)))
        assert (s.time_min_us, s.reps) == (min(x), n)


def test_retime_rotates_the_order():
    order: list[str] = []

    def make(name):
        def call(batches, iters):
            order.append(name)
            return 0, [1.0] * batches
        return call

    p = timing.Plan(1, 1, 1)
    timing.retime({n: (make(n), p) for n in "abc"}, 3)
    assert order == list("abcbcacab")


def test_graph_batches_read_the_kernel_and_eager_ones_the_launch_path_too():
    """Method 3 (graph replays) labels each config with its kernel time; method 2 adds the launch path
    of back-to-back stream launches (``launch_us`` per launch in the simulation), and says so in the rows."""
    prob = PROBLEMS[0]
    graph = _ok(SyntheticBackend(delay=0, start_us=8.0, noise=0.0, launch_us=1.5).measure(prob, CONFIGS))
    eager = _ok(SyntheticBackend(delay=0, start_us=8.0, noise=0.0, launch_us=1.5,
                                 timing_mode=timing.EAGER).measure(prob, CONFIGS))
    assert {r.timing_method for r in graph} == {3} and {r.timing_method for r in eager} == {2}
    for g, e in zip(graph, eager):
        cfg = next(c for c in CONFIGS if c.name == g.config)
        assert g.time_us == pytest.approx(true_time_us(prob, cfg), rel=1e-12)
        assert e.time_us == pytest.approx(true_time_us(prob, cfg) + 1.5, rel=1e-12)


def test_a_graph_batch_is_sized_from_a_graph_not_from_the_eager_launch():
    """The eager sizing launch pays the start latency and the launch path; a graph batch of that size
    would be short.  Graph mode sizes its batches from a sizing graph: the plan's launches fill the
    target, one more timing-loop call per config."""
    prob = ConvProblem(1, 16, 8, 8, 16, 1, 1, 1, 0, 1)  # a µs-size problem
    cfg = CONFIGS[0]
    be = SyntheticBackend(delay=0, start_us=8.0, noise=0.0, launch_us=1.5)
    tp = timing.Problem(0.25, 5)
    row = be.measure(prob, [cfg])[0]
    t = true_time_us(prob, cfg)
    one_eager_ms = (t + 1.5 + 8.0) / 1000
    assert row.iters == math.ceil(0.25 / (t / 1000)) > timing.plan(one_eager_ms, math.inf, 0.25, 5).iters
    assert be.calls == 2  # sizing graph + first pass (a single config is not re-timed)
    assert tp.mode == timing.GRAPH == timing.DEFAULT_TIMING


def test_timing_method_ids_and_a_bad_mode():
    assert timing.method(None) == timing.TIMING_METHOD == 3
    assert (timing.method(None, timing.EAGER), timing.method(0, timing.EAGER)) == (2, 1)
    with pytest.raises(ValueError, match="timing mode 'cupti'"):
        timing.Problem(0.25, 5, mode="cupti")


def test_one_call_measures_one_family():
    """A backend checks and times one problem's configs on that family's tensors: configs of several families in
    one call would run kernels on another family's data (the GPU check then reads wrong_result), so it refuses."""
    prob = ConvProblem(1, 64, 7, 7, 64, 1, 1, 1, 0, 1)
    mixed = [family_grid(Family.INT8_NC32HW32)[0], family_grid(Family.FP16_NHWC)[0]]
    with pytest.raises(ValueError, match="one call per family"):
        SyntheticBackend(delay=0).measure(prob, mixed)
    assert len(SyntheticBackend(delay=0).measure(prob, mixed[:1])) == 1

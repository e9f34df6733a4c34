"""Real kernels on a real GPU (skipped without one): the correctness check passes correct kernels
and catches the mistakes it exists for (a missing filter reorder, an unwritten output)."""
from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover - CI has no GPU
    pytest.skip("needs an NVIDIA GPU", allow_module_level=True)

from predictor.config import SEED_CONFIG, EpilogueFunctor, Family, KernelConfig  # noqa: E402
from predictor.cuda_backend import CudaBackend  # noqa: E402
from predictor.features import ConvProblem  # noqa: E402

FP16 = KernelConfig(family=Family.FP16_NHWC, tb=(128, 128, 32), warp=(64, 64, 32), inst=(16, 8, 16), stages=3,
                    align=(8, 8, 8), epilogue=EpilogueFunctor.LinearCombination)
PROBLEMS = [
    ConvProblem(1, 64, 56, 56, 64, 3, 3, 1, 1, 1),
    ConvProblem(8, 256, 14, 14, 512, 1, 1, 2, 0, 1),
    ConvProblem(2, 96, 17, 23, 160, 5, 5, 1, 4, 2),
]


@pytest.fixture(scope="module")
def backend(tmp_path_factory) -> CudaBackend:
    b = CudaBackend(build_dir="build", reps=3, retime_top=2)
    b.prepare([SEED_CONFIG, SEED_CONFIG.with_split_k(2), FP16, FP16.with_split_k(2)])
    return b


@pytest.mark.gpu
@pytest.mark.parametrize("prob", PROBLEMS, ids=lambda p: p.key)
def test_seed_config_is_correct_and_timed(backend: CudaBackend, prob: ConvProblem) -> None:
    rows = backend.measure(prob, [SEED_CONFIG])
    r = rows[0]
    assert r.status == "ok", r
    assert r.verified and r.max_abs_err <= 1
    assert r.time_us > 0 and math.isfinite(r.time_us)
    assert r.smem_bytes > 0


@pytest.mark.gpu
def test_missing_reorder_is_caught(backend: CudaBackend) -> None:
    backend.skip_reorder = True
    try:
        rows = backend.measure(PROBLEMS[0], [SEED_CONFIG])
    finally:
        backend.skip_reorder = False
    assert rows[0].status == "wrong_result"
    assert rows[0].bad_frac > 0.1


@pytest.mark.gpu
@pytest.mark.parametrize("prob", PROBLEMS, ids=lambda p: p.key)
def test_fp16_config_is_correct(backend: CudaBackend, prob: ConvProblem) -> None:
    r = backend.measure(prob, [FP16])[0]
    assert r.status == "ok", r
    assert r.verified


@pytest.mark.gpu
def test_green_context_partition_runs_on_fewer_sms(backend: CudaBackend) -> None:
    pytest.importorskip("cuda.bindings")
    prob = ConvProblem(8, 256, 56, 56, 256, 3, 3, 1, 1, 1)
    small = CudaBackend(build_dir="build", reps=3, retime_top=1, sm_count=16)
    small.prepare([SEED_CONFIG])
    assert 16 <= small.info["sms"] < small.info["device_sms"]
    r16 = small.measure(prob, [SEED_CONFIG])[0]
    rfull = backend.measure(prob, [SEED_CONFIG])[0]
    assert r16.status == "ok" and r16.verified, r16
    assert rfull.status == "ok"
    ratio = r16.time_us / rfull.time_us
    print(f"16-SM partition ({small.info['sms']} SMs) / full GPU time: {ratio:.2f}")
    assert ratio > 3.0


@pytest.mark.gpu
def test_graph_timing_charges_no_host_overhead() -> None:
    """``graph_time_us`` times the GPU: a call that spends 300 µs on the host (a slow Python op) times
    like the same kernel without it (sizing the graph from one eager call charged part of the graph's
    launch latency to such calls)."""
    import time

    from predictor.gpu_eval import graph_time_us

    x = torch.zeros(1 << 16, device="cuda")

    def slow() -> None:
        time.sleep(3e-4)
        x.add_(1.0)

    fast_us = graph_time_us(lambda: x.add_(1.0))
    slow_us = graph_time_us(slow)
    assert slow_us < 1.25 * fast_us, (slow_us, fast_us)


@pytest.mark.gpu
def test_graph_batches_time_the_kernel_without_the_launch_path(backend: CudaBackend) -> None:
    """Timing method 3 (the default) against method 2 on a µs-size problem, same kernel, same process: both
    rows are checked and timed; the graph replays drop the launch path of back-to-back stream launches
    (0.9-1.9 µs on the H200, sweeps/runs/s11/eager-vs-graph.md); a serial split-k config (whose launches
    share a semaphore workspace) is timed as a graph too."""
    from predictor import timing

    tiny = ConvProblem(1, 64, 7, 7, 64, 1, 1, 1, 0, 1)
    per_family = [[SEED_CONFIG], [FP16, FP16.with_split_k(2)]]  # one family per call: their tensors differ
    graph = [r for cfgs in per_family for r in backend.measure(tiny, cfgs)]
    backend.timing_mode = timing.EAGER
    try:
        eager = [r for cfgs in per_family for r in backend.measure(tiny, cfgs)]
    finally:
        backend.timing_mode = timing.GRAPH
    for g, e in zip(graph, eager):
        assert (g.status, e.status) == ("ok", "ok"), (g, e)
        assert (g.timing_method, e.timing_method) == (3, 2)
        assert 0 < g.time_us < e.time_us - 0.3

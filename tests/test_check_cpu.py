"""The collector's output check without a GPU (numpy arrays; CI has neither a GPU nor torch).

An independent float64 reference (a direct convolution written here, not the collector's), the
NCxHWx<32> packing and the CxRSKx<32> filter with CUTLASS's ``reorder_convK<32>`` (both written
here from CUTLASS's own definitions), a simulated kernel that reads those layouts as a CUTLASS
kernel does, and the tolerance rules: a correct output passes, a broken one fails."""
from __future__ import annotations

import numpy as np
import pytest

from predictor.config import Family
from predictor.cuda_backend import (
    FP16_ATOL, FP16_RTOL, INT8_POISON, check_fp16, check_int8, check_output, from_nc32hw32, poison, to_cxrskx32,
    to_nc32hw32,
)

# (N, C, H, W, K, R, S, stride, pad, dilation)
PROBLEMS = [(1, 64, 9, 11, 64, 3, 3, 1, 1, 1), (2, 32, 8, 8, 96, 1, 1, 2, 0, 1), (1, 32, 13, 10, 32, 5, 5, 2, 4, 2)]


def direct_conv(x: np.ndarray, w: np.ndarray, stride: int, pad: int, dilation: int) -> np.ndarray:
    """Cross-correlation in float64, one output pixel at a time (NCHW x KCRS -> NKPQ)."""
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    p = (h + 2 * pad - dilation * (r - 1) - 1) // stride + 1
    q = (wd + 2 * pad - dilation * (s - 1) - 1) // stride + 1
    xf, wf = x.astype(np.float64), w.astype(np.float64).reshape(k, -1)
    out = np.zeros((n, k, p, q))
    for i in range(p):
        for j in range(q):
            patch = np.zeros((n, c, r, s))
            for a in range(r):
                for b in range(s):
                    y, z = i * stride - pad + a * dilation, j * stride - pad + b * dilation
                    if 0 <= y < h and 0 <= z < wd:
                        patch[:, :, a, b] = xf[:, :, y, z]
            out[:, :, i, j] = patch.reshape(n, -1) @ wf.T
    return out


def quantise(acc: np.ndarray, alpha: float) -> np.ndarray:
    """The clamp epilogue: float32 alpha * acc, rounded to nearest even, clamped to int8."""
    return np.clip(np.rint(acc.astype(np.float32) * np.float32(alpha)), -128, 127).astype(np.int32)


def nc32_offset(shape: tuple[int, int, int, int], n: int, c: int, h: int, w: int) -> int:
    """cutlass::layout::TensorNCxHWx<32>: offset of logical element (n, c, h, w)."""
    _, C, H, W = shape
    return c % 32 + 32 * (w + W * (h + H * (c // 32 + (C // 32) * n)))


def cxrskx32_offset(K: int, R: int, S: int, k: int, c: int, r: int, s: int, reorder: bool) -> int:
    """cutlass::layout::TensorCxRSKx<32> of the filter after cutlass::reorder_convK<32>
    (host_reorder.h: reorder_column<32>, the GEMM column n = k moves to the position below)."""
    if reorder:
        k = (k // 32) * 32 + ((k % 8) // 2) * 8 + ((k % 32) // 8) * 2 + (k % 2)
    return c % 32 + 32 * k + 32 * K * s + 32 * K * S * r + 32 * K * S * R * (c // 32)


def simulated_int8_kernel(a: np.ndarray, b: np.ndarray, prob: tuple[int, ...], alpha: float) -> np.ndarray:
    """What a correct interleaved kernel computes from its buffers: read the activations and the
    (reordered) filter through CUTLASS's layouts, convolve, epilogue, store NCxHWx<32>."""
    N, C, H, W, K, R, S, stride, pad, dil = prob
    af, bf = a.reshape(-1), b.reshape(-1)
    x = np.empty((N, C, H, W), np.int64)
    for n in range(N):
        for c in range(C):
            for h in range(H):
                for w in range(W):
                    x[n, c, h, w] = af[nc32_offset((N, C, H, W), n, c, h, w)]
    wt = np.empty((K, C, R, S), np.int64)
    for k in range(K):
        for c in range(C):
            for r in range(R):
                for s in range(S):
                    wt[k, c, r, s] = bf[cxrskx32_offset(K, R, S, k, c, r, s, reorder=True)]
    y = quantise(direct_conv(x, wt, stride, pad, dil), alpha)
    P, Q = y.shape[2:]
    out = np.full(N * K * P * Q, INT8_POISON, np.int8)
    for n in range(N):
        for k in range(K):
            for p in range(P):
                for q in range(Q):
                    out[nc32_offset((N, K, P, Q), n, k, p, q)] = y[n, k, p, q]
    return out.reshape(N, K // 32, P, Q, 32)


def int8_case(prob: tuple[int, ...], seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    N, C, H, W, K, R, S, *_ = prob
    rng = np.random.default_rng(seed)
    x = rng.integers(-8, 9, (N, C, H, W)).astype(np.int8)
    w = rng.integers(-8, 9, (K, C, R, S)).astype(np.int8)
    alpha = 32.0 / (24.0 * np.sqrt(C * R * S))
    return x, w, quantise(direct_conv(x, w, *prob[7:]), alpha), alpha


def test_reference_is_a_convolution() -> None:
    """The reference itself, against numpy's own correlation on a 1-channel, 1-filter case."""
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((1, 1, 6, 7)), rng.standard_normal((1, 1, 3, 3))
    windows = np.lib.stride_tricks.sliding_window_view(np.pad(x[0, 0], 1), (3, 3))
    expect = np.einsum("pqrs,rs->pq", windows, w[0, 0])
    np.testing.assert_allclose(direct_conv(x, w, 1, 1, 1)[0, 0], expect, rtol=1e-12)


@pytest.mark.parametrize("shape", [(1, 32, 3, 4), (2, 96, 5, 1)])
def test_nc32hw32_packing_matches_cutlass_layout(shape: tuple[int, int, int, int]) -> None:
    x = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
    packed = to_nc32hw32(x)
    assert packed.shape == (shape[0], shape[1] // 32, shape[2], shape[3], 32)
    flat = packed.reshape(-1)
    for idx in np.ndindex(*shape):
        assert flat[nc32_offset(shape, *idx)] == x[idx]
    np.testing.assert_array_equal(from_nc32hw32(packed, *shape), x)


@pytest.mark.parametrize("reorder", [True, False])
def test_filter_layout_and_reorder_match_cutlass(reorder: bool) -> None:
    K, C, R, S = 64, 64, 3, 2
    w = np.arange(K * C * R * S, dtype=np.int32).reshape(K, C, R, S)
    buf = to_cxrskx32(w, reorder=reorder)
    for k, c, r, s in np.ndindex(K, C, R, S):
        assert buf[cxrskx32_offset(K, R, S, k, c, r, s, reorder)] == w[k, c, r, s]


@pytest.mark.parametrize("prob", PROBLEMS, ids=lambda p: "x".join(map(str, p)))
def test_int8_check_passes_a_correct_kernel_and_fails_broken_ones(prob: tuple[int, ...]) -> None:
    x, w, ref, alpha = int8_case(prob)
    N, C, H, W, K, *_ = prob
    ref_packed = to_nc32hw32(ref)
    good = simulated_int8_kernel(to_nc32hw32(x), to_cxrskx32(w), prob, alpha)
    v = check_output(good, ref_packed, Family.INT8_NC32HW32)
    assert v.ok and v.max_abs_err == 0 and v.bad_frac == 0
    # the filter not reordered: the kernel reads other output channels' weights
    no_reorder = simulated_int8_kernel(to_nc32hw32(x), to_cxrskx32(w, reorder=False), prob, alpha)
    v = check_int8(no_reorder, ref_packed)
    assert not v.ok and v.bad_frac > 0.5 and v.max_abs_err > 1
    # an output never written (poisoned before the launch)
    unwritten = np.empty_like(good)
    poison(unwritten, Family.INT8_NC32HW32)
    assert not check_int8(unwritten, ref_packed).ok
    # NCHW output where NCxHWx<32> is expected
    assert not check_int8(ref.astype(np.int8).reshape(good.shape), ref_packed).ok


def test_int8_tolerance_is_one_rounding_step() -> None:
    _, _, ref, _ = int8_case(PROBLEMS[0])
    ref_packed = to_nc32hw32(ref)
    out = ref_packed.astype(np.int8)
    out.reshape(-1)[7] += 1  # the clamp epilogue's rounding may differ by one step
    assert check_int8(out, ref_packed).ok
    out.reshape(-1)[7] += 1  # two steps: wrong
    v = check_int8(out, ref_packed)
    assert not v.ok and v.max_abs_err == 2 and v.bad_frac == pytest.approx(1 / out.size)


def fp16_case(prob: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(kernel-like fp16 NPQK output, float64 NPQK reference) of uniform [-1, 1] fp16 inputs."""
    N, C, H, W, K, R, S, *_ = prob
    rng = np.random.default_rng(2)
    x = (rng.random((N, C, H, W)) * 2 - 1).astype(np.float16)
    w = (rng.random((K, C, R, S)) * 2 - 1).astype(np.float16)
    ref = (direct_conv(x, w, *prob[7:]) * (3.0 / np.sqrt(C * R * S))).transpose(0, 2, 3, 1)
    return ref.astype(np.float16), ref


def test_fp16_check_tolerance_and_unwritten_output() -> None:
    out, ref = fp16_case(PROBLEMS[0])
    v = check_output(out, ref, Family.FP16_NHWC)
    assert v.ok and 0 < v.max_abs_err < FP16_ATOL  # fp16 rounding of the output
    tol = FP16_ATOL + FP16_RTOL * np.abs(ref)
    i = np.unravel_index(np.argmax(np.abs(ref)), ref.shape)
    inside, outside = out.astype(np.float64), out.astype(np.float64)
    inside[i], outside[i] = ref[i] + 0.9 * tol[i], ref[i] + 1.1 * tol[i]
    assert check_fp16(inside.astype(np.float64), ref).ok
    v = check_fp16(outside, ref)
    assert not v.ok and v.bad_frac == pytest.approx(1 / ref.size)
    unwritten = np.empty_like(out)
    poison(unwritten, Family.FP16_NHWC)
    v = check_fp16(unwritten, ref)
    assert not v.ok and v.bad_frac == 1.0 and v.max_abs_err == np.inf
    one_nan = out.copy()
    one_nan.reshape(-1)[3] = np.nan
    assert not check_fp16(one_nan, ref).ok


def test_torch_cpu_tensors_take_the_same_path() -> None:
    torch = pytest.importorskip("torch")
    _, _, ref, _ = int8_case(PROBLEMS[1])
    ref_packed = to_nc32hw32(ref)
    bad = ref_packed.astype(np.int8)
    bad.reshape(-1)[:5] += 3
    for out in (ref_packed.astype(np.int8), bad):
        a = check_int8(out, ref_packed)
        b = check_int8(torch.from_numpy(out), torch.from_numpy(ref_packed))
        assert (a.ok, a.max_abs_err, a.bad_frac) == (b.ok, b.max_abs_err, pytest.approx(b.bad_frac))
    np.testing.assert_array_equal(to_nc32hw32(torch.from_numpy(ref)).numpy(), ref_packed)

"""The ``cost`` kind's teacher (predictor.cost_teacher) on hand-made problems and a SYNTHETIC sweep."""
from __future__ import annotations

import numpy as np
import pytest

from predictor.config import KernelConfig
from predictor.cost_teacher import CostTeacher, config_matrix, pair_matrix
from predictor.features import ARGS, FEATURE_NAMES, compute


def _two_configs() -> list[str]:
    names = [f"f16gemm90_t{m}x128x64_c1x1x1_sauto_kpingpong_etma_tsdefault_a8x8x8_lincomb" for m in (128, 64)]
    assert [KernelConfig.from_name(n).tb for n in names] == [(128, 128, 64), (64, 128, 64)]
    return names


def test_pair_rows_carry_the_tile_quantisation() -> None:
    configs = _two_configs()
    C, fields = config_matrix(configs)
    args = dict(N=2, C=64, H=20, W=20, K=200, R=1, S=1, stride=1, pad=0, dilation=1, sms=132)
    x = np.array([compute({k: args[k] for k in ARGS})], dtype=np.int64)
    P = pair_matrix(x, C, fields)
    assert P.shape == (2, len(FEATURE_NAMES) + len(fields) + 9)
    extra = P[:, len(FEATURE_NAMES) + len(fields):]
    # GEMM 800 x 200 x 64: 7 x 2 CTAs of 128x128, 13 x 2 of 64x128
    assert extra[:, 0] == pytest.approx(np.log2([14, 26]))
    assert extra[:, 2] == pytest.approx([14 / 132, 26 / 132])
    assert extra[:, 3] == pytest.approx([800 / 896, 800 / 832])
    assert extra[:, 4] == pytest.approx([200 / 256] * 2)


def test_teacher_learns_a_rule_over_config_fields() -> None:
    """Regret = 0 for the config whose tile M fits the GEMM's M best, else 1: learned from problems that
    never saw a given tile's best case it still ranks by the quantisation features."""
    configs = _two_configs()
    rng = np.random.default_rng(0)
    rows = []
    for _ in range(300):
        a = dict(N=int(rng.integers(1, 9)), C=64, H=int(rng.integers(4, 40)), W=int(rng.integers(4, 40)), K=128,
                 R=1, S=1, stride=1, pad=0, dilation=1, sms=132)
        rows.append(compute(a))
    X = np.array(rows, dtype=np.int64)
    m = X[:, FEATURE_NAMES.index("gemm_m")]
    waste = np.stack([(-m) % 128 / (m + (-m) % 128), (-m) % 64 / (m + (-m) % 64)], axis=1)
    regret = (waste > waste.min(axis=1, keepdims=True)).astype(float)
    with pytest.raises(ValueError, match="before fit"):
        CostTeacher(configs).predict(X)
    with pytest.raises(ValueError, match="expected"):
        CostTeacher(configs).fit(X, regret[:, :1])
    teacher = CostTeacher(configs).fit(X[:200], regret[:200])
    differ = regret[200:, 0] != regret[200:, 1]
    agree = np.argmin(teacher.predict(X[200:]), axis=1) == np.argmin(regret[200:], axis=1)
    assert differ.sum() > 20 and agree[differ].mean() > 0.9


def test_teacher_does_not_depend_on_the_thread_count() -> None:
    """The shipped models reproduce byte for byte on any machine: the cost model's predictions are the same
    with one OpenMP thread as with all of them."""
    from threadpoolctl import threadpool_limits

    configs = _two_configs()
    rng = np.random.default_rng(1)
    X = np.array([compute(dict(N=int(rng.integers(1, 33)), C=64 * int(rng.integers(1, 9)), H=int(rng.integers(4, 60)),
                               W=int(rng.integers(4, 60)), K=64 * int(rng.integers(1, 9)), R=1, S=1, stride=1, pad=0,
                               dilation=1, sms=132)) for _ in range(400)], dtype=np.int64)
    regret = rng.uniform(0, 1, (len(X), 2))
    full = CostTeacher(configs).fit(X, regret).predict(X)
    with threadpool_limits(limits=1, user_api="openmp"):
        one = CostTeacher(configs).fit(X, regret).predict(X)
    assert np.array_equal(full, one)


def test_near_weighting_pulls_towards_the_fastest_pairs() -> None:
    """``near`` (the ``near`` kind's teacher) weights each pair ``exp(-log-regret / near) + 0.1``: on one problem
    whose regrets are uniform on [0, 1] it predicts their weighted mean, (0.01 + 0.05) / (0.1 + 0.1) = 0.3 (the
    exponentials' tails below 1e-4), the unweighted teacher their mean, 0.5."""
    configs = _two_configs()
    x = compute(dict(N=1, C=64, H=20, W=16, K=128, R=1, S=1, stride=1, pad=0, dilation=1, sms=132))
    X = np.array([x] * 2000, dtype=np.int64)
    regret = np.random.default_rng(2).uniform(0, 1, (len(X), 2))
    assert CostTeacher(configs).fit(X, regret).predict(X[:1]) == pytest.approx(0.5, abs=0.02)
    assert CostTeacher(configs, near=0.1).fit(X, regret).predict(X[:1]) == pytest.approx(0.3, abs=0.02)
    with pytest.raises(ValueError, match="near must be >= 0"):
        CostTeacher(configs, near=-0.1)

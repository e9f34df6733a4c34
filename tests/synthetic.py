"""SYNTHETIC sweep fixture: NOT measurements.

Builds a sweep DataFrame in the real schema (``predictor.schema``) with real ``KernelConfig`` names
and a deterministic analytic time model (tile quantisation, waves over the SMs, occupancy from
shared memory, serial split-k cost, a little hash-based "noise").  ``gpu`` is ``"synthetic"``.
It exists so that training, export and selection can be tested end to end without a GPU; nothing
trained on it may be shipped.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import math
import random
from pathlib import Path
from typing import Iterable

import pandas as pd

from predictor.config import (
    SEED_CONFIG, SMEM_LIMIT_BYTES, EpilogueFunctor, EpilogueSchedule, Family, IteratorAlgorithm, KernelConfig,
    KernelSchedule, Swizzle, TileScheduler,
)
from predictor.features import ConvProblem, same_pad
from predictor.schema import SHAPE_COLUMNS, Row, rows_frame, write_sweep

GPU = "synthetic"
SMS = 132

_TILES = {
    Family.INT8_NC32HW32: [
        ((128, 128, 64), (64, 64, 64)), ((256, 128, 64), (64, 64, 64)), ((128, 256, 64), (64, 64, 64)),
        ((64, 64, 64), (32, 32, 64)), ((128, 64, 64), (64, 32, 64)), ((64, 128, 64), (32, 64, 64)),
        ((256, 128, 128), (64, 64, 128)), ((64, 32, 64), (32, 32, 64)), ((128, 128, 128), (64, 64, 128)),
        ((32, 64, 64), (32, 32, 64)), ((64, 64, 128), (32, 32, 128)), ((128, 64, 128), (64, 32, 128)),
    ],
    Family.FP16_NHWC: [
        ((128, 128, 32), (64, 64, 32)), ((128, 64, 32), (64, 32, 32)), ((64, 64, 32), (32, 32, 32)),
        ((256, 128, 32), (64, 64, 32)), ((64, 128, 32), (32, 64, 32)), ((128, 256, 64), (64, 64, 64)),
        ((64, 32, 32), (32, 32, 32)), ((128, 128, 64), (64, 64, 64)),
    ],
}
#: CUTLASS 3.x families: (tile, cluster, stages) of ``KernelConfig.sm90`` (stages 0 = automatic).
_TILES_3X = {
    Family.F16_NHWC_SM90: [
        ((128, 128, 64), (1, 1, 1), 0), ((128, 256, 64), (1, 1, 1), 0), ((64, 128, 64), (1, 1, 1), 0),
        ((128, 64, 64), (1, 1, 1), 0), ((256, 128, 64), (2, 1, 1), 0), ((64, 64, 64), (1, 1, 1), 4),
        ((128, 128, 64), (2, 1, 1), 0), ((128, 128, 64), (1, 2, 1), 3),
    ],
    Family.I8_NHWC_SM90: [
        ((128, 128, 128), (1, 1, 1), 0), ((128, 256, 128), (1, 1, 1), 0), ((64, 128, 128), (1, 1, 1), 0),
        ((128, 64, 128), (1, 1, 1), 0), ((256, 128, 128), (2, 1, 1), 0), ((64, 64, 128), (1, 1, 1), 4),
    ],
}

#: The GEMM families (1x1 / stride 1 / pad 0 / dilation 1 problems only): (tile, cluster, stages,
#: kernel schedule, epilogue schedule, tile scheduler); None = the family's default.  Tile K is
#: fp16's: a family's own is 4 wgmma K steps (int8: 128, :func:`family_configs`).
_GEMM_TILES = [
    ((128, 128, 64), (1, 1, 1), 0, None, None, None), ((128, 256, 64), (1, 1, 1), 0, None, None, None),
    ((256, 128, 64), (2, 1, 1), 0, None, None, None),
    ((128, 128, 64), (1, 1, 1), 0, None, None, TileScheduler.StreamK),
    ((64, 128, 64), (1, 1, 1), 4, KernelSchedule.TmaWarpSpecializedPingpong, EpilogueSchedule.TmaWarpSpecialized, None),
]


def family_configs(family: Family, n_configs: int | None = None) -> list[KernelConfig]:
    """Real, valid ``KernelConfig`` objects of ``family`` (``SEED_CONFIG`` and variants for int8).

    The first few configs are a fixed hand-picked set; ``n_configs`` larger than that adds more
    tile x stages x swizzle x split-k combinations (deterministically)."""
    spec = family.spec
    if spec.cutlass_api == 3:
        if family.spec.operation == "gemm":
            tile_k = 4 * spec.instruction_shape[2]
            cfgs3 = [KernelConfig.sm90(family, (tb[0], tb[1], tile_k), cluster, stages, ks, es, ts)
                     for tb, cluster, stages, ks, es, ts in _GEMM_TILES]
            return cfgs3 if n_configs is None else cfgs3[:n_configs]
        cfgs3 = [KernelConfig.sm90(family, tb, cluster, stages) for tb, cluster, stages in _TILES_3X[family]]
        return cfgs3 if n_configs is None else cfgs3[:n_configs]
    if family is Family.INT8_NC32HW32:
        base = SEED_CONFIG
    else:
        base = KernelConfig(family=family, tb=(128, 128, 32), warp=(64, 64, 32), inst=spec.instruction_shape,
                            stages=4, align=(8, 8, 8), epilogue=EpilogueFunctor.LinearCombination)
    out: dict[str, KernelConfig] = {}

    def add(c: KernelConfig) -> None:
        out.setdefault(c.name, c)

    def tile(tb: tuple[int, int, int], warp: tuple[int, int, int], stages: int) -> KernelConfig:
        return dataclasses.replace(base, tb=tb, warp=warp, stages=stages)

    add(base)
    add(dataclasses.replace(base, stages=3))
    add(dataclasses.replace(base, swizzle=Swizzle.Identity4))
    add(base.with_split_k(2))
    add(dataclasses.replace(base, iterator=IteratorAlgorithm.Analytic))
    for tb, warp in _TILES[family][1:]:
        add(tile(tb, warp, 3 if tb[0] * tb[1] * tb[2] >= 128 * 128 * 128 else 4))
    add(tile((64, 64, _TILES[family][3][0][2]), _TILES[family][3][1], 6).with_split_k(4))
    big = _TILES[family][6] if family is Family.INT8_NC32HW32 else _TILES[family][5]
    add(tile(big[0], big[1], 4))  # too much shared memory for sm_87
    if n_configs is not None and n_configs > len(out):
        combos = itertools.product(_TILES[family], (3, 4, 5, 6), (1, 2, 4, 8), (1, 2, 4))
        for (tb, warp), st, sw, sk in combos:
            if len(out) >= n_configs:
                break
            add(dataclasses.replace(tile(tb, warp, st), swizzle=Swizzle(sw)).with_split_k(sk))
    cfgs = list(out.values())
    return cfgs if n_configs is None else cfgs[:n_configs]


def _hash01(*parts: object) -> float:
    h = hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") / 2.0**64


def _time_us(p: ConvProblem, c: KernelConfig, sms: int) -> float:
    """Analytic time model (deterministic)."""
    m, n, k = p.N * p.P * p.Q, p.K, p.C * p.R * p.S
    tm, tn, tk = c.tb
    sk = c.split_k_slices
    ctas = math.ceil(m / tm) * math.ceil(n / tn) * sk
    k_iters = math.ceil(math.ceil(k / sk) / tk)
    smem = c.smem_bytes_estimate
    occ = max(1, min(4, (228 * 1024) // smem, 2048 // c.threads))
    eff = min(1.0, (tm * tn) / (128 * 128)) ** 0.3 * (0.85 + 0.15 * min(c.stages, 5) / 5)
    rate = 2.0e6 if c.family is Family.INT8_NC32HW32 else 1.0e6  # MACs per us per SM
    if c.cutlass_api == 3:  # wgmma: faster big tiles, a longer fixed start (TMA descriptors, clusters)
        rate *= 1.6 * min(1.0, tm * tn / (128 * 128)) ** 0.5
        t0 = 1.0 * c.cluster[0] * c.cluster[1]
        if c.spec.operation == "gemm":  # a plain GEMM: no im2col addressing, faster on big problems
            rate *= 1.25
            t0 += 1.5
    else:
        t0 = 0.0
    iter_t = tm * tn * tk / (rate * eff)
    prologue = 0.15 * c.stages + 0.0005 * tm * tn / 64
    hide = 1 + 0.2 * (occ - 1)
    waves = math.ceil(ctas / (sms * occ))
    t = 3.0 + t0 + waves * occ * (k_iters * iter_t + prologue) / hide
    if sk > 1:
        t += 0.8 * sk + sk * m * n * 4 / 2.0e6
    sw = c.swizzle.value
    if sw > 1:
        t *= 1 - 0.015 * math.log2(sw) if math.ceil(m / tm) >= 16 else 1 + 0.01 * math.log2(sw)
    if c.iterator is IteratorAlgorithm.Analytic:
        t *= 0.97 if p.C <= 64 else 1.06
    return t * (0.98 + 0.04 * _hash01(p.key, c.name))


def shapes(n_shapes: int = 400, seed: int = 0, channel_multiple: int = 32) -> list[tuple[ConvProblem, str]]:
    """~70% grid, ~20% random, ~10% network ("net:synthnet") problems."""
    rng = random.Random(seed)
    out: dict[str, tuple[ConvProblem, str]] = {}
    n_net = max(4, n_shapes // 10)
    n_rand = max(4, n_shapes // 5)
    grid = list(itertools.product((1, 4, 16, 64), (32, 64, 128, 256, 512, 1024), (7, 14, 28, 56, 112),
                                  (32, 64, 128, 256, 512, 1024), (1, 3), (1, 2)))
    rng.shuffle(grid)
    for n, c, hw, k, r, s in grid:
        if len(out) >= n_shapes - n_net - n_rand:
            break
        if n * hw * hw * c * k * r * r > 64 * 56 * 56 * 256 * 256 * 9:
            continue
        p = ConvProblem(n, c, hw, hw, k, r, r, s, same_pad(r), 1)
        out.setdefault(p.key, (p, "grid"))
    while len(out) < n_shapes - n_net:
        cm = channel_multiple
        c = cm * max(1, round(2 ** rng.uniform(0, 5.5)))
        k = cm * max(1, round(2 ** rng.uniform(0, 5.5)))
        hw = max(3, round(2 ** rng.uniform(2, 7)))
        r = rng.choice((1, 1, 3, 3, 5, 7))
        p = ConvProblem(rng.choice((1, 2, 8, 32)), c, hw, hw + rng.choice((0, 0, 1, 5)), k, r, r,
                        rng.choice((1, 1, 2)), same_pad(r), rng.choice((1, 1, 1, 2)) if r == 3 and hw > 8 else 1)
        out.setdefault(p.key, (p, "random"))
    net = [(64, 56, 64, 1), (64, 56, 64, 3), (64, 56, 256, 1), (256, 56, 64, 1), (128, 28, 128, 3),
           (128, 28, 512, 1), (512, 28, 128, 1), (256, 14, 256, 3), (256, 14, 1024, 1), (1024, 14, 256, 1),
           (512, 7, 512, 3), (512, 7, 2048, 1), (2048, 7, 512, 1), (96, 40, 96, 3), (160, 20, 320, 1)]
    for i in itertools.count():
        if len(out) >= n_shapes:
            break
        c, hw, k, r = net[i % len(net)]
        n = (1, 8, 32)[(i // len(net)) % 3]
        stride = 2 if (i // (3 * len(net))) % 2 else 1
        p = ConvProblem(n, c, hw, hw, k, r, r, stride, same_pad(r), 1)
        out.setdefault(p.key, (p, "net:synthnet"))
        if i > 20 * n_shapes:
            break
    return list(out.values())


def make_sweep(n_shapes: int = 400, n_configs: int | None = None, seed: int = 0,
               families: Iterable[str] = ("i8nc32", "f16nhwc"), sms: int = SMS, gpu: str = GPU) -> pd.DataFrame:
    """A SYNTHETIC sweep frame (one :class:`~predictor.schema.Row` per family x shape x config)."""
    rows: list[Row] = []
    for fam_name in families:
        fam = Family(fam_name)
        cfgs = family_configs(fam, n_configs)
        probs = [(p, src) for p, src in shapes(n_shapes, seed, fam.spec.channel_multiple)
                 if fam.spec.implements(p.R, p.S, p.stride, p.pad, p.dilation)]  # the GEMM family: 1x1 only
        for si, (p, src) in enumerate(probs):
            all_fail = si == 3  # one shape where nothing runs
            times = {}
            for c in cfgs:
                k_iters = math.ceil(p.C * p.R * p.S / c.tb[2])
                u = _hash01("status", p.key, c.name)
                if all_fail or c.split_k_slices > k_iters:
                    status = "cannot_implement"
                elif u < 0.01:
                    status = "launch_error"
                elif c.split_k_slices > 1 and u < 0.3:
                    status = "wrong_result"  # as on the H200: serial split-k clamps int8 partial sums
                else:
                    status = "ok"
                t = _time_us(p, c, sms) if status in ("ok", "wrong_result") else float("nan")
                smem = c.smem_bytes_estimate
                rows.append(Row(
                    config=c.name, kernel=c.kernel_name, status=status,
                    verified=status == "ok", max_abs_err=0.0 if status == "ok" else float("nan"),
                    bad_frac=0.0 if status == "ok" else float("nan"),
                    time_us=t, time_p20_us=t * 0.99, time_p80_us=t * 1.01, time_min_us=t * 0.98,
                    iters=10, reps=5, smem_bytes=smem,
                    timing_method=1,  # labels from time_us, as when the fixture had no such column
                    family=fam.value, shape_key=p.key, source=src,
                    **{a: getattr(p, a) for a in SHAPE_COLUMNS},
                    sm87_ok=smem <= SMEM_LIMIT_BYTES["sm_87"], sms=sms, gpu=gpu,
                ))
                if status == "ok":
                    times[len(rows) - 1] = t
            for idx in sorted(times, key=times.get)[:3]:  # retime the fastest 3
                rows[idx].retime_us = times[idx] * (0.995 + 0.01 * _hash01("retime", idx))
    return rows_frame(rows)


def write_synthetic_sweep(path: str | Path, **kwargs: object) -> Path:
    """Write :func:`make_sweep` to ``path`` (parquet, with ``synthetic: true`` metadata)."""
    df = make_sweep(**kwargs)  # type: ignore[arg-type]
    write_sweep(df, path, {"synthetic": True, "note": "SYNTHETIC fixture, not measurements",
                           "kwargs": {k: v for k, v in kwargs.items()}})
    return Path(path)


if __name__ == "__main__":  # pragma: no cover - manual use: python tests/synthetic.py out.parquet
    import sys

    write_synthetic_sweep(sys.argv[1] if len(sys.argv) > 1 else "synthetic.parquet")
    print("wrote SYNTHETIC sweep", sys.argv[1] if len(sys.argv) > 1 else "synthetic.parquet")

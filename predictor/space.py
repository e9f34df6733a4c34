"""The configuration grid of each family, as data.

The base tiles are read from ``cutlass_library``'s own SM80 generator (the tile descriptions it
lists for the family's math instruction); the grid then varies stages, swizzle, iterator
algorithm, warp arrangement and serial split-k around them, and drops configurations whose
shared memory no supported GPU can give a block.  Every config records whether a Jetson Orin
(sm_87, 163 KB per block) can run it: :func:`runs_on`.
"""
from __future__ import annotations

import logging
from typing import Iterable

from .config import (
    SEED_CONFIG, SMEM_LIMIT_BYTES, EpilogueFunctor, Family, IteratorAlgorithm, KernelConfig,
    StrideSupport, Swizzle,
)

_LOG = logging.getLogger(__name__)

_GENERATORS = {
    Family.INT8_NC32HW32: "GenerateSM80_TensorOp_16832_Interleaved",
    Family.FP16_NHWC: "GenerateSM80_TensorOp_16816",
}


#: Stage sweeps and variations apply to tiles with at most this threadblock K (fp16's K=64 tiles
#: are kept at the generator's stage counts, which bounds the grid and its compile time).
_SWEEP_MAX_TILE_K = {Family.INT8_NC32HW32: 128, Family.FP16_NHWC: 32}
_SWEEP_MAX_TILE_MN = {Family.INT8_NC32HW32: 256 * 256, Family.FP16_NHWC: 128 * 128}


class _CaptureManifest:
    """Minimal stand-in for ``cutlass_library.manifest.Manifest``: collects what a generator
    function appends, with no kernel filter."""

    kernel_filter = "all"

    def __init__(self) -> None:
        self.operations: list[object] = []

    def append(self, op: object) -> None:
        self.operations.append(op)


def generator_tiles(family: Family) -> list[tuple[tuple[int, int, int], int, tuple[int, int, int]]]:
    """(threadblock shape, stages, warp count) of every conv2d fprop tile that ``cutlass_library``'s
    SM80 generator emits for ``family``, in the generator's order, deduplicated."""
    from cutlass_library import generator
    from cutlass_library.library import ConvKind, DataType, LayoutType, OperationKind

    spec = family.spec
    manifest = _CaptureManifest()
    getattr(generator, _GENERATORS[family])(manifest, "13.0")
    out: list[tuple[tuple[int, int, int], int, tuple[int, int, int]]] = []
    for op in manifest.operations:
        if getattr(op, "operation_kind", None) != OperationKind.Conv2d or op.conv_kind != ConvKind.Fprop:
            continue
        if (op.A.element != getattr(DataType, spec.element_a) or op.C.element != getattr(DataType, spec.element_c)
                or op.A.layout != getattr(LayoutType, spec.layout_a)
                or op.accumulator_type() != getattr(DataType, spec.element_accumulator)
                or tuple(op.tile_description.math_instruction.instruction_shape) != spec.instruction_shape):
            continue
        t = op.tile_description
        item = (tuple(t.threadblock_shape), int(t.stages), tuple(t.warp_count))
        if item not in out:
            out.append(item)  # type: ignore[arg-type]
    return out


def _cfg(family: Family, tb, warp_count, stages, swizzle=Swizzle.Identity1,
         iterator=IteratorAlgorithm.Optimized, split_k=1) -> KernelConfig:
    spec = family.spec
    warp = (tb[0] // warp_count[0], tb[1] // warp_count[1], tb[2] // warp_count[2])
    align = (16, 16, 8) if family is Family.INT8_NC32HW32 else (8, 8, 8)
    base = KernelConfig(
        family=family, tb=tuple(tb), warp=warp, inst=spec.instruction_shape, stages=stages,
        swizzle=swizzle, iterator=iterator, stride_support=StrideSupport.Strided, align=align,
        epilogue=spec.epilogue,
    )
    return base.with_split_k(split_k)


def runs_on(cfg: KernelConfig, arch: str, smem_bytes: int | None = None) -> bool:
    """Whether a block of ``cfg`` fits the shared memory of ``arch`` (exact size if given)."""
    limit = SMEM_LIMIT_BYTES[arch]
    return (smem_bytes if smem_bytes is not None else cfg.smem_bytes_estimate) <= limit


def _stage_choices(tb: tuple[int, int, int], gen_stages: int) -> list[int]:
    """Stages to try for a tile: the generator's, 3 and 4 for every tile; 2 and 6 as well for tiles
    of at most 128x128, and 8 and 10 for tiles of at most 64x64 (the mainloop's shared memory
    shrinks with the tile, so deeper pipelines fit)."""
    choices = {gen_stages, 3, 4}
    if tb[0] * tb[1] <= 128 * 128:
        choices |= {2, 6}
    if tb[0] * tb[1] <= 64 * 64:
        choices |= {8, 10}
    return sorted(choices)


def family_grid(family: Family, arch_limit: str = "sm_90") -> list[KernelConfig]:
    """The sweep grid for ``family``: valid configs whose estimated shared memory fits ``arch_limit``."""
    tiles = generator_tiles(family)
    extra: list[tuple[tuple[int, int, int], int, tuple[int, int, int]]]
    if family is Family.INT8_NC32HW32:
        extra = [
            ((128, 128, 64), 4, (2, 2, 1)),  # the seed's tile (warp 64x64x64)
            ((128, 64, 64), 4, (2, 1, 1)),  # warp 64x64
            ((64, 128, 64), 4, (1, 2, 1)),  # warp 64x64
            ((128, 128, 128), 3, (2, 2, 1)),
            ((128, 64, 128), 3, (2, 2, 1)),
            ((64, 64, 128), 4, (2, 2, 1)),
            ((256, 128, 128), 3, (4, 2, 1)),
            ((64, 32, 64), 6, (2, 1, 1)),
            ((32, 64, 64), 6, (1, 2, 1)),
        ]
    else:
        extra = [
            ((128, 64, 32), 4, (2, 1, 1)),
            ((64, 32, 32), 6, (2, 1, 1)),
        ]
    cfgs: dict[str, KernelConfig] = {}

    def add(c: KernelConfig) -> None:
        if runs_on(c, arch_limit):
            cfgs.setdefault(c.name, c)

    all_tiles = tiles + [t for t in extra if t not in tiles]
    for tb, gen_stages, wc in all_tiles:
        # stage sweep (optimized iterator, identity swizzle)
        for st in _stage_choices(tb, gen_stages):
            try:
                add(_cfg(family, tb, wc, st))
            except ValueError:
                continue
    # swizzle, iterator and serial split-k (a run-time argument of the same kernel) variations
    # around the generator's tiles of at most 128x128 (the ones that leave SMs idle on small
    # problems), each at the generator's stage count, once per tile shape
    varied: set[tuple[int, int, int]] = set()
    for tb, st, wc in tiles:
        if tb in varied or tb[0] * tb[1] > 128 * 128 or tb[2] > _SWEEP_MAX_TILE_K[family]:
            continue
        varied.add(tb)
        for sw in (Swizzle.Identity2, Swizzle.Identity4, Swizzle.Identity8):
            add(_cfg(family, tb, wc, st, swizzle=sw))
        add(_cfg(family, tb, wc, st, iterator=IteratorAlgorithm.Analytic))
        for sk in (2, 4):
            add(_cfg(family, tb, wc, st, split_k=sk))
    if family is Family.INT8_NC32HW32:
        add(SEED_CONFIG)
        add(SEED_CONFIG.with_split_k(2))
    out = sorted(cfgs.values(), key=lambda c: c.name)
    _LOG.info("%s grid: %d configs, %d kernel instances", family.value, len(out),
              len({c.kernel_name for c in out}))
    return out


def default_config(family: Family) -> KernelConfig:
    """``cutlass_library``'s generator default for the family: its first (largest) tile."""
    tb, st, wc = generator_tiles(family)[0]
    return _cfg(family, tb, wc, st)


def kernel_instances(cfgs: Iterable[KernelConfig]) -> dict[str, KernelConfig]:
    """One representative config (split-k 1) per compiled kernel instance."""
    out: dict[str, KernelConfig] = {}
    for c in cfgs:
        out.setdefault(c.kernel_name, c.with_split_k(1))
    return out


__all__ = ["family_grid", "generator_tiles", "default_config", "kernel_instances", "runs_on",
           "EpilogueFunctor"]

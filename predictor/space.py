"""The configuration grid of each family, as data.

The base tiles are read from ``cutlass_library``'s own generator for the family (the tile
descriptions it lists for the family's math instruction); the grid then varies stages, swizzle,
iterator algorithm, warp arrangement and serial split-k around them, and drops configurations
whose shared memory no supported GPU can give a block.  Every config records whether a Jetson Orin
(sm_87, 163 KB per block) can run it: :func:`runs_on`.

Each family's grid is one entry of :data:`GRIDS`: a :class:`Sm80Grid` (CUTLASS 2.x families) or
:class:`Sm90Grid` (CUTLASS 3.x families) naming the ``cutlass_library`` generator function and the
family's own grid knobs.  A new family needs its ``FAMILY_SPECS`` entry and its ``GRIDS`` entry.
"""
from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, replace
from typing import Any, Sequence

from .config import (
    SEED_CONFIG, SMEM_LIMIT_BYTES, EpilogueFunctor, EpilogueSchedule, Family, IteratorAlgorithm,
    KernelConfig, KernelSchedule, StrideSupport, Swizzle, TileScheduler,
)

_LOG = logging.getLogger(__name__)

#: (threadblock shape, stages, warp count) of a CUTLASS 2.x tile.
Tile = tuple[tuple[int, int, int], int, tuple[int, int, int]]


@dataclass(frozen=True)
class Sm80Grid:
    """The sweep grid of a CUTLASS 2.x family (:func:`family_grid`): the generator's tiles plus
    ``extra_tiles``, each at several stage counts; swizzle, iterator and serial split-k variations
    around the generator's tiles of at most 128x128 and at most ``max_varied_tile_k``; ``seeds``."""

    #: ``cutlass_library.generator`` function whose conv2d fprop tiles seed the grid.
    generator: str
    #: Alignment (elements) of A, B, C of every config.
    align: tuple[int, int, int]
    #: Tiles swept next to the generator's.
    extra_tiles: tuple[Tile, ...] = ()
    #: Variations apply to tiles with at most this threadblock K (fp16's K=64 tiles are kept at
    #: the generator's stage counts, which bounds the grid and its compile time).
    max_varied_tile_k: int = 128
    #: Configs added as they are.
    seeds: tuple[KernelConfig, ...] = ()
    #: Serial split-k slices varied around the small tiles (a run-time argument of the same kernel).
    split_k: tuple[int, ...] = (2, 4)
    #: The generator's tiles kept, by threadblock shape (empty: all of them).
    keep_tiles: tuple[tuple[int, int, int], ...] = ()


@dataclass(frozen=True)
class Sm90Grid:
    """The sweep grid of a CUTLASS 3.x family (:func:`sm90_grid`), as (tile M, tile N) knobs; the
    tile K of a family is 4 wgmma K steps (64 for fp16, 128 for int8)."""

    #: ``cutlass_library.generator`` function whose 2-D fprop kernels seed the grid.
    generator: str = "GenerateSM90_Conv3x"
    #: Family whose generator tiles give the grid's (M, N) list (the 16-bit list: the int8 one is
    #: a subset).
    tiles_of: Family = Family.F16_NHWC_SM90
    extra_tiles: tuple[tuple[int, int], ...] = ((128, 64),)
    cluster_1x2_tiles: tuple[tuple[int, int], ...] = ((64, 64), (64, 128), (128, 64), (128, 128), (128, 256),
                                                      (256, 128))
    nosmem_tiles: tuple[tuple[int, int], ...] = ((64, 64), (64, 128), (128, 64), (128, 128), (128, 256),
                                                 (256, 128))
    #: Explicit shallower pipelines: (tile M, tile N) -> stages.
    shallow: tuple[tuple[tuple[int, int], int], ...] = (((64, 64), 4), ((64, 128), 4), ((128, 64), 4),
                                                         ((128, 128), 3))
    #: Configs added as they are: (tile M x N x K, cluster M, stages; 0: automatic).
    explicit: tuple[tuple[tuple[int, int, int], int, int], ...] = ()
    #: Configs of the grid (names) whose twin without a source tensor joins it (as ``GemmGrid.no_source``).
    no_source: tuple[str, ...] = ()


#: f16gemm90's fixed epilogue subtiles (session 14): the 8 of ``scripts/gemm_epi_tiles.py``'s 12 that added most,
#: chosen greedily on the networks' 1x1 layers (``sweeps/runs/s14/epi.md``; a 128x128 subtile was 0.84x as fast).
_PP, _COOP = KernelSchedule.TmaWarpSpecializedPingpong, KernelSchedule.TmaWarpSpecializedCooperative
F16_GEMM90_EPI_TILES: tuple[tuple[KernelSchedule, tuple[int, int], tuple[int, int]], ...] = (
    (_PP, (128, 128), (64, 64)), (_PP, (256, 64), (64, 64)), (_PP, (64, 128), (64, 64)), (_PP, (128, 64), (64, 64)),
    (_COOP, (256, 96), (128, 96)), (_COOP, (128, 256), (128, 64)), (_COOP, (256, 64), (128, 64)),
    (_COOP, (256, 128), (128, 64)))

#: f16gemm90's 11 fastest configs on the 1x1 layers of ResNet-50 / YOLOv8m-like / U-Net at N = 8, 32 (the 1x1
#: experiments' reference set, ``GEMM90_1X1_BEST`` in ``scripts/device_env.sh``); their twins without a source tensor
#: joined the grid (session 23: 1.065x as fast on those layers, ``sweeps/runs/s23/README.md``).
F16_GEMM90_1X1_BEST: tuple[str, ...] = tuple(f"f16gemm90_{n}_a8x8x8_lincomb" for n in (
    "t128x128x64_c1x1x1_sauto_kpingpong_etma_ep64x64_tsdefault", "t64x128x64_c1x1x1_sauto_kpingpong_etma_ep64x64_tsdefault",
    "t128x64x64_c1x1x1_sauto_kpingpong_etma_ep64x64_tsdefault", "t256x64x64_c1x1x1_sauto_kpingpong_etma_ep64x64_tsdefault",
    "t256x64x64_c1x1x1_sauto_kcoop_etmacoop_ep128x64_tsdefault", "t256x128x64_c1x1x1_sauto_kcoop_etmacoop_ep128x64_tsdefault",
    "t128x256x64_c1x1x1_sauto_kcoop_etmacoop_ep128x64_tsdefault", "t256x96x64_c1x1x1_sauto_kcoop_etmacoop_ep128x96_tsdefault",
    "t256x128x64_c1x1x1_sauto_kcoop_etmacoop_tsdefault", "t128x256x64_c1x2x1_sauto_kcoop_etmacoop_tsdefault",
    "t64x256x64_c1x1x1_sauto_kpingpong_etma_tsdefault"))

#: f16nhwc90's explicit configs (session 14, ``sweeps/runs/s14/conv90.md``): tile K 32 and tile N 32 / 96, as cuDNN's
#: Hopper conv kernels run layers of 32-96 channels (1.3-1.7x faster there; ``docs/cutlass_space.md``).
F16_NHWC90_EXPLICIT: tuple[tuple[tuple[int, int, int], int, int], ...] = (
    ((256, 96, 32), 2, 0), ((256, 32, 32), 1, 0), ((128, 96, 64), 1, 0), ((64, 96, 64), 1, 0), ((128, 64, 32), 1, 8),
    ((128, 192, 32), 2, 0), ((256, 96, 32), 1, 0), ((128, 192, 32), 1, 0), ((128, 128, 32), 2, 0))

#: f16nhwc90's 12 most frequent winners on its training problems (6 of them on those above 4 GFLOP, where every one of
#: them wins, session 24): their source-less twins joined the grid (1.037x as fast on networks' layers, session 23).
F16_NHWC90_NOSRC: tuple[str, ...] = tuple(f"f16nhwc90_{n}_kws_etma_a8x8x8_lincomb" for n in (
    "t64x256x64_c1x1x1_sauto", "t64x128x64_c1x1x1_s4", "t128x192x64_c1x1x1_sauto", "t128x128x64_c1x2x1_sauto",
    "t128x128x64_c1x1x1_sauto", "t128x64x64_c1x1x1_s4", "t64x128x64_c1x2x1_sauto", "t64x64x64_c2x1x1_sauto",
    "t64x64x64_c1x1x1_s4", "t64x64x64_c1x2x1_sauto", "t256x32x32_c1x1x1_sauto", "t128x64x32_c1x1x1_s8"))

#: (tile M, tile N) -> stages, per kernel schedule.
_Shallow = tuple[tuple[KernelSchedule, tuple[int, int], int], ...]


@dataclass(frozen=True)
class GemmGrid:
    """The sweep grid of a CUTLASS 3.x SM90 GEMM family (:func:`gemm_grid`).  The (kernel schedule,
    epilogue schedule, tile scheduler) combinations are those ``cutlass_library``'s generator emits
    for "TN" GEMMs of the family's types (:func:`generator_gemm_combos`; fp16 -> fp16 for
    ``f16gemm90``, int8 -> int8 with the float epilogue for ``i8gemm90``): warp-specialized with the
    register epilogue, ping-pong with the TMA epilogue, cooperative with its TMA epilogue, default
    (persistent) or stream-K.  Automatic stages unless listed in ``shallow``.  The defaults are
    ``f16gemm90``'s grid; ``i8gemm90`` changes only the generator and the tile K (:data:`GRIDS`)."""

    generator: str = "GenerateSM90_TensorOp_16b_WGMMA_gemm"
    tiles: tuple[tuple[int, int], ...] = ((64, 128), (128, 128), (128, 256), (256, 128), (128, 64), (64, 256))
    #: 4 wgmma K steps: 64 for fp16 (k16), 128 for int8 (k32); the shared memory of a stage (tile K x
    #: (M + N) x bytes) is then the same for both.
    tile_k: int = 64
    clusters: tuple[tuple[int, int, int], ...] = ((1, 1, 1), (2, 1, 1), (1, 2, 1))
    #: Tiles whose accumulators one consumer warp group holds without spilling (warp-specialized and
    #: ping-pong: a warp group per tile; fp32 accumulators of 128x128 are 128 registers a thread).
    one_group_max_mn: int = 128 * 128
    #: Warp-specialized (non-persistent) kernels: clusters swept.
    ws_clusters: tuple[tuple[int, int, int], ...] = ((1, 1, 1), (2, 1, 1))
    #: Register (NoSmem) epilogue next to the TMA one: (kernel schedule, tile).
    nosmem: tuple[tuple[KernelSchedule, tuple[int, int]], ...] = (
        (KernelSchedule.TmaWarpSpecializedPingpong, (64, 128)), (KernelSchedule.TmaWarpSpecializedPingpong, (128, 128)),
        (KernelSchedule.TmaWarpSpecializedCooperative, (128, 128)),
        (KernelSchedule.TmaWarpSpecializedCooperative, (256, 128)))
    shallow: _Shallow = ((KernelSchedule.TmaWarpSpecializedPingpong, (64, 128), 4),
                         (KernelSchedule.TmaWarpSpecializedCooperative, (128, 128), 4))
    #: Tiles added where cuDNN's Hopper GEMM kernels beat the grid above (small GEMMs, which need many
    #: CTAs; output channels of 16-48; N = 192 against wave quantization), cluster 1x1 only, with the
    #: schedules of a tile of their size: ping-pong (TMA epilogue) and warp-specialized (register
    #: epilogue) for one warp group, cooperative and stream-K from tile M 128.
    small_tiles: tuple[tuple[int, int], ...] = ()
    #: Tiles of the transposed kernels (``KernelConfig.swap_ab``: the GEMM's M is the conv's K, its N the
    #: conv's N*H*W), cluster 1x1, with the schedules of a tile of their size: for layers with few pixels,
    #: where a tile M of 64 wastes most of the wgmma (cuDNN's Hopper kernels there: nvjet tiles 8x64 and
    #: 64x8, both orientations; bench/small_layers/h200-holdout-heuristic-run1.md).
    swap_tiles: tuple[tuple[int, int], ...] = ()
    #: Their pipeline depth: automatic stages fill shared memory with an odd count for the tiny tiles (25
    #: for 64x8 with the register epilogue), which CUTLASS 4.2's shared-memory layout of B cannot divide
    #: (nvcc: "Shape Divisibility Condition"); 8 loads in flight cover the K loop of these small GEMMs.
    swap_stages: int = 8
    #: Cooperative tiles swept with larger clusters than ``clusters`` (tile, cluster), default tile scheduler:
    #: cuDNN's Hopper GEMM kernels run large 1x1 layers with clusters up to 4x2 (nvjet ..._4x1_..., _2x4_).
    big_clusters: tuple[tuple[tuple[int, int], tuple[int, int, int]], ...] = ()
    #: Tiles swept with the TMA epilogue's subtile fixed (``KernelConfig.epi_tile``), cluster 1x1, default tile
    #: scheduler: (kernel schedule, tile M x N, subtile M x N).  ``EpilogueTileAuto`` stores 64x32 (ping-pong) or
    #: 128x32 (cooperative) at a time; 64 columns were up to 1.11x faster on network 1x1 layers, whose output
    #: outweighs their input (``scripts/gemm_epi_tiles.py``, ``sweeps/runs/s14/epi.md``).
    epi_tiles: tuple[tuple[KernelSchedule, tuple[int, int], tuple[int, int]], ...] = ()
    #: Configs of the grid above (names) whose twin without a source tensor (``KernelConfig.no_source``: the TMA
    #: epilogue reserves no shared memory for C and delays each store by a subtile) joins the grid.
    no_source: tuple[str, ...] = ()


#: The grid of every family: adding a family means one entry here (and its ``FAMILY_SPECS`` entry).
GRIDS: dict[Family, Sm80Grid | Sm90Grid | GemmGrid] = {
    Family.INT8_NC32HW32: Sm80Grid(
        generator="GenerateSM80_TensorOp_16832_Interleaved",
        align=(16, 16, 8),
        extra_tiles=(
            ((128, 128, 64), 4, (2, 2, 1)),  # the seed's tile (warp 64x64x64)
            ((128, 64, 64), 4, (2, 1, 1)),  # warp 64x64
            ((64, 128, 64), 4, (1, 2, 1)),  # warp 64x64
            ((128, 128, 128), 3, (2, 2, 1)),
            ((128, 64, 128), 3, (2, 2, 1)),
            ((64, 64, 128), 4, (2, 2, 1)),
            ((256, 128, 128), 3, (4, 2, 1)),
            ((64, 32, 64), 6, (2, 1, 1)),
            ((32, 64, 64), 6, (1, 2, 1)),
        ),
        max_varied_tile_k=128,
        seeds=(SEED_CONFIG, SEED_CONFIG.with_split_k(2)),
    ),
    Family.FP16_NHWC: Sm80Grid(
        generator="GenerateSM80_TensorOp_16816",
        align=(8, 8, 8),
        extra_tiles=(
            ((128, 64, 32), 4, (2, 1, 1)),
            ((64, 32, 32), 6, (2, 1, 1)),
        ),
        max_varied_tile_k=32,
    ),
    # int8 NHWC: the 16832 "TN" generator's tiles (int8 NHWC fprop), i8nc32's extra tiles and
    # variations; no seed (the question's config is interleaved)
    Family.INT8_NHWC: Sm80Grid(
        generator="GenerateSM80_TensorOp_16832_TN",
        # output alignment 8, as the generator's (min(8, alignment)): with 16, the epilogue of every
        # tile with 32-wide warps fails to compile ("Iteration Count Row must be > 0", 35 of 94 configs
        # on the H200, sweeps/runs/s7call1)
        align=(16, 16, 8),
        extra_tiles=(
            ((128, 128, 64), 4, (2, 2, 1)),
            ((128, 64, 64), 4, (2, 1, 1)),
            ((64, 128, 64), 4, (1, 2, 1)),
            ((64, 64, 64), 6, (2, 2, 1)),
            ((64, 32, 64), 6, (2, 1, 1)),
            ((32, 64, 64), 6, (1, 2, 1)),
        ),
        max_varied_tile_k=128,
        # no serial split-k: its partial sums go through the int8 output and are clamped (wrong
        # results, as i8nc32's serial configs record)
        split_k=(),
        # i8nc32's generator tiles (its grid's size: the NHWC generator also lists 32-wide tiles and
        # tile K 128 versions of each)
        keep_tiles=((256, 128, 64), (128, 256, 64), (256, 64, 64), (64, 256, 64), (128, 128, 64), (128, 64, 64),
                    (64, 128, 64), (64, 64, 64), (128, 128, 128), (64, 64, 128)),
    ),
    Family.F16_NHWC_SM90: Sm90Grid(explicit=F16_NHWC90_EXPLICIT, no_source=F16_NHWC90_NOSRC),
    Family.I8_NHWC_SM90: Sm90Grid(),
    # where cuDNN's Hopper kernels beat the first 50 configs (small GEMMs: tiles of N 8-64; N 128-192; N 96 for 80-96
    # output channels, session 13: sweeps/runs/s13/wave.md) and what joined since: docs/cutlass_space.md
    Family.F16_GEMM_SM90: GemmGrid(small_tiles=((64, 16), (64, 32), (64, 64), (128, 16), (128, 32), (256, 64),
                                                (128, 192), (64, 96), (128, 96), (256, 96)),
                                   big_clusters=(((256, 128), (2, 2, 1)), ((256, 128), (4, 1, 1)),
                                                 ((128, 256), (2, 2, 1)), ((128, 256), (4, 1, 1))),
                                   swap_tiles=((64, 8), (64, 16), (64, 32), (128, 8), (128, 16), (128, 32)),
                                   epi_tiles=F16_GEMM90_EPI_TILES, no_source=F16_GEMM90_1X1_BEST),
    # f16gemm90's tiles, clusters, schedules and shallow pipelines with tile K 128; what its generator lists, what
    # was taken from the fp16 grid and what is left out, and why: docs/cutlass_space.md ("i8gemm90's grid")
    Family.I8_GEMM_SM90: GemmGrid(generator="GenerateSM90_TensorOp_int8_WGMMA_gemm", tile_k=128),
}


def grid_spec(family: Family) -> Sm80Grid | Sm90Grid | GemmGrid:
    """The :data:`GRIDS` entry of ``family`` (``ValueError`` naming where to add a missing one)."""
    try:
        return GRIDS[family]
    except KeyError:
        raise ValueError(f"family {family.value} has no sweep grid: add its entry to predictor.space.GRIDS "
                         "(docs/adding_a_family.md)") from None


def _generator_operations(family: Family) -> list[Any]:
    """Every operation the family's ``cutlass_library`` generator function appends (CUDA 13.0)."""
    from cutlass_library import generator

    manifest = _CaptureManifest()
    getattr(generator, grid_spec(family).generator)(manifest, "13.0")
    return manifest.operations


class _CaptureManifest:
    """Minimal stand-in for ``cutlass_library.manifest.Manifest``: collects what a generator
    function appends, with no kernel filter."""

    kernel_filter = "all"

    def __init__(self) -> None:
        self.operations: list[object] = []

    def append(self, op: object) -> None:
        self.operations.append(op)

    def get_instantiation_level(self, pruned_level: int = 0, default_level: int = 111,
                                exhaustive_level: int = 9992) -> int:
        """The SM90 GEMM generators' pruning level: their default (a plain CUTLASS build's)."""
        return default_level


def generator_tiles(family: Family) -> list[Tile]:
    """(threadblock shape, stages, warp count) of every conv2d fprop tile that ``cutlass_library``'s
    SM80 generator emits for ``family``, in the generator's order, deduplicated.  For a CUTLASS 3.x
    family: the tiles of :func:`generator_tiles_3x` with stages 0 (auto) and the derived warp count
    (1, 1, 1), so they compare equal to the configs' own ``(tb, stages, warp_count)``."""
    from cutlass_library.library import ConvKind, DataType, LayoutType, OperationKind

    spec = family.spec
    if spec.operation == "gemm":
        return [(tb, 0, (1, 1, 1)) for tb in dict.fromkeys(c[0] for c in generator_gemm_combos(family))]
    if spec.cutlass_api == 3:
        out3: list[Tile] = []
        for tb, _cluster in generator_tiles_3x(family):
            if (tb, 0, (1, 1, 1)) not in out3:
                out3.append((tb, 0, (1, 1, 1)))
        return out3
    out: list[Tile] = []
    for op in _generator_operations(family):
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


def generator_tiles_3x(family: Family) -> list[tuple[tuple[int, int, int], tuple[int, int, int]]]:
    """(tile, cluster) of every 2-D fprop kernel ``cutlass_library``'s ``GenerateSM90_Conv3x`` emits
    with the family's input type (its accumulator/output types vary; the tile and cluster are what
    is taken), in the generator's order, deduplicated, keeping the tiles whose K is the family's
    (4 wgmma K steps: 64 for fp16, 128 for int8)."""
    from cutlass_library.library import ConvKind, DataType, OperationKind

    spec = family.spec
    tile_k = 4 * spec.instruction_shape[2]
    out: list[tuple[tuple[int, int, int], tuple[int, int, int]]] = []
    for op in _generator_operations(family):
        if (getattr(op, "operation_kind", None) != OperationKind.Conv2d or op.conv_kind != ConvKind.Fprop
                or not getattr(op, "is_3x", False)):
            continue
        if op.A.element != getattr(DataType, spec.element_a) or op.B.element != getattr(DataType, spec.element_b):
            continue
        t = op.tile_description
        tb = (int(t.tile_shape[0]), int(t.tile_shape[1]), int(t.tile_shape[2]))
        if tb[2] != tile_k:
            continue
        item = (tb, (int(t.cluster_shape[0]), int(t.cluster_shape[1]), int(t.cluster_shape[2])))
        if item not in out:
            out.append(item)
    return out


#: The SM90 grid (:class:`Sm90Grid`'s defaults): the 16-bit 2-D fprop tiles of ``GenerateSM90_Conv3x`` plus 128x64,
#: clusters 1x1 / 2x1 (and 1x2), TMA or register epilogue, automatic or shallower pipelines; the warp-specialized
#: implicit-GEMM schedule is the only one CUTLASS 4.2 has for conv.  Why each knob: ``docs/cutlass_space.md``.


#: (tile, cluster, kernel schedule, epilogue schedule, tile scheduler) of a GEMM kernel.
GemmCombo = tuple[tuple[int, int, int], tuple[int, int, int], KernelSchedule, EpilogueSchedule, TileScheduler]


@functools.lru_cache(maxsize=4)
def generator_gemm_combos(family: Family) -> tuple[GemmCombo, ...]:
    """Every (tile, cluster, schedules, tile scheduler) the family's ``cutlass_library`` SM90 GEMM
    generator emits for its types as a "TN" GEMM (A row-major, B column-major, the family's
    accumulator, C and D of its output type, 16-byte alignment), schedules the package knows, in the
    generator's order, deduplicated (the generator's automatic-stage kernels).  The generator lists
    column-major C/D only (the CUTLASS library runs a row-major output as the transposed problem);
    the family's kernels write the row-major NPQK output directly, with the same combinations."""
    from cutlass_library.library import DataType, LayoutType

    spec = family.spec
    want = (getattr(DataType, spec.element_a), getattr(DataType, spec.element_b), getattr(DataType, spec.element_c),
            getattr(DataType, spec.element_accumulator))
    known = {m.name for m in KernelSchedule}, {m.name for m in EpilogueSchedule}, {m.name for m in TileScheduler}
    out: dict[GemmCombo, None] = {}
    for op in _generator_operations(family):
        if (op.A.element, op.B.element, op.D.element, op.accumulator_type()) != want or op.C.element != want[2]:
            continue
        if (op.A.layout, op.B.layout) != (LayoutType.RowMajor, LayoutType.ColumnMajor):
            continue
        names = (op.kernel_schedule.name, op.epilogue_schedule.name, op.tile_scheduler.name)
        if op.A.alignment * spec.bytes_a != 16 or any(n not in k for n, k in zip(names, known)):
            continue
        t = op.tile_description
        out[(tuple(int(v) for v in t.tile_shape), tuple(int(v) for v in t.cluster_shape),  # type: ignore[index]
             KernelSchedule[names[0]], EpilogueSchedule[names[1]], TileScheduler[names[2]])] = None
    return tuple(out)


def _gemm_knobs(family: Family) -> GemmGrid:
    knobs = grid_spec(family)
    if not isinstance(knobs, GemmGrid):
        raise ValueError(f"family {family.value}: its GRIDS entry is not a GemmGrid")
    return knobs


def gemm_tile_configs(family: Family, mn: tuple[int, int], clusters: Sequence[tuple[int, int, int]] = ((1, 1, 1),),
                      ws_clusters: Sequence[tuple[int, int, int]] = ((1, 1, 1),), swap: bool = False, stages: int = 0,
                      arch_limit: str = "sm_90") -> list[KernelConfig]:
    """The configs a CUTLASS 3.x SM90 GEMM family's grid gives a tile (M, N) of its size, those that run on
    ``arch_limit``: per cluster of ``clusters``, ping-pong (TMA epilogue) for a tile one warp group holds
    (``GemmGrid.one_group_max_mn``) and cooperative with the default and the stream-K tile scheduler from tile
    M 128; per cluster of ``ws_clusters``, warp-specialized (register epilogue) for a one-group tile."""
    knobs = _gemm_knobs(family)
    ws, pp, coop = (KernelSchedule.TmaWarpSpecialized, KernelSchedule.TmaWarpSpecializedPingpong,
                    KernelSchedule.TmaWarpSpecializedCooperative)
    tma, tmacoop, nosmem = (EpilogueSchedule.TmaWarpSpecialized, EpilogueSchedule.TmaWarpSpecializedCooperative,
                            EpilogueSchedule.NoSmemWarpSpecialized)
    tb = (mn[0], mn[1], knobs.tile_k)
    one_group = mn[0] * mn[1] <= knobs.one_group_max_mn
    out: list[KernelConfig] = []
    for cluster in clusters:
        if one_group:
            out.append(KernelConfig.sm90(family, tb, cluster, stages, pp, tma, TileScheduler.Default, swap))
        if mn[0] >= 128:
            out += [KernelConfig.sm90(family, tb, cluster, stages, coop, tmacoop, ts, swap)
                    for ts in (TileScheduler.Default, TileScheduler.StreamK)]
    for cluster in ws_clusters if one_group else ():
        out.append(KernelConfig.sm90(family, tb, cluster, stages, ws, nosmem, TileScheduler.Default, swap))
    return [c for c in out if runs_on(c, arch_limit)]


def gemm_grid(family: Family, arch_limit: str = "sm_90") -> list[KernelConfig]:
    """The sweep grid of a CUTLASS 3.x SM90 GEMM family (its :class:`GemmGrid`); empty if
    ``arch_limit`` cannot run the family."""
    if not family.spec.supports(arch_limit):
        return []
    knobs = _gemm_knobs(family)
    coop = KernelSchedule.TmaWarpSpecializedCooperative
    tma, tmacoop, nosmem = (EpilogueSchedule.TmaWarpSpecialized, EpilogueSchedule.TmaWarpSpecializedCooperative,
                            EpilogueSchedule.NoSmemWarpSpecialized)
    cfgs: dict[str, KernelConfig] = {}

    def add(mn, ks, es, cluster=(1, 1, 1), stages=0, epi_tile=(0, 0)) -> None:  # type: ignore[no-untyped-def]
        c = KernelConfig.sm90(family, (mn[0], mn[1], knobs.tile_k), cluster, stages, ks, es, TileScheduler.Default,
                              epi_tile=epi_tile)
        if runs_on(c, arch_limit):
            cfgs.setdefault(c.name, c)

    tiles = ([gemm_tile_configs(family, mn, knobs.clusters, knobs.ws_clusters, arch_limit=arch_limit)
              for mn in knobs.tiles]
             + [gemm_tile_configs(family, mn, arch_limit=arch_limit) for mn in knobs.small_tiles]
             + [gemm_tile_configs(family, mn, swap=True, stages=knobs.swap_stages, arch_limit=arch_limit)
                for mn in knobs.swap_tiles])
    for c in (c for group in tiles for c in group):
        cfgs.setdefault(c.name, c)
    for mn, cluster in knobs.big_clusters:
        add(mn, coop, tmacoop, cluster)
    for ks, mn in knobs.nosmem:
        add(mn, ks, nosmem)
    for ks, mn, st in knobs.shallow:
        add(mn, ks, tmacoop if ks is coop else tma, stages=st)
    for ks, mn, epi in knobs.epi_tiles:
        add(mn, ks, tmacoop if ks is coop else tma, epi_tile=epi)
    return _with_twins(family, cfgs, knobs.no_source)


def _with_twins(family: Family, cfgs: dict[str, KernelConfig], names: Sequence[str]) -> list[KernelConfig]:
    """The grid ``cfgs`` plus the source-less twins (``KernelConfig.no_source``) of its configs ``names``, sorted."""
    if missing := [n for n in names if n not in cfgs]:
        raise ValueError(f"{family.value}: the grid's no_source names configs outside the grid: {missing}")
    for c in (replace(cfgs[n], no_source=True) for n in names):
        cfgs.setdefault(c.name, c)
    return sorted(cfgs.values(), key=lambda c: c.name)


def _generator_tiles_mn(family: Family) -> list[tuple[int, int]]:
    """(M, N) of the 2-D fprop tiles ``cutlass_library``'s generator lists for ``family``."""
    out: list[tuple[int, int]] = []
    for tb, _ in generator_tiles_3x(family):
        if tb[:2] not in out:
            out.append(tb[:2])  # type: ignore[arg-type]
    return out


def sm90_grid(family: Family, arch_limit: str = "sm_90") -> list[KernelConfig]:
    """The sweep grid of a CUTLASS 3.x family (its :class:`Sm90Grid`); empty if ``arch_limit``
    cannot run the family."""
    if not family.spec.supports(arch_limit):
        return []
    knobs = grid_spec(family)
    if not isinstance(knobs, Sm90Grid):
        raise ValueError(f"family {family.value}: its GRIDS entry is not an Sm90Grid")
    tile_k = 4 * family.spec.instruction_shape[2]
    gen = generator_tiles_3x(family)
    tiles: list[tuple[int, int, int]] = []
    for mn in _generator_tiles_mn(knobs.tiles_of) + [tb[:2] for tb, _ in gen] + list(knobs.extra_tiles):
        tb = (mn[0], mn[1], tile_k)
        if tb not in tiles:
            tiles.append(tb)
    ws = KernelSchedule.ImplicitTmaWarpSpecializedSm90
    tma, nosmem = EpilogueSchedule.TmaWarpSpecialized, EpilogueSchedule.NoSmemWarpSpecialized
    cfgs: dict[str, KernelConfig] = {}

    def add(mn, cluster=(1, 1, 1), stages=0, epi=tma, k=tile_k) -> None:  # type: ignore[no-untyped-def]
        c = KernelConfig.sm90(family, (mn[0], mn[1], k), cluster, stages, ws, epi)
        if runs_on(c, arch_limit):
            cfgs.setdefault(c.name, c)

    for tb in tiles:
        add(tb)
        add(tb, (2, 1, 1))
    for tb, cluster in gen:  # whatever else the generator lists (1x2 for 64x64)
        add(tb, cluster)
    for mn in knobs.cluster_1x2_tiles:
        add(mn, (1, 2, 1))
    for mn in knobs.nosmem_tiles:
        add(mn, epi=nosmem)
    for mn, st in knobs.shallow:
        add(mn, stages=st)
    for tb, cm, st in knobs.explicit:
        add(tb, (cm, 1, 1), st, k=tb[2])
    return _with_twins(family, cfgs, knobs.no_source)


def _cfg(family: Family, tb, warp_count, stages, swizzle=Swizzle.Identity1,
         iterator=IteratorAlgorithm.Optimized, split_k=1) -> KernelConfig:
    spec = family.spec
    warp = (tb[0] // warp_count[0], tb[1] // warp_count[1], tb[2] // warp_count[2])
    base = KernelConfig(
        family=family, tb=tuple(tb), warp=warp, inst=spec.instruction_shape, stages=stages,
        swizzle=swizzle, iterator=iterator, stride_support=StrideSupport.Strided,
        align=_sm80_grid(family).align,
        epilogue=spec.epilogue,
    )
    return base.with_split_k(split_k)


def runs_on(cfg: KernelConfig, arch: str, smem_bytes: int | None = None) -> bool:
    """Whether ``arch`` can run ``cfg``: its family runs there (the SM90 family only on sm_90) and a
    block fits the shared memory of ``arch`` (exact size if given)."""
    if not cfg.spec.supports(arch):
        return False
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
    """The sweep grid for ``family``: valid configs whose estimated shared memory fits ``arch_limit``
    (CUTLASS 3.x families: :func:`sm90_grid`)."""
    if isinstance(grid_spec(family), (Sm90Grid, GemmGrid)):
        out3 = gemm_grid(family, arch_limit) if isinstance(grid_spec(family), GemmGrid) else sm90_grid(family, arch_limit)
        _LOG.info("%s grid: %d configs (CUTLASS 3.x, %s only)", family.value, len(out3), family.spec.arch_min)
        return out3
    knobs = _sm80_grid(family)
    tiles = [t for t in generator_tiles(family) if not knobs.keep_tiles or t[0] in knobs.keep_tiles]
    cfgs: dict[str, KernelConfig] = {}

    def add(c: KernelConfig) -> None:
        if runs_on(c, arch_limit):
            cfgs.setdefault(c.name, c)

    all_tiles = tiles + [t for t in knobs.extra_tiles if t not in tiles]
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
        if tb in varied or tb[0] * tb[1] > 128 * 128 or tb[2] > knobs.max_varied_tile_k:
            continue
        varied.add(tb)
        for sw in (Swizzle.Identity2, Swizzle.Identity4, Swizzle.Identity8):
            add(_cfg(family, tb, wc, st, swizzle=sw))
        add(_cfg(family, tb, wc, st, iterator=IteratorAlgorithm.Analytic))
        for sk in knobs.split_k:
            add(_cfg(family, tb, wc, st, split_k=sk))
    for seed in knobs.seeds:
        add(seed)
    out = sorted(cfgs.values(), key=lambda c: c.name)
    _LOG.info("%s grid: %d configs, %d kernel instances", family.value, len(out),
              len({c.kernel_name for c in out}))
    return out


def default_config(family: Family) -> KernelConfig:
    """``cutlass_library``'s generator default for the family: its first (largest) tile (CUTLASS
    3.x: its first fp16 tile with the generator's cluster and schedules; GEMM: its first persistent
    cooperative kernel with the TMA epilogue)."""
    if family.spec.operation == "gemm":
        tb, cluster, ks, es, ts = next(c for c in generator_gemm_combos(family) if c[2:] == (
            KernelSchedule.TmaWarpSpecializedCooperative, EpilogueSchedule.TmaWarpSpecializedCooperative,
            TileScheduler.Default))
        return KernelConfig.sm90(family, tb, cluster, 0, ks, es, ts)
    if family.spec.cutlass_api == 3:
        tb, cluster = generator_tiles_3x(family)[0]
        return KernelConfig.sm90(family, tb, cluster)
    tb, st, wc = generator_tiles(family)[0]
    return _cfg(family, tb, wc, st)


def _sm80_grid(family: Family) -> Sm80Grid:
    knobs = grid_spec(family)
    if not isinstance(knobs, Sm80Grid):
        raise ValueError(f"family {family.value}: its GRIDS entry is not an Sm80Grid")
    return knobs


__all__ = ["GRIDS", "Sm80Grid", "Sm90Grid", "GemmGrid", "Tile", "family_grid", "generator_tiles", "generator_tiles_3x",
           "generator_gemm_combos", "gemm_grid", "gemm_tile_configs", "grid_spec", "sm90_grid", "default_config",
           "runs_on", "EpilogueFunctor"]

"""The kernel knobs of :class:`predictor.config.KernelConfig` as enums (re-exported by
:mod:`predictor.config`).

Every enum here but :class:`SplitKMode` mirrors a ``cutlass_library`` enum member of the same name
(``to_cutlass()`` returns it); ``cutlass_library`` is imported only when that is called, so the
run-time selector works without it.  A member's value is its part of a config name.
"""
from __future__ import annotations

import enum
from typing import Any


class _CutlassEnum(enum.Enum):
    """Enum whose member names equal those of a cutlass_library enum."""

    def to_cutlass(self) -> Any:
        import cutlass_library.library as lib  # lazy: only emission needs it

        return getattr(getattr(lib, _CUTLASS_ENUM_NAMES[type(self).__name__]), self.name)


_CUTLASS_ENUM_NAMES = {
    "Swizzle": "SwizzlingFunctor", "IteratorAlgorithm": "IteratorAlgorithm",
    "StrideSupport": "StrideSupport", "EpilogueFunctor": "EpilogueFunctor",
    "KernelSchedule": "KernelScheduleType", "EpilogueSchedule": "EpilogueScheduleType",
    "TileScheduler": "TileSchedulerType",
}


class Swizzle(_CutlassEnum):
    """Threadblock rasterisation (``cutlass_library.SwizzlingFunctor``)."""

    Identity1 = 1
    Identity2 = 2
    Identity4 = 4
    Identity8 = 8


class IteratorAlgorithm(_CutlassEnum):
    """Activation/filter tile iterator (``cutlass_library.IteratorAlgorithm``)."""

    Analytic = "analytic"
    Optimized = "optimized"
    FixedChannels = "fixed"
    FewChannels = "few"


class StrideSupport(_CutlassEnum):
    """Whether the kernel supports strides > 1 (``cutlass_library.StrideSupport``)."""

    Strided = "strided"
    Unity = "unity"


class EpilogueFunctor(_CutlassEnum):
    """Epilogue (``cutlass_library.EpilogueFunctor``)."""

    LinearCombination = "lincomb"
    LinearCombinationClamp = "clamp"


class KernelSchedule(_CutlassEnum):
    """Mainloop schedule of a CUTLASS 3.x kernel (``cutlass_library.KernelScheduleType``).

    ``NotApplicable``: a CUTLASS 2.x kernel (no such knob).  ``ScheduleAuto`` lets the collective
    builder choose; in CUTLASS 4.2 the SM90 conv builder resolves it to
    ``KernelImplicitTmaWarpSpecializedSm90`` (the same kernel), so the grid uses the explicit one
    (an explicit schedule keeps a name's meaning when a later CUTLASS changes what "auto" picks).
    The persistent cooperative / ping-pong conv schedules exist as C++ tags but CUTLASS 4.2 rejects
    them for conv (``MainloopSm90TmaGmmaWarpSpecializedImplicitGemm``: "Persistent schedules not
    support for conv yet") and ``cutlass_library`` has no member for them, so they are not listed.

    The GEMM family (``FamilySpec.operation == "gemm"``) has the SM90 GEMM schedules instead:
    ``TmaWarpSpecialized`` (one consumer warp group, one CTA per output tile), ``...Pingpong`` (two
    consumer warp groups alternating on two tiles, persistent) and ``...Cooperative`` (two consumer
    warp groups splitting one tile of M >= 128, persistent; the only one with stream-K)."""

    NotApplicable = "na"
    ScheduleAuto = "auto"
    ImplicitTmaWarpSpecializedSm90 = "ws"
    TmaWarpSpecialized = "tmaws"
    TmaWarpSpecializedPingpong = "pingpong"
    TmaWarpSpecializedCooperative = "coop"

    def to_cutlass(self) -> Any:
        if self is KernelSchedule.NotApplicable:
            raise ValueError("KernelSchedule.NotApplicable (a CUTLASS 2.x kernel) has no cutlass_library value")
        return super().to_cutlass()


class EpilogueSchedule(_CutlassEnum):
    """Epilogue schedule of a CUTLASS 3.x kernel (``cutlass_library.EpilogueScheduleType``).

    ``NotApplicable``: a CUTLASS 2.x kernel.  ``ScheduleAuto`` resolves to ``NoSmemWarpSpecialized``
    in the SM90 epilogue builder (registers straight to global memory); ``TmaWarpSpecialized``
    stages the output tile through shared memory and stores it with TMA (what
    ``GenerateSM90_Conv3x`` uses).  ``TmaWarpSpecializedCooperative`` is the TMA epilogue of the
    cooperative kernel schedule (GEMM family only: conv has no cooperative schedule, see
    :class:`KernelSchedule`); the SM90 epilogue builder gives it a 128-row epilogue tile."""

    NotApplicable = "na"
    ScheduleAuto = "auto"
    NoSmemWarpSpecialized = "nosmem"
    TmaWarpSpecialized = "tma"
    TmaWarpSpecializedCooperative = "tmacoop"

    def to_cutlass(self) -> Any:
        if self is EpilogueSchedule.NotApplicable:
            raise ValueError("EpilogueSchedule.NotApplicable (a CUTLASS 2.x kernel) has no cutlass_library value")
        return super().to_cutlass()


class TileScheduler(_CutlassEnum):
    """Tile scheduler of a CUTLASS 3.x GEMM kernel (``cutlass_library.TileSchedulerType``).

    ``NotApplicable``: every conv kernel (2.x, and 3.x whose scheduler is fixed: not part of its
    name).  ``Default`` (``void``): one CTA per tile for ``KernelTmaWarpSpecialized``, the persistent
    scheduler for ping-pong and cooperative; ``Persistent`` names that scheduler explicitly (the
    same kernel as ``Default``, so grids use ``Default``); ``StreamK`` splits the K loop of output
    tiles over persistent CTAs (cooperative only; needs a workspace)."""

    NotApplicable = "na"
    Default = "default"
    Persistent = "persistent"
    StreamK = "streamk"

    def to_cutlass(self) -> Any:
        if self is TileScheduler.NotApplicable:
            raise ValueError("TileScheduler.NotApplicable (a conv kernel) has no cutlass_library value")
        return super().to_cutlass()


#: Members only the GEMM family uses (``KernelConfig`` refuses them on a conv family; the C++
#: header writes every member).
GEMM_ONLY_MEMBERS: frozenset[enum.Enum] = frozenset({
    KernelSchedule.TmaWarpSpecialized, KernelSchedule.TmaWarpSpecializedPingpong,
    KernelSchedule.TmaWarpSpecializedCooperative, EpilogueSchedule.TmaWarpSpecializedCooperative})


def check_sm90_schedules(family: str, operation: str, tb: tuple[int, int, int], ks: KernelSchedule,
                         es: EpilogueSchedule, ts: TileScheduler, epi_tile: tuple[int, int] = (0, 0),
                         no_source: bool = False) -> None:
    """``ValueError`` unless CUTLASS 4.2's SM90 builders and kernels accept the kernel schedule, epilogue schedule,
    tile scheduler and epilogue subtile of a 3.x config of ``family`` (``operation`` "conv" or "gemm", tile ``tb``):
    the combinations ``cutlass_library``'s SM90 generators emit; a fixed subtile (``epi_tile``, (0, 0): automatic)
    as ``sm90_compute_tile_shape_or_override`` takes it -- M 128 for the cooperative TMA epilogue, 64 for the
    warp-specialized one, N a multiple of 16 -- dividing the tile; ``no_source`` (``ElementC = void``) with a TMA
    epilogue only."""
    coop = ks is KernelSchedule.TmaWarpSpecializedCooperative
    if no_source and es in (EpilogueSchedule.NoSmemWarpSpecialized, EpilogueSchedule.NotApplicable):
        raise ValueError(f"{family}: no_source needs a CUTLASS 3.x TMA epilogue, not {es.name}")
    if epi_tile != (0, 0):
        m_ok = 128 if es is EpilogueSchedule.TmaWarpSpecializedCooperative else 64
        if (len(epi_tile) != 2 or es in (EpilogueSchedule.NoSmemWarpSpecialized, EpilogueSchedule.NotApplicable)
                or epi_tile[0] != m_ok or epi_tile[1] <= 0 or epi_tile[1] % 16 or tb[0] % epi_tile[0]
                or tb[1] % epi_tile[1]):
            raise ValueError(f"{family}: epi_tile {epi_tile} needs a CUTLASS 3.x TMA epilogue, M {m_ok} for it, "
                             f"N a multiple of 16, both dividing the tile {tb[:2]}")
    if operation == "conv":
        if ks in GEMM_ONLY_MEMBERS or es in GEMM_ONLY_MEMBERS or ts is not TileScheduler.NotApplicable:
            raise ValueError(f"{family}: GEMM schedules and tile schedulers are not conv knobs")
        return
    if ks not in GEMM_ONLY_MEMBERS:
        raise ValueError(f"{family}: kernel schedule must be a GEMM one (TmaWarpSpecialized[Pingpong|Cooperative])")
    if coop and tb[0] < 128:
        raise ValueError(f"{family}: the cooperative schedule needs tile M >= 128, got {tb}")
    epi_ok = {EpilogueSchedule.NoSmemWarpSpecialized,
              EpilogueSchedule.TmaWarpSpecializedCooperative if coop else EpilogueSchedule.TmaWarpSpecialized}
    if es not in epi_ok:
        raise ValueError(f"{family}: epilogue schedule {es.name} does not go with {ks.name}")
    if ts is TileScheduler.NotApplicable or (ts is TileScheduler.StreamK and not coop):
        raise ValueError(f"{family}: tile scheduler {ts.name} does not go with {ks.name} (stream-K: cooperative only)")


class SplitKMode(enum.Enum):
    """Split-k mode (``cutlass::conv::SplitKMode``).  Serial split-k only: parallel split-k needs a
    separate reduction kernel and is not part of the grid."""

    NoSplit = "none"
    Serial = "serial"


__all__ = ["Swizzle", "IteratorAlgorithm", "StrideSupport", "EpilogueFunctor", "KernelSchedule",
           "EpilogueSchedule", "TileScheduler", "SplitKMode", "GEMM_ONLY_MEMBERS", "check_sm90_schedules"]

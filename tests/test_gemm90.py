"""The CUTLASS 3.x SM90 GEMM families ``f16gemm90`` and ``i8gemm90`` (1x1, stride-1, pad-0,
dilation-1 fp16 / int8 NHWC convs run as "TN" GEMMs; every test runs for both): names round-trip and
say every knob, the grid holds the schedule combinations ``cutlass_library``'s SM90 GEMM generator
emits for the family's types, the emitted source is the GEMM CollectiveBuilder instance of the
config, the default problem set holds only what the family implements, one kernel compiles for
sm_90a and answers the C ABI on the host (1x1 only); on an H200 (skipped elsewhere) every schedule
and the stream-K scheduler compute correct results through ``CudaBackend.measure``."""
from __future__ import annotations

import ctypes
import dataclasses
import math
import shutil
from pathlib import Path

import pytest

from predictor.config import (
    FAMILY_SPECS, EpilogueSchedule, Family, KernelConfig, KernelSchedule, TileScheduler,
)

GEMM, I8GEMM = Family.F16_GEMM_SM90, Family.I8_GEMM_SM90
#: Every GEMM family, its conv twin (same tensors and epilogue) and its grid's tile K (4 wgmma K steps).
GEMMS = (GEMM, I8GEMM)
TWIN = {GEMM: Family.F16_NHWC_SM90, I8GEMM: Family.I8_NHWC_SM90}
TILE_K = {GEMM: 64, I8GEMM: 128}
per_family = pytest.mark.parametrize("fam", GEMMS, ids=lambda f: f.value)
COOP, PP, WS = (KernelSchedule.TmaWarpSpecializedCooperative, KernelSchedule.TmaWarpSpecializedPingpong,
                KernelSchedule.TmaWarpSpecialized)
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
needs_cutlass = pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("cutlass_library") is None, reason="needs nvidia-cutlass")



def streamk(fam: Family) -> KernelConfig:
    """Persistent cooperative, stream-K, TMA epilogue: the kernel the nvcc test compiles."""
    return KernelConfig.sm90(fam, (128, 128, TILE_K[fam]), (1, 1, 1), 0, COOP,
                             EpilogueSchedule.TmaWarpSpecializedCooperative, TileScheduler.StreamK)


def pingpong(fam: Family) -> KernelConfig:
    return KernelConfig.sm90(fam, (64, 128, TILE_K[fam]), (1, 1, 1), 4, PP, EpilogueSchedule.TmaWarpSpecialized)



# --------------------------------------------------------------------------- spec and names
@pytest.mark.parametrize("fam,value,multiple,kind", [(GEMM, "f16gemm90", 8, "fp16_nhwc"),
                                                     (I8GEMM, "i8gemm90", 16, "int8_nhwc")], ids=["f16", "i8"])
def test_family_spec_is_a_gemm_family(fam: Family, value: str, multiple: int, kind: str) -> None:
    spec, twin = FAMILY_SPECS[fam], FAMILY_SPECS[TWIN[fam]]
    assert fam.value == value and spec.operation == "gemm"
    assert spec.cutlass_api == 3 and spec.arch_min == "sm_90a" and spec.channel_multiple == multiple
    assert spec.tensor_kind == twin.tensor_kind == kind
    # the conv twin's tensors, accumulator, epilogue and alignment: a choice of the two is allowed
    assert spec.tensors == twin.tensors and spec.channel_multiple == twin.channel_multiple
    assert (spec.element_accumulator, spec.element_epilogue, spec.epilogue, spec.instruction_shape) == (
        twin.element_accumulator, twin.element_epilogue, twin.epilogue, twin.instruction_shape)
    assert spec.implements(1, 1, 1, 0, 1)
    for args in ((3, 3, 1, 1, 1), (1, 1, 2, 0, 1), (1, 1, 1, 1, 1), (1, 1, 1, 0, 2), (1, 3, 1, 0, 1)):
        assert not spec.implements(*args), args
    assert twin.implements(3, 3, 2, 1, 2)  # conv families: anything
    assert [f for f in Family if FAMILY_SPECS[f].operation == "gemm"] == list(GEMMS)


@pytest.mark.parametrize("fam,k,align,inst_k", [(GEMM, 64, "8x8x8", 16), (I8GEMM, 128, "16x16x16", 32)],
                         ids=["f16", "i8"])
def test_names_say_every_knob_and_round_trip(fam: Family, k: int, align: str, inst_k: int) -> None:
    sk, pp = streamk(fam), pingpong(fam)
    assert sk.name == f"{fam.value}_t128x128x{k}_c1x1x1_sauto_kcoop_etmacoop_tsstreamk_a{align}_lincomb"
    assert pp.name == f"{fam.value}_t64x128x{k}_c1x1x1_s4_kpingpong_etma_tsdefault_a{align}_lincomb"
    for c in (sk, pp):
        assert KernelConfig.from_name(c.name) == c and c.kernel_name == c.name
    # cooperative: two consumer warp groups split M; ping-pong: two, a whole tile each
    assert sk.warp == (64, 128, k) and sk.inst == (64, 128, inst_k) and sk.threads == 384
    assert pp.warp == (64, 128, k) and pp.threads == 384
    assert KernelConfig.sm90(fam, (128, 64, k), kernel_schedule=WS,
                             epilogue_schedule=EpilogueSchedule.NoSmemWarpSpecialized).threads == 256
    d = sk.to_dict()
    assert d["tile_scheduler"] == "StreamK" and d["kernel_schedule"] == "TmaWarpSpecializedCooperative"
    assert sk.tile_scheduler.to_cutlass().name == "StreamK"
    assert pp.kernel_schedule.to_cutlass().name == "TmaWarpSpecializedPingpong"
    # defaults: the persistent cooperative kernel with its TMA epilogue
    assert KernelConfig.sm90(fam, (128, 128, k)).name == \
        f"{fam.value}_t128x128x{k}_c1x1x1_sauto_kcoop_etmacoop_tsdefault_a{align}_lincomb"


@pytest.mark.parametrize("name", [
    "f16gemm90_t128x128x64_c1x1x1_sauto_kcoop_etmacoop_a8x8x8_lincomb",  # no tile scheduler
    "f16gemm90_t64x128x64_c1x1x1_sauto_kcoop_etmacoop_tsdefault_a8x8x8_lincomb",  # cooperative, M < 128
    "f16gemm90_t128x128x64_c1x1x1_sauto_kpingpong_etma_tsstreamk_a8x8x8_lincomb",  # stream-K, not cooperative
    "f16gemm90_t128x128x64_c1x1x1_sauto_kcoop_etma_tsdefault_a8x8x8_lincomb",  # ws TMA epilogue on cooperative
    "f16gemm90_t128x128x64_c1x1x1_sauto_kpingpong_etmacoop_tsdefault_a8x8x8_lincomb",  # and vice versa
    "f16gemm90_t128x128x64_c1x1x1_sauto_kws_etma_tsdefault_a8x8x8_lincomb",  # the conv schedule
    "f16gemm90_t128x128x64_c1x1x1_sauto_kcoop_etmacoop_tsna_a8x8x8_lincomb",  # scheduler n/a
    "f16nhwc90_t128x128x64_c1x1x1_sauto_kws_etma_tsdefault_a8x8x8_lincomb",  # a conv family with a scheduler
    "f16nhwc90_t128x128x64_c1x1x1_sauto_kcoop_etmacoop_a8x8x8_lincomb",  # a conv family, GEMM schedule
    "i8gemm90_t128x128x128_c1x1x1_sauto_kcoop_etmacoop_tsdefault_a8x8x8_lincomb",  # int8: 16-element alignment
    "i8gemm90_t128x128x48_c1x1x1_sauto_kcoop_etmacoop_tsdefault_a16x16x16_lincomb",  # K not a multiple of 32
    "i8gemm90_t64x128x128_c1x1x1_sauto_kcoop_etmacoop_tsdefault_a16x16x16_lincomb",  # cooperative, M < 128
    "i8gemm90_t128x128x128_c1x1x1_sauto_kpingpong_etma_tsstreamk_a16x16x16_lincomb",  # stream-K, not cooperative
    "i8gemm90_t128x128x128_c1x1x1_sauto_kws_etma_tsdefault_a16x16x16_lincomb",  # the conv schedule
    "i8nhwc90_t128x128x128_c1x1x1_sauto_kws_etma_tsdefault_a16x16x16_lincomb",  # a conv family with a scheduler
])
def test_bad_gemm_names_are_rejected(name: str) -> None:
    with pytest.raises(ValueError):
        KernelConfig.from_name(name)


@per_family
def test_transposed_kernels_say_so_and_only_gemm_families_have_them(fam: Family) -> None:
    k = TILE_K[fam]
    t = KernelConfig.sm90(fam, (64, 8, k), kernel_schedule=PP, epilogue_schedule=EpilogueSchedule.TmaWarpSpecialized,
                          swap_ab=True)
    assert t.name == pingpong(fam).name.replace("t64x128", "t64x8").replace("_s4_", "_sauto_").replace(
        "_tsdefault_", "_tsdefault_swapab_")
    assert KernelConfig.from_name(t.name) == t and t.kernel_name == t.name and t != dataclasses.replace(t, swap_ab=False)
    with pytest.raises(ValueError, match="GEMM family knob"):
        dataclasses.replace(KernelConfig.from_name(
            "f16nhwc90_t128x128x64_c1x1x1_sauto_kws_etma_a8x8x8_lincomb"), swap_ab=True)


@needs_cutlass
def test_transposed_kernel_writes_a_column_major_output() -> None:
    from predictor.emit import kernel_source

    t = KernelConfig.sm90(GEMM, (64, 8, 64), kernel_schedule=PP, epilogue_schedule=EpilogueSchedule.TmaWarpSpecialized,
                          swap_ab=True)
    src = kernel_source(t)
    # A = the filter (K x C, K-major), B = the activations (K-major), C/D column-major: D^T = the NPQK output
    assert "cutlass::half_t, cutlass::layout::RowMajor, 8,\n    cutlass::half_t, cutlass::layout::ColumnMajor, 8" in src
    assert "cutlass::half_t, cutlass::layout::ColumnMajor, 8,\n    cutlass::half_t, cutlass::layout::ColumnMajor, 8," in src
    assert "cute::Shape<cute::_64, cute::_8, cute::_64>" in src


@per_family
def test_a_fixed_epilogue_tile_is_in_the_name_and_the_kernel(fam: Family) -> None:
    auto = streamk(fam)
    e = dataclasses.replace(auto, epi_tile=(128, 64))
    assert e.name == auto.name.replace("_etmacoop_", "_etmacoop_ep128x64_") and e.kernel_name == e.name
    assert KernelConfig.from_name(e.name) == e and e != auto
    # the tables of every config without one are as before; a fixed one is a column of them
    assert "epi_tile_m" not in auto.to_dict() and e.to_dict()["epi_tile_n"] == 64
    # CUTLASS's rule: M 128 (cooperative) or 64 (one warp group), N a multiple of 16, both dividing the tile
    for bad in ((64, 64), (128, 48), (128, 24), (0, 64)):
        with pytest.raises(ValueError, match="epi_tile"):
            dataclasses.replace(auto, epi_tile=bad)
    with pytest.raises(ValueError, match="M 64"):  # did not compile on the H200 (sweeps/runs/s14/epi.parquet)
        dataclasses.replace(pingpong(fam), epi_tile=(128, 64))
    assert dataclasses.replace(pingpong(fam), epi_tile=(64, 64)).epi_tile == (64, 64)
    with pytest.raises(ValueError, match="TMA epilogue"):
        KernelConfig.sm90(fam, (128, 128, TILE_K[fam]), kernel_schedule=PP,
                          epilogue_schedule=EpilogueSchedule.NoSmemWarpSpecialized, epi_tile=(64, 64))
    with pytest.raises(ValueError, match="epi_tile"):
        dataclasses.replace(KernelConfig.from_name(
            "f16nhwc_t128x128x32_w64x64x32_i16x8x16_s3_sw1_optimized_strided_sk1_a8x8x8_lincomb"), epi_tile=(64, 64))
    from predictor.export_cpp import _config_row

    assert "true, 128, 64, false, INT64_C(0)" not in _config_row(auto, 0, False)
    assert "false, 128, 64, false, INT64_C(0), false" in _config_row(e, 0, False)
    assert "false, 0, 0, false, INT64_C(0), false" in _config_row(auto, 0, False)


@per_family
def test_no_source_is_in_the_name_the_table_and_the_kernel(fam: Family) -> None:
    auto = streamk(fam)
    ns = dataclasses.replace(auto, no_source=True)
    assert ns.name == auto.name.replace("_etmacoop_", "_etmacoop_nosrc_") and ns.kernel_name == ns.name
    assert KernelConfig.from_name(ns.name) == ns and ns != auto
    assert "no_source" not in auto.to_dict() and ns.to_dict()["no_source"] is True
    e = dataclasses.replace(ns, epi_tile=(128, 64))  # after the subtile, before the tile scheduler
    assert "_etmacoop_ep128x64_nosrc_tsstreamk_" in e.name and KernelConfig.from_name(e.name) == e
    with pytest.raises(ValueError, match="TMA epilogue"):  # the register epilogue keeps its source
        KernelConfig.sm90(fam, (128, 128, TILE_K[fam]), kernel_schedule=PP,
                          epilogue_schedule=EpilogueSchedule.NoSmemWarpSpecialized, no_source=True)
    with pytest.raises(ValueError, match="3.x knobs"):
        dataclasses.replace(KernelConfig.from_name(
            "f16nhwc_t128x128x32_w64x64x32_i16x8x16_s3_sw1_optimized_strided_sk1_a8x8x8_lincomb"), no_source=True)
    from predictor.export_cpp import _config_row

    assert "0, 0, true, INT64_C(0)" in _config_row(ns, 0, False)


@needs_cutlass
def test_no_source_kernels_have_a_void_source_tensor() -> None:
    from predictor.emit import kernel_source

    auto = pingpong(GEMM)
    src = kernel_source(dataclasses.replace(auto, no_source=True))
    assert "void, cutlass::layout::RowMajor, 0," in src and "void, cutlass::layout::RowMajor" not in kernel_source(auto)
    assert "LinearCombination<\n      cutlass::half_t,\n      float,\n      void," in src
    conv = KernelConfig.sm90(Family.F16_NHWC_SM90, (128, 128, 64), no_source=True)
    csrc = kernel_source(conv)  # the conv emitter's alignment of a void C (128 / sizeof_bits) is replaced by 0
    assert "void, cutlass::layout::TensorNHWC, 0," in csrc and "sizeof_bits_v<void>" not in csrc


def test_the_grid_holds_the_source_less_twins_of_the_best_1x1_configs() -> None:
    from predictor.space import F16_GEMM90_1X1_BEST, family_grid

    names = {c.name for c in family_grid(GEMM)}
    twins = {c.name for c in family_grid(GEMM) if c.no_source}
    assert set(F16_GEMM90_1X1_BEST) <= names and len(twins) == len(F16_GEMM90_1X1_BEST) == 11
    assert twins == {dataclasses.replace(KernelConfig.from_name(n), no_source=True).name for n in F16_GEMM90_1X1_BEST}
    assert not any(c.no_source for c in family_grid(I8GEMM))


@needs_cutlass
def test_a_fixed_epilogue_tile_replaces_the_automatic_one() -> None:
    from predictor.emit import kernel_source

    auto = pingpong(GEMM)
    src = kernel_source(dataclasses.replace(auto, epi_tile=(64, 64)))
    assert "EpilogueTileAuto" in kernel_source(auto) and "EpilogueTileAuto" not in src
    assert "cute::Shape<cute::_64, cute::_64>," in src
    conv = KernelConfig.sm90(Family.F16_NHWC_SM90, (128, 128, 64), epi_tile=(64, 128))
    assert "cute::Shape<cute::_64, cute::_128>," in kernel_source(conv)


@per_family
def test_gemm_fields_are_checked(fam: Family) -> None:
    with pytest.raises(ValueError, match="2.x family"):
        dataclasses.replace(KernelConfig.from_name(
            "f16nhwc_t128x128x32_w64x64x32_i16x8x16_s3_sw1_optimized_strided_sk1_a8x8x8_lincomb"),
            tile_scheduler=TileScheduler.Default)
    with pytest.raises(ValueError, match="stream-K"):
        dataclasses.replace(pingpong(fam), tile_scheduler=TileScheduler.StreamK)
    with pytest.raises(ValueError, match="derived"):
        dataclasses.replace(streamk(fam), warp=(128, 128, TILE_K[fam]))


# --------------------------------------------------------------------------- grid
@needs_cutlass
@per_family
def test_grid_is_the_generators_combinations(fam: Family) -> None:
    from predictor.space import default_config, family_grid, generator_gemm_combos, generator_tiles, runs_on

    from predictor.space import grid_spec

    full = family_grid(fam)
    k = TILE_K[fam]
    # f16gemm90's source-less twins (session 23 on): each the twin of a grid config (test above)
    full = [c for c in full if not c.no_source]
    # f16gemm90's fixed epilogue subtiles (session 14 on): one config per GemmGrid.epi_tiles entry, cluster 1x1,
    # automatic stages, persistent scheduler, each the twin of a grid config with the automatic subtile
    epi = [c for c in full if c.epi_tile != (0, 0)]
    assert {(c.kernel_schedule, c.tb[:2], c.epi_tile) for c in epi} == set(grid_spec(fam).epi_tiles)
    assert len(epi) == (8 if fam is GEMM else 0)
    assert all(c.cluster == (1, 1, 1) and c.stages == 0 and c.tile_scheduler is TileScheduler.Default
               and dataclasses.replace(c, epi_tile=(0, 0)) in full for c in epi)
    full = [c for c in full if c not in epi]
    small = set(grid_spec(fam).small_tiles)
    # f16gemm90's small tiles (sessions 9 on): cluster 1x1, automatic stages, the schedules of their size
    extra = [c for c in full if c.tb[:2] in small and not c.swap_ab]
    assert small == ({(64, 16), (64, 32), (64, 64), (128, 16), (128, 32), (256, 64), (128, 192), (64, 96), (128, 96),
                      (256, 96)} if fam is GEMM else set())
    assert len(extra) == (28 if fam is GEMM else 0)
    assert all(c.cluster == (1, 1, 1) and c.stages == 0 for c in extra)
    schedules = {mn: {(c.kernel_schedule, c.tile_scheduler) for c in extra if c.tb[:2] == mn} for mn in small}
    one_group = {(PP, TileScheduler.Default), (WS, TileScheduler.Default)}
    coop = {(COOP, TileScheduler.Default), (COOP, TileScheduler.StreamK)}
    # 128x192: 192 accumulators a thread in one warp group, so cooperative only
    assert schedules == ({(64, 16): one_group, (64, 32): one_group, (64, 64): one_group, (128, 16): one_group | coop,
                          (128, 32): one_group | coop, (256, 64): one_group | coop, (128, 192): coop,
                          (64, 96): one_group, (128, 96): one_group | coop, (256, 96): coop}
                         if fam is GEMM else {})
    # f16gemm90's larger clusters (session 13 on): cooperative, default scheduler, automatic stages
    big = [c for c in full if c.cluster in {(2, 2, 1), (4, 1, 1)}]
    assert {(c.tb[:2], c.cluster) for c in big} == (set(grid_spec(fam).big_clusters) if fam is GEMM else set())
    assert len(big) == (4 if fam is GEMM else 0)
    assert all(c.kernel_schedule is COOP and c.tile_scheduler is TileScheduler.Default and c.stages == 0 for c in big)
    # f16gemm90's transposed kernels (session 10 on): cluster 1x1, automatic stages, the schedules of their size
    swapped = [c for c in full if c.swap_ab]
    assert {c.tb[:2] for c in swapped} == ({(64, 8), (64, 16), (64, 32), (128, 8), (128, 16), (128, 32)} if fam is GEMM
                                           else set())
    assert len(swapped) == (18 if fam is GEMM else 0)
    assert all(c.cluster == (1, 1, 1) and c.stages == grid_spec(fam).swap_stages == 8 and "_swapab_" in c.name
               for c in swapped)
    assert {(c.tb[:2], c.kernel_schedule, c.tile_scheduler) for c in swapped if c.tb[0] == 64} == {
        (c.tb[:2], k, t) for c in swapped if c.tb[0] == 64 for k, t in one_group}
    grid = [c for c in full if c.tb[:2] not in small and not c.swap_ab and c not in big]
    assert len(grid) == 50
    assert len({c.name for c in full}) == len(full)
    assert {c.tb[:2] for c in grid} == {(64, 128), (128, 128), (128, 256), (256, 128), (128, 64), (64, 256)}
    assert {c.tb[2] for c in grid} == {k} and {c.stages for c in grid} == {0, 4}
    assert {c.cluster for c in grid} == {(1, 1, 1), (2, 1, 1), (1, 2, 1)}
    assert {c.kernel_schedule for c in grid} == {WS, PP, COOP}
    assert {c.tile_scheduler for c in grid} == {TileScheduler.Default, TileScheduler.StreamK}
    assert all(c.tb[0] >= 128 for c in grid if c.kernel_schedule is COOP)
    assert all(c.kernel_schedule is COOP for c in grid if c.tile_scheduler is TileScheduler.StreamK)
    assert sum(c.tile_scheduler is TileScheduler.StreamK for c in grid) >= 8
    # TMA epilogues: the cooperative one for cooperative kernels, the plain one for ping-pong
    assert {(c.kernel_schedule, c.epilogue_schedule) for c in grid} == {
        (WS, EpilogueSchedule.NoSmemWarpSpecialized), (PP, EpilogueSchedule.TmaWarpSpecialized),
        (PP, EpilogueSchedule.NoSmemWarpSpecialized), (COOP, EpilogueSchedule.TmaWarpSpecializedCooperative),
        (COOP, EpilogueSchedule.NoSmemWarpSpecialized)}
    # every (schedules, scheduler) combination is one cutlass_library's SM90 GEMM generator (16-bit or
    # int8) emits for the family's types
    combos = generator_gemm_combos(fam)
    assert len(combos) > 30
    assert {(c.kernel_schedule, c.epilogue_schedule, c.tile_scheduler) for c in grid} <= {c[2:] for c in combos}
    assert {c[0][2] for c in combos} == {k}
    gen = {t[0] for t in generator_tiles(fam)}
    if fam is GEMM:
        assert gen >= {(128, 256, k), (256, 128, k), (64, 256, k)}
    else:  # the int8 generator's tiles (default level); 128x64 and 256x128 come from the fp16 grid
        assert gen == {(64, 128, k), (64, 256, k), (128, 128, k), (128, 256, k)}
    assert default_config(fam) in grid
    assert all(runs_on(c, "sm_90") and not runs_on(c, "sm_87") for c in grid)
    assert family_grid(fam, "sm_87") == []
    assert streamk(fam) in grid and pingpong(fam) in grid
    # f16gemm90's grid with the family's tile K
    twin = {(c.tb[:2], c.cluster, c.stages, c.kernel_schedule, c.epilogue_schedule, c.tile_scheduler)
            for c in family_grid(GEMM) if c.tb[:2] not in set(grid_spec(GEMM).small_tiles) and not c.swap_ab
            and (c.tb[:2], c.cluster) not in set(grid_spec(GEMM).big_clusters)}
    assert {(c.tb[:2], c.cluster, c.stages, c.kernel_schedule, c.epilogue_schedule, c.tile_scheduler)
            for c in grid} == twin


@per_family
def test_default_problems_are_the_1x1_layers(fam: Family) -> None:
    from predictor.shapes import default_shapes, network_layers

    m = fam.spec.channel_multiple
    full = default_shapes(fam, 1500)
    assert all((s.problem.R, s.problem.S, s.problem.stride, s.problem.pad, s.problem.dilation) == (1, 1, 1, 0, 1)
               for s in full)
    net = [s for s in full if s.source.startswith("net:")]
    assert len(net) > 900 and full[:len(net)] == net, "network layers come first"  # fp16 1206, int8 996
    ones = [s for s in network_layers() if (s.problem.R, s.problem.S, s.problem.stride) == (1, 1, 1)
            and s.problem.C % m == 0 and s.problem.K % m == 0]
    assert [s.problem for s in net] == [s.problem for s in ones][:len(net)]
    assert all(s.problem.C % m == 0 and s.problem.K % m == 0 for s in full)
    rest = [s for s in default_shapes(fam, 3000) if not s.source.startswith("net:")]
    assert {s.source for s in rest} == {"grid", "random"} and len(rest) > 1000


# --------------------------------------------------------------------------- emission and export
#: (element, alignment, accumulator, epilogue fusion) of each family's emitted source.
EMITTED = {GEMM: ("cutlass::half_t", 8, "float, float", "LinearCombination<\n      cutlass::half_t,\n      float,"),
           I8GEMM: ("int8_t", 16, "int32_t, float",
                    # alpha * float(acc) + beta * C rounded to nearest, saturated to int8 (i8nhwc90's epilogue)
                    "LinearCombination<\n      int8_t,\n      float,\n      int8_t,\n      float\n    >")}


@needs_cutlass
@per_family
def test_emitted_source_is_the_gemm_collective_builder_instance(fam: Family) -> None:
    from predictor.emit import kernel_source, runtime_headers

    el, al, acc, fusion = EMITTED[fam]
    k = TILE_K[fam]
    sk = streamk(fam)
    src = kernel_source(sk)
    for text in ('#include "pk_runtime_gemm90.h"', "cutlass::gemm::collective::CollectiveBuilder<",
                 "cutlass::epilogue::collective::CollectiveBuilder<", "cutlass::arch::Sm90",
                 "cutlass::gemm::kernel::GemmUniversal<", "cute::Shape<int,int,int,int>",
                 f"cute::Shape<cute::_128, cute::_128, cute::_{k}>", "cute::Shape<cute::_1, cute::_1, cute::_1>",
                 # "TN": both operands K-major (the only kind int8 wgmma has)
                 f"{el}, cutlass::layout::RowMajor, {al},\n    {el}, cutlass::layout::ColumnMajor, {al}",
                 f"EpilogueTileAuto,\n    {acc},",
                 "cutlass::gemm::KernelTmaWarpSpecializedCooperative", "cutlass::epilogue::TmaWarpSpecializedCooperative",
                 "cutlass::gemm::StreamKScheduler>", "StageCountAutoCarveout", f"cutlass::epilogue::fusion::{fusion}",
                 f"namespace pk_{sk.kernel_name} {{", f"PK_EXPORT_KERNEL_GEMM3X({sk.kernel_name}, "):
        assert text in src, text
    # the output is written row-major (NPQK), through the TMA epilogue
    assert f"{el}, cutlass::layout::RowMajor, {al},\n    {el}, cutlass::layout::RowMajor, {al}," in src
    pp = kernel_source(pingpong(fam))
    for text in ("cutlass::gemm::KernelTmaWarpSpecializedPingpong", "cutlass::epilogue::TmaWarpSpecialized,",
                 "cutlass::gemm::collective::StageCount<4>", "cute::Shape<cute::_1, cute::_1, cute::_1>",
                 "    void>;"):  # the default tile scheduler (persistent for ping-pong)
        assert text in pp, text
    ws = kernel_source(KernelConfig.sm90(fam, (128, 64, k), kernel_schedule=WS,
                                         epilogue_schedule=EpilogueSchedule.NoSmemWarpSpecialized))
    assert "cutlass::gemm::KernelTmaWarpSpecialized\n" in ws and "cutlass::epilogue::NoSmemWarpSpecialized" in ws
    assert runtime_headers([sk]) == ["pk_runtime.h", "pk_runtime_gemm90.h"]
    conv90 = KernelConfig.sm90(TWIN[fam], (128, 128, k))
    assert runtime_headers([sk, conv90]) == ["pk_runtime.h", "pk_runtime_sm90.h", "pk_runtime_gemm90.h"]


@per_family
def test_cpp_header_refuses_the_gemm_family_alone_and_writes_its_enums(fam: Family) -> None:
    from predictor.export_cpp import _ENUMS, family_code
    from predictor.features import FEATURE_NAMES
    from predictor.tree_ir import Leaf, TreeIR

    assert ("enum class KernelSchedule : int { kNotApplicable, kScheduleAuto, kImplicitTmaWarpSpecializedSm90, "
            "kTmaWarpSpecialized, kTmaWarpSpecializedPingpong, kTmaWarpSpecializedCooperative };") in _ENUMS
    assert "enum class TileScheduler : int { kNotApplicable, kDefault, kPersistent, kStreamK };" in _ENUMS
    sk = streamk(fam)
    ir = TreeIR(tuple(FEATURE_NAMES), (sk.name,), (Leaf(sk.name),),
                {"family": fam.value, "gpu_slug": "t", "gpu": "hand-made", "sms": 132,
                 "smem_bytes": {sk.name: 1}, "sm87_ok": {sk.name: False}}).validate()
    with pytest.raises(ValueError, match="only inside a choice with a conv family") as exc:
        family_code(ir)
    assert "\n" not in str(exc.value)


# --------------------------------------------------------------------------- one nvcc compile
class _Problem(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int64) for n in
                ("n", "h", "w", "c", "k", "r", "s", "p", "q", "pad_h", "pad_w", "stride_h",
                 "stride_w", "dil_h", "dil_w", "split_k_slices")]


@pytest.mark.nvcc
@needs_nvcc
@needs_cutlass
@per_family
def test_one_gemm_kernel_compiles_and_answers_the_abi(fam: Family, tmp_path: Path) -> None:
    """The stream-K cooperative kernel, compiled for sm_90a by build_library (target sm_90); the C
    ABI's host side (info, mode-0 can_implement query) needs no GPU: 1x1 problems only."""
    from predictor.emit import build_library

    sk = streamk(fam)
    ns = dataclasses.replace(sk, no_source=True)  # ElementC void: refuses beta != 0, the dispatcher's cue to go on
    m = fam.spec.channel_multiple
    res = build_library([sk, ns], "sm_90", tmp_path, jobs=2, name="t")
    assert res.errors == {}, res.errors
    assert sorted(res.compiled) == sorted([sk.kernel_name, ns.kernel_name]) and res.library is not None
    lib = ctypes.CDLL(str(res.library.resolve()))
    info = getattr(lib, f"pk_info_{sk.kernel_name}")
    info.restype, info.argtypes = ctypes.c_int64, [ctypes.c_int]
    smem, threads, stages, cluster = (info(i) for i in range(4))
    assert 0 < smem <= 227 * 1024 and threads == 384 and stages >= 2 and cluster == 1
    run = getattr(lib, f"pk_run_{sk.kernel_name}")
    run.restype = ctypes.c_int
    run.argtypes = [ctypes.POINTER(_Problem)] + [ctypes.c_void_p] * 4 + [ctypes.c_float] * 2 + [
        ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
        ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_size_t)]

    def query(*vals: int, fn=run, beta: float = 0.0) -> int:  # type: ignore[no-untyped-def]
        need = ctypes.c_size_t(99)
        return int(fn(ctypes.byref(_Problem(*vals)), None, None, None, None, 1.0, beta, None, 0, None, 0, 0, 0,
                      None, ctypes.byref(need)))

    run_ns = getattr(lib, f"pk_run_{ns.kernel_name}")
    run_ns.restype, run_ns.argtypes = run.restype, run.argtypes
    assert query(8, 56, 56, 256, 64, 1, 1, 56, 56, 0, 0, 1, 1, 1, 1, 1, fn=run_ns) == 0
    assert query(8, 56, 56, 256, 64, 1, 1, 56, 56, 0, 0, 1, 1, 1, 1, 1, fn=run_ns, beta=1.0) == 1  # no source
    assert query(8, 56, 56, 256, 64, 1, 1, 56, 56, 0, 0, 1, 1, 1, 1, 1, beta=1.0) == 0

    assert query(8, 56, 56, 256, 64, 1, 1, 56, 56, 0, 0, 1, 1, 1, 1, 1) == 0
    assert query(1, 7, 9, 2048, 512 + m, 1, 1, 7, 9, 0, 0, 1, 1, 1, 1, 1) == 0  # N: no whole tiles
    assert query(8, 56, 56, 256, 64, 3, 3, 56, 56, 1, 1, 1, 1, 1, 1, 1) == 1  # 3x3
    assert query(8, 56, 56, 256, 64, 1, 1, 28, 28, 0, 0, 2, 2, 1, 1, 1) == 1  # stride 2
    assert query(8, 56, 56, 256, 64, 1, 1, 58, 58, 1, 1, 1, 1, 1, 1, 1) == 1  # padded
    assert query(8, 56, 56, 256 - m // 2, 64, 1, 1, 56, 56, 0, 0, 1, 1, 1, 1, 1) == 1  # C not 16-byte aligned
    assert query(8, 56, 56, 256, 64 + m // 2, 1, 1, 56, 56, 0, 0, 1, 1, 1, 1, 1) == 1  # K (output rows) neither
    assert query(8, 56, 56, 256, 64, 1, 1, 56, 56, 0, 0, 1, 1, 1, 1, 2) == 1  # split-k


# --------------------------------------------------------------------------- GPU (H200)
def _hopper() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available()) and torch.cuda.get_device_capability() == (9, 0)


needs_hopper = pytest.mark.skipif(not _hopper(), reason="needs an sm_90 GPU (H100/H200)")
#: 1x1 problems (N, H, W, C, K): tiles that do not divide M = N*H*W, N = K or K = C, one big enough for
#: stream-K to split K; the last K is 512 + the family's channel multiple (520 fp16, 528 int8).
GPU_PROBLEMS = [(8, 56, 56, 256, 64), (1, 7, 7, 2048, 512), (2, 17, 23, 96, 160), (32, 14, 14, 1024, 256),
                (1, 7, 9, 4096, 512)]


@pytest.fixture(scope="module", params=GEMMS, ids=lambda f: f.value)
def gemm_backend(request):  # type: ignore[no-untyped-def]
    """(family, its CudaBackend with the family's whole grid loaded), one family at a time."""
    from predictor.cuda_backend import CudaBackend
    from predictor.space import family_grid

    if not _hopper():
        pytest.skip("needs an sm_90 GPU (H100/H200)")
    b = CudaBackend(build_dir="build", reps=3, retime_top=2, target_ms=2.0)
    b.prepare(family_grid(request.param))  # the sweep's grid: the objects come from the build cache
    yield request.param, b
    b.close()


@pytest.mark.gpu
@needs_hopper
@pytest.mark.parametrize("prob", GPU_PROBLEMS, ids=lambda p: "x".join(map(str, p)))
def test_every_gemm_config_is_correct(gemm_backend, prob: tuple[int, ...]) -> None:  # type: ignore[no-untyped-def]
    """Every config of the grid (all schedules, clusters, stream-K) against the float64 conv reference
    (int8: the reference rounded and saturated, within one step; fp16: relative error)."""
    from predictor.features import ConvProblem
    from predictor.space import family_grid

    fam, backend = gemm_backend
    n, h, w, c, k = prob
    if prob == GPU_PROBLEMS[-1]:
        k += fam.spec.channel_multiple
    rows = backend.measure(ConvProblem(n, c, h, w, k, 1, 1, 1, 0, 1), family_grid(fam))
    bad = [r for r in rows if r.status != "ok" or not r.verified]
    assert not bad, bad[:3]
    assert all(r.time_us > 0 and math.isfinite(r.time_us) for r in rows)


@pytest.mark.gpu
@needs_hopper
def test_gemm_family_cannot_implement_other_convs(gemm_backend) -> None:  # type: ignore[no-untyped-def]
    from predictor.features import ConvProblem

    fam, backend = gemm_backend
    for prob in (ConvProblem(1, 64, 56, 56, 64, 3, 3, 1, 1, 1), ConvProblem(8, 256, 14, 14, 512, 1, 1, 2, 0, 1)):
        rows = backend.measure(prob, [streamk(fam), pingpong(fam)])
        assert [r.status for r in rows] == ["cannot_implement"] * 2


@needs_nvcc
@needs_cutlass
@per_family
def test_gemm_kernels_compile_one_to_a_unit(fam: Family, tmp_path: Path) -> None:
    """GEMM kernels are heavy: one per translation unit (all in parallel); conv kernels keep ``group``."""
    from predictor.emit import _plan
    from predictor.space import family_grid

    conv90 = family_grid(TWIN[fam])[:7]
    plan = _plan(family_grid(fam) + conv90, "sm_90", tmp_path, 6)
    gemm_units = [g for g in plan.groups if g[0].startswith(f"{fam.value}_")]
    assert len(gemm_units) == len(family_grid(fam)) and all(len(g) == 1 for g in gemm_units)
    assert sorted(len(g) for g in plan.groups if not g[0].startswith(f"{fam.value}_")) == [1, 6]

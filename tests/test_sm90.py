"""The CUTLASS 3.x SM90 families (``f16nhwc90`` and ``i8nhwc90``: TMA im2col + wgmma, sm_90a only)
as data in the same pipeline: names round-trip for every grid (and every existing name is unchanged), the emitted
source is the CollectiveBuilder instance of the config, one kernel compiles for sm_90a through
``build_library`` and answers the C ABI on the host, the family refuses a Jetson Orin (sm_87), the
C++ export and the dispatcher carry it; and on an H200 (skipped elsewhere) it computes correct
results through ``CudaBackend.measure``."""
from __future__ import annotations

import ctypes
import dataclasses
import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

from predictor.config import (
    FAMILY_SPECS, SEED_CONFIG, EpilogueFunctor, EpilogueSchedule, Family, KernelConfig, KernelSchedule,
    SplitKMode, Swizzle,
)

ROOT = Path(__file__).resolve().parent.parent
SM90 = Family.F16_NHWC_SM90
I8 = Family.I8_NHWC_SM90
#: The CUTLASS 3.x conv families (the GEMM family ``f16gemm90``: tests/test_gemm90.py).
SM90_FAMILIES = [f for f in Family if FAMILY_SPECS[f].cutlass_api == 3 and FAMILY_SPECS[f].operation == "conv"]
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
needs_cutlass = pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("cutlass_library") is None, reason="needs nvidia-cutlass")

#: A grid config with a 2x1 cluster and the TMA epilogue (the generator's kind of kernel).
CFG = KernelConfig.sm90(SM90, (128, 128, 64), (2, 1, 1))
#: The smallest grid kernel: compiled by the nvcc test.
SMALL = KernelConfig.sm90(SM90, (64, 64, 64), (1, 1, 1), 0, KernelSchedule.ImplicitTmaWarpSpecializedSm90,
                          EpilogueSchedule.NoSmemWarpSpecialized)


# --------------------------------------------------------------------------- names
def test_sm90_name_format_and_round_trip() -> None:
    assert CFG.name == "f16nhwc90_t128x128x64_c2x1x1_sauto_kws_etma_a8x8x8_lincomb"
    assert CFG.kernel_name == CFG.name  # no split-k: one instance per config
    assert KernelConfig.from_name(CFG.name) == CFG
    four = KernelConfig.sm90(SM90, (64, 128, 64), (1, 2, 1), 4, epilogue_schedule=EpilogueSchedule.NoSmemWarpSpecialized)
    assert four.name == "f16nhwc90_t64x128x64_c1x2x1_s4_kws_enosmem_a8x8x8_lincomb"
    assert KernelConfig.from_name(four.name) == four
    # derived and fixed fields
    assert CFG.warp == (128, 128, 64) and CFG.inst == (64, 128, 16) and CFG.warp_count == (1, 1, 1)
    assert CFG.threads == 256 and CFG.align == (8, 8, 8) and CFG.epilogue is EpilogueFunctor.LinearCombination
    assert CFG.with_split_k(1) == CFG
    assert CFG.kernel_schedule.to_cutlass().name == "ImplicitTmaWarpSpecializedSm90"
    assert CFG.epilogue_schedule.to_cutlass().name == "TmaWarpSpecialized"
    with pytest.raises(ValueError):
        KernelSchedule.NotApplicable.to_cutlass()
    i8 = KernelConfig.sm90(I8, (128, 256, 128), (2, 1, 1))
    assert i8.name == "i8nhwc90_t128x256x128_c2x1x1_sauto_kws_etma_a16x16x16_lincomb"
    assert i8.inst == (64, 256, 32) and KernelConfig.from_name(i8.name) == i8
    d = CFG.to_dict()
    assert (d["cluster_m"], d["cluster_n"], d["cluster_k"]) == (2, 1, 1)
    assert d["kernel_schedule"] == "ImplicitTmaWarpSpecializedSm90" and d["epilogue_schedule"] == "TmaWarpSpecialized"


def test_existing_names_are_unchanged() -> None:
    assert SEED_CONFIG.name == "i8nc32_t128x128x64_w64x64x64_i16x8x32_s4_sw1_optimized_strided_sk1_a16x16x8_clamp"
    assert SEED_CONFIG.kernel_name == "i8nc32_t128x128x64_w64x64x64_i16x8x32_s4_sw1_optimized_strided_a16x16x8_clamp"
    assert SEED_CONFIG.cluster == (1, 1, 1) and SEED_CONFIG.kernel_schedule is KernelSchedule.NotApplicable
    # every config name the shipped models were trained on parses back to itself
    names = set()
    for p in sorted((ROOT / "models").glob("*.tree.json")):
        names.update(json.loads(p.read_text())["classes"])
    assert names
    for n in sorted(names):
        c = KernelConfig.from_name(n)
        assert c.name == n
        if c.cutlass_api == 2:  # SM80-family names carry no SM90 field
            assert c.epilogue_schedule is EpilogueSchedule.NotApplicable and c.cluster == (1, 1, 1)


@pytest.mark.parametrize("name", [
    "f16nhwc90_t128x128x64_c2x1x1_s1_kws_etma_a8x8x8_lincomb",  # 1 stage
    "f16nhwc90_t128x128x64_c2x1x1_s04_kws_etma_a8x8x8_lincomb",  # non-canonical stages
    "f16nhwc90_t128x128x64_c2x1x1_sauto_kna_etma_a8x8x8_lincomb",  # 3.x without a schedule
    "f16nhwc90_t128x128x64_c2x1x1_sauto_kws_etma_a16x16x8_lincomb",  # not the TMA alignment
    "f16nhwc90_t128x128x64_c2x1x1_sauto_kws_etma_a8x8x8_clamp",  # not the family's epilogue
    "f16nhwc90_t128x128x64_c1x1x2_sauto_kws_etma_a8x8x8_lincomb",  # cluster K
    "f16nhwc90_t96x128x64_c1x1x1_sauto_kws_etma_a8x8x8_lincomb",  # M not a multiple of 64
    "f16nhwc90_t128x512x64_c1x1x1_sauto_kws_etma_a8x8x8_lincomb",  # wgmma N > 256
    "f16nhwc_t128x128x64_c2x1x1_sauto_kws_etma_a8x8x8_lincomb",  # a 2.x family in the 3.x format
    "f16nhwc90_t128x128x32_w64x64x32_i16x8x16_s3_sw1_optimized_strided_sk1_a8x8x8_lincomb",  # vice versa
])
def test_bad_sm90_names_are_rejected(name: str) -> None:
    with pytest.raises(ValueError):
        KernelConfig.from_name(name)


def test_sm90_fields_are_checked() -> None:
    with pytest.raises(ValueError, match="2.x family"):
        dataclasses.replace(SEED_CONFIG, cluster=(2, 1, 1))
    with pytest.raises(ValueError):
        dataclasses.replace(CFG, swizzle=Swizzle.Identity2)
    with pytest.raises(ValueError):
        dataclasses.replace(CFG, split_k_mode=SplitKMode.Serial, split_k_slices=2)
    with pytest.raises(ValueError, match="derived"):
        dataclasses.replace(CFG, warp=(64, 128, 64))


@needs_cutlass
@pytest.mark.parametrize("family", list(Family), ids=lambda f: f.value)
def test_every_grid_config_round_trips(family: Family) -> None:
    from predictor.space import family_grid

    grid = family_grid(family)
    assert grid
    assert len({c.name for c in grid}) == len(grid)
    for c in grid:
        assert KernelConfig.from_name(c.name) == c
        assert c.family is family
        if c.cutlass_api == 3:
            assert c.kernel_name == c.name


# --------------------------------------------------------------------------- grid / arch
@needs_cutlass
@pytest.mark.parametrize("family", SM90_FAMILIES, ids=lambda f: f.value)
def test_sm90_grid(family: Family) -> None:
    from predictor.space import default_config, family_grid, generator_tiles, generator_tiles_3x, grid_spec, runs_on

    full = family_grid(family)
    explicit = [KernelConfig.sm90(family, tb, (cm, 1, 1), st) for tb, cm, st in grid_spec(family).explicit]
    assert set(explicit) <= set(full)
    twins = [c for c in full if c.no_source]  # source-less twins of named configs (Sm90Grid.no_source)
    assert sorted(dataclasses.replace(c, no_source=False).name for c in twins) == sorted(grid_spec(family).no_source)
    assert all(c.epilogue_schedule is EpilogueSchedule.TmaWarpSpecialized for c in twins)
    grid = [c for c in full if c not in explicit and not c.no_source]  # the knobs' grid around the generator's tiles
    assert 24 <= len(grid) <= 40
    tile_k = 4 * FAMILY_SPECS[family].instruction_shape[2]
    assert {c.tb[2] for c in grid} == {tile_k}
    # explicit configs: the grid's tile K or half of it (fp16: 32, for layers of 32 or 96 input channels)
    assert {c.tb[2] for c in explicit} <= {tile_k, tile_k // 2}
    assert {c.cluster for c in grid} == {(1, 1, 1), (2, 1, 1), (1, 2, 1)}
    assert {c.epilogue_schedule for c in grid} == {EpilogueSchedule.TmaWarpSpecialized,
                                                   EpilogueSchedule.NoSmemWarpSpecialized}
    assert {c.stages for c in grid} >= {0, 4}
    # every tile and cluster cutlass_library's GenerateSM90_Conv3x lists for the input type is in the grid
    assert set(generator_tiles_3x(family)) <= {(c.tb, c.cluster) for c in grid}
    assert all(t[1] == 0 and t[2] == (1, 1, 1) for t in generator_tiles(family))
    assert default_config(family) in grid
    assert all(runs_on(c, "sm_90") and not runs_on(c, "sm_87") for c in grid)
    assert family_grid(family, "sm_87") == []
    # the same knobs for both SM90 families
    f16_explicit = {KernelConfig.sm90(SM90, tb, (cm, 1, 1), st) for tb, cm, st in grid_spec(SM90).explicit}
    assert len(f16_explicit) == 9
    f16 = {(c.tb[:2], c.cluster, c.stages, c.epilogue_schedule) for c in family_grid(SM90) if c not in f16_explicit
           and not c.no_source}
    assert {(c.tb[:2], c.cluster, c.stages, c.epilogue_schedule) for c in grid} == f16
    if family is SM90:
        assert CFG in grid and SMALL in grid


def test_family_spec_targets() -> None:
    assert SM90_FAMILIES == [SM90, I8]
    for fam in SM90_FAMILIES:
        spec = FAMILY_SPECS[fam]
        assert spec.cutlass_api == 3 and spec.arch_min == "sm_90a"
        assert spec.supports("sm_90") and spec.supports("sm_90a")
        assert not any(spec.supports(a) for a in ("sm_80", "sm_86", "sm_87", "sm_89", "sm_100"))
        assert spec.compile_arch("sm_90") == "sm_90a"
        with pytest.raises(ValueError, match="Jetson Orin"):
            spec.compile_arch("sm_87")
    assert FAMILY_SPECS[I8].channel_multiple == 16 and FAMILY_SPECS[SM90].channel_multiple == 8
    for fam in (Family.INT8_NC32HW32, Family.FP16_NHWC):
        s = FAMILY_SPECS[fam]
        assert s.cutlass_api == 2 and s.supports("sm_87") and s.supports("sm_90")
        assert s.compile_arch("sm_87") == "sm_87"


@needs_cutlass
def test_grid_refuses_twins_of_configs_outside_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``no_source`` name the grid does not hold is a one-line ValueError naming it, for both kinds of SM90 grid."""
    from predictor import space

    for fam, make in ((SM90, space.sm90_grid), (Family.F16_GEMM_SM90, space.gemm_grid)):
        bad = dataclasses.replace(space.GRIDS[fam], no_source=("f16nhwc90_t8x8x8_nope",))
        monkeypatch.setitem(space.GRIDS, fam, bad)
        with pytest.raises(ValueError, match=f"{fam.value}: .*no_source.*f16nhwc90_t8x8x8_nope"):
            make(fam)


@needs_cutlass
def test_family_refuses_sm87(tmp_path: Path) -> None:
    from predictor.emit import build_library

    with pytest.raises(ValueError, match=r"f16nhwc90 needs sm_90a.*sm_87.*Jetson Orin"):
        build_library([SEED_CONFIG, CFG], "sm_87", tmp_path, name="t")
    assert not (tmp_path / "sm_87" / "obj").exists()  # refused before compiling anything


# --------------------------------------------------------------------------- emission
@needs_cutlass
def test_emitted_source_is_the_collective_builder_instance() -> None:
    from predictor.emit import kernel_source

    src = kernel_source(CFG)
    for text in ('#include "pk_runtime_sm90.h"', "cutlass::conv::collective::CollectiveBuilder<",
                 "cutlass::epilogue::collective::CollectiveBuilder<", "cutlass::arch::Sm90",
                 "cutlass::conv::Operator::kFprop", "cute::Shape<cute::_128, cute::_128, cute::Shape<cute::_64>>",
                 "cute::Shape<cute::_2, cute::_1, cute::_1>", "cutlass::conv::KernelImplicitTmaWarpSpecializedSm90",
                 "cutlass::epilogue::TmaWarpSpecialized", "StageCountAutoCarveout", "cutlass::half_t",
                 "cutlass::layout::TensorNHWC", "cutlass::conv::kernel::ConvUniversal<",
                 f"namespace pk_{CFG.kernel_name} {{", f"PK_EXPORT_KERNEL_3X({CFG.kernel_name}, "):
        assert text in src, text
    assert "float,\n    float," in src  # fp32 accumulator and epilogue compute
    four = kernel_source(KernelConfig.sm90(SM90, (64, 128, 64), (1, 2, 1), 4,
                                           epilogue_schedule=EpilogueSchedule.NoSmemWarpSpecialized))
    for text in ("cutlass::conv::collective::StageCount<4>", "cutlass::epilogue::NoSmemWarpSpecialized",
                 "cute::Shape<cute::_1, cute::_2, cute::_1>", "cute::Shape<cute::_64, cute::_128, cute::Shape<cute::_64>>"):
        assert text in four, text
    assert "StageCountAutoCarveout" not in four
    # the 2.x path is untouched
    assert '#include "pk_runtime.h"' in kernel_source(SEED_CONFIG)
    assert "PK_EXPORT_KERNEL(" in kernel_source(SEED_CONFIG)


class _Problem(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int64) for n in
                ("n", "h", "w", "c", "k", "r", "s", "p", "q", "pad_h", "pad_w", "stride_h",
                 "stride_w", "dil_h", "dil_w", "split_k_slices")]


@pytest.mark.nvcc
@needs_nvcc
@needs_cutlass
def test_one_sm90_kernel_compiles_and_answers_the_abi(tmp_path: Path) -> None:
    """Compiled for sm_90a by build_library (target sm_90); the C ABI's host side (info, mode-0
    can_implement query) needs no GPU."""
    from predictor.emit import build_library

    res = build_library([SMALL], "sm_90", tmp_path, jobs=2, name="t")
    assert res.errors == {}, res.errors
    assert res.compiled == [SMALL.kernel_name] and res.library is not None
    cu = next((tmp_path / "sm_90" / "obj").glob("*.cu")).read_text()
    assert "PK_EXPORT_KERNEL_3X" in cu
    again = build_library([SMALL], "sm_90", tmp_path, jobs=2, name="t")
    assert again.cached == 1
    lib = ctypes.CDLL(str(res.library.resolve()))
    info = getattr(lib, f"pk_info_{SMALL.kernel_name}")
    info.restype, info.argtypes = ctypes.c_int64, [ctypes.c_int]
    smem, threads, stages, cluster = (info(i) for i in range(4))
    assert 0 < smem <= 227 * 1024 and threads == 256 and stages >= 2 and cluster == 1
    run = getattr(lib, f"pk_run_{SMALL.kernel_name}")
    run.restype = ctypes.c_int
    run.argtypes = [ctypes.POINTER(_Problem)] + [ctypes.c_void_p] * 4 + [ctypes.c_float] * 2 + [
        ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
        ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_size_t)]

    def query(*vals: int) -> int:
        need = ctypes.c_size_t(99)
        st = run(ctypes.byref(_Problem(*vals)), None, None, None, None, 1.0, 0.0, None, 0, None, 0, 0, 0, None,
                 ctypes.byref(need))
        assert need.value == 0  # these kernels need no workspace
        return int(st)

    assert query(1, 56, 56, 64, 64, 3, 3, 56, 56, 1, 1, 1, 1, 1, 1, 1) == 0
    assert query(8, 14, 14, 256, 512, 1, 1, 7, 7, 0, 0, 2, 2, 1, 1, 1) == 0
    assert query(2, 17, 23, 96, 160, 5, 5, 17, 23, 4, 4, 1, 1, 2, 2, 1) == 0
    assert query(1, 56, 56, 60, 64, 3, 3, 56, 56, 1, 1, 1, 1, 1, 1, 1) == 1  # C not 16-byte aligned
    assert query(1, 56, 56, 64, 64, 3, 3, 56, 56, 1, 1, 1, 1, 1, 1, 2) == 1  # split-k
    assert query(1, 56, 56, 64, 64, 3, 3, 55, 56, 1, 1, 1, 1, 1, 1, 1) == 1  # wrong output extent


# --------------------------------------------------------------------------- export / dispatcher
def _sm90_model(models: Path, slug: str, classes: list[str]) -> None:
    """A small hand-made tree over SM90 configs, in the trainer's file format (not a trained model)."""
    from predictor.features import FEATURE_NAMES
    from predictor.tree_ir import Leaf, Split, TreeIR

    ir = TreeIR(tuple(FEATURE_NAMES), tuple(classes),
                (Split(FEATURE_NAMES.index("gemm_m"), 4096, 1, 2), Leaf(classes[0]), Leaf(classes[-1])),
                {"family": SM90.value, "gpu_slug": slug, "gpu": "hand-made", "sms": 132,
                 "smem_bytes": {c: 100000 for c in classes}, "sm87_ok": {c: True for c in classes}}).validate()
    ir.save(models / f"{slug}-{SM90.value}.tree.json")


@needs_cutlass
def test_cpp_export_and_dispatcher_carry_sm90(tmp_path: Path) -> None:
    from predictor.dispatcher import build, generate, required_arch
    from predictor.export_cpp import export_models_dir

    classes = [SMALL.name, CFG.name]
    _sm90_model(tmp_path / "models", "t90", classes)
    header = export_models_dir(tmp_path / "models", "t90", tmp_path / "export")
    text = header.read_text()
    assert ("enum class KernelSchedule : int { kNotApplicable, kScheduleAuto, kImplicitTmaWarpSpecializedSm90, "
            "kTmaWarpSpecialized, kTmaWarpSpecializedPingpong, kTmaWarpSpecializedCooperative };") in text
    assert ("{128, 128, 64, 128, 128, 64, 64, 128, 16, 0, Swizzle::kIdentity1, IteratorAlgorithm::kOptimized, "
            "StrideSupport::kStrided, SplitKMode::kNoSplit, 1, 8, 8, 8, EpilogueFunctor::kLinearCombination, 2, 1, 1, "
            "KernelSchedule::kImplicitTmaWarpSpecializedSm90, EpilogueSchedule::kTmaWarpSpecialized, "
            "TileScheduler::kNotApplicable, false, 0, 0, false, INT64_C(100000), "
            f'false, "{CFG.name}", "{CFG.name}"}},') in text  # sm87_ok is false whatever the model says
    if shutil.which("g++"):
        drv = tmp_path / "drv.cpp"
        drv.write_text(f'#include "{header}"\nnamespace ns = cutlass_conv_predictor::t90;\n'
                       "static_assert(ns::kConfigs_f16nhwc90[1].cluster_m == 2, \"cluster\");\n"
                       "static_assert(ns::kConfigs_f16nhwc90[1].kernel_schedule == "
                       "ns::KernelSchedule::kImplicitTmaWarpSpecializedSm90, \"schedule\");\n"
                       "int main() { return ns::select_f16nhwc90(1, 64, 56, 56, 64, 3, 3, 1, 1, 1) < 0; }\n")
        subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-Wpedantic", "-Wshadow", "-Wconversion",
                        "-fsyntax-only", str(drv)], check=True, capture_output=True, text=True)
    out = generate(tmp_path / "models", "t90", tmp_path / "export", tmp_path / "dispatch", families=["f16nhwc90"])
    src = out.read_text()
    assert '#include "pk_runtime_sm90.h"' in src and src.count('#include "pk_runtime_sm90.h"') == 1
    assert f"PK_EXPORT_KERNEL_3X({CFG.kernel_name}, " in src and f"&pk_run_{CFG.kernel_name}," in src
    assert required_arch(out) == "sm_90a"
    assert (tmp_path / "dispatch" / "pk_runtime_sm90.h").exists()
    assert "set(CMAKE_CUDA_ARCHITECTURES 90a)" in (tmp_path / "dispatch" / "CMakeLists.txt").read_text()
    for arch in ("sm_87", "sm_90"):
        with pytest.raises(ValueError, match="need sm_90a"):
            build(out, arch, compile_only=True)


def test_shipped_dispatcher_needs_no_sm90a() -> None:
    from predictor.dispatcher import required_arch

    assert required_arch(ROOT / "export" / "dispatch" / "h200_dispatch.cu") is None


# --------------------------------------------------------------------------- GPU (H200)
def _hopper() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available()) and torch.cuda.get_device_capability() == (9, 0)


needs_hopper = pytest.mark.skipif(not _hopper(), reason="needs an sm_90 GPU (H100/H200)")
GPU_PROBLEMS = [
    (1, 64, 56, 56, 64, 3, 3, 1, 1, 1),
    (8, 256, 14, 14, 512, 1, 1, 2, 0, 1),
    (2, 96, 17, 23, 160, 5, 5, 1, 4, 2),
]


@pytest.fixture(scope="module")
def hopper_backend():  # type: ignore[no-untyped-def]
    from predictor.cuda_backend import CudaBackend
    from predictor.space import family_grid

    b = CudaBackend(build_dir="build", reps=3, retime_top=2)
    for fam in SM90_FAMILIES:
        b.prepare(family_grid(fam))  # the sweeps' grids: the objects come from the build cache
    yield b
    b.close()


I8_CFG = KernelConfig.sm90(I8, (128, 128, 128), (2, 1, 1))


@pytest.mark.gpu
@needs_hopper
@pytest.mark.parametrize("cfg", [CFG, I8_CFG], ids=lambda c: c.family.value)
@pytest.mark.parametrize("prob", GPU_PROBLEMS, ids=lambda p: "x".join(map(str, p)))
def test_sm90_config_is_correct_and_timed(hopper_backend, cfg: KernelConfig,  # type: ignore[no-untyped-def]
                                          prob: tuple[int, ...]) -> None:
    from predictor.features import ConvProblem

    r = hopper_backend.measure(ConvProblem(*prob), [cfg])[0]
    assert r.status == "ok", r
    assert r.verified, r
    assert r.time_us > 0 and math.isfinite(r.time_us)
    assert 0 < r.smem_bytes <= 227 * 1024


@pytest.mark.gpu
@needs_hopper
def test_sm90_variants_are_correct(hopper_backend) -> None:  # type: ignore[no-untyped-def]
    """One kernel of each knob value (NoSmem epilogue, 1x2 cluster, explicit stages, big tile), both
    families; the int8 problem's outputs reach the saturation limits."""
    from predictor.features import ConvProblem

    for fam in SM90_FAMILIES:
        k = 4 * FAMILY_SPECS[fam].instruction_shape[2]
        cfgs = [KernelConfig.sm90(fam, (64, 64, k), epilogue_schedule=EpilogueSchedule.NoSmemWarpSpecialized),
                KernelConfig.sm90(fam, (128, 64, k), (1, 2, 1)), KernelConfig.sm90(fam, (128, 128, k), stages=3),
                KernelConfig.sm90(fam, (256, 128, k), (2, 1, 1))]
        rows = hopper_backend.measure(ConvProblem(4, 128, 28, 28, 256, 3, 3, 1, 1, 1), cfgs)
        for r in rows:
            assert r.status == "ok" and r.verified, r

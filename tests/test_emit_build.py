"""Kernels are emitted with cutlass_library and compile with nvcc for both targets (no GPU needed):
one kernel per family for sm_87 (Jetson Orin) and sm_90 (H100/H200), a small generated dispatcher
through emit's nvcc command, and the generated dispatcher of the shipped model through its CMake
project."""
from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("cutlass_library")
from predictor.config import SEED_CONFIG, EpilogueFunctor, Family, KernelConfig  # noqa: E402
from predictor.emit import (  # noqa: E402
    RUNTIME_HEADERS, build_library, build_libraries, kernel_instances, kernel_source, runtime_headers,
)

ROOT = Path(__file__).resolve().parent.parent
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
FP16 = KernelConfig(family=Family.FP16_NHWC, tb=(64, 64, 32), warp=(32, 32, 32), inst=(16, 8, 16), stages=4,
                    align=(8, 8, 8), epilogue=EpilogueFunctor.LinearCombination)


def test_source_names_every_template_parameter() -> None:
    src = kernel_source(SEED_CONFIG)
    for text in ("GemmShape<128, 128, 64>", "GemmShape<64, 64, 64 >", "GemmShape<16, 8, 32>",
                 "GemmIdentityThreadblockSwizzle<1>", "kOptimized", "kStrided", "LinearCombinationClamp",
                 "TensorNCxHWx<32>", "TensorCxRSKx<32>", "OpMultiplyAddSaturate"):
        assert text in src, text
    assert f"pk_run_{SEED_CONFIG.kernel_name}" not in src  # the macro defines it
    assert f"PK_EXPORT_KERNEL({SEED_CONFIG.kernel_name}," in src


def test_source_with_and_without_its_runtime_include() -> None:
    sm90 = KernelConfig.from_name("f16nhwc90_t128x128x64_c1x1x1_s3_kws_etma_a8x8x8_lincomb")
    for cfg in (SEED_CONFIG, sm90):
        full, bare = kernel_source(cfg), kernel_source(cfg, include_runtime=False)
        assert "#include" not in bare
        assert [line for line in full.splitlines() if line.startswith("#include")] == [
            f'#include "{RUNTIME_HEADERS[cfg.cutlass_api][-1]}"']
        assert full.replace(f'#include "{RUNTIME_HEADERS[cfg.cutlass_api][-1]}"\n', "") == bare
    assert runtime_headers([sm90, SEED_CONFIG]) == ["pk_runtime.h", "pk_runtime_sm90.h"]
    assert runtime_headers([FP16, SEED_CONFIG]) == ["pk_runtime.h"]


def test_one_instance_per_kernel() -> None:
    inst = kernel_instances([SEED_CONFIG.with_split_k(2), FP16, SEED_CONFIG, FP16.with_split_k(4)])
    assert list(inst) == [SEED_CONFIG.kernel_name, FP16.kernel_name]
    assert inst[SEED_CONFIG.kernel_name] == SEED_CONFIG and inst[FP16.kernel_name] == FP16


def test_dispatcher_defaults_follow_the_family_specs() -> None:
    from predictor.dispatch_text import DISPATCH_ARCHS, cmake_text as _cmake_text
    from predictor.dispatcher import default_families

    assert default_families() == [f.value for f in Family if f.spec.arch_min == "sm_80"]
    assert "set(CMAKE_CUDA_ARCHITECTURES 87 90)" in _cmake_text("x", [])
    assert "set(CMAKE_CUDA_ARCHITECTURES 90a)" in _cmake_text("x", ["sm_90a"])
    assert "for sm_90a only" in _cmake_text("x", ["sm_90a"]) and DISPATCH_ARCHS == ("sm_90", "sm_87")


@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_87", "sm_90"])
def test_one_kernel_per_family_compiles(tmp_path: Path, arch: str) -> None:
    res = build_library([SEED_CONFIG, FP16], arch, tmp_path, jobs=2, name="t", group=1)
    assert res.errors == {}
    assert sorted(res.compiled) == sorted([SEED_CONFIG.kernel_name, FP16.kernel_name])
    assert res.library is not None and res.library.exists()
    # second build: everything from the cache; per family, one library each
    again = build_library([SEED_CONFIG, FP16], arch, tmp_path, jobs=2, name="t", group=1)
    assert again.cached == 2
    per_family = build_libraries([SEED_CONFIG, FP16], arch, tmp_path, jobs=2)
    assert {f: (r.library.name if r.library else None, r.compiled) for f, r in per_family.items()} == {
        Family.INT8_NC32HW32: ("libi8nc32.so", [SEED_CONFIG.kernel_name]),
        Family.FP16_NHWC: ("libf16nhwc.so", [FP16.kernel_name])}


@pytest.mark.nvcc
@needs_nvcc
def test_compile_error_is_recorded_not_raised(tmp_path: Path, monkeypatch) -> None:
    import predictor.emit as emit

    real = emit.kernel_source
    monkeypatch.setattr(emit, "kernel_source",
                        lambda c: real(c) + ("\n#error planted failure\n" if c.family is Family.FP16_NHWC else ""))
    res = build_library([SEED_CONFIG, FP16], "sm_90", tmp_path, jobs=2, name="t", group=2)
    assert list(res.errors) == [FP16.kernel_name]
    assert "planted failure" in res.errors[FP16.kernel_name]
    assert res.compiled == [SEED_CONFIG.kernel_name]


@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
def test_dispatcher_cmake_builds_for_sm87_and_sm90(tmp_path: Path) -> None:
    from predictor.emit import cutlass_root

    b = tmp_path / "b"
    subprocess.run(["cmake", "-S", str(ROOT / "export" / "dispatch"), "-B", str(b), f"-DCUTLASS_DIR={cutlass_root()}",
                    f"-DCMAKE_CUDA_COMPILER={shutil.which('nvcc')}"], check=True, capture_output=True, text=True)
    flags = next(b.rglob("flags.make")).read_text()
    assert "arch=compute_87" in flags and "arch=compute_90" in flags
    subprocess.run(["cmake", "--build", str(b), "-j", "2"], check=True, capture_output=True, text=True)
    assert list(b.glob("*.so"))


@pytest.mark.nvcc
@needs_nvcc
def test_library_reused_from_its_manifest_without_objects(tmp_path: Path) -> None:
    res = build_library([SEED_CONFIG], "sm_90", tmp_path, jobs=1, name="m", group=1)
    assert res.library is not None
    for o in (tmp_path / "sm_90" / "obj").iterdir():
        o.unlink()
    again = build_library([SEED_CONFIG], "sm_90", tmp_path, jobs=1, name="m", group=1)
    assert again.library == res.library and again.compiled == res.compiled
    assert not any((tmp_path / "sm_90" / "obj").iterdir())  # nothing was recompiled


def _two_config_dispatcher(tmp_path: Path, second: KernelConfig) -> Path:
    """The generated dispatcher of a hand-made two-config int8 model (SEED_CONFIG, ``second``) in
    the trainer's file format."""
    from predictor.dispatcher import generate
    from predictor.export_cpp import export_models_dir
    from predictor.features import FEATURE_NAMES
    from predictor.tree_ir import Leaf, Split, TreeIR

    classes = [SEED_CONFIG.name, second.name]
    meta = {"family": "i8nc32", "gpu_slug": "t", "gpu": "hand-made", "sms": 132,
            "smem_bytes": {c: 100000 for c in classes}, "sm87_ok": {c: True for c in classes}}
    ir = TreeIR(tuple(FEATURE_NAMES), tuple(classes),
                (Split(FEATURE_NAMES.index("gemm_m"), 4096, 1, 2), Leaf(classes[0], tuple(classes)), Leaf(classes[1])), meta)
    (tmp_path / "models").mkdir()
    ir.validate().save(tmp_path / "models" / "t-i8nc32.tree.json")
    export_models_dir(tmp_path / "models", "t", tmp_path / "export")
    return generate(tmp_path / "models", "t", tmp_path / "export")


@pytest.mark.nvcc
@needs_nvcc
def test_small_dispatcher_compiles_with_emits_nvcc_command(tmp_path: Path) -> None:
    """A two-config int8 model (one kernel, split-k 1 and 2) through generate and build."""
    from predictor.dispatcher import build

    src = _two_config_dispatcher(tmp_path, SEED_CONFIG.with_split_k(2))
    assert sorted(p.name for p in src.parent.iterdir()) == ["CMakeLists.txt", "pk_runtime.h", "t_dispatch.cu"]
    text = src.read_text()
    assert text.count("PK_EXPORT_KERNEL(") == 1 and text.count('#include "pk_runtime.h"') == 1
    obj = build(src, "sm_87", compile_only=True)
    assert obj.name == "t_dispatch_sm_87.o" and obj.stat().st_size > 0


@pytest.mark.nvcc
@needs_nvcc
def test_dispatcher_builds_in_parallel_parts(tmp_path: Path) -> None:
    """``build(jobs=2)``: two parts compiled in parallel and linked hold each kernel once and the
    dispatch code once (a single-TU build of the same source is the test above)."""
    from predictor.dispatcher import build

    other = dataclasses.replace(SEED_CONFIG, stages=3)
    lib = build(_two_config_dispatcher(tmp_path, other), "sm_87", jobs=2)
    syms = subprocess.run(["nm", "-D", "--defined-only", str(lib)], check=True, capture_output=True,
                          text=True).stdout.split()
    for c in (SEED_CONFIG, other):
        assert syms.count(f"pk_run_{c.kernel_name}") == 1
    assert syms.count("pkd_conv2d_i8nc32") == 1 and syms.count("pkd_select_i8nc32") == 1
    for fn in ("conv2d_tuned", "candidates", "tuned_pick", "tune_clear"):  # first-call tuning
        assert syms.count(f"pkd_{fn}_i8nc32") == 1
    assert not list(lib.parent.glob("*.part*.o"))  # the parts' objects are removed after linking


def test_every_family_has_a_grid_and_a_generator() -> None:
    from cutlass_library import generator

    from predictor.space import GRIDS, family_grid

    assert set(GRIDS) == set(Family)
    for fam, grid in GRIDS.items():
        assert callable(getattr(generator, grid.generator)), fam
        assert family_grid(fam), fam

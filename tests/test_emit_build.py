"""Kernels are emitted with cutlass_library and compile with nvcc for both targets (no GPU needed):
one kernel per family for sm_87 (Jetson Orin) and sm_90 (H100/H200), and the generated dispatcher
of the shipped model through its CMake project."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("cutlass_library")
from predictor.config import SEED_CONFIG, EpilogueFunctor, Family, KernelConfig  # noqa: E402
from predictor.emit import build_library, kernel_source  # noqa: E402

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


@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_87", "sm_90"])
def test_one_kernel_per_family_compiles(tmp_path: Path, arch: str) -> None:
    res = build_library([SEED_CONFIG, FP16], arch, tmp_path, jobs=2, name="t", group=1)
    assert res.errors == {}
    assert sorted(res.compiled) == sorted([SEED_CONFIG.kernel_name, FP16.kernel_name])
    assert res.library is not None and res.library.exists()
    # second build: everything from the cache
    again = build_library([SEED_CONFIG, FP16], arch, tmp_path, jobs=2, name="t", group=1)
    assert again.cached == 2


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

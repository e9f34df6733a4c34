"""Emit CUTLASS kernels with ``cutlass_library`` and compile them with nvcc into a shared library.

One translation unit per kernel instance (``KernelConfig.kernel_name``): the kernel's template
instantiation comes from ``cutlass_library``'s ``EmitConv2dInstance`` (CUTLASS 2.x families) or
``EmitConv3xInstance`` (CUTLASS 3.x families, ``FamilySpec.cutlass_api == 3``) or
``EmitGemmUniversal3xInstance`` (the CUTLASS 3.x GEMM families, ``FamilySpec.operation == "gemm"``);
``csrc/pk_runtime.h`` (2.x), ``csrc/pk_runtime_sm90.h`` (3.x conv) and ``csrc/pk_runtime_gemm90.h``
(3.x GEMM) add the same small C ABI (``pk_run_<name>``, ``pk_info_<name>``).  A family whose ``arch_min`` is architecture-specific (``sm_90a``) is compiled
for exactly that target whatever ``arch`` says, and refused for targets that cannot run it.
Objects are compiled in parallel and cached under a hash of source, nvcc version, flags and CUTLASS
version, so re-running a sweep or adding a config recompiles only what changed.  A kernel that
fails to compile is reported (with nvcc's message) and left out of the library; the collector
records it as ``compile_error``.

Everything about kernels and nvcc lives here: the instance list (:func:`kernel_instances`), the
kernel source (:func:`kernel_source`, with or without its C ABI include), the headers a set of
kernels needs (:func:`runtime_headers`), and the nvcc flags and commands (:func:`nvcc_flags`,
:func:`nvcc_compile_command`, :func:`nvcc_link_command`; the data :data:`CXX_STANDARD`,
:data:`CUDA_OPTIONS`, :data:`CUTLASS_INCLUDE_DIRS` also fill the dispatcher's CMake project).
"""
from __future__ import annotations

import concurrent.futures as cf
import functools
import hashlib
import json
import logging
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .config import Family, KernelConfig

_LOG = logging.getLogger(__name__)
_CSRC = Path(__file__).parent / "csrc"

#: Supported targets: SM80-family kernels (mma.sync + cp.async) built for these machines.
ARCH_GENCODE = {
    "sm_80": "-gencode=arch=compute_80,code=sm_80",
    "sm_86": "-gencode=arch=compute_86,code=sm_86",
    "sm_87": "-gencode=arch=compute_87,code=sm_87",
    "sm_89": "-gencode=arch=compute_89,code=sm_89",
    "sm_90": "-gencode=arch=compute_90,code=sm_90",
}

#: Architecture-specific targets (``FamilySpec.arch_min`` with an ``a`` suffix): CUTLASS 3.x kernels
#: using TMA + wgmma, which run on exactly that architecture.
ARCH_SPECIFIC_GENCODE = {
    "sm_90a": "-gencode=arch=compute_90a,code=sm_90a",
}


def gencode(arch: str) -> str:
    """The nvcc ``-gencode`` option of ``arch`` (``sm_XY`` or an architecture-specific ``sm_XYa``)."""
    if arch in ARCH_GENCODE:
        return ARCH_GENCODE[arch]
    if arch in ARCH_SPECIFIC_GENCODE:
        return ARCH_SPECIFIC_GENCODE[arch]
    raise ValueError(f"unknown arch {arch!r}; choose from {sorted(ARCH_GENCODE) + sorted(ARCH_SPECIFIC_GENCODE)}")


def cutlass_root() -> Path:
    """Root of the CUTLASS sources shipped in the ``nvidia-cutlass`` wheel."""
    import cutlass_library

    root = Path(cutlass_library.__file__).parent / "source"
    if not (root / "include" / "cutlass" / "cutlass.h").exists():
        raise FileNotFoundError(f"CUTLASS headers not found under {root}; install nvidia-cutlass")
    return root


def cutlass_version() -> str:
    """Version of the installed ``nvidia-cutlass`` package (``unknown`` without metadata)."""
    try:
        from importlib.metadata import version

        return version("nvidia-cutlass")
    except Exception:  # pragma: no cover - metadata missing
        return "unknown"


@functools.lru_cache(maxsize=None)
def nvcc_path() -> str:
    """The nvcc executable: ``$NVCC``, else the one on ``PATH``, else ``/usr/local/cuda/bin/nvcc``."""
    path = os.environ.get("NVCC") or shutil.which("nvcc")
    if not path:
        for cand in ("/usr/local/cuda/bin/nvcc",):
            if Path(cand).exists():
                return cand
        raise FileNotFoundError("nvcc not found: put the CUDA toolkit's bin/ on PATH or set NVCC")
    return path


@functools.lru_cache(maxsize=None)
def nvcc_version() -> str:
    """The last line of ``nvcc --version`` (part of the object cache's stamp)."""
    out = subprocess.run([nvcc_path(), "--version"], check=True, capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1]


def _operation(cfg: KernelConfig):  # type: ignore[no-untyped-def]
    """The ``cutlass_library.Conv2dOperation`` for ``cfg``."""
    from cutlass_library.conv2d_operation import Conv2dOperation
    from cutlass_library.library import (
        ConvKind, DataType, LayoutType, MathInstruction, MathOperation, OpcodeClass,
        TensorDescription, TileDescription,
    )

    spec = cfg.spec
    dt = lambda n: getattr(DataType, n)  # noqa: E731
    lt = lambda n: getattr(LayoutType, n)  # noqa: E731
    math = MathInstruction(list(cfg.inst), dt(spec.element_a), dt(spec.element_b),
                           dt(spec.element_accumulator), OpcodeClass.TensorOp,
                           getattr(MathOperation, spec.math_operation))
    tile = TileDescription(list(cfg.tb), cfg.stages, list(cfg.warp_count), math, 80, 1024)
    A = TensorDescription(dt(spec.element_a), lt(spec.layout_a), cfg.align[0])
    B = TensorDescription(dt(spec.element_b), lt(spec.layout_b), cfg.align[1])
    C = TensorDescription(dt(spec.element_c), lt(spec.layout_c), cfg.align[2])
    return Conv2dOperation(ConvKind.Fprop, cfg.iterator.to_cutlass(), 80, tile, A, B, C,
                           dt(spec.element_epilogue), cfg.stride_support.to_cutlass(),
                           cfg.epilogue.to_cutlass(), cfg.swizzle.to_cutlass())


def _source(cfg: KernelConfig, c):  # type: ignore[no-untyped-def]
    """The epilogue's source tensor C of a 3.x ``cfg``: ``c``, or with ``cfg.no_source`` a ``void`` one (no C: the
    epilogue stores alpha * acc and issues each TMA store one subtile later, ``DelayTmaStore``)."""
    from cutlass_library.library import DataType, TensorDescription

    return TensorDescription(DataType.void, c.layout, 0) if cfg.no_source else c


def _operation_3x(cfg: KernelConfig):  # type: ignore[no-untyped-def]
    """The ``cutlass_library`` ``ConvOperation3x`` for a CUTLASS 3.x ``cfg`` -- built as
    ``GenerateSM90_Conv3x`` / ``CreateConvOperator3x`` build theirs (2-D fprop, NHWC activations,
    KRSC filter, NPQK output, default tile scheduler)."""
    from cutlass_library.generator import ConvOperation3x
    from cutlass_library.library import (
        ConvKind, DataType, LayoutType, MathInstruction, MathOperation, OpcodeClass, TensorDescription,
        TileDescription, TileSchedulerType,
    )

    spec = cfg.spec
    dt = lambda n: getattr(DataType, n)  # noqa: E731
    lt = lambda n: getattr(LayoutType, n)  # noqa: E731
    arch = spec.arch_level
    math = MathInstruction(list(cfg.inst), dt(spec.element_a), dt(spec.element_b),
                           dt(spec.element_accumulator), OpcodeClass.TensorOp,
                           getattr(MathOperation, spec.math_operation))
    # warp_count is unused by SM90 kernels (cutlass_library's generator passes [4, 1, 1])
    tile = TileDescription(list(cfg.tb), cfg.stages, [4, 1, 1], math, arch, arch, list(cfg.cluster))
    A = TensorDescription(dt(spec.element_a), lt(spec.layout_a), cfg.align[0])
    B = TensorDescription(dt(spec.element_b), lt(spec.layout_b), cfg.align[1])
    C = _source(cfg, TensorDescription(dt(spec.element_c), lt(spec.layout_c), cfg.align[2]))
    D = TensorDescription(dt(spec.element_c), lt(spec.layout_c), cfg.align[2])
    return ConvOperation3x(ConvKind.Fprop, tile, A, B, C, element_compute=dt(spec.element_epilogue), D=D,
                           kernel_schedule=cfg.kernel_schedule.to_cutlass(),
                           epilogue_schedule=cfg.epilogue_schedule.to_cutlass(),
                           tile_scheduler=TileSchedulerType.Default)


def _operation_gemm(cfg: KernelConfig):  # type: ignore[no-untyped-def]
    """The ``cutlass_library`` ``GemmOperation`` (``GemmKind.Universal3x``) for a config of a GEMM
    family -- built as ``GenerateSM90_TensorOp_16b_WGMMA_gemm`` / ``..._int8_WGMMA_gemm`` /
    ``CreateGemmUniversal3xOperator`` build theirs -- as the "TN" GEMM of the 1x1 conv: A row-major
    (NHWC), B column-major (KRSC), C/D row-major (NPQK); element, accumulator and epilogue compute
    types from the family's spec (int8: ``LinearCombination<int8_t, float>``, round to nearest,
    saturating).  ``cfg.swap_ab``: the transposed GEMM, filter as A, activations as B and C/D column-major
    (the runner swaps the operands: ``csrc/pk_runtime_gemm90.h``)."""
    from cutlass_library.gemm_operation import GemmOperation
    from cutlass_library.library import (
        DataType, EpilogueFunctor, GemmKind, LayoutType, MathInstruction, MathOperation, OpcodeClass,
        SwizzlingFunctor, TensorDescription, TileDescription,
    )

    spec = cfg.spec
    dt = lambda n: getattr(DataType, n)  # noqa: E731
    arch = spec.arch_level
    math = MathInstruction(list(cfg.inst), dt(spec.element_a), dt(spec.element_b), dt(spec.element_accumulator),
                           OpcodeClass.TensorOp, getattr(MathOperation, spec.math_operation))
    tile = TileDescription(list(cfg.tb), cfg.stages, [4, 1, 1], math, arch, arch, list(cfg.cluster))
    A = TensorDescription(dt(spec.element_a), LayoutType.RowMajor, cfg.align[0])
    B = TensorDescription(dt(spec.element_b), LayoutType.ColumnMajor, cfg.align[1])
    D = TensorDescription(dt(spec.element_c), LayoutType.ColumnMajor if cfg.swap_ab else LayoutType.RowMajor,
                          cfg.align[2])
    return GemmOperation(GemmKind.Universal3x, arch, tile, A, B, _source(cfg, D), dt(spec.element_epilogue),
                         EpilogueFunctor.LinearCombination, SwizzlingFunctor.Identity1, D=D,
                         kernel_schedule=cfg.kernel_schedule.to_cutlass(),
                         epilogue_schedule=cfg.epilogue_schedule.to_cutlass(),
                         tile_scheduler=cfg.tile_scheduler.to_cutlass())


#: The C ABI headers (``csrc/``) the kernels of each runtime kind (:func:`runtime_kind`: the CUTLASS
#: API, or ``"gemm3"`` for the CUTLASS 3.x GEMM families) need, in include order; a kernel's
#: translation unit includes the last one (which includes the others).  Each runner takes its element
#: types from the emitted kernel, so one header serves every family of its kind (``pk_runtime_gemm90.h``:
#: ``f16gemm90`` and ``i8gemm90``).
RUNTIME_HEADERS: dict[int | str, tuple[str, ...]] = {
    2: ("pk_runtime.h",),
    3: ("pk_runtime.h", "pk_runtime_sm90.h"),
    "gemm3": ("pk_runtime.h", "pk_runtime_gemm90.h"),
}


def runtime_kind(cfg: KernelConfig) -> int | str:
    """The :data:`RUNTIME_HEADERS` key of ``cfg``'s kernel: its CUTLASS API for conv kernels,
    ``"gemm3"`` for a GEMM family's."""
    return cfg.cutlass_api if cfg.spec.operation == "conv" else f"gemm{cfg.cutlass_api}"


#: Runtime kinds whose kernels cannot share a translation unit, with the reason (found on an H200).
TU_CONFLICTS: dict[frozenset[int | str], str] = {
    frozenset({3, "gemm3"}): "CUTLASS 4.2: the SM90 conv kernel's GemmUniversal base matches two partial "
                             "specializations once the SM90 GEMM kernel headers are included",
}


def translation_unit_classes(cfgs: Iterable[KernelConfig]) -> list[list[KernelConfig]]:
    """``cfgs`` grouped into the fewest classes (greedily, in :data:`RUNTIME_HEADERS` order) whose
    kernels may share a translation unit (:data:`TU_CONFLICTS`); each class keeps ``cfgs``' order.
    One class unless kinds conflict."""
    cfgs = list(cfgs)
    kinds = [k for k in RUNTIME_HEADERS if any(runtime_kind(c) == k for c in cfgs)]
    groups: list[set[int | str]] = []
    for k in kinds:
        g = next((g for g in groups if not any(frozenset({k, o}) in TU_CONFLICTS for o in g)), None)
        if g is None:
            groups.append({k})
        else:
            g.add(k)
    return [[c for c in cfgs if runtime_kind(c) in g] for g in groups]


def runtime_headers(cfgs: Iterable[KernelConfig]) -> list[str]:
    """The ``csrc/`` headers the kernels of ``cfgs`` need together, in include order."""
    kinds = {runtime_kind(c) for c in cfgs}
    out: list[str] = []
    for kind in RUNTIME_HEADERS:
        if kind in kinds:
            out += [h for h in RUNTIME_HEADERS[kind] if h not in out]
    return out


def runtime_header_path(name: str) -> Path:
    """Path of the shipped C ABI header ``name`` (one of :data:`RUNTIME_HEADERS`)."""
    return _CSRC / name


_EPI_TILE_AUTO = "cutlass::epilogue::collective::EpilogueTileAuto"


def _with_epi_tile(body: str, cfg: KernelConfig) -> str:
    """``body`` (a ``cutlass_library`` 3.x kernel) with ``cfg.epi_tile`` in place of ``EpilogueTileAuto``, which the
    emitters always write."""
    if cfg.epi_tile == (0, 0):
        return body
    m, n = cfg.epi_tile
    return _replace_once(body, _EPI_TILE_AUTO, f"cute::Shape<cute::_{m}, cute::_{n}>", cfg)


def _replace_once(body: str, old: str, new: str, cfg: KernelConfig) -> str:
    """``body`` with its one ``old`` replaced (``RuntimeError`` if ``cutlass_library`` wrote it another number of times)."""
    if body.count(old) != 1:
        raise RuntimeError(f"{cfg.name}: expected one {old} in cutlass_library's kernel, found {body.count(old)}")
    return body.replace(old, new)


def _kernel_body_3x(cfg: KernelConfig) -> str:
    from cutlass_library.conv3x_emitter import EmitConv3xInstance

    op = _operation_3x(cfg)
    body = _with_epi_tile(EmitConv3xInstance().emit(op), cfg)
    if cfg.no_source:  # the conv emitter writes C's alignment as 128 bits over its element's: 0 for void
        body = _replace_once(body, "128 / cute::sizeof_bits_v<void>", "0", cfg)
    base = op.procedural_name()
    ns = f"pk_{cfg.kernel_name}"  # the emitted names omit some fields: keep each kernel's own
    return (
        f"namespace {ns} {{\n{body}\n}}  // namespace {ns}\n"
        f"PK_EXPORT_KERNEL_3X({cfg.kernel_name}, {ns}::{base}_base)\n"
    )


def _kernel_body_gemm3x(cfg: KernelConfig) -> str:
    from cutlass_library.gemm_operation import EmitGemmUniversal3xInstance

    op = _operation_gemm(cfg)
    body = _with_epi_tile(EmitGemmUniversal3xInstance().emit(op), cfg)
    base = op.procedural_name()
    ns = f"pk_{cfg.kernel_name}"
    return (
        f"namespace {ns} {{\n{body}\n}}  // namespace {ns}\n"
        f"PK_EXPORT_KERNEL_GEMM3X({cfg.kernel_name}, {ns}::{base}_base)\n"
    )


def _kernel_body_2x(cfg: KernelConfig) -> str:
    from cutlass_library.conv2d_operation import EmitConv2dInstance

    op = _operation(cfg)
    # cutlass_library's procedural name leaves out swizzle and warp count: rename its typedef after
    # our kernel name, or two such kernels collide in one translation unit
    body = EmitConv2dInstance().emit(op).replace(f"{op.procedural_name()}_base", f"{cfg.kernel_name}_base")
    return (
        f"{body}\n"
        f"struct {cfg.kernel_name}_kernel : public {cfg.kernel_name}_base {{}};\n"
        f"PK_EXPORT_KERNEL({cfg.kernel_name}, {cfg.kernel_name}_kernel)\n"
    )


def kernel_source(cfg: KernelConfig, include_runtime: bool = True) -> str:
    """CUDA C++ translation unit for ``cfg``'s kernel instance, emitted by ``cutlass_library``
    (``EmitConv2dInstance``; for CUTLASS 3.x families ``EmitConv3xInstance``, for the GEMM families
    ``EmitGemmUniversal3xInstance``).  With
    ``include_runtime=False`` the ``#include`` of its C ABI header is left out (a dispatcher
    includes :func:`runtime_headers` once for all its kernels)."""
    kind = runtime_kind(cfg)
    include = f'#include "{RUNTIME_HEADERS[kind][-1]}"\n' if include_runtime else ""
    body = {2: _kernel_body_2x, 3: _kernel_body_3x, "gemm3": _kernel_body_gemm3x}[kind](cfg)
    return f"// generated by predictor.emit for {cfg.kernel_name}; do not edit\n{include}\n{body}"


def kernel_instances(cfgs: Iterable[KernelConfig]) -> dict[str, KernelConfig]:
    """One representative config (split-k 1: serial split-k is a run-time argument) per compiled
    kernel instance, keyed by ``KernelConfig.kernel_name``, in first-seen order."""
    out: dict[str, KernelConfig] = {}
    for c in cfgs:
        out.setdefault(c.kernel_name, c.with_split_k(1))
    return out


# ------------------------------------------------------------------------------------------ nvcc
#: C++ standard of every kernel and dispatcher translation unit.
CXX_STANDARD = 17
#: nvcc options the CUDA sources need whatever the build (the dispatcher's CMake passes them too).
CUDA_OPTIONS: tuple[str, ...] = ("--expt-relaxed-constexpr", "-w")
#: Include folders under the CUTLASS source root (:func:`cutlass_root`).
CUTLASS_INCLUDE_DIRS: tuple[str, ...] = ("include", "tools/util/include")


def known_arches() -> list[str]:
    """Every target :func:`gencode` knows (``sm_XY``, then the architecture-specific ones)."""
    return sorted(ARCH_GENCODE) + sorted(ARCH_SPECIFIC_GENCODE)


def compile_options(arch: str) -> list[str]:
    """nvcc options for ``arch`` without include folders (the object cache's stamp; the sweep
    metadata's ``nvcc_flags``)."""
    return [f"-std=c++{CXX_STANDARD}", "-O3", "-DNDEBUG", "-Xcompiler=-fPIC", *CUDA_OPTIONS, gencode(arch)]


def nvcc_flags(arch: str, runtime_dir: Path | str | None = None) -> list[str]:
    """nvcc flags for ``arch`` (``sm_XY``, or ``sm_90a`` for the CUTLASS 3.x families): options,
    ``-gencode``, then the include folders: ``runtime_dir`` (the C ABI headers; default the
    package's ``csrc/``) and CUTLASS's."""
    root = cutlass_root()
    return [*compile_options(arch), f"-I{runtime_dir if runtime_dir is not None else _CSRC}",
            *(f"-I{root / d}" for d in CUTLASS_INCLUDE_DIRS)]


def nvcc_compile_command(arch: str, source: Path | str, output: Path | str, shared: bool = False,
                         runtime_dir: Path | str | None = None) -> list[str]:
    """The nvcc command compiling ``source`` for ``arch`` into the object ``output`` (or, with
    ``shared``, straight into a shared library)."""
    return [nvcc_path(), "-shared" if shared else "-c", *nvcc_flags(arch, runtime_dir), str(source),
            "-o", str(output)]


def nvcc_link_command(arches: Iterable[str], objects: Iterable[Path | str], output: Path | str) -> list[str]:
    """The nvcc command linking ``objects`` (compiled for ``arches``) into the shared library ``output``."""
    codes = sorted({gencode(a) for a in arches})
    return [nvcc_path(), "-shared", *codes, "-o", str(output), *(str(o) for o in objects)]


# ----------------------------------------------------------------------------------------- build
@dataclass
class BuildResult:
    """Outcome of building a set of kernel instances into one shared library."""

    library: Path | None
    arch: str
    compiled: list[str] = field(default_factory=list)  # kernel names in the library
    errors: dict[str, str] = field(default_factory=dict)  # kernel name -> nvcc message
    seconds: float = 0.0
    cached: int = 0


def _compile_one(src: str, obj: Path, arch: str) -> tuple[bool, str]:
    obj.parent.mkdir(parents=True, exist_ok=True)
    cu = obj.with_suffix(".cu")
    cu.write_text(src)
    tmp = obj.with_suffix(f".tmp{os.getpid()}.o")
    proc = subprocess.run(nvcc_compile_command(arch, cu, tmp), capture_output=True, text=True)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        msg = (proc.stderr or proc.stdout).strip()
        obj.with_suffix(".err").write_text(msg)
        return False, msg
    tmp.replace(obj)
    return True, ""


@dataclass
class _Plan:
    """What one :func:`build_library` call compiles: the instances, their compile targets, and the
    translation units (groups of kernel names) with their object paths."""

    instances: dict[str, KernelConfig]
    arch_of: dict[str, str]  # kernel -> the sm_XY[a] it is compiled for
    stamp_of: dict[str, str]  # kernel -> nvcc, flags, CUTLASS and runtime header text it depends on
    objdir: Path
    groups: list[list[str]]

    def source(self, members: list[str]) -> str:
        return "\n".join(kernel_source(self.instances[k]) for k in members)

    def obj_for(self, members: list[str]) -> Path:
        src = self.source(members)
        digest = hashlib.sha256((self.stamp_of[members[0]] + "\n" + src).encode()).hexdigest()[:16]
        label = members[0] if len(members) == 1 else f"group{len(members)}_{members[0][:40]}"
        return self.objdir / f"{label}-{digest}.o"


#: Kernels per translation unit by runtime kind, where not ``build_library``'s ``group``: a CUTLASS
#: 3.x GEMM kernel takes about a minute of nvcc (the header parse shared by a group is a small part
#: of it), so these compile one to a unit, all in parallel.
GROUP_OF_KIND: dict[int | str, int] = {"gemm3": 1}


def _plan(cfgs: Iterable[KernelConfig], arch: str, objdir: Path, group: int) -> _Plan:
    """Group the distinct kernel instances of ``cfgs`` ``group`` (or :data:`GROUP_OF_KIND`) to a
    translation unit, kernels of one (compile arch, runtime kind) together (they share flags and
    headers)."""
    instances = kernel_instances(cfgs)
    key_of = {k: (c.spec.compile_arch(arch), runtime_kind(c)) for k, c in instances.items()}
    stamps = {key: "\n".join([nvcc_version(), " ".join(compile_options(key[0])), cutlass_version(),
                              *(runtime_header_path(h).read_text() for h in RUNTIME_HEADERS[key[1]])])
              for key in set(key_of.values())}
    names = sorted(instances)
    groups: list[list[str]] = []
    for key in sorted(set(key_of.values()), key=str):
        part = [k for k in names if key_of[k] == key]
        size = max(1, GROUP_OF_KIND.get(key[1], group))
        groups += [part[i:i + size] for i in range(0, len(part), size)]
    return _Plan(instances, {k: key[0] for k, key in key_of.items()}, {k: stamps[key] for k, key in key_of.items()},
                 objdir, groups)


def _reuse(lib_path: Path, manifest: Path, plan: list[str], result: BuildResult) -> bool:
    """Fill ``result`` from an existing library whose manifest lists exactly the translation units
    of ``plan`` (no objects needed: lets a machine that received only the .so skip the build)."""
    if not (lib_path.exists() and manifest.exists()):
        return False
    try:
        known = json.loads(manifest.read_text())
    except ValueError:
        return False
    if known.get("plan") != plan:
        return False
    result.library, result.compiled, result.errors = lib_path, list(known["compiled"]), dict(known["errors"])
    return True


def _compile(plan: _Plan, jobs: int, result: BuildResult) -> dict[str, Path]:
    """Compile the translation units of ``plan`` not in the cache, ``jobs`` at a time; a unit that
    fails is split and each of its kernels compiled alone.  Returns kernel -> object holding it;
    compile errors go to ``result.errors``."""
    good: dict[str, Path] = {}
    pending: list[list[str]] = []
    for members in plan.groups:
        obj = plan.obj_for(members)
        if obj.exists():
            result.cached += len(members)
            good.update({k: obj for k in members})
        elif obj.with_suffix(".err").exists() and len(members) > 1:
            pending.extend([[k] for k in members])
        else:
            pending.append(members)
    _LOG.info("building %d kernel instances for %s (%d cached, %d jobs)", len(plan.instances), result.arch,
              result.cached, jobs)
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        tqdm = None  # type: ignore[assignment]
    bar = tqdm(total=sum(len(m) for m in pending), desc=f"nvcc {result.arch}", unit="kernel",
               disable=not pending) if tqdm is not None else None
    with cf.ThreadPoolExecutor(max_workers=jobs) as ex:
        futs: dict[cf.Future, list[str]] = {}

        def submit(members: list[str]) -> None:
            obj = plan.obj_for(members)
            err = obj.with_suffix(".err")
            if obj.exists():
                good.update({k: obj for k in members})
            elif err.exists() and len(members) == 1:
                result.errors[members[0]] = err.read_text()
            else:
                futs[ex.submit(_compile_one, plan.source(members), obj, plan.arch_of[members[0]])] = members

        for members in pending:
            submit(members)
        while futs:
            done, _ = cf.wait(list(futs), return_when=cf.FIRST_COMPLETED)
            for fut in done:
                members = futs.pop(fut)
                ok, msg = fut.result()
                if ok:
                    good.update({k: plan.obj_for(members) for k in members})
                elif len(members) > 1:
                    for k in members:
                        submit([k])
                    continue
                else:
                    result.errors[members[0]] = msg
                    _LOG.warning("compile_error %s: %s", members[0], _first_error(msg))
                if bar is not None:
                    bar.update(len(members))
    if bar is not None:
        bar.close()
    return good


def build_library(cfgs: Iterable[KernelConfig], arch: str, build_dir: Path | str = "build",
                  jobs: int | None = None, name: str = "kernels", group: int = 6) -> BuildResult:
    """Compile every distinct kernel instance of ``cfgs`` for ``arch`` and link them into
    ``<build_dir>/<arch>/lib<name>.so``.  Failures are collected, not raised.

    Kernels are compiled ``group`` to a translation unit (the CUTLASS headers are parsed once per
    unit, which roughly halves compile time); a unit that fails is split and each of its kernels
    compiled alone, so one bad kernel costs only itself.

    Each family is compiled for ``FamilySpec.compile_arch(arch)``: ``arch`` itself for the CUTLASS
    2.x families, ``sm_90a`` for the CUTLASS 3.x SM90 family whatever ``arch`` says (its objects
    still land in ``<build_dir>/<arch>/``, next to the others); a family that cannot run on
    ``arch`` (the SM90 family on a Jetson Orin, sm_87) is refused with ``ValueError`` before
    anything is compiled."""
    t0 = time.time()
    gencode(arch)  # validates arch
    out_dir = Path(build_dir) / arch
    plan = _plan(cfgs, arch, out_dir / "obj", group)
    result = BuildResult(library=None, arch=arch)
    units = sorted(plan.obj_for(m).name for m in plan.groups)
    lib_path, manifest = out_dir / f"lib{name}.so", out_dir / f"lib{name}.json"
    if _reuse(lib_path, manifest, units, result):
        result.cached = len(plan.instances)
        result.seconds = time.time() - t0
        _LOG.info("reusing %s (manifest matches): %d kernels, %d compile errors", lib_path,
                  len(result.compiled), len(result.errors))
        return result
    good = _compile(plan, jobs or os.cpu_count() or 1, result)
    result.compiled = [k for k in sorted(plan.instances) if k in good]
    if result.compiled:
        tmp = out_dir / f"lib{name}.tmp{os.getpid()}.so"
        objs = sorted({str(good[k]) for k in result.compiled})
        subprocess.run(nvcc_link_command({plan.arch_of[k] for k in result.compiled}, objs, tmp),
                       check=True, capture_output=True, text=True)
        tmp.replace(lib_path)
        result.library = lib_path
        manifest.write_text(json.dumps({"plan": units, "compiled": result.compiled, "errors": result.errors,
                                        "arch": arch, "nvcc": nvcc_version(), "cutlass": cutlass_version()},
                                       indent=1, sort_keys=True))
    result.seconds = time.time() - t0
    _LOG.info("built %s: %d kernels, %d compile errors, %.1f s", result.library,
              len(result.compiled), len(result.errors), result.seconds)
    return result


def build_libraries(cfgs: Iterable[KernelConfig], arch: str, build_dir: Path | str = "build",
                    jobs: int | None = None) -> dict[Family, BuildResult]:
    """:func:`build_library` once per family of ``cfgs``: ``<build_dir>/<arch>/lib<family>.so``
    (the libraries the collector and the CUDA backend load)."""
    by_family: dict[Family, list[KernelConfig]] = {}
    for c in cfgs:
        by_family.setdefault(c.family, []).append(c)
    return {fam: build_library(fc, arch, build_dir, jobs, name=fam.value) for fam, fc in by_family.items()}


def _first_error(msg: str) -> str:
    for line in msg.splitlines():
        if "error" in line:
            return line.strip()[:300]
    return msg.splitlines()[0][:300] if msg else ""

"""Target GPUs as data: one row per architecture the kernels are built for and run on.

A *target* is named by its nvcc architecture (``sm_87``).  Its row gives the shared memory one
thread block may use (the opt-in maximum, bytes), the SM count of the reference GPU (``None`` where
products of the architecture differ) and the nvcc ``-gencode`` option.  Whether a config runs on a
target is decided from the shared memory its compiled kernel really uses (the sweep's
``smem_bytes``): :func:`fits` here, :meth:`predictor.config.KernelConfig.fits` with the family's
architecture rule.  Adding a target is one :data:`TARGETS` entry.
"""
from __future__ import annotations

from dataclasses import dataclass

KB = 1024


def arch_number(arch: str) -> int:
    """The compute capability of an ``sm_XY`` or ``sm_XYa`` target as the integer XY (``ValueError``
    if it is not one)."""
    return int(arch.removeprefix("sm_").rstrip("a"))


@dataclass(frozen=True)
class Target:
    """One GPU architecture: name, reference GPU, shared memory per block, SM count."""

    name: str  # nvcc architecture, sm_XY
    gpu: str  # the GPU(s) it stands for
    smem_per_block: int  # bytes: the opt-in maximum of one thread block
    sms: int | None  # SMs of the reference GPU; None where products differ
    #: Whether an architecture-specific variant (``sm_XYa``: TMA im2col, wgmma) exists.
    arch_specific: bool = False

    @property
    def cc(self) -> int:
        """Compute capability as nvcc writes it (``87``)."""
        return arch_number(self.name)

    @property
    def gencode(self) -> str:
        """The nvcc ``-gencode`` option building SASS for this target."""
        return f"-gencode=arch=compute_{self.cc},code=sm_{self.cc}"


#: Every known target, by name.
TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("sm_80", "A100", 163 * KB, 108),
    Target("sm_86", "GA10x (RTX 30xx, A10, A40)", 99 * KB, None),
    Target("sm_87", "Jetson Orin", 163 * KB, 16),  # SM count of the AGX Orin
    Target("sm_89", "AD10x (RTX 40xx, L4, L40)", 99 * KB, None),
    Target("sm_90", "H100 / H200", 227 * KB, 132, arch_specific=True),
)}

#: Shared memory per block of every target (bytes), as the grid and the estimates use it.
SMEM_LIMIT_BYTES: dict[str, int] = {name: t.smem_per_block for name, t in TARGETS.items()}


def target(name: str) -> Target:
    """The :class:`Target` called ``name`` (``sm_87``); ``ValueError`` naming the known ones."""
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown target {name!r}; known: {', '.join(TARGETS)}") from None


def fits(smem_bytes: int, name: str) -> bool:
    """Whether a block using ``smem_bytes`` of shared memory (a measured size, > 0) fits ``name``;
    an unknown size (<= 0) is not known to fit."""
    return 0 < int(smem_bytes) <= target(name).smem_per_block


def gencode(arch: str) -> str:
    """The nvcc ``-gencode`` option of ``arch``: a target's name, or the architecture-specific
    ``sm_XYa`` of a target that has one."""
    base = arch.removesuffix("a")
    t = TARGETS.get(base)
    if t is None or (arch != base and not t.arch_specific):
        known = list(TARGETS) + [f"{n}a" for n, x in TARGETS.items() if x.arch_specific]
        raise ValueError(f"unknown arch {arch!r}; choose from {sorted(known)}")
    return t.gencode if arch == base else f"-gencode=arch=compute_{t.cc}a,code=sm_{t.cc}a"


__all__ = ["Target", "TARGETS", "arch_number", "SMEM_LIMIT_BYTES", "target", "fits", "gencode"]

"""Kernel configurations: one frozen, hashable value per CUTLASS conv2d fprop kernel variant.

Every enum here mirrors a ``cutlass_library`` enum member of the same name (``to_cutlass()``
returns it), but this module never imports ``cutlass_library`` at import time, so the run-time
selector works without it.

``KernelConfig.name`` includes *every* field that changes the kernel (including swizzle, warp
shape and split-k, which ``cutlass_library``'s ``configuration_name`` leaves out).  That name is the
sweep's key, the trainer's class label and what both exports return.
"""
from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass, fields
from typing import Any


class _CutlassEnum(enum.Enum):
    """Enum whose member names equal those of a cutlass_library enum."""

    def to_cutlass(self) -> Any:
        import cutlass_library.library as lib  # lazy: only emission needs it

        return getattr(getattr(lib, _CUTLASS_ENUM_NAMES[type(self).__name__]), self.name)


_CUTLASS_ENUM_NAMES = {
    "Swizzle": "SwizzlingFunctor", "IteratorAlgorithm": "IteratorAlgorithm",
    "StrideSupport": "StrideSupport", "EpilogueFunctor": "EpilogueFunctor",
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



class SplitKMode(enum.Enum):
    """Split-k mode (``cutlass::conv::SplitKMode``).  Serial split-k only: parallel split-k needs a
    separate reduction kernel and is not part of the grid."""

    NoSplit = "none"
    Serial = "serial"


class Family(enum.Enum):
    """A data type + layout family: what the kernel reads and writes."""

    INT8_NC32HW32 = "i8nc32"
    FP16_NHWC = "f16nhwc"

    @property
    def spec(self) -> "FamilySpec":
        return FAMILY_SPECS[self]


@dataclass(frozen=True)
class FamilySpec:
    """Static description of a family, as data: element types, layouts, math instruction."""

    family: Family
    element_a: str  # cutlass_library DataType member names
    element_b: str
    element_c: str
    element_accumulator: str
    element_epilogue: str
    layout_a: str  # cutlass_library LayoutType member names
    layout_b: str
    layout_c: str
    math_operation: str  # cutlass_library MathOperation member name
    instruction_shape: tuple[int, int, int]
    bytes_a: int
    bytes_b: int
    epilogue: EpilogueFunctor
    channel_multiple: int  # C and K must be multiples of this for any kernel of the family
    description: str


FAMILY_SPECS: dict[Family, FamilySpec] = {
    Family.INT8_NC32HW32: FamilySpec(
        family=Family.INT8_NC32HW32,
        element_a="s8", element_b="s8", element_c="s8",
        element_accumulator="s32", element_epilogue="f32",
        layout_a="TensorNC32HW32", layout_b="TensorC32RSK32", layout_c="TensorNC32HW32",
        math_operation="multiply_add_saturate",
        instruction_shape=(16, 8, 32), bytes_a=1, bytes_b=1,
        epilogue=EpilogueFunctor.LinearCombinationClamp,
        channel_multiple=32,
        description="int8 NCxHWx<32> activations/output, filter CxRSKx<32> (reordered with "
        "cutlass::reorder_convK<32>), int32 accumulate, float clamp epilogue",
    ),
    Family.FP16_NHWC: FamilySpec(
        family=Family.FP16_NHWC,
        element_a="f16", element_b="f16", element_c="f16",
        element_accumulator="f32", element_epilogue="f32",
        layout_a="TensorNHWC", layout_b="TensorNHWC", layout_c="TensorNHWC",
        math_operation="multiply_add",
        instruction_shape=(16, 8, 16), bytes_a=2, bytes_b=2,
        epilogue=EpilogueFunctor.LinearCombination,
        channel_multiple=8,
        description="fp16 NHWC activations, KRSC filter, fp16 output, fp32 accumulate",
    ),
}

_NAME_RE = re.compile(
    r"^(?P<family>[a-z0-9]+)_t(?P<tb>\d+x\d+x\d+)_w(?P<warp>\d+x\d+x\d+)_i(?P<inst>\d+x\d+x\d+)"
    r"_s(?P<stages>\d+)_sw(?P<swizzle>\d+)_(?P<iterator>[a-z]+)_(?P<stride>[a-z]+)"
    r"_sk(?P<splitk>[a-z]*\d+)_a(?P<align>\d+x\d+x\d+)_(?P<epilogue>[a-z]+)$"
)


def _dims(text: str) -> tuple[int, int, int]:
    a, b, c = (int(v) for v in text.split("x"))
    return (a, b, c)


@functools.total_ordering
@dataclass(frozen=True)
class KernelConfig:
    """One CUTLASS 2.x implicit-GEMM conv2d fprop kernel variant (plus its split-k setting)."""

    family: Family
    tb: tuple[int, int, int]  # threadblock tile M, N, K
    warp: tuple[int, int, int]  # warp tile M, N, K
    inst: tuple[int, int, int]  # instruction shape
    stages: int
    swizzle: Swizzle = Swizzle.Identity1
    iterator: IteratorAlgorithm = IteratorAlgorithm.Optimized
    stride_support: StrideSupport = StrideSupport.Strided
    split_k_mode: SplitKMode = SplitKMode.NoSplit
    split_k_slices: int = 1
    align: tuple[int, int, int] = (16, 16, 8)  # alignment of A, B, C in elements
    epilogue: EpilogueFunctor = EpilogueFunctor.LinearCombinationClamp

    def __lt__(self, other: "KernelConfig") -> bool:  # enums are not orderable: order by name
        return self.name < other.name

    def __post_init__(self) -> None:
        for label, dims in (("tb", self.tb), ("warp", self.warp), ("inst", self.inst), ("align", self.align)):
            if len(dims) != 3 or any(int(d) <= 0 for d in dims):
                raise ValueError(f"{label} must be three positive ints, got {dims!r}")
        for i in range(3):
            if self.tb[i] % self.warp[i]:
                raise ValueError(f"threadblock tile {self.tb} is not a multiple of warp tile {self.warp}")
            if self.warp[i] % self.inst[i]:
                raise ValueError(f"warp tile {self.warp} is not a multiple of instruction {self.inst}")
        if self.stages < 2:
            raise ValueError(f"stages must be >= 2, got {self.stages}")
        if self.split_k_slices < 1:
            raise ValueError(f"split_k_slices must be >= 1, got {self.split_k_slices}")
        if (self.split_k_mode is SplitKMode.NoSplit) != (self.split_k_slices == 1):
            raise ValueError("split_k_slices > 1 needs split_k_mode=Serial and vice versa")

    # ----------------------------------------------------------------- derived
    @property
    def spec(self) -> FamilySpec:
        return FAMILY_SPECS[self.family]

    @property
    def warp_count(self) -> tuple[int, int, int]:
        return (self.tb[0] // self.warp[0], self.tb[1] // self.warp[1], self.tb[2] // self.warp[2])

    @property
    def threads(self) -> int:
        m, n, k = self.warp_count
        return 32 * m * n * k

    @property
    def smem_bytes_estimate(self) -> int:
        """Shared memory of the multistage mainloop (A and B tiles times stages).

        The collector records the exact ``sizeof(SharedStorage)`` from the compiled kernel; this
        estimate is used before compiling to drop configs no GPU could run."""
        s = self.spec
        return self.stages * self.tb[2] * (self.tb[0] * s.bytes_a + self.tb[1] * s.bytes_b)

    @property
    def kernel_name(self) -> str:
        """Name of the compiled kernel instance: every template parameter (split-k is a run-time
        argument of the same instance, so it is left out here and only here)."""
        t = "x".join(map(str, self.tb))
        w = "x".join(map(str, self.warp))
        i = "x".join(map(str, self.inst))
        a = "x".join(map(str, self.align))
        return (
            f"{self.family.value}_t{t}_w{w}_i{i}_s{self.stages}_sw{self.swizzle.value}"
            f"_{self.iterator.value}_{self.stride_support.value}_a{a}_{self.epilogue.value}"
        )

    @property
    def name(self) -> str:
        """Unique, stable name including every field that changes the kernel or its launch."""
        t = "x".join(map(str, self.tb))
        w = "x".join(map(str, self.warp))
        i = "x".join(map(str, self.inst))
        a = "x".join(map(str, self.align))
        sk = "1" if self.split_k_mode is SplitKMode.NoSplit else f"serial{self.split_k_slices}"
        return (
            f"{self.family.value}_t{t}_w{w}_i{i}_s{self.stages}_sw{self.swizzle.value}"
            f"_{self.iterator.value}_{self.stride_support.value}_sk{sk}_a{a}_{self.epilogue.value}"
        )

    def __str__(self) -> str:
        return self.name

    @classmethod
    def from_name(cls, name: str) -> "KernelConfig":
        """Parse a name produced by :attr:`name` (exact inverse)."""
        m = _NAME_RE.match(name)
        if not m:
            raise ValueError(f"not a KernelConfig name: {name!r}")
        sk = m["splitk"]
        if sk == "1":
            mode, slices = SplitKMode.NoSplit, 1
        elif sk.startswith("serial"):
            mode, slices = SplitKMode.Serial, int(sk[len("serial"):])
        else:
            raise ValueError(f"bad split-k field {sk!r} in {name!r}")
        cfg = cls(
            family=Family(m["family"]),
            tb=_dims(m["tb"]), warp=_dims(m["warp"]), inst=_dims(m["inst"]),
            stages=int(m["stages"]), swizzle=Swizzle(int(m["swizzle"])),
            iterator=IteratorAlgorithm(m["iterator"]), stride_support=StrideSupport(m["stride"]),
            split_k_mode=mode, split_k_slices=slices, align=_dims(m["align"]),
            epilogue=EpilogueFunctor(m["epilogue"]),
        )
        if cfg.name != name:
            raise ValueError(f"non-canonical KernelConfig name {name!r} (canonical: {cfg.name!r})")
        return cfg

    def to_dict(self) -> dict[str, Any]:
        """Flat dict of plain values (for tables, JSON and the C++ export)."""
        out: dict[str, Any] = {"name": self.name, "kernel_name": self.kernel_name}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, enum.Enum):
                out[f.name] = v.name
            elif isinstance(v, tuple):
                for ax, x in zip("mnk" if f.name != "align" else "abc", v):
                    out[f"{f.name}_{ax}"] = x
            else:
                out[f.name] = v
        out["warp_count_m"], out["warp_count_n"], out["warp_count_k"] = self.warp_count
        return out

    def with_split_k(self, slices: int) -> "KernelConfig":
        """The same kernel instance launched with ``slices`` serial split-k slices."""
        mode = SplitKMode.NoSplit if slices == 1 else SplitKMode.Serial
        return KernelConfig(**{**{f.name: getattr(self, f.name) for f in fields(self)},
                               "split_k_mode": mode, "split_k_slices": slices})


#: The configuration of the question in shared/seeds/000_*: DefaultConv2dFprop int8 NCxHWx<32>,
#: tile 128x128x64, warp 64x64x64, instruction 16x8x32, 4 stages, identity swizzle<1>,
#: optimized iterator, strided, alignment 16/16, clamp epilogue with 8 elements per access.
SEED_CONFIG = KernelConfig(
    family=Family.INT8_NC32HW32, tb=(128, 128, 64), warp=(64, 64, 64), inst=(16, 8, 32), stages=4,
    swizzle=Swizzle.Identity1, iterator=IteratorAlgorithm.Optimized,
    stride_support=StrideSupport.Strided, align=(16, 16, 8),
    epilogue=EpilogueFunctor.LinearCombinationClamp,
)

#: Shared-memory limits per block (bytes), by GPU, with the opt-in carve-out.
SMEM_LIMIT_BYTES: dict[str, int] = {
    "sm_90": 227 * 1024,  # H100/H200
    "sm_87": 163 * 1024,  # Jetson AGX Orin
    "sm_80": 163 * 1024,  # A100
    "sm_86": 99 * 1024,
    "sm_89": 99 * 1024,
}

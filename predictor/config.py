"""Kernel configurations: one frozen, hashable value per CUTLASS conv2d fprop kernel variant.

The knobs' enums live in :mod:`predictor.kernel_enums` (re-exported here); each mirrors a
``cutlass_library`` enum member of the same name (``to_cutlass()`` returns it), but neither module
imports ``cutlass_library`` at import time, so the run-time selector works without it.

``KernelConfig.name`` includes *every* field that changes the kernel (including swizzle, warp
shape and split-k, which ``cutlass_library``'s ``configuration_name`` leaves out).  That name is the
sweep's key, the trainer's class label and what both exports return.

Two kinds of kernel live here, chosen by the family (``FamilySpec.cutlass_api``):

* CUTLASS 2.x implicit-GEMM kernels (``cutlass::conv::device::ImplicitGemmConvolution``, mma.sync +
  cp.async; SM80 and later).  Name: ``<family>_t<tile>_w<warp>_i<inst>_s<stages>_sw<swizzle>
  _<iterator>_<stride>_sk<split-k>_a<align>_<epilogue>``.
* CUTLASS 3.x kernels (``cutlass::conv::device::ConvUniversalAdapter`` over
  ``cutlass::conv::collective::CollectiveBuilder``: TMA + wgmma, ``sm_90a`` only).  Their knobs are
  the tile, the thread-block cluster, the stage count (0 = ``StageCountAutoCarveout``: as many as fit
  next to the epilogue), the kernel schedule and the epilogue schedule.  Name: ``<family>_t<tile>
  _c<cluster>_s<stages|auto>_k<kernel schedule>_e<epilogue schedule>_a<align>_<epilogue>``.  Their
  warp and instruction shapes are derived (one consumer warp group computes the whole tile with
  ``wgmma.m64nNk16``, N = tile N), swizzle/iterator/stride support/split-k are fixed.
* CUTLASS 3.x SM90 GEMM kernels for the 1x1 convolutions (``FamilySpec.operation == "gemm"``:
  ``cutlass::gemm::device::GemmUniversalAdapter`` over the GEMM CollectiveBuilders): the same knobs
  plus the tile scheduler (default/persistent or stream-K) and ``swap_ab``.  Name: the 3.x name with
  ``_ts<tile scheduler>`` (then ``_swapab`` for a transposed kernel) after the epilogue schedule.
* Either 3.x kind may fix the epilogue's subtile (``epi_tile``, ``_ep<M>x<N>`` after the epilogue schedule;
  left out: ``EpilogueTileAuto``, which stores 128x32 (cooperative) or 64x32 (one warp group) at a time), and
  drop the epilogue's source tensor (``no_source``, ``_nosrc`` next: ``ElementC = void``, D = alpha * acc).

The CUTLASS 3.x fields (``cluster``, ``kernel_schedule``, ``epilogue_schedule``, ``tile_scheduler``)
default to values that leave every 2.x config -- and its name -- exactly as before.
"""
from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass, fields
from typing import Any

from . import targets
from .kernel_enums import (  # noqa: F401  (re-exported: the enums are part of this module's API)
    EpilogueFunctor, EpilogueSchedule, IteratorAlgorithm, KernelSchedule, SplitKMode,
    StrideSupport, Swizzle, TileScheduler, check_sm90_schedules,
)
from .targets import SMEM_LIMIT_BYTES


class Family(enum.Enum):
    """A data type + layout family: what the kernel reads and writes."""

    INT8_NC32HW32 = "i8nc32"
    FP16_NHWC = "f16nhwc"
    F16_NHWC_SM90 = "f16nhwc90"
    I8_NHWC_SM90 = "i8nhwc90"
    F16_GEMM_SM90 = "f16gemm90"
    I8_GEMM_SM90 = "i8gemm90"
    INT8_NHWC = "i8nhwc"

    @property
    def spec(self) -> "FamilySpec":
        return FAMILY_SPECS[self]

    # ---- the model-key protocol (predictor.model_key.ModelKey): a family is a key of one member
    @property
    def families(self) -> tuple["Family", ...]:
        """The families whose kernels the key's model chooses from: this one."""
        return (self,)

    @property
    def identifier(self) -> str:
        """C++ and file-safe name: the value (``select_<identifier>``, ``pkd_conv2d_<identifier>``)."""
        return self.value

    @property
    def partial(self) -> tuple["Family", ...]:
        """Members routed by ``pointwise`` (a choice's families that run only some convolutions): none
        for a family alone."""
        return ()

    @property
    def channel_multiple(self) -> int:
        return FAMILY_SPECS[self].channel_multiple

    @property
    def tensor_kind(self) -> str:
        return FAMILY_SPECS[self].tensor_kind

    @property
    def description(self) -> str:
        return FAMILY_SPECS[self].description


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
    #: 2: CUTLASS 2.x ``ImplicitGemmConvolution`` (``EmitConv2dInstance``, ``pk::Runner``);
    #: 3: CUTLASS 3.x ``ConvUniversalAdapter`` (``EmitConv3xInstance``, ``pk::Runner3x``).
    cutlass_api: int = 2
    #: Oldest architecture that runs the family's kernels.  An ``a`` suffix (``sm_90a``) means
    #: architecture-specific features (TMA im2col, wgmma): the kernels are compiled for exactly that
    #: target and run only there -- not on a Jetson Orin (sm_87), nor on later architectures.
    arch_min: str = "sm_80"
    #: Problems of the collector's default problem set (``predictor.collect --shapes 0``).
    default_problems: int = 1000
    #: ``"conv"``: implicit-GEMM conv kernels (any filter, stride, padding, dilation).  ``"gemm"``:
    #: CUTLASS 3.x GEMM kernels (``GemmUniversalAdapter``) that implement exactly the 1x1, stride-1,
    #: pad-0, dilation-1 convolutions (A = activations as (N*H*W) x C, B = filter K x C, D = output
    #: (N*H*W) x K); other problems are ``cannot_implement`` (:meth:`implements`).
    operation: str = "conv"

    def implements(self, r: int, s: int, stride: int, pad: int, dilation: int) -> bool:
        """Whether the family's kernels can run a conv with this filter and (square) stride, padding
        and dilation at all (a GEMM family: only 1x1, stride 1, pad 0, dilation 1)."""
        return self.operation == "conv" or (r, s, stride, pad, dilation) == (1, 1, 1, 0, 1)

    @property
    def tensors(self) -> tuple[str, ...]:
        """What the kernels read and write: element types and layouts of A, B and C.  Families with
        equal ``tensors`` run on the same tensors (one model may choose across them:
        :class:`predictor.model_key.Choice`)."""
        return (self.element_a, self.element_b, self.element_c, self.layout_a, self.layout_b, self.layout_c)

    @property
    def tensor_kind(self) -> str:
        """How the collector builds, references and checks the family's tensors, from its element
        type and activation layout: ``int8_nc32`` (NCxHWx<32>, filter CxRSKx<32> reordered),
        ``int8_nhwc`` or ``fp16_nhwc`` (NHWC, KRSC filter, NPQK output); see
        :func:`predictor.cuda_backend.tensor_kind`."""
        element = _TENSOR_ELEMENTS.get(self.element_a, self.element_a)
        return f"{element}_{_TENSOR_LAYOUTS.get(self.layout_a, self.layout_a)}"

    @property
    def arch_level(self) -> int:
        """The compute capability of :attr:`arch_min` as an integer (``sm_90a`` -> 90)."""
        return targets.arch_number(self.arch_min)

    def supports(self, arch: str) -> bool:
        """Whether kernels of the family can be built for and run on ``arch`` (``sm_XY``)."""
        try:
            want = targets.arch_number(arch)
        except ValueError:
            return False
        have = self.arch_level
        return want == have if self.arch_min.endswith("a") else want >= have

    def compile_arch(self, arch: str) -> str:
        """The ``sm_XY[a]`` to compile the family's kernels for when the target is ``arch``
        (raises ``ValueError`` where the family cannot run)."""
        if not self.supports(arch):
            raise ValueError(
                f"family {self.family.value} needs {self.arch_min} (CUTLASS {self.cutlass_api}.x kernels: "
                f"{'TMA + wgmma, Hopper only' if self.arch_min.endswith('a') else self.arch_min + ' or later'}); "
                f"it cannot be built for or run on {arch}"
                + (f" ({targets.TARGETS[arch].gpu})" if arch in targets.TARGETS else "")
                + ": leave the family out (e.g. --family) for this target")
        return self.arch_min if self.arch_min.endswith("a") else arch


#: Short names of element types and activation layouts in :attr:`FamilySpec.tensor_kind`.
_TENSOR_ELEMENTS = {"s8": "int8", "f16": "fp16"}
_TENSOR_LAYOUTS = {"TensorNC32HW32": "nc32", "TensorNHWC": "nhwc"}

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
        default_problems=2000,
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
    Family.F16_NHWC_SM90: FamilySpec(
        family=Family.F16_NHWC_SM90,
        element_a="f16", element_b="f16", element_c="f16",
        element_accumulator="f32", element_epilogue="f32",
        layout_a="TensorNHWC", layout_b="TensorNHWC", layout_c="TensorNHWC",
        math_operation="multiply_add",
        # wgmma.m64nNk16: N is the tile's N (config.inst carries it); this is the (M, 8, K) atom
        instruction_shape=(64, 8, 16), bytes_a=2, bytes_b=2,
        epilogue=EpilogueFunctor.LinearCombination,
        channel_multiple=8,  # TMA: 16-byte aligned rows of C (activation/filter) and K (output)
        description="fp16 NHWC activations, KRSC filter, fp16 output, fp32 accumulate; CUTLASS 3.x "
        "SM90 kernels (TMA im2col + wgmma, thread-block clusters), sm_90a only",
        cutlass_api=3, arch_min="sm_90a",
    ),
    Family.I8_NHWC_SM90: FamilySpec(
        family=Family.I8_NHWC_SM90,
        element_a="s8", element_b="s8", element_c="s8",
        element_accumulator="s32", element_epilogue="f32",
        layout_a="TensorNHWC", layout_b="TensorNHWC", layout_c="TensorNHWC",
        math_operation="multiply_add",
        instruction_shape=(64, 8, 32), bytes_a=1, bytes_b=1,  # wgmma.m64nNk32.s32.s8.s8
        # cutlass::epilogue::fusion::LinearCombination<int8_t, float>: alpha * float(acc) + beta * C,
        # converted to int8 with round-to-nearest and saturation (cvt.rni.sat), as the clamp epilogue
        epilogue=EpilogueFunctor.LinearCombination,
        channel_multiple=16,  # TMA: 16-byte aligned rows of C (activation/filter) and K (output)
        description="int8 NHWC activations, KRSC filter, int8 output, int32 accumulate, float "
        "epilogue (saturating); CUTLASS 3.x SM90 kernels (TMA im2col + wgmma, thread-block clusters), "
        "sm_90a only",
        cutlass_api=3, arch_min="sm_90a",
    ),
    Family.F16_GEMM_SM90: FamilySpec(
        family=Family.F16_GEMM_SM90,
        element_a="f16", element_b="f16", element_c="f16",
        element_accumulator="f32", element_epilogue="f32",
        # the conv's tensors (what the collector allocates and checks); the kernel sees them as the
        # GEMM's row-major A (NHWC), column-major B (KRSC = K x C) and row-major C/D (NPQK): "TN"
        layout_a="TensorNHWC", layout_b="TensorNHWC", layout_c="TensorNHWC",
        math_operation="multiply_add",
        instruction_shape=(64, 8, 16), bytes_a=2, bytes_b=2,
        epilogue=EpilogueFunctor.LinearCombination,
        channel_multiple=8,  # TMA: 16-byte aligned rows of C (activation/filter) and K (output)
        description="1x1 / stride 1 / pad 0 / dilation 1 fp16 NHWC convolutions as CUTLASS 3.x SM90 "
        "GEMMs (TMA + wgmma; warp-specialized, persistent ping-pong and cooperative schedules, "
        "stream-K), fp32 accumulate, sm_90a only",
        cutlass_api=3, arch_min="sm_90a", operation="gemm",
    ),
    Family.I8_GEMM_SM90: FamilySpec(
        family=Family.I8_GEMM_SM90,
        # i8nhwc90's tensors and epilogue exactly (a choice i8nhwc90+i8gemm90 needs equal ``tensors``):
        # int8 NHWC activations, KRSC filter, int8 NPQK output, int32 accumulate, float
        # LinearCombination<int8_t, float> rounded to nearest with saturation
        element_a="s8", element_b="s8", element_c="s8",
        element_accumulator="s32", element_epilogue="f32",
        # as the GEMM's row-major A (NHWC), column-major B (KRSC = K x C), row-major C/D (NPQK): "TN",
        # the only operand majorness int8 wgmma has (both K-major)
        layout_a="TensorNHWC", layout_b="TensorNHWC", layout_c="TensorNHWC",
        math_operation="multiply_add",
        instruction_shape=(64, 8, 32), bytes_a=1, bytes_b=1,  # wgmma.m64nNk32.s32.s8.s8
        epilogue=EpilogueFunctor.LinearCombination,
        channel_multiple=16,  # TMA: 16-byte aligned rows of C (activation/filter) and K (output)
        description="1x1 / stride 1 / pad 0 / dilation 1 int8 NHWC convolutions as CUTLASS 3.x SM90 "
        "GEMMs (TMA + wgmma; warp-specialized, persistent ping-pong and cooperative schedules, "
        "stream-K), int32 accumulate, float epilogue (saturating), sm_90a only",
        cutlass_api=3, arch_min="sm_90a", operation="gemm",
    ),
    Family.INT8_NHWC: FamilySpec(
        family=Family.INT8_NHWC,
        # i8nhwc90's tensors (a choice i8nhwc+i8nhwc90 needs equal ``tensors``) through CUTLASS 2.x
        # SM80-family kernels (what an Orin runs): cutlass_library's GenerateSM80_TensorOp_16832_TN
        # int8 NHWC fprop with int8 output and the float clamp epilogue (round to nearest, saturate:
        # the same int8 as i8nhwc90's LinearCombination<int8_t, float>)
        element_a="s8", element_b="s8", element_c="s8",
        element_accumulator="s32", element_epilogue="f32",
        layout_a="TensorNHWC", layout_b="TensorNHWC", layout_c="TensorNHWC",
        math_operation="multiply_add_saturate",
        instruction_shape=(16, 8, 32), bytes_a=1, bytes_b=1,
        epilogue=EpilogueFunctor.LinearCombinationClamp,
        channel_multiple=16,  # 16-byte (16-element) aligned rows of C (activation/filter) and K (output)
        default_problems=2000,
        description="int8 NHWC activations, KRSC filter, int8 output, int32 accumulate, float clamp "
        "epilogue (CUTLASS 2.x SM80-family kernels: Ampere, Orin, Hopper)",
    ),
}

_NAME_RE = re.compile(
    r"^(?P<family>[a-z0-9]+)_t(?P<tb>\d+x\d+x\d+)_w(?P<warp>\d+x\d+x\d+)_i(?P<inst>\d+x\d+x\d+)"
    r"_s(?P<stages>\d+)_sw(?P<swizzle>\d+)_(?P<iterator>[a-z]+)_(?P<stride>[a-z]+)"
    r"_sk(?P<splitk>[a-z]*\d+)_a(?P<align>\d+x\d+x\d+)_(?P<epilogue>[a-z]+)$"
)


#: Names of CUTLASS 3.x configs (``FamilySpec.cutlass_api == 3``).
_NAME3_RE = re.compile(
    r"^(?P<family>[a-z0-9]+)_t(?P<tb>\d+x\d+x\d+)_c(?P<cluster>\d+x\d+x\d+)_s(?P<stages>auto|\d+)"
    r"_k(?P<kernel_schedule>[a-z0-9]+)_e(?P<epilogue_schedule>[a-z0-9]+)(?:_ep(?P<epi_tile>\d+x\d+))?"
    r"(?P<no_source>_nosrc)?(?:_ts(?P<tile_scheduler>[a-z]+))?"
    r"(?P<swap_ab>_swapab)?_a(?P<align>\d+x\d+x\d+)_(?P<epilogue>[a-z]+)$"
)


def _dims(text: str) -> tuple[int, int, int]:
    a, b, c = (int(v) for v in text.split("x"))
    return (a, b, c)


@functools.total_ordering
@dataclass(frozen=True)
class KernelConfig:
    """One CUTLASS implicit-GEMM conv2d fprop kernel variant (plus its split-k setting).

    CUTLASS 2.x families use every field but the three CUTLASS 3.x ones at the end, which keep their
    defaults.  CUTLASS 3.x families (:meth:`sm90` builds them) use ``tb``, ``stages`` (0 = auto),
    ``cluster``, ``kernel_schedule`` and ``epilogue_schedule``; their ``warp`` and ``inst`` are derived
    (:func:`derived_warp_inst`) and the other fields hold fixed values, all checked here, so a config
    has exactly one name and ``from_name(c.name) == c``."""

    family: Family
    tb: tuple[int, int, int]  # threadblock (CTA) tile M, N, K
    warp: tuple[int, int, int]  # warp tile M, N, K (3.x: the tile of one consumer warp group)
    inst: tuple[int, int, int]  # instruction shape (3.x: the wgmma shape)
    stages: int  # 2.x: >= 2; 3.x: 0 = StageCountAutoCarveout (as many as fit), else >= 2
    swizzle: Swizzle = Swizzle.Identity1
    iterator: IteratorAlgorithm = IteratorAlgorithm.Optimized
    stride_support: StrideSupport = StrideSupport.Strided
    split_k_mode: SplitKMode = SplitKMode.NoSplit
    split_k_slices: int = 1
    align: tuple[int, int, int] = (16, 16, 8)  # alignment of A, B, C in elements
    epilogue: EpilogueFunctor = EpilogueFunctor.LinearCombinationClamp
    # ---- CUTLASS 3.x only (defaults: a 2.x kernel, name unchanged)
    cluster: tuple[int, int, int] = (1, 1, 1)  # thread-block cluster M, N, K (in CTAs)
    kernel_schedule: KernelSchedule = KernelSchedule.NotApplicable
    epilogue_schedule: EpilogueSchedule = EpilogueSchedule.NotApplicable
    tile_scheduler: TileScheduler = TileScheduler.NotApplicable  # GEMM family only
    swap_ab: bool = False  # GEMM only: D^T = filter x activations^T, column-major D (N*H*W is the tile's N)
    epi_tile: tuple[int, int] = (0, 0)  # 3.x TMA epilogues: the subtile stored at a time, M x N; (0, 0): auto
    no_source: bool = False  # 3.x TMA epilogues: no source C (ElementC void: D = alpha * acc, beta must be 0)

    def __lt__(self, other: "KernelConfig") -> bool:  # enums are not orderable: order by name
        return self.name < other.name

    def __post_init__(self) -> None:
        for label, dims in (("tb", self.tb), ("warp", self.warp), ("inst", self.inst), ("align", self.align),
                            ("cluster", self.cluster)):
            if len(dims) != 3 or any(int(d) <= 0 for d in dims):
                raise ValueError(f"{label} must be three positive ints, got {dims!r}")
        for i in range(3):
            if self.tb[i] % self.warp[i]:
                raise ValueError(f"threadblock tile {self.tb} is not a multiple of warp tile {self.warp}")
            if self.warp[i] % self.inst[i]:
                raise ValueError(f"warp tile {self.warp} is not a multiple of instruction {self.inst}")
        if self.split_k_slices < 1:
            raise ValueError(f"split_k_slices must be >= 1, got {self.split_k_slices}")
        if (self.split_k_mode is SplitKMode.NoSplit) != (self.split_k_slices == 1):
            raise ValueError("split_k_slices > 1 needs split_k_mode=Serial and vice versa")
        if self.swap_ab and self.spec.operation != "gemm":
            raise ValueError(f"{self.family.value}: swap_ab is a GEMM family knob")
        if (self.epi_tile != (0, 0) or self.no_source) and self.spec.cutlass_api != 3:
            raise ValueError(f"{self.family.value}: epi_tile and no_source are CUTLASS 3.x knobs")
        if self.spec.cutlass_api == 3:
            self._check_3x()
            return
        if self.stages < 2:
            raise ValueError(f"stages must be >= 2, got {self.stages}")
        if (self.cluster != (1, 1, 1) or self.kernel_schedule is not KernelSchedule.NotApplicable
                or self.epilogue_schedule is not EpilogueSchedule.NotApplicable
                or self.tile_scheduler is not TileScheduler.NotApplicable):
            raise ValueError(f"{self.family.value} is a CUTLASS 2.x family: cluster, kernel_schedule, "
                             "epilogue_schedule and tile_scheduler must keep their defaults")

    def _check_3x(self) -> None:
        spec = self.spec
        f = self.family.value
        if self.stages != 0 and self.stages < 2:
            raise ValueError(f"stages must be 0 (auto) or >= 2, got {self.stages}")
        if self.kernel_schedule is KernelSchedule.NotApplicable or self.epilogue_schedule is EpilogueSchedule.NotApplicable:
            raise ValueError(f"{f} is a CUTLASS 3.x family: give a kernel and an epilogue schedule")
        if self.cluster[2] != 1:
            raise ValueError(f"cluster K must be 1, got {self.cluster}")
        atom = spec.instruction_shape
        if self.tb[0] % atom[0] or self.tb[1] % atom[1] or not 8 <= self.tb[1] <= 256 or self.tb[2] % atom[2]:
            raise ValueError(f"{f}: tile {self.tb} does not fit wgmma (M a multiple of {atom[0]}, "
                             f"N a multiple of {atom[1]} up to 256, K a multiple of {atom[2]})")
        warp, inst = derived_warp_inst(self.family, self.tb, self.kernel_schedule)
        if (self.warp, self.inst) != (warp, inst):
            raise ValueError(f"{f}: warp/inst are derived from the tile: warp={warp}, inst={inst}")
        fixed = {"swizzle": Swizzle.Identity1, "iterator": IteratorAlgorithm.Optimized,
                 "stride_support": StrideSupport.Strided, "split_k_mode": SplitKMode.NoSplit,
                 "align": tma_alignment(self.family), "epilogue": spec.epilogue}
        for k, v in fixed.items():
            if getattr(self, k) != v:
                raise ValueError(f"{f}: {k} must be {v!r} for a CUTLASS 3.x kernel, got {getattr(self, k)!r}")
        check_sm90_schedules(self.family.value, self.spec.operation, self.tb, self.kernel_schedule,
                             self.epilogue_schedule, self.tile_scheduler, self.epi_tile, self.no_source)

    @classmethod
    def sm90(cls, family: Family, tb: tuple[int, int, int], cluster: tuple[int, int, int] = (1, 1, 1),
             stages: int = 0, kernel_schedule: KernelSchedule | None = None,
             epilogue_schedule: EpilogueSchedule | None = None,
             tile_scheduler: TileScheduler | None = None, swap_ab: bool = False,
             epi_tile: tuple[int, int] = (0, 0), no_source: bool = False) -> "KernelConfig":
        """A CUTLASS 3.x config of ``family`` (the derived and fixed fields filled in).  Schedules
        left out: conv, the implicit-GEMM warp-specialized kernel with the TMA epilogue; GEMM, the
        cooperative kernel with its TMA epilogue and the default (persistent) tile scheduler."""
        gemm = family.spec.operation == "gemm"
        ks = kernel_schedule or (KernelSchedule.TmaWarpSpecializedCooperative if gemm
                                 else KernelSchedule.ImplicitTmaWarpSpecializedSm90)
        es = epilogue_schedule or (EpilogueSchedule.TmaWarpSpecializedCooperative
                                   if ks is KernelSchedule.TmaWarpSpecializedCooperative
                                   else EpilogueSchedule.TmaWarpSpecialized)
        ts = tile_scheduler or (TileScheduler.Default if gemm else TileScheduler.NotApplicable)
        tb = (int(tb[0]), int(tb[1]), int(tb[2]))
        warp, inst = derived_warp_inst(family, tb, ks)
        return cls(family=family, tb=tb, warp=warp, inst=inst, stages=stages, align=tma_alignment(family),
                   epilogue=family.spec.epilogue, cluster=(int(cluster[0]), int(cluster[1]), int(cluster[2])),
                   kernel_schedule=ks, epilogue_schedule=es, tile_scheduler=ts, swap_ab=swap_ab,
                   epi_tile=(int(epi_tile[0]), int(epi_tile[1])), no_source=bool(no_source))

    # ----------------------------------------------------------------- derived
    @property
    def spec(self) -> FamilySpec:
        return FAMILY_SPECS[self.family]

    @property
    def cutlass_api(self) -> int:
        return self.spec.cutlass_api

    @property
    def warp_count(self) -> tuple[int, int, int]:
        return (self.tb[0] // self.warp[0], self.tb[1] // self.warp[1], self.tb[2] // self.warp[2])

    @property
    def threads(self) -> int:
        m, n, k = self.warp_count
        if self.kernel_schedule is KernelSchedule.TmaWarpSpecializedPingpong:  # 2 consumers, a tile each
            return 128 * 3
        if self.cutlass_api == 3:  # one producer warp group + the consumer warp groups
            return 128 * (1 + m * n * k)
        return 32 * m * n * k

    @property
    def smem_bytes_estimate(self) -> int:
        """Shared memory of the multistage mainloop (A and B tiles times stages).

        The collector records the exact ``sizeof(SharedStorage)`` from the compiled kernel; this
        estimate is used before compiling to drop configs no GPU could run.  A CUTLASS 3.x config
        with automatic stages fills the SM90 block limit by construction."""
        s = self.spec
        per_stage = self.tb[2] * (self.tb[0] * s.bytes_a + self.tb[1] * s.bytes_b)
        if self.cutlass_api == 3 and self.stages == 0:
            return SMEM_LIMIT_BYTES["sm_90"]
        return self.stages * per_stage

    def fits(self, target: str, smem_bytes: int | None = None) -> bool:
        """Whether a GPU of ``target`` (:mod:`predictor.targets`) runs this config: its family runs
        there and one block's shared memory fits -- the measured ``smem_bytes`` (the sweep's
        column), else :attr:`smem_bytes_estimate`."""
        smem = smem_bytes if smem_bytes is not None and smem_bytes > 0 else self.smem_bytes_estimate
        return self.spec.supports(target) and targets.fits(smem, target)

    def _stages_text(self) -> str:
        return "auto" if self.stages == 0 else str(self.stages)

    @property
    def kernel_name(self) -> str:
        """Name of the compiled kernel instance: every template parameter (split-k is a run-time
        argument of the same instance, so it is left out here and only here)."""
        return self._name(with_split_k=False)

    @property
    def name(self) -> str:
        """Unique, stable name including every field that changes the kernel or its launch."""
        return self._name(with_split_k=True)

    def _name(self, with_split_k: bool) -> str:
        t = "x".join(map(str, self.tb))
        a = "x".join(map(str, self.align))
        if self.cutlass_api == 3:  # split-k is always 1; warp/inst/swizzle/iterator/stride are fixed
            c = "x".join(map(str, self.cluster))
            ts = "" if self.tile_scheduler is TileScheduler.NotApplicable else f"_ts{self.tile_scheduler.value}"
            swap = "_swapab" if self.swap_ab else ""
            ep = "" if self.epi_tile == (0, 0) else f"_ep{self.epi_tile[0]}x{self.epi_tile[1]}"
            ep += "_nosrc" if self.no_source else ""
            return (f"{self.family.value}_t{t}_c{c}_s{self._stages_text()}_k{self.kernel_schedule.value}"
                    f"_e{self.epilogue_schedule.value}{ep}{ts}{swap}_a{a}_{self.epilogue.value}")
        w = "x".join(map(str, self.warp))
        i = "x".join(map(str, self.inst))
        sk = "1" if self.split_k_mode is SplitKMode.NoSplit else f"serial{self.split_k_slices}"
        return (
            f"{self.family.value}_t{t}_w{w}_i{i}_s{self.stages}_sw{self.swizzle.value}"
            f"_{self.iterator.value}_{self.stride_support.value}{f'_sk{sk}' if with_split_k else ''}"
            f"_a{a}_{self.epilogue.value}"
        )

    def __str__(self) -> str:
        return self.name

    @classmethod
    def from_name(cls, name: str) -> "KernelConfig":
        """Parse a name produced by :attr:`name` (exact inverse)."""
        m3 = _NAME3_RE.match(name)
        if m3:
            try:
                cfg = cls.sm90(
                    Family(m3["family"]), _dims(m3["tb"]), _dims(m3["cluster"]),
                    0 if m3["stages"] == "auto" else int(m3["stages"]),
                    KernelSchedule(m3["kernel_schedule"]), EpilogueSchedule(m3["epilogue_schedule"]),
                    TileScheduler(m3["tile_scheduler"]) if m3["tile_scheduler"] else None, bool(m3["swap_ab"]),
                    tuple(int(v) for v in m3["epi_tile"].split("x")) if m3["epi_tile"] else (0, 0),  # type: ignore[arg-type]
                    bool(m3["no_source"]))
            except ValueError as exc:
                raise ValueError(f"bad KernelConfig name {name!r}: {exc}") from exc
            if cfg.name != name:
                raise ValueError(f"non-canonical KernelConfig name {name!r} (canonical: {cfg.name!r})")
            return cfg
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
            if (f.name, v) in (("epi_tile", (0, 0)), ("no_source", False)):  # defaults: older tables unchanged
                continue
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


def tma_alignment(family: Family) -> tuple[int, int, int]:
    """Alignment (elements) of A, B, C of a CUTLASS 3.x family: 128 bits, what TMA needs and what
    ``EmitConv3xInstance`` emits (``128 / cute::sizeof_bits_v<Element>``)."""
    s = family.spec
    bits = {"f16": 16, "bf16": 16, "s8": 8, "u8": 8, "f32": 32, "s32": 32}
    return (128 // bits[s.element_a], 128 // bits[s.element_b], 128 // bits[s.element_c])


def derived_warp_inst(family: Family, tb: tuple[int, int, int],
                      kernel_schedule: KernelSchedule) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(warp, inst) of a CUTLASS 3.x config: the SM90 builders tile the MMA with one consumer warp
    group per tile (the conv and GEMM warp-specialized schedules; ping-pong's two warp groups each
    take a whole tile), so the "warp" tile is the CTA tile -- except the cooperative schedule, whose
    two warp groups split the tile along M -- and pick ``wgmma.m64nNk<K>`` with N = the tile's N
    (``ss_op_selector``)."""
    atom = family.spec.instruction_shape
    inst = (atom[0], int(tb[1]), atom[2])
    if kernel_schedule is KernelSchedule.TmaWarpSpecializedCooperative and tb[0] >= 128:
        return ((tb[0] // 2, tb[1], tb[2]), inst)
    return (tuple(tb), inst)  # type: ignore[return-value]


#: The configuration of the question in shared/seeds/000_*: DefaultConv2dFprop int8 NCxHWx<32>,
#: tile 128x128x64, warp 64x64x64, instruction 16x8x32, 4 stages, identity swizzle<1>,
#: optimized iterator, strided, alignment 16/16, clamp epilogue with 8 elements per access.
SEED_CONFIG = KernelConfig(
    family=Family.INT8_NC32HW32, tb=(128, 128, 64), warp=(64, 64, 64), inst=(16, 8, 32), stages=4,
    swizzle=Swizzle.Identity1, iterator=IteratorAlgorithm.Optimized,
    stride_support=StrideSupport.Strided, align=(16, 16, 8),
    epilogue=EpilogueFunctor.LinearCombinationClamp,
)

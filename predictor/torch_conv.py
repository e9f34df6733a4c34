"""The PyTorch path: conv2d through a built CUTLASS dispatcher, as a ``torch.library`` custom op.

    from predictor import torch_conv
    torch_conv.load("export/dispatch_sm90/h200_dispatch_sm_90a.so")   # python -m predictor.dispatcher build ...
    model = model.half().to(memory_format=torch.channels_last).cuda().eval()
    report = torch_conv.convert(model, family="f16nhwc90")   # eligible nn.Conv2d -> CutlassConv2d
    y = model(x)                                             # CUDA-graph capturable

``torch.ops.predictor.conv2d(x, w, stride, pad, dilation, family, sms, tuned=False)`` runs
``y = conv2d(x, w)`` with the kernel the dispatcher's model selects (selection in C++, inside the
dispatcher; ``tuned=True``: the fastest of the model's candidates, timed on the first call of a
shape, ``convert(..., tuned=True)``) on the current stream: ``x`` fp16 NHWC (an NCHW tensor in ``channels_last`` memory), ``w`` fp16 KRSC (a
``[K, C, R, S]`` tensor in ``channels_last`` memory), ``y`` fp16 ``[N, K, P, Q]`` in
``channels_last`` memory.  It has a fake (meta) implementation, so ``torch.compile`` and shape
propagation see it.

:func:`convert` swaps every eligible ``nn.Conv2d`` of a module for a :class:`CutlassConv2d` that
calls the op (the bias is added after it); a layer is eligible when it is fp16, ``groups == 1``,
square stride/padding/dilation with zero padding mode, and the dispatcher's model selects a kernel
for its shape (channel counts the family can hold).  Other layers stay on PyTorch (cuDNN); the
returned :class:`ConvertReport` lists both, with the reason.  Shapes are known per call only, so a
layer is checked again at its first call: a shape the dispatcher refuses raises ``RuntimeError``.

Needs ``torch`` (``pip install 'cutlass-conv-predictor[gpu]'``) and a dispatcher built for the GPU.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .features import DEFAULT_SMS, ConvProblem
from .model_key import model_key

_LOG = logging.getLogger(__name__)

OP_NAME = "predictor::conv2d"
#: The loaded dispatchers by family (the only state of this module; :func:`load` fills it).
_DISPATCHERS: dict[str, Any] = {}
_WORKSPACE: dict[tuple[str, tuple[int, ...], int], int] = {}
_OP: Any = None
_SCHEMA = "(Tensor x, Tensor w, int stride, int pad, int dilation, str family, int sms, bool tuned=False) -> Tensor"

#: Dispatcher status codes (``predictor.dispatcher``'s C ABI) and what they mean.
STATUS = {0: "ok", -1: "invalid shape", -2: "shape the family cannot run", -3: "no portfolio kernel can implement it",
          2: "workspace too small", 3: "initialisation error", 4: "launch error"}


def _torch() -> Any:
    from .cli import require

    return require("torch", "gpu", "the PyTorch path (predictor.torch_conv)")


def problem(x_shape: tuple[int, ...] | Any, w_shape: tuple[int, ...] | Any, stride: int, pad: int,
            dilation: int) -> ConvProblem:
    """The conv problem of an NCHW input and a KCRS filter (sizes only)."""
    n, c, h, w = (int(v) for v in x_shape)
    k, c2, r, s = (int(v) for v in w_shape)
    if c2 != c:
        raise ValueError(f"filter has C={c2}, input has C={c}")
    return ConvProblem(n, c, h, w, k, r, s, int(stride), int(pad), int(dilation))


def _shape10(p: ConvProblem) -> tuple[int, ...]:
    return (p.N, p.C, p.H, p.W, p.K, p.R, p.S, p.stride, p.pad, p.dilation)


def _define_op() -> Any:
    torch = _torch()
    global _OP
    if _OP is not None:
        return _OP

    # explicit schema: this module's annotations are strings (``from __future__ import annotations``)
    @torch.library.custom_op(OP_NAME, mutates_args=(), schema=_SCHEMA)
    def conv2d(x: torch.Tensor, w: torch.Tensor, stride: int, pad: int, dilation: int, family: str,
               sms: int, tuned: bool = False) -> torch.Tensor:
        p = problem(x.shape, w.shape, stride, pad, dilation)
        disp = _DISPATCHERS.get(family)
        if disp is None:
            raise RuntimeError(f"no dispatcher loaded for family {family!r}: call predictor.torch_conv.load()")
        x = x.contiguous(memory_format=torch.channels_last)
        w = w.contiguous(memory_format=torch.channels_last)
        y = torch.empty((p.N, p.K, p.P, p.Q), dtype=x.dtype, device=x.device, memory_format=torch.channels_last)
        shape = _shape10(p)
        key = (family, shape, int(sms))
        need = _WORKSPACE.get(key)
        if need is None:
            need = _WORKSPACE[key] = disp.workspace_bytes(family, shape, sms)
        ws = torch.empty(max(need, 1), dtype=torch.uint8, device=x.device)
        st, _ = disp.conv2d(family, shape, sms, x.data_ptr(), w.data_ptr(), y.data_ptr(), 1.0, 0.0,
                            ws.data_ptr(), need, torch.cuda.current_stream(x.device).cuda_stream, tuned=tuned)
        if st != 0:
            raise RuntimeError(f"{OP_NAME} ({family}, {p.key}): dispatcher status {st} ({STATUS.get(st, '?')})")
        return y

    @conv2d.register_fake
    def _(x: torch.Tensor, w: torch.Tensor, stride: int, pad: int, dilation: int, family: str,
          sms: int, tuned: bool = False) -> torch.Tensor:
        p = problem(x.shape, w.shape, stride, pad, dilation)
        return x.new_empty((p.N, p.K, p.P, p.Q)).contiguous(memory_format=torch.channels_last)

    _OP = conv2d
    return _OP


def load(library: str | Path, families: list[str] | None = None) -> list[str]:
    """Load a built dispatcher library for ``families`` (families or choices, default: every one it
    holds) and register the op; returns the families now served by it."""
    from .dispatcher import Dispatcher

    disp = Dispatcher(library)
    held = [f.value for f in disp.families]
    if not held:
        raise ValueError(f"{library}: no pkd_conv2d_<family> entry point (not a generated dispatcher?)")
    chosen = held if families is None else [model_key(f).value for f in families]
    missing = sorted(set(chosen) - set(held))
    if missing:
        raise ValueError(f"{library} holds families {held}, not {missing}")
    _define_op()
    for f in chosen:
        _DISPATCHERS[f] = disp
    return chosen


def loaded_families() -> list[str]:
    """Families with a loaded dispatcher."""
    return sorted(_DISPATCHERS)


def _square(v: Any, what: str) -> int:
    if isinstance(v, str):
        raise ValueError(f"{what}={v!r}")
    a = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
    if len(set(a)) != 1:
        raise ValueError(f"{what}={a} is not square")
    return int(a[0])


def conv_params(conv: Any) -> tuple[int, int, int]:
    """(stride, pad, dilation) of an ``nn.Conv2d``; ``ValueError`` saying why it is not one square
    number each (string padding is resolved for stride 1 and odd filters)."""
    if conv.groups != 1:
        raise ValueError(f"groups={conv.groups}")
    if conv.padding_mode != "zeros":
        raise ValueError(f"padding_mode={conv.padding_mode!r}")
    stride = _square(conv.stride, "stride")
    dilation = _square(conv.dilation, "dilation")
    padding = conv.padding
    if padding == "valid":
        padding = 0
    elif padding == "same":
        r, s = conv.kernel_size
        if r != s or r % 2 == 0 or stride != 1:
            raise ValueError("padding='same' with an even or non-square filter")
        padding = dilation * (r - 1) // 2
    return stride, _square(padding, "padding"), dilation


_MODULE_CLASS: list[type] = []


def module_class() -> type:
    """The ``CutlassConv2d`` module class (an ``nn.Module``; defined on first use: torch is optional)."""
    if _MODULE_CLASS:
        return _MODULE_CLASS[0]
    torch = _torch()

    class CutlassConv2d(torch.nn.Module):
        """An ``nn.Conv2d`` whose forward runs ``torch.ops.predictor.conv2d``."""

        def __init__(self, conv: Any, family: str, sms: int, tuned: bool = False) -> None:
            super().__init__()
            self.stride, self.pad, self.dilation = conv_params(conv)
            self.family, self.sms, self.tuned = family, int(sms), bool(tuned)
            self.weight = torch.nn.Parameter(conv.weight.detach().contiguous(memory_format=torch.channels_last),
                                             requires_grad=False)
            self.bias = None if conv.bias is None else torch.nn.Parameter(conv.bias.detach(), requires_grad=False)

        def forward(self, x: Any) -> Any:
            y = torch.ops.predictor.conv2d(x, self.weight, self.stride, self.pad, self.dilation, self.family,
                                           self.sms, self.tuned)
            return y if self.bias is None else y + self.bias.view(1, -1, 1, 1)

        def extra_repr(self) -> str:
            k, c, r, s = self.weight.shape
            return f"{c}, {k}, kernel_size=({r}, {s}), stride={self.stride}, padding={self.pad}, " \
                   f"dilation={self.dilation}, family={self.family}" + (", tuned" if self.tuned else "")

    _MODULE_CLASS.append(CutlassConv2d)
    return CutlassConv2d


@dataclass
class ConvertReport:
    """What :func:`convert` did: converted layer names and the others with the reason."""

    converted: list[str] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{len(self.converted)} conv layer(s) converted, {len(self.kept)} kept on PyTorch"


def convert(module: Any, family: str = "f16nhwc", sms: int = DEFAULT_SMS,
            example_input: Any | None = None, tuned: bool = False) -> ConvertReport:
    """Swap the eligible ``nn.Conv2d`` layers of ``module`` (in place) for ``CutlassConv2d`` (:func:`module_class`).

    Without ``example_input`` a layer is eligible on its parameters (fp16, groups 1, square
    stride/padding/dilation, channels the family can hold); with it, the module runs once on
    ``example_input`` (forward hooks record each layer's input shape) and a layer is converted only
    where the dispatcher's model selects a kernel for that shape.  ``family`` may be a choice
    (``"f16nhwc+f16nhwc90"``, a dispatcher generated for it): each layer then runs the kernel of
    whichever member family the model picks for its shape.

    ``tuned=True``: the layers run the dispatcher's first-call tuning (``pkd_conv2d_tuned_<family>``,
    :mod:`predictor.dispatcher`): the first eager call of each shape times the model's candidates once
    and keeps the fastest (it synchronises the device); later calls, and CUDA-graph captures, run the
    kept kernel.  Run the model once eagerly before capturing it: a capture never tunes (a shape not
    tuned yet runs the static pick)."""
    torch = _torch()
    family = model_key(family).value  # a family or a choice such as "f16nhwc+f16nhwc90"
    disp = _DISPATCHERS.get(family)
    if disp is None:
        raise ValueError(f"no dispatcher loaded for family {family!r} (loaded: {loaded_families()})")
    if tuned:
        disp._fn("conv2d_tuned", family)  # ValueError for a library built before first-call tuning
    shapes: dict[str, tuple[int, ...]] = {}
    if example_input is not None:
        def record(name: str) -> Any:
            def hook(mod: Any, inputs: Any, output: Any) -> None:  # returns None: the output stays
                shapes.setdefault(name, tuple(inputs[0].shape))
            return hook

        hooks = [m.register_forward_hook(record(name))
                 for name, m in module.named_modules() if isinstance(m, torch.nn.Conv2d)]
        try:
            with torch.no_grad():
                module(example_input)
        finally:
            for h in hooks:
                h.remove()
    cls = module_class()
    report = ConvertReport()
    for name, conv in list(module.named_modules()):
        if not isinstance(conv, torch.nn.Conv2d):
            continue
        reason = _ineligible(conv, family, sms, disp, shapes.get(name), example_input is not None)
        if reason:
            report.kept[name] = reason
            continue
        parent, _, leaf = name.rpartition(".")
        setattr(module.get_submodule(parent) if parent else module, leaf, cls(conv, family, sms, tuned))
        report.converted.append(name)
    _LOG.info("%s: %s", family, report)
    return report


def _ineligible(conv: Any, family: str, sms: int, disp: Any, x_shape: tuple[int, ...] | None,
                traced: bool) -> str:
    torch = _torch()
    if conv.weight.dtype != torch.float16:
        return f"dtype {conv.weight.dtype}"
    try:
        stride, pad, dilation = conv_params(conv)
    except ValueError as exc:
        return str(exc)
    if traced and x_shape is None:
        return "not called by the example input"
    if x_shape is None:
        k, c, r, s = conv.weight.shape
        x_shape = (1, c, max(r, 8) * 8, max(s, 8) * 8)  # any size the filter fits: channels decide
    p = problem(x_shape, conv.weight.shape, stride, pad, dilation)
    if p.P < 1 or p.Q < 1:
        return "output smaller than 1x1"
    pick = disp.select(family, _shape10(p), sms)
    if pick < 0:
        return f"dispatcher refuses {p.key}: {STATUS.get(pick, pick)}"
    return ""


__all__ = ["OP_NAME", "STATUS", "load", "loaded_families", "convert", "module_class", "conv_params", "problem", "ConvertReport"]

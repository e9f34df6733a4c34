"""The conv layers of a PyTorch model, as the collector's ``--layers`` CSV.

    python -m predictor.layers resnet50 --batch 1 8 32 --out layers.csv
    python -m predictor.layers torchvision:fasterrcnn_resnet50_fpn --input 800x1088 --out det.csv
    python -m predictor.layers timm:convnext_tiny mypkg.nets:build_net --batch 8 --out mine.csv
    python -m predictor.collect --family f16nhwc --layers layers.csv --out sweeps/mine.parquet

One forward pass per batch size on the ``meta`` device (no memory, no arithmetic) with a forward
hook on every ``torch.nn.Conv2d``; each call becomes a :class:`~predictor.features.ConvProblem`
whose output size is checked against the shape the call returned.  Convolutions our kernels do not
compute are reported and left out: grouped and depthwise ones (``groups > 1``), and those with a
different stride, padding or dilation along H and W (``ConvProblem`` has one of each; R != S is
fine).  A padding mode other than zeros pads the input first and runs the conv unpadded, and is
recorded that way.

Detection models of torchvision run their backbone (with FPN) and their dense heads on a plain
tensor of the requested size, skipping the resize transform and the per-RoI heads (whose batch is
the number of boxes).

Needs ``torch`` and ``torchvision`` (``pip install 'cutlass-conv-predictor[layers]'``); ``timm:``
models need ``timm``.
"""
from __future__ import annotations

import argparse
import csv
import importlib
import inspect
import io
import logging
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .features import ConvProblem, validate

_LOG = logging.getLogger("predictor.layers")

#: Columns of the CSV this module writes; ``predictor.shapes.read_layers_csv`` reads the first ten
#: and takes ``network`` as the source (``net:<network>``); ``layer`` and ``count`` are for people.
CSV_COLUMNS: tuple[str, ...] = ("N", "C", "H", "W", "K", "R", "S", "stride", "pad", "dilation",
                                "network", "layer", "count")

_EXTRA = "pip install 'cutlass-conv-predictor[layers]'"


@dataclass(frozen=True)
class ConvLayer:
    """One call of an ``nn.Conv2d`` in a forward pass: the module's path and its problem, or
    ``problem=None`` and why it was left out (``skipped``)."""

    name: str
    problem: ConvProblem | None
    skipped: str = ""


def _torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise ImportError(f"predictor.layers needs PyTorch: {_EXTRA}") from exc
    return torch


def _pair(v: Any) -> tuple[int, int]:
    if isinstance(v, int):
        return v, v
    a, b = v
    return int(a), int(b)


def _problem(mod: Any, in_shape: Sequence[int], out_shape: Sequence[int]) -> tuple[ConvProblem | None, str]:
    """The problem of one ``nn.Conv2d`` call, or (None, reason)."""
    if len(in_shape) == 3:  # unbatched (C, H, W)
        in_shape, out_shape = (1, *in_shape), (1, *out_shape)
    n, c, h, w = (int(v) for v in in_shape)
    k, p_out, q_out = int(out_shape[1]), int(out_shape[2]), int(out_shape[3])
    r, s = _pair(mod.kernel_size)
    sh, sw = _pair(mod.stride)
    dh, dw = _pair(mod.dilation)
    if mod.groups != 1:
        kind = "depthwise" if mod.groups == c else "grouped"
        return None, f"{kind} (groups={mod.groups})"
    if sh != sw:
        return None, f"stride {sh}x{sw} differs along H and W"
    if dh != dw:
        return None, f"dilation {dh}x{dw} differs along H and W"
    if isinstance(mod.padding, str):
        if mod.padding == "valid":
            pads = (0, 0, 0, 0)
        else:  # "same": torch puts the odd pixel of an even total at the bottom/right
            th, tw = dh * (r - 1), dw * (s - 1)
            pads = (th // 2, th - th // 2, tw // 2, tw - tw // 2)
    else:
        ph, pw = _pair(mod.padding)
        pads = (ph, ph, pw, pw)
    if mod.padding_mode != "zeros":  # torch pads the input itself, then runs the conv unpadded
        h, w, pads = h + pads[0] + pads[1], w + pads[2] + pads[3], (0, 0, 0, 0)
    if pads[0] != pads[1] or pads[2] != pads[3]:
        return None, f"asymmetric 'same' padding {pads} of an even kernel"
    if pads[0] != pads[2]:
        return None, f"padding {pads[0]}x{pads[2]} differs along H and W"
    p = ConvProblem(n, c, h, w, k, r, s, sh, pads[0], dh)
    validate(p.args())
    if (p.P, p.Q) != (p_out, q_out):
        return None, (f"output {p_out}x{q_out} is not the conv's {p.P}x{p.Q} (the module's forward is not a "
                      f"plain conv2d of its input)")
    return p, ""


def conv_layers(module: Any, input_shape: Sequence[int], *, device: str = "meta",
                forward: Callable[[Any, Any], Any] | None = None) -> list[ConvLayer]:
    """Every ``nn.Conv2d`` call of one forward pass of ``module`` on a tensor of ``input_shape``
    (N, C, H, W), in call order.  ``device="meta"`` needs no memory and no arithmetic; a module whose
    parameters live elsewhere runs with stand-ins of them on ``device`` (the module itself is not
    changed).  ``forward(module, x)`` replaces ``module(x)`` where the model needs another entry
    point.  Raises ``ValueError`` for a bad ``input_shape``."""
    torch = _torch()
    if len(input_shape) != 4 or any(int(v) < 1 for v in input_shape):
        raise ValueError(f"input_shape must be 4 positive sizes (N, C, H, W), got {tuple(input_shape)}")
    names = {id(m): n for n, m in module.named_modules()}
    found: list[ConvLayer] = []

    def hook(mod: Any, inputs: tuple[Any, ...], output: Any) -> None:
        prob, why = _problem(mod, tuple(inputs[0].shape), tuple(output.shape))
        found.append(ConvLayer(names.get(id(mod), type(mod).__name__), prob, why))

    handles = [m.register_forward_hook(hook) for m in module.modules() if isinstance(m, torch.nn.Conv2d)]
    try:
        dev = torch.device(device)
        x = torch.zeros(tuple(int(v) for v in input_shape), device=dev)
        tensors = dict(module.named_parameters())
        tensors.update(module.named_buffers())
        with torch.no_grad():
            run = forward or (lambda m, t: m(t))
            if all(t.device == dev for t in tensors.values()):
                run(module, x)
            else:
                stand_ins = {k: (torch.empty_like(t, device=dev) if dev.type == "meta"
                                 else torch.zeros_like(t, device=dev) if t.device.type == "meta" else t.to(dev))
                             for k, t in tensors.items()}
                run(_Swapped(module, stand_ins, torch), x)
    finally:
        for h in handles:
            h.remove()
    return found


class _Swapped:
    """Calls ``module`` (or its attributes' modules) with other parameter tensors, through
    ``torch.func.functional_call`` for the top-level call."""

    def __init__(self, module: Any, tensors: dict[str, Any], torch: Any) -> None:
        self._module, self._tensors, self._torch = module, tensors, torch

    def __call__(self, x: Any) -> Any:
        return self._torch.func.functional_call(self._module, self._tensors, (x,))

    def __getattr__(self, name: str) -> Any:
        # detection forwards reach into sub-modules (model.backbone, model.head): swap theirs too
        sub = getattr(self._module, name)
        if isinstance(sub, self._torch.nn.Module):
            prefix = name + "."
            return _Swapped(sub, {k[len(prefix):]: v for k, v in self._tensors.items() if k.startswith(prefix)},
                            self._torch)
        return sub


def versions() -> str:
    """``torch X, torchvision Y[, timm Z]`` of this environment (what the layer lists came from)."""
    out = [f"torch {_torch().__version__}"]
    for mod in ("torchvision", "timm"):
        try:
            out.append(f"{mod} {importlib.import_module(mod).__version__}")
        except ImportError:
            pass
    return ", ".join(out)


def distinct(layers: Iterable[ConvLayer]) -> list[tuple[ConvProblem, str, int]]:
    """(problem, first layer name, number of calls) of the recorded layers, first-call order."""
    count: Counter[ConvProblem] = Counter()
    first: dict[ConvProblem, str] = {}
    for lay in layers:
        if lay.problem is not None:
            count[lay.problem] += 1
            first.setdefault(lay.problem, lay.name)
    return [(p, first[p], count[p]) for p in first]


def skipped_summary(layers: Iterable[ConvLayer]) -> str:
    """One line counting the left-out calls by reason (groups collapsed), '' when none."""
    reasons: Counter[str] = Counter()
    for lay in layers:
        if lay.problem is None:
            reasons[lay.skipped.split(" (")[0] if lay.skipped.startswith(("grouped", "depthwise")) else lay.skipped] += 1
    return ", ".join(f"{n} {r}" for r, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))


# --------------------------------------------------------------------------- models by name
def _torchvision_model(name: str) -> tuple[Any, Callable[[Any, Any], Any] | None]:
    torch = _torch()
    try:
        import torchvision
    except ImportError as exc:
        raise ImportError(f"torchvision models need torchvision: {_EXTRA}") from exc
    try:
        builder = torchvision.models.get_model_builder(name)
    except ValueError as exc:
        raise ValueError(f"torchvision has no model {name!r}") from exc
    kw: dict[str, Any] = {"weights": None}
    params = inspect.signature(builder).parameters
    if "weights_backbone" in params:
        kw["weights_backbone"] = None  # no download: random weights have the same shapes
    if name in ("inception_v3", "googlenet"):
        kw["init_weights"] = False  # the scipy-free default; weights do not change shapes
    try:
        with torch.device("meta"):
            model = builder(**kw)
    except (NotImplementedError, RuntimeError):  # some initialisers read tensor values
        model = builder(**kw)
    model.eval()
    return model, _detection_forward(model, torchvision)


def _detection_forward(model: Any, torchvision: Any) -> Callable[[Any, Any], Any] | None:
    det = torchvision.models.detection
    if isinstance(model, det.generalized_rcnn.GeneralizedRCNN):
        def run(m: Any, x: Any) -> Any:
            return m.rpn.head(list(m.backbone(x).values()))
        return run
    if isinstance(model, (det.retinanet.RetinaNet, det.fcos.FCOS, det.ssd.SSD)):
        def run_dense(m: Any, x: Any) -> Any:
            return m.head(list(m.backbone(x).values()))
        return run_dense
    return None


def _timm_model(name: str) -> Any:
    _torch()
    try:
        import timm
    except ImportError as exc:
        raise ImportError("timm models need timm: pip install timm") from exc
    model = timm.create_model(name, pretrained=False)
    model.eval()
    return model


def load_model(spec: str) -> tuple[str, Any, Callable[[Any, Any], Any] | None]:
    """(network name, module, forward or None) for ``torchvision:NAME``, plain ``NAME``
    (torchvision), ``timm:NAME`` or ``package.module:FACTORY`` (called without arguments)."""
    prefix, _, rest = spec.rpartition(":")
    if prefix in ("", "torchvision", "tv"):
        model, fwd = _torchvision_model(rest)
        return rest, model, fwd
    if prefix == "timm":
        return rest, _timm_model(rest), None
    _torch()
    try:
        factory = getattr(importlib.import_module(prefix), rest)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{spec}: cannot import {rest!r} from {prefix!r} ({exc})") from exc
    model = factory()
    return rest, model, None


def network_rows(name: str, module: Any, batches: Iterable[int], in_channels: int, hw: tuple[int, int], *,
                 forward: Callable[[Any, Any], Any] | None = None,
                 device: str = "meta") -> tuple[list[dict[str, Any]], list[ConvLayer]]:
    """CSV rows (distinct problems, batch by batch) of one network and the layers of its batch-1
    pass (for the skipped report)."""
    rows: list[dict[str, Any]] = []
    first: list[ConvLayer] = []
    for b in batches:
        layers = conv_layers(module, (b, in_channels, *hw), device=device, forward=forward)
        first = first or layers
        for p, layer, n in distinct(layers):
            rows.append({**p.args(), "network": name, "layer": layer, "count": n})
    return rows, first


def format_rows(rows: Iterable[dict[str, Any]], comments: Sequence[str] = ()) -> tuple[str, int]:
    """CSV text (``#`` comment lines first) of the rows, each problem once (the first row wins),
    and the number of rows kept."""
    seen: set[tuple[int, ...]] = set()
    buf = io.StringIO()
    for c in comments:
        buf.write(f"# {c}\n")
    w = csv.DictWriter(buf, fieldnames=list(CSV_COLUMNS), extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        key = tuple(int(r[k]) for k in CSV_COLUMNS[:10])
        if key not in seen:
            seen.add(key)
            w.writerow(r)
    return buf.getvalue(), len(seen)


def parse_input(text: str) -> tuple[int, int]:
    """``224`` -> (224, 224); ``800x1088`` -> (800, 1088) (H x W)."""
    try:
        parts = [int(v) for v in text.lower().split("x")]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--input must look like 224 or 800x1088, got {text!r}") from exc
    if len(parts) not in (1, 2) or min(parts) < 1:
        raise argparse.ArgumentTypeError(f"--input must look like 224 or 800x1088, got {text!r}")
    return (parts[0], parts[-1])


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m predictor.layers",
        description="Write the conv layers (groups = 1) of torchvision / timm / your own models as the "
                    "collector's --layers CSV (one forward pass per batch on the meta device).")
    p.add_argument("models", nargs="+", metavar="MODEL",
                   help="torchvision:NAME or NAME (torchvision), timm:NAME, or package.module:FACTORY")
    p.add_argument("--batch", type=int, nargs="+", default=[1, 8, 32], help="batch sizes N")
    p.add_argument("--input", type=parse_input, default=(224, 224), metavar="HW",
                   help="input size: 224 or HxW such as 800x1088")
    p.add_argument("--in-channels", type=int, default=3, help="channels of the input tensor")
    p.add_argument("--device", default="meta", help="where the forward pass runs (meta: no memory)")
    p.add_argument("--out", required=True, help="CSV to write")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    if min(args.batch) < 1:
        print("error: --batch sizes must be >= 1", file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []
    try:
        comments = [f"generated by python -m predictor.layers {' '.join(sys.argv[1:] if argv is None else argv)}, "
                    f"do not edit; {versions()}"]
        for spec in args.models:
            name, model, fwd = load_model(spec)
            got, layers = network_rows(name, model, args.batch, args.in_channels, args.input, forward=fwd,
                                       device=args.device)
            rows += got
            skipped = skipped_summary(layers)
            comments.append(f"{name}: input {args.in_channels}x{args.input[0]}x{args.input[1]}, {len(layers)} conv "
                            f"calls per pass, {len(distinct(layers))} distinct kept; left out: {skipped or 'none'}")
            _LOG.info("%s", comments[-1])
    except (ImportError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    text, n = format_rows(rows, comments)
    Path(args.out).write_text(text)
    _LOG.info("wrote %d layers to %s", n, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

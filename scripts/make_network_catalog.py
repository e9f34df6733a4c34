"""Write the catalog of network conv layers, ``predictor/data/networks/<network>.csv`` and its
README, with :mod:`predictor.layers` (forward hooks on the meta device).

    python scripts/make_network_catalog.py              # needs torch + torchvision ([layers] extra) and timm
    python scripts/make_network_catalog.py --check      # regenerate in memory, compare with the files

Sources: torchvision models and one timm model (``cspdarknet53``) with random weights (weights do
not change shapes), two small torch modules written here (a U-Net with skip concatenations and a
YOLOv8m-like CSP detector), and the two hand-written layer lists the first sweeps used
(``darknet_yolo``, ``unet``), kept verbatim with ``resnet50``, ``resnet18`` and ``vgg16``: the
sweeps name those layers ``net:<name>``, and the torchvision versions of the three must hold
exactly the hand-written layers plus their 3-channel stems (checked here and by
tests/test_shapes.py).

This module imports torch only inside the functions that need it.
"""
from __future__ import annotations

import argparse
import hashlib
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from predictor.features import ConvProblem, same_pad  # noqa: E402

OUT = ROOT / "predictor" / "data" / "networks"
SCRIPT = "scripts/make_network_catalog.py"
#: Files whose content decides the catalog; their hashes head every generated file.
INPUTS = (SCRIPT, "predictor/layers.py")
_LOG = logging.getLogger("make_network_catalog")


# --------------------------------------------------------------------------- the hand-written lists
# Verbatim from predictor/shapes.py before the catalog (the first sweeps' ``net:`` layers).
def _layer(n: int, c: int, hw: int, k: int, r: int, stride: int = 1, pad: int | None = None,
           w: int | None = None) -> ConvProblem:
    return ConvProblem(n, c, hw, hw if w is None else w, k, r, r, stride,
                       same_pad(r) if pad is None else pad, 1)


def _resnet50(n: int) -> list[ConvProblem]:
    out = []
    hw, cin = 56, 64
    for width, blocks, first_stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for b in range(blocks):
            s = first_stride if b == 0 else 1
            out.append(_layer(n, cin, hw, width, 1))
            out.append(_layer(n, width, hw, width, 3, stride=s))
            hw_out = hw // s
            out.append(_layer(n, width, hw_out, width * 4, 1))
            if b == 0:
                out.append(_layer(n, cin, hw, width * 4, 1, stride=s, pad=0))
            cin, hw = width * 4, hw_out
    return out


def _resnet18(n: int) -> list[ConvProblem]:
    out = []
    hw, cin = 56, 64
    for width, s0 in ((64, 1), (128, 2), (256, 2), (512, 2)):
        for b in range(2):
            s = s0 if b == 0 else 1
            out.append(_layer(n, cin, hw, width, 3, stride=s))
            hw2 = hw // s
            out.append(_layer(n, width, hw2, width, 3))
            if b == 0 and (s != 1 or cin != width):
                out.append(_layer(n, cin, hw, width, 1, stride=s, pad=0))
            cin, hw = width, hw2
    return out


def _vgg16(n: int) -> list[ConvProblem]:
    out = []
    hw, cin = 224, 64
    for width, reps in ((64, 1), (128, 2), (256, 3), (512, 3), (512, 3)):
        for _ in range(reps):
            out.append(_layer(n, cin, hw, width, 3))
            cin = width
        hw //= 2
    return out


def _darknet_yolo(n: int) -> list[ConvProblem]:
    """Darknet-53-style detection backbone at 256x256 plus a YOLO-style head."""
    out = []
    hw, cin = 256, 32
    for width, blocks in ((64, 1), (128, 2), (256, 8), (512, 8), (1024, 4)):
        out.append(_layer(n, cin, hw, width, 3, stride=2))
        hw //= 2
        for _ in range(min(blocks, 2)):
            out.append(_layer(n, width, hw, width // 2, 1))
            out.append(_layer(n, width // 2, hw, width, 3))
        cin = width
    for c, k, hw_ in ((1024, 512, 8), (512, 1024, 8), (512, 256, 16), (768, 256, 16), (256, 512, 16),
                      (384, 128, 32), (128, 256, 32), (256, 255 + 1, 32)):
        out.append(_layer(n, c, hw_, k, 1 if k < c else 3))
    return out


def _unet(n: int) -> list[ConvProblem]:
    out = []
    for c, k, hw in ((64, 64, 128), (64, 128, 64), (128, 128, 64), (128, 256, 32), (256, 256, 32),
                     (256, 512, 16), (512, 512, 16), (512, 256, 32), (256, 128, 64), (128, 64, 128)):
        out.append(_layer(n, c, hw, k, 3))
    return out


#: The five hand-written networks of the first sweeps, in their order (sources ``net:<name>``).
LEGACY: dict[str, Callable[[int], list[ConvProblem]]] = {
    "resnet50": _resnet50, "resnet18": _resnet18, "vgg16": _vgg16, "darknet_yolo": _darknet_yolo, "unet": _unet,
}


# --------------------------------------------------------------------------- small torch modules
def _custom_module(name: str) -> Any:
    """The U-Net with skip concatenations (``unet_skip``) or the YOLOv8m-like detector
    (``yolov8m_csp``), with random weights."""
    import torch
    from torch import nn

    def conv(c1: int, c2: int, k: int = 1, s: int = 1) -> nn.Module:
        return nn.Sequential(nn.Conv2d(c1, c2, k, s, k // 2, bias=False), nn.BatchNorm2d(c2), nn.SiLU())

    class DoubleConv(nn.Sequential):
        def __init__(self, c1: int, c2: int) -> None:
            super().__init__(nn.Conv2d(c1, c2, 3, padding=1, bias=False), nn.BatchNorm2d(c2), nn.ReLU(),
                             nn.Conv2d(c2, c2, 3, padding=1, bias=False), nn.BatchNorm2d(c2), nn.ReLU())

    class UNetSkip(nn.Module):
        """U-Net (nnU-Net-like widths 32..320), bilinear up-sampling and skip concatenation: the
        decoder's first convs read 576, 384, 192 and 96 channels."""

        def __init__(self, widths: tuple[int, ...] = (32, 64, 128, 256, 320), classes: int = 2) -> None:
            super().__init__()
            self.down = nn.ModuleList()
            c = 3
            for w in widths:
                self.down.append(DoubleConv(c, w))
                c = w
            self.up = nn.ModuleList(DoubleConv(widths[i + 1] + widths[i], widths[i])
                                    for i in reversed(range(len(widths) - 1)))
            self.head = nn.Conv2d(widths[0], classes, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            skips = []
            for i, block in enumerate(self.down):
                x = block(x if i == 0 else nn.functional.max_pool2d(x, 2))
                skips.append(x)
            for block, skip in zip(self.up, reversed(skips[:-1])):
                x = nn.functional.interpolate(x, size=skip.shape[-2:], mode="bilinear", align_corners=False)
                x = block(torch.cat([x, skip], 1))
            return self.head(x)

    class Bottleneck(nn.Module):
        def __init__(self, c: int, shortcut: bool) -> None:
            super().__init__()
            self.cv1, self.cv2, self.add = conv(c, c, 3), conv(c, c, 3), shortcut

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = self.cv2(self.cv1(x))
            return x + y if self.add else y

    class C2f(nn.Module):
        def __init__(self, c1: int, c2: int, n: int, shortcut: bool = True) -> None:
            super().__init__()
            self.c = c2 // 2
            self.cv1 = conv(c1, 2 * self.c)
            self.cv2 = conv((2 + n) * self.c, c2)
            self.m = nn.ModuleList(Bottleneck(self.c, shortcut) for _ in range(n))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = list(self.cv1(x).chunk(2, 1))
            for m in self.m:
                y.append(m(y[-1]))
            return self.cv2(torch.cat(y, 1))

    class SPPF(nn.Module):
        def __init__(self, c1: int, c2: int) -> None:
            super().__init__()
            self.cv1, self.cv2 = conv(c1, c1 // 2), conv(c1 // 2 * 4, c2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = [self.cv1(x)]
            for _ in range(3):
                y.append(nn.functional.max_pool2d(y[-1], 5, 1, 2))
            return self.cv2(torch.cat(y, 1))

    class YoloCSP(nn.Module):
        """YOLOv8m-like: widths 48, 96, 192, 384, 576, C2f blocks (depths 2, 4, 4, 2), SPPF, a
        PAN neck with concatenations and the decoupled head (64 box + 80 class channels)."""

        def __init__(self, w: tuple[int, ...] = (48, 96, 192, 384, 576), d: tuple[int, ...] = (2, 4, 4, 2),
                     classes: int = 80, reg_max: int = 16) -> None:
            super().__init__()
            self.stem = nn.Sequential(conv(3, w[0], 3, 2), conv(w[0], w[1], 3, 2), C2f(w[1], w[1], d[0]))
            self.p3 = nn.Sequential(conv(w[1], w[2], 3, 2), C2f(w[2], w[2], d[1]))
            self.p4 = nn.Sequential(conv(w[2], w[3], 3, 2), C2f(w[3], w[3], d[2]))
            self.p5 = nn.Sequential(conv(w[3], w[4], 3, 2), C2f(w[4], w[4], d[3]), SPPF(w[4], w[4]))
            n = d[3]
            self.top4 = C2f(w[4] + w[3], w[3], n, False)
            self.top3 = C2f(w[3] + w[2], w[2], n, False)
            self.down3, self.bot4 = conv(w[2], w[2], 3, 2), C2f(w[2] + w[3], w[3], n, False)
            self.down4, self.bot5 = conv(w[3], w[3], 3, 2), C2f(w[3] + w[4], w[4], n, False)
            c2, c3 = max(16, w[2] // 4, reg_max * 4), max(w[2], min(classes, 100))
            self.box = nn.ModuleList(nn.Sequential(conv(c, c2, 3), conv(c2, c2, 3), nn.Conv2d(c2, 4 * reg_max, 1))
                                     for c in w[2:])
            self.cls = nn.ModuleList(nn.Sequential(conv(c, c3, 3), conv(c3, c3, 3), nn.Conv2d(c3, classes, 1))
                                     for c in w[2:])

        def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
            up = nn.functional.interpolate
            p3 = self.p3(self.stem(x))
            p4 = self.p4(p3)
            p5 = self.p5(p4)
            t4 = self.top4(torch.cat([up(p5, scale_factor=2.0), p4], 1))
            t3 = self.top3(torch.cat([up(t4, scale_factor=2.0), p3], 1))
            b4 = self.bot4(torch.cat([self.down3(t3), t4], 1))
            b5 = self.bot5(torch.cat([self.down4(b4), p5], 1))
            return [torch.cat([bx(f), cl(f)], 1) for f, bx, cl in zip((t3, b4, b5), self.box, self.cls)]

    with torch.device("meta"):
        module = {"unet_skip": UNetSkip, "yolov8m_csp": YoloCSP}[name]()
    return module.eval()


# --------------------------------------------------------------------------- the catalog
@dataclass(frozen=True)
class Net:
    """One catalog entry: ``source`` is ``torchvision:<model>``, ``custom`` or ``handwritten``."""

    name: str
    kind: str
    source: str
    hw: tuple[int, int]
    batches: tuple[int, ...] = (1, 8, 32)
    note: str = ""


_B64 = (1, 8, 32, 64)
#: In the order of ``predictor.shapes``: the five hand-written names first, then the rest by name.
CATALOG: tuple[Net, ...] = (
    Net("resnet50", "classifier", "torchvision:resnet50", (224, 224)),
    Net("resnet18", "classifier", "torchvision:resnet18", (224, 224)),
    Net("vgg16", "classifier", "torchvision:vgg16", (224, 224)),
    Net("darknet_yolo", "detector", "handwritten", (256, 256), note="Darknet-53-style backbone + YOLO-style head"),
    Net("unet", "encoder-decoder", "handwritten", (128, 128), note="3x3 convs of a U-Net, no concatenation"),
    Net("convnext_tiny", "classifier", "torchvision:convnext_tiny", (224, 224),
        note="4x4/s4 stem and 2x2/s2 downsamplers are patch embeddings; 7x7 depthwise left out, "
             "pointwise layers are nn.Linear"),
    Net("cspdarknet53", "detector", "timm:cspdarknet53", (512, 512), note="YOLOv4's CSP backbone (timm)"),
    Net("deeplabv3_resnet50", "segmenter", "torchvision:deeplabv3_resnet50", (512, 1024),
        note="dilated ResNet-50 (output stride 8), ASPP dilations 12/24/36"),
    Net("densenet121", "classifier", "torchvision:densenet121", (224, 224)),
    Net("efficientnet_b0", "classifier", "torchvision:efficientnet_b0", (224, 224), _B64),
    Net("efficientnet_b3", "classifier", "torchvision:efficientnet_b3", (300, 300)),
    Net("efficientnet_v2_s", "classifier", "torchvision:efficientnet_v2_s", (384, 384),
        note="fused-MBConv stages are full 3x3 convs (24, 48, 64 channels)"),
    Net("fasterrcnn_resnet50_fpn", "detector", "torchvision:fasterrcnn_resnet50_fpn", (800, 1088),
        note="backbone + FPN + RPN head on the resized image; per-RoI heads are linear layers"),
    Net("fcn_resnet50", "segmenter", "torchvision:fcn_resnet50", (520, 520)),
    Net("fcos_resnet50_fpn", "detector", "torchvision:fcos_resnet50_fpn", (800, 1088),
        note="backbone + FPN + head (GroupNorm towers)"),
    Net("googlenet", "classifier", "torchvision:googlenet", (224, 224)),
    Net("inception_v3", "classifier", "torchvision:inception_v3", (299, 299),
        note="1x7/7x1 convs pad (0,3)/(3,0): left out (one pad for H and W in ConvProblem)"),
    Net("lraspp_mobilenet_v3_large", "segmenter", "torchvision:lraspp_mobilenet_v3_large", (512, 1024)),
    Net("mobilenet_v2", "classifier", "torchvision:mobilenet_v2", (224, 224), _B64),
    Net("mobilenet_v3_large", "classifier", "torchvision:mobilenet_v3_large", (224, 224), _B64),
    Net("regnet_x_3_2gf", "classifier", "torchvision:regnet_x_3_2gf", (224, 224)),
    Net("regnet_y_1_6gf", "classifier", "torchvision:regnet_y_1_6gf", (224, 224)),
    Net("resnext50_32x4d", "classifier", "torchvision:resnext50_32x4d", (224, 224)),
    Net("retinanet_resnet50_fpn", "detector", "torchvision:retinanet_resnet50_fpn", (800, 1088),
        note="backbone + FPN (P3-P7) + classification/regression heads"),
    Net("squeezenet1_1", "classifier", "torchvision:squeezenet1_1", (224, 224), _B64),
    Net("ssd300_vgg16", "detector", "torchvision:ssd300_vgg16", (300, 300), note="dilated fc6 (3x3, dilation 6)"),
    Net("swin_t", "patch embedding", "torchvision:swin_t", (224, 224),
        note="4x4/s4 patch embedding only (the rest is attention and linear layers)"),
    Net("unet_skip", "encoder-decoder", "custom", (512, 512),
        note="U-Net, widths 32-320, bilinear up-sampling + skip concatenation (96, 192, 384, 576 channels)"),
    Net("vit_b_16", "patch embedding", "torchvision:vit_b_16", (224, 224),
        note="16x16/s16 patch embedding only"),
    Net("wide_resnet50_2", "classifier", "torchvision:wide_resnet50_2", (224, 224)),
    Net("yolov8m_csp", "detector", "custom", (640, 640),
        note="YOLOv8m-like CSP (C2f) backbone, SPPF, PAN neck, decoupled head (80 classes)"),
)


def file_hashes(root: Path = ROOT) -> dict[str, str]:
    """sha256 (first 16 hex digits) of the files the catalog is generated from."""
    return {p: hashlib.sha256((root / p).read_bytes()).hexdigest()[:16] for p in INPUTS}


def header(versions: str, root: Path = ROOT) -> list[str]:
    """The comment lines that head every generated file (without the comment marker)."""
    return [f"generated by {SCRIPT}, do not edit; regenerate: python {SCRIPT} ({versions})",
            "inputs sha256: " + ", ".join(f"{p} {h}" for p, h in file_hashes(root).items())]


def net_rows(net: Net) -> tuple[list[dict[str, Any]], str]:
    """The CSV rows of one network and its one-line summary (conv calls, left out)."""
    from predictor import layers as L

    if net.source == "handwritten":
        rows = []
        for b in net.batches:
            seen: dict[ConvProblem, int] = {}
            for p in LEGACY[net.name](b):
                seen[p] = seen.get(p, 0) + 1
            rows += [{**p.args(), "network": net.name, "layer": "", "count": n} for p, n in seen.items()]
        return rows, "hand-written layer list"
    if net.source == "custom":
        module, fwd = _custom_module(net.name), None
    else:
        _, module, fwd = L.load_model(net.source)
    rows, first = L.network_rows(net.name, module, net.batches, 3, net.hw, forward=fwd)
    return rows, (f"{len(first)} conv calls per pass, {len(L.distinct(first))} distinct kept; left out: "
                  f"{L.skipped_summary(first) or 'none'}")


def _check_legacy(net: Net, rows: list[dict[str, Any]]) -> None:
    """The torchvision network holds exactly the hand-written layers plus its 3-channel stem."""
    if net.name not in LEGACY or net.source == "handwritten":
        return
    for b in net.batches:
        got = [ConvProblem(*(int(r[k]) for k in ("N", "C", "H", "W", "K", "R", "S", "stride", "pad", "dilation")))
               for r in rows if int(r["N"]) == b and int(r["C"]) != 3]
        want = list(dict.fromkeys(LEGACY[net.name](b)))
        if got != want:
            raise SystemExit(f"{net.name}: torchvision's layers at N={b} are not the hand-written ones")


def render(nets: tuple[Net, ...] = CATALOG) -> dict[str, str]:
    """File name -> content of every catalog file and the README."""
    from predictor import layers as L

    try:
        import timm  # noqa: F401  (one network; its version heads every file)
    except ImportError as exc:
        raise SystemExit(f"the catalog needs timm too: pip install timm ({exc})") from exc
    versions = L.versions()
    files: dict[str, str] = {}
    table = []
    for net in nets:
        rows, summary = net_rows(net)
        _check_legacy(net, rows)
        src = net.source if net.source != "custom" else f"{SCRIPT} (torch module)"
        comments = header(versions) + [
            f"{net.name}: {net.kind}, {src}, input 3x{net.hw[0]}x{net.hw[1]}, batches "
            f"{' '.join(map(str, net.batches))}; {summary}" + (f"; {net.note}" if net.note else "")]
        files[f"{net.name}.csv"], _ = L.format_rows(rows, comments)
        per_b = len(rows) // len(net.batches)
        runnable = {m: sum(1 for r in rows if r["C"] % m == 0 and r["K"] % m == 0) for m in (8, 16, 32)}
        table.append(f"| `{net.name}` | {net.kind} | `{src}` | {net.hw[0]}x{net.hw[1]} | "
                     f"{' '.join(map(str, net.batches))} | {len(rows)} | {runnable[8]} / {runnable[16]} / "
                     f"{runnable[32]} | {summary}{'; ' + net.note if net.note else ''} |")
    readme = [f"<!-- {line} -->" for line in header(versions)] + [
        "", "# Network layer catalog", "",
        "Conv layers (groups = 1, one stride/pad/dilation for H and W) of real networks, one CSV per "
        "network, in the collector's `--layers` format (`N,C,H,W,K,R,S,stride,pad,dilation`, plus "
        "`network`, the first `layer` (module path) and how many calls share the problem (`count`)). "
        "Each row is a distinct problem of that network at that batch; the same problem may appear in "
        "several networks. `predictor.shapes.network_layers()` reads them (sources `net:<network>`) and "
        "`default_shapes()` puts every layer a family can run first in its problem set.", "",
        f"Regenerate: `python {SCRIPT}` (torch and torchvision: `pip install '.[layers]'`); "
        f"`--check` compares without writing. Your own model: `python -m predictor.layers`.", "",
        "Rows runnable per channel multiple: 8 = fp16 families (`f16nhwc`, `f16nhwc90`), 16 = `i8nhwc90`, "
        "32 = `i8nc32` (C and K must be multiples). Counts of conv calls are per forward pass.", "",
        "| network | kind | source | input HxW | batches | rows | runnable (x8 / x16 / x32) | conv calls |",
        "|---|---|---|---|---|---|---|---|", *table, ""]
    files["README.md"] = "\n".join(readme)
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT, help="catalog folder")
    ap.add_argument("--check", action="store_true", help="regenerate in memory and compare with --out")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    files = render()
    if args.check:
        bad = [n for n, text in files.items()
               if not (args.out / n).exists() or (args.out / n).read_text() != text]
        extra = sorted({p.name for p in args.out.glob("*.csv")} - set(files))
        if bad or extra:
            print(f"catalog out of date: {', '.join(bad + extra)}", file=sys.stderr)
            return 1
        print(f"catalog up to date ({len(files)} files)")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for p in args.out.glob("*.csv"):
        if p.name not in files:
            p.unlink()
    for n, text in files.items():
        (args.out / n).write_text(text)
    _LOG.info("wrote %d files to %s", len(files), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

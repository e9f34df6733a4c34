"""Problem sets for sweeps: a structured grid, log-uniform random samples (fixed seed), the conv
layers of real networks, and users' own layer lists (CSV).

Work per problem is bounded (``max_gflop``, ``max_bytes``) so that a sweep of ~100 configs over a
few thousand problems fits a device session; the bound is recorded in the sweep's metadata.
"""
from __future__ import annotations

import csv
import itertools
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from .config import Family
from .features import ConvProblem, same_pad, validate

#: Default bound on the work of one problem: 2*N*P*Q*K*C*R*S flops, and bytes of A+B+C.
DEFAULT_MAX_GFLOP = 8.0
DEFAULT_MAX_MBYTES = 512.0


@dataclass(frozen=True)
class Shape:
    """A problem with where it came from (``grid``, ``random``, ``net:<network>``, ``user:<file>``)."""

    problem: ConvProblem
    source: str


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


NETWORKS = {
    "resnet50": _resnet50, "resnet18": _resnet18, "vgg16": _vgg16, "darknet_yolo": _darknet_yolo,
    "unet": _unet,
}


def network_layers(batches: Iterable[int] = (1, 8, 32)) -> list[Shape]:
    """Distinct conv layers (groups = 1) of a few real networks at several batch sizes."""
    seen: set[ConvProblem] = set()
    out: list[Shape] = []
    for b in batches:
        for name, fn in NETWORKS.items():
            for p in fn(b):
                if p not in seen:
                    seen.add(p)
                    out.append(Shape(p, f"net:{name}"))
    return out


def _loguniform_int(rng: random.Random, lo: int, hi: int, multiple: int = 1) -> int:
    v = math.exp(rng.uniform(math.log(lo), math.log(hi)))
    v = max(lo, min(hi, int(round(v / multiple)) * multiple))
    return max(multiple, v)


def fits(p: ConvProblem, family: Family, max_gflop: float = DEFAULT_MAX_GFLOP,
         max_mbytes: float = DEFAULT_MAX_MBYTES) -> bool:
    """Valid, runnable by the family's layouts, and within the work bound."""
    try:
        validate(p.args())
    except ValueError:
        return False
    m = family.spec.channel_multiple
    if p.C % m or p.K % m:
        return False
    elem = family.spec.bytes_a
    nbytes = elem * (p.N * p.C * p.H * p.W + p.K * p.C * p.R * p.S + p.N * p.K * p.P * p.Q)
    return p.flops <= max_gflop * 1e9 and nbytes <= max_mbytes * 1e6


def grid_shapes(family: Family) -> list[ConvProblem]:
    m = family.spec.channel_multiple
    chans = [32, 64, 128, 256, 512, 1024, 2048] if m == 32 else [16, 32, 64, 96, 128, 256, 512, 1024, 2048]
    out = []
    for n, c, k, hw, r, stride in itertools.product((1, 8, 32, 128), chans, chans, (7, 14, 28, 56, 112, 224),
                                                    (1, 3), (1, 2)):
        out.append(ConvProblem(n, c, hw, hw, k, r, r, stride, same_pad(r), 1))
    return out


def random_shapes(family: Family, count: int, seed: int) -> Iterator[ConvProblem]:
    rng = random.Random(seed)
    m = 32 if family.spec.channel_multiple == 32 else 8
    while True:
        n = rng.choice((1, 1, 2, 4, 8, 16, 32, 64, 128))
        c = _loguniform_int(rng, 32 if m == 32 else 16, 2048, m)
        k = _loguniform_int(rng, 32 if m == 32 else 16, 2048, m)
        h = _loguniform_int(rng, 7, 224)
        w = h if rng.random() < 0.6 else _loguniform_int(rng, 7, 224)
        r = rng.choice((1, 1, 3, 3, 3, 5, 7))
        stride = 1 if rng.random() < 0.7 else 2
        dil = 2 if (r > 1 and rng.random() < 0.15) else 1
        pad = same_pad(r, dil) if rng.random() < 0.75 else 0
        yield ConvProblem(n, c, h, w, k, r, r, stride, pad, dil)


def read_layers_csv(path: str | Path) -> list[Shape]:
    """A user's layer list: CSV with columns N,C,H,W,K,R,S,stride,pad,dilation (``pad`` may be
    ``same``; stride/pad/dilation default to 1/same/1 when the column is missing)."""
    path = Path(path)
    out = []
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        need = {"N", "C", "H", "W", "K", "R", "S"}
        missing = need - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{path}: missing column(s) {sorted(missing)}; need N,C,H,W,K,R,S[,stride,pad,dilation]")
        for i, row in enumerate(reader, start=2):
            try:
                r = int(row["R"])
                dil = int(row.get("dilation") or 1)
                pad_s = (row.get("pad") or "same").strip()
                pad = same_pad(r, dil) if pad_s == "same" else int(pad_s)
                p = ConvProblem(int(row["N"]), int(row["C"]), int(row["H"]), int(row["W"]), int(row["K"]),
                                r, int(row["S"]), int(row.get("stride") or 1), pad, dil)
                validate(p.args())
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{path}:{i}: {exc}") from exc
            out.append(Shape(p, f"user:{path.name}"))
    return out


def default_shapes(family: Family, count: int = 2000, seed: int = 0,
                   max_gflop: float = DEFAULT_MAX_GFLOP, max_mbytes: float = DEFAULT_MAX_MBYTES) -> list[Shape]:
    """The default problem set of a family: the fitting network layers (at most ``count``), then a
    third structured grid and two thirds log-uniform random samples up to ``count`` distinct
    problems."""
    rng = random.Random(seed)
    seen: set[ConvProblem] = set()
    out: list[Shape] = []

    def add(p: ConvProblem, source: str) -> None:
        if p not in seen and fits(p, family, max_gflop, max_mbytes):
            seen.add(p)
            out.append(Shape(p, source))

    for s in network_layers():
        if len(out) >= count:
            break
        add(s.problem, s.source)
    grid = [p for p in grid_shapes(family) if fits(p, family, max_gflop, max_mbytes)]
    rng.shuffle(grid)
    target_grid = len(out) + (count - len(out)) // 3
    for p in grid:
        if len(out) >= target_grid:
            break
        add(p, "grid")
    for p in random_shapes(family, count, seed + 1):
        if len(out) >= count:
            break
        add(p, "random")
    return out

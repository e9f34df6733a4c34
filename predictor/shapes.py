"""Problem sets for sweeps: the conv layers of real networks (the catalog under
``predictor/data/networks``), a structured grid and log-uniform random problems (fixed seed), and
users' own layer lists (CSV).

A family's default set is every network layer it can run (a GEMM family: the 1x1, stride-1 layers) (no work bound; only the memory bound
``max_mbytes`` on its tensors), then grid and random problems up to ``max_gflop`` each, drawn to
cover the space the networks span (channel counts that are not powers of two, spatial sizes up to
1024, rectangular inputs, dilation, 1xN filters, batch 1-64).  The set is deterministic for a
seed, and the set for ``count`` is a prefix of the set for any larger count, so a sweep can be
extended.  Both bounds are recorded in a sweep's metadata.

    python -m predictor.shapes --family f16nhwc90 --count 3000            # counts and GFLOP
    python -m predictor.shapes --family f16nhwc90 --count 3000 --min-gflop 8 --missing-from sweeps/h200-sm90.parquet
"""
from __future__ import annotations

import argparse
import csv
import functools
import itertools
import json
import math
import random
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from .config import Family
from .features import ConvProblem, same_pad, validate

#: The ``source`` of a network's layer in a sweep: ``net:<name>`` (leave-one-network-out holds these out by name).
NET_PREFIX = "net:"

#: Default bound on the work of one grid or random problem: 2*N*P*Q*K*C*R*S flops.  Network layers
#: have no work bound.
DEFAULT_MAX_GFLOP = 200.0
#: Default bound on the bytes of A + B + C of every problem, network layers included (4 GiB).
DEFAULT_MAX_MBYTES = 4096.0

#: The catalog of network layers, one ``<network>.csv`` per network (scripts/make_network_catalog.py).
CATALOG_DIR = Path(__file__).resolve().parent / "data" / "networks"
#: The networks of the first sweeps, first in this order, so that their layers keep their sources.
LEGACY_NETWORKS: tuple[str, ...] = ("resnet50", "resnet18", "vgg16", "darknet_yolo", "unet")

#: Channel counts of the grid (a family keeps the multiples of its channel multiple): the powers of
#: two and the counts real networks use (MobileNet, EfficientNet, DenseNet, YOLO, U-Net concatenations).
GRID_CHANNELS: tuple[int, ...] = (16, 24, 32, 40, 48, 64, 80, 96, 112, 128, 144, 160, 192, 256, 320, 384,
                                  480, 512, 576, 640, 768, 960, 1024, 1280, 2048)
#: Spatial sizes (H, W) of the grid: classifier pyramids, 299/300 inputs, detection inputs of
#: 800x1088 and 512x1024 at strides 4..64, and square sizes up to 1024.
GRID_SPATIAL: tuple[tuple[int, int], ...] = (
    (7, 7), (14, 14), (28, 28), (56, 56), (112, 112), (224, 224), (17, 17), (35, 35), (19, 19), (38, 38),
    (10, 10), (20, 20), (40, 40), (80, 80), (160, 160), (320, 320), (64, 64), (128, 128), (256, 256),
    (512, 512), (1024, 1024), (7, 9), (13, 17), (25, 34), (50, 68), (100, 136), (200, 272),
    (32, 64), (64, 128), (128, 256), (256, 512))
#: Filters of the grid (R, S, stride, dilation, pad), 1x1 and 3x3 repeated by how often networks use them.
GRID_FILTERS: tuple[tuple[int, int, int, int, int], ...] = (
    (1, 1, 1, 1, 0), (1, 1, 1, 1, 0), (1, 1, 1, 1, 0), (1, 1, 2, 1, 0),
    (3, 3, 1, 1, 1), (3, 3, 1, 1, 1), (3, 3, 1, 1, 1), (3, 3, 2, 1, 1), (3, 3, 2, 1, 1),
    (3, 3, 1, 2, 2), (3, 3, 1, 6, 6), (3, 3, 1, 12, 12), (3, 3, 2, 1, 0),
    (5, 5, 1, 1, 2), (5, 5, 2, 1, 2), (7, 7, 1, 1, 3), (7, 7, 2, 1, 3),
    (1, 7, 1, 1, 0), (7, 1, 1, 1, 0), (1, 3, 1, 1, 0), (3, 1, 1, 1, 0), (2, 2, 2, 1, 0), (4, 4, 4, 1, 0))
GRID_BATCHES: tuple[int, ...] = (1, 2, 8, 16, 32, 64)


@dataclass(frozen=True)
class Shape:
    """A problem with where it came from (``grid``, ``random``, ``net:<network>``, ``user:<file>``)."""

    problem: ConvProblem
    source: str


# --------------------------------------------------------------------------- layer lists (CSV)
def read_layers_csv(path: str | Path) -> list[Shape]:
    """A layer list: CSV with columns N,C,H,W,K,R,S,stride,pad,dilation (``pad`` may be ``same``;
    stride/pad/dilation default to 1/same/1 when the column is missing).  Lines starting with
    ``#`` before the header are comments.  A ``network`` column (what ``python -m predictor.layers``
    writes) makes a row's source ``net:<network>``; otherwise it is ``user:<file name>``."""
    path = Path(path)
    numbered = [(i, line) for i, line in enumerate(path.read_text().splitlines(), start=1)]
    while numbered and numbered[0][1].lstrip().startswith("#"):
        numbered.pop(0)
    reader = csv.DictReader([line for _, line in numbered])
    need = {"N", "C", "H", "W", "K", "R", "S"}
    missing = need - set(reader.fieldnames or [])
    if missing:
        raise ValueError(f"{path}: missing column(s) {sorted(missing)}; need N,C,H,W,K,R,S[,stride,pad,dilation]")
    out = []
    for (i, _), row in zip(numbered[1:], reader):
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
        network = (row.get("network") or "").strip()
        out.append(Shape(p, f"{NET_PREFIX}{network}" if network else f"user:{path.name}"))
    return out


def sweep_shapes(table: Any) -> list[Shape]:
    """The distinct problems of a sweep table (any family, any SM count), each with its source, in
    the table's order: a problem set to measure again (``predictor.collect --problems-from``)."""
    cols = [f.name for f in fields(ConvProblem)]
    rows = table.drop_duplicates("shape_key")
    return [Shape(ConvProblem(*(int(v) for v in vals)), str(src))
            for vals, src in zip(rows[cols].itertuples(index=False), rows["source"])]


# --------------------------------------------------------------------------- network layers
def catalog_networks(root: str | Path = CATALOG_DIR) -> list[str]:
    """Network names of the catalog: :data:`LEGACY_NETWORKS` first, then the others by name."""
    names = {p.stem for p in Path(root).glob("*.csv")}
    return [n for n in LEGACY_NETWORKS if n in names] + sorted(names - set(LEGACY_NETWORKS))


@functools.lru_cache(maxsize=4)
def _read_catalog(root: str) -> dict[str, tuple[ConvProblem, ...]]:
    out = {}
    for name in catalog_networks(root):
        shapes = read_layers_csv(Path(root) / f"{name}.csv")
        bad = {s.source for s in shapes} - {f"{NET_PREFIX}{name}"}
        if bad:
            raise ValueError(f"{root}/{name}.csv: network column {sorted(bad)} is not the file's name {name!r}")
        out[name] = tuple(s.problem for s in shapes)
    return out


def catalog(root: str | Path = CATALOG_DIR) -> dict[str, tuple[ConvProblem, ...]]:
    """Every catalog network's layers (all batches, file order), by network name."""
    return dict(_read_catalog(str(root)))


def network_layers(batches: Iterable[int] | None = None, networks: Iterable[str] | None = None,
                   root: str | Path = CATALOG_DIR) -> list[Shape]:
    """Distinct conv layers of the catalog's networks: batch by batch (ascending; ``None``: every
    batch the catalog has), network by network (:func:`catalog_networks` order).  A problem in
    several networks is named after the first (``net:<network>``); see :func:`network_index`."""
    cat = _read_catalog(str(root))
    names = list(cat) if networks is None else list(networks)
    unknown = [n for n in names if n not in cat]
    if unknown:
        raise ValueError(f"no network {unknown} in the catalog {root}; have {sorted(cat)}")
    all_b = sorted({p.N for n in names for p in cat[n]}) if batches is None else list(batches)
    seen: set[ConvProblem] = set()
    out: list[Shape] = []
    for b in all_b:
        for name in names:
            for p in cat[name]:
                if p.N == b and p not in seen:
                    seen.add(p)
                    out.append(Shape(p, f"{NET_PREFIX}{name}"))
    return out


def network_index(root: str | Path = CATALOG_DIR) -> dict[ConvProblem, tuple[str, ...]]:
    """Every catalog problem and all the networks that have it (for leave-one-network-out)."""
    out: dict[ConvProblem, tuple[str, ...]] = {}
    for name, probs in _read_catalog(str(root)).items():
        for p in dict.fromkeys(probs):
            out[p] = out.get(p, ()) + (name,)
    return out


# --------------------------------------------------------------------------- bounds
def tensor_mbytes(p: ConvProblem, family: Family) -> float:
    """MB (1e6 bytes) of the activation, filter and output tensors of ``p`` in ``family``."""
    return family.spec.bytes_a * (p.N * p.C * p.H * p.W + p.K * p.C * p.R * p.S + p.N * p.K * p.P * p.Q) / 1e6


def runnable(p: ConvProblem, family: Family) -> bool:
    """Valid, C and K are multiples of the family's channel multiple, and the family implements the
    filter (a GEMM family: 1x1, stride 1, pad 0, dilation 1 only; ``FamilySpec.implements``)."""
    try:
        validate(p.args())
    except ValueError:
        return False
    m = family.spec.channel_multiple
    return p.C % m == 0 and p.K % m == 0 and family.spec.implements(p.R, p.S, p.stride, p.pad, p.dilation)


def fits(p: ConvProblem, family: Family, max_gflop: float = DEFAULT_MAX_GFLOP,
         max_mbytes: float = DEFAULT_MAX_MBYTES) -> bool:
    """Runnable by the family's layouts, and within the work and memory bounds."""
    return runnable(p, family) and p.flops <= max_gflop * 1e9 and tensor_mbytes(p, family) <= max_mbytes


# --------------------------------------------------------------------------- grid and random problems
def _loguniform_int(rng: random.Random, lo: int, hi: int, multiple: int = 1) -> int:
    v = math.exp(rng.uniform(math.log(lo), math.log(hi)))
    v = max(lo, min(hi, int(round(v / multiple)) * multiple))
    return max(multiple, v)


def _min_channels(family: Family) -> int:
    m = family.spec.channel_multiple
    return max(16, m)


def grid_shapes(family: Family, seed: int = 0) -> Iterator[ConvProblem]:
    """Endless uniform draws from the structured grid (:data:`GRID_BATCHES` x channels x
    :data:`GRID_SPATIAL` x :data:`GRID_FILTERS`); repeats and unrunnable points are the caller's
    to drop."""
    rng = random.Random(seed)
    m = family.spec.channel_multiple
    chans = [c for c in GRID_CHANNELS if c % m == 0 and c >= _min_channels(family)]
    while True:
        n = rng.choice(GRID_BATCHES)
        c, k = rng.choice(chans), rng.choice(chans)
        h, w = rng.choice(GRID_SPATIAL)
        r, s, stride, dil, pad = rng.choice(GRID_FILTERS)
        yield ConvProblem(n, c, h, w, k, r, s, stride, pad, dil)


def random_shapes(family: Family, seed: int = 0) -> Iterator[ConvProblem]:
    """Endless log-uniform random problems: N 1-64, C and K 16 (or the channel multiple)-2048,
    H 7-1024 and W = H or up to 2x off, R x S in 1, 3, 5, 7 and 1x7 / 7x1 / 1x3 / 3x1, stride 1/2,
    dilation 2-6 on some, same or zero padding."""
    rng = random.Random(seed)
    m = family.spec.channel_multiple
    lo = _min_channels(family)
    while True:
        n = rng.choice((1, 1, 2, 4, 8, 8, 16, 32, 32, 64))
        c = _loguniform_int(rng, lo, 2048, m)
        k = _loguniform_int(rng, lo, 2048, m)
        h = _loguniform_int(rng, 7, 1024)
        w = h if rng.random() < 0.6 else max(7, min(1024, int(round(h * math.exp(rng.uniform(-0.7, 0.7))))))
        r, s = rng.choice(((1, 1), (1, 1), (3, 3), (3, 3), (3, 3), (5, 5), (7, 7), (1, 7), (7, 1), (1, 3), (3, 1)))
        stride = 1 if rng.random() < 0.7 else 2
        dil = rng.choice((2, 3, 4, 6)) if (r == s > 1 and rng.random() < 0.15) else 1
        pad = same_pad(r, dil) if (r == s and rng.random() < 0.75) else 0
        yield ConvProblem(n, c, h, w, k, r, s, stride, pad, dil)


def _take(it: Iterator[ConvProblem], ok: Any, seen: set[ConvProblem], patience: int = 100_000) -> ConvProblem | None:
    for _ in range(patience):
        p = next(it)
        if p not in seen and ok(p):
            return p
    return None


@functools.lru_cache(maxsize=16)
def _default_set(family: Family, count: int, seed: int, max_gflop: float, max_mbytes: float) -> tuple[Shape, ...]:
    seen: set[ConvProblem] = set()
    out: list[Shape] = []
    for s in network_layers():
        if len(out) >= count:
            return tuple(out)
        if s.problem not in seen and runnable(s.problem, family) and tensor_mbytes(s.problem, family) <= max_mbytes:
            seen.add(s.problem)
            out.append(s)
    streams = {"grid": grid_shapes(family, seed), "random": random_shapes(family, seed + 1)}
    live = dict(streams)
    ok = functools.partial(fits, family=family, max_gflop=max_gflop, max_mbytes=max_mbytes)
    for i in itertools.count():
        if len(out) >= count or not live:
            break
        source = "grid" if i % 3 == 0 and "grid" in live else "random" if "random" in live else "grid"
        p = _take(live[source], ok, seen)
        if p is None:  # this stream has nothing left that fits
            del live[source]
            continue
        seen.add(p)
        out.append(Shape(p, source))
    return tuple(out)


def default_shapes(family: Family, count: int = 2000, seed: int = 0,
                   max_gflop: float = DEFAULT_MAX_GFLOP, max_mbytes: float = DEFAULT_MAX_MBYTES, *,
                   min_gflop: float = 0.0) -> list[Shape]:
    """The default problem set of a family, ``count`` problems: every catalog network layer the
    family can run within ``max_mbytes`` (no work bound), then one grid problem for every two
    random ones, each within ``max_gflop`` and ``max_mbytes``.  Deterministic for a seed; the set
    for ``count`` is a prefix of the set for a larger count.  ``min_gflop`` keeps only the larger
    problems of that same set (where data is missing is where GPU time goes)."""
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    shapes = _default_set(family, int(count), int(seed), float(max_gflop), float(max_mbytes))
    return [s for s in shapes if s.problem.flops > min_gflop * 1e9] if min_gflop > 0 else list(shapes)


def measured_keys(sweeps: Iterable[Any], family: Family) -> set[str]:
    """``shape_key`` of every problem of ``family`` with a row in the sweeps (paths or frames):
    what the collector's ``--done-from`` skips."""
    from .schema import read_sweep

    keys: set[str] = set()
    for sw in sweeps:
        df = read_sweep(sw) if isinstance(sw, (str, Path)) else sw
        keys.update(df.loc[df["family"].astype(str) == family.value, "shape_key"].astype(str))
    return keys


def missing_shapes(family: Family, sweeps: Iterable[Any], count: int = 2000, seed: int = 0,
                   max_gflop: float = DEFAULT_MAX_GFLOP, max_mbytes: float = DEFAULT_MAX_MBYTES, *,
                   min_gflop: float = 0.0) -> list[Shape]:
    """The problems of :func:`default_shapes` that the sweeps (paths or frames) do not hold for
    ``family``: what ``python -m predictor.collect --shapes COUNT --done-from SWEEP`` would run."""
    done = measured_keys(sweeps, family)
    return [s for s in default_shapes(family, count, seed, max_gflop, max_mbytes, min_gflop=min_gflop)
            if s.problem.key not in done]


def summary(shapes: Sequence[Shape], family: Family, big_gflop: float = 8.0) -> dict[str, Any]:
    """Counts and GFLOP of a problem set by source kind (``net``, ``grid``, ``random``, ``user``):
    problems, problems above ``big_gflop``, total GFLOP (the sweep's work scales with it) and
    the largest tensor footprint in MB."""
    out: dict[str, Any] = {}
    for s in shapes:
        kind = s.source.split(":")[0]
        d = out.setdefault(kind, {"problems": 0, f"above_{big_gflop:g}_gflop": 0, "gflop": 0.0, "max_mbytes": 0.0})
        g = s.problem.flops / 1e9
        d["problems"] += 1
        d[f"above_{big_gflop:g}_gflop"] += int(g > big_gflop)
        d["gflop"] += g
        d["max_mbytes"] = max(d["max_mbytes"], tensor_mbytes(s.problem, family))
    for d in out.values():
        d["gflop"], d["max_mbytes"] = round(d["gflop"], 1), round(d["max_mbytes"], 1)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m predictor.shapes``: counts of a family's default set, or its problems as CSV."""
    ap = argparse.ArgumentParser(prog="python -m predictor.shapes",
                                 description="Counts and GFLOP of the default problem set of each family "
                                             "(or the problems a sweep still lacks).")
    ap.add_argument("--family", action="append", choices=[f.value for f in Family],
                    help="family (repeatable; default: all)")
    ap.add_argument("--count", type=int, default=2000, help="problems in the default set")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-gflop", type=float, default=DEFAULT_MAX_GFLOP)
    ap.add_argument("--max-mbytes", type=float, default=DEFAULT_MAX_MBYTES)
    ap.add_argument("--min-gflop", type=float, default=0.0, help="only problems above this many GFLOP")
    ap.add_argument("--missing-from", action="append", default=[], metavar="PARQUET",
                    help="leave out the problems these sweeps hold for the family")
    ap.add_argument("--csv", default=None, help="also write the problems (family, source, key, GFLOP, sizes)")
    args = ap.parse_args(argv)
    fams = [Family(f) for f in args.family] if args.family else list(Family)
    report: dict[str, Any] = {}
    rows = []
    for fam in fams:
        kw = dict(count=args.count, seed=args.seed, max_gflop=args.max_gflop, max_mbytes=args.max_mbytes,
                  min_gflop=args.min_gflop)
        shapes = missing_shapes(fam, args.missing_from, **kw) if args.missing_from else default_shapes(fam, **kw)
        report[fam.value] = summary(shapes, fam)
        rows += [{"family": fam.value, "source": s.source, "shape_key": s.problem.key,
                  "gflop": round(s.problem.flops / 1e9, 3),
                  **{k: v for k, v in s.problem.args().items() if k != "sms"}} for s in shapes]
    print(json.dumps(report, indent=1))
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else ["family"], lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

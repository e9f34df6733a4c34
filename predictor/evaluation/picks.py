"""Per-shape picks of the methods that need no training: fixed configs, the wave heuristic and
nvMatmulHeuristics (snapped to the grid), and the scoring helpers shared by every method."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import baselines
from ..config import SEED_CONFIG
from ..portfolio import ShapeTable
from .data import FamilyData

_LOG = logging.getLogger(__name__)


def best_of(table: ShapeTable, candidates: Sequence[Sequence[int]]) -> np.ndarray:
    """Per shape, the candidate config index with the lowest effective time (missing -> the shape's
    worst time; ties go to an available candidate); -1 where no candidate is a grid config."""
    out = np.full(table.n_shapes, -1, dtype=np.int64)
    for i, cands in enumerate(candidates):
        cs = [int(c) for c in cands if c >= 0]
        if not cs:
            continue
        t = table.times[i, cs]
        # a missing candidate scores the worst time; on a tie an available one is preferred
        out[i] = cs[int(np.argmin(np.where(np.isnan(t), table.worst[i] * (1 + 1e-9), t)))]
    return out


def missing_mask(table: ShapeTable, picks: np.ndarray) -> np.ndarray:
    """Shapes whose pick has no ok row (or is not a grid config)."""
    picks = np.asarray(picks, dtype=np.int64)
    m = picks < 0
    ok = ~m
    m[ok] = np.isnan(table.times[np.nonzero(ok)[0], picks[ok]])
    return m


@dataclass
class NvmmhPicks:
    """nvMatmulHeuristics picks for one family (indices into the family's full table) + diagnostics."""

    picks: dict[str, np.ndarray]
    stats: dict[str, Any]


def nvmmh_picks(data: FamilyData, batch: baselines.NvmmhBatch, problems: list[tuple[int, int, int]]) -> NvmmhPicks:
    """Snap the library's answers to the grid and map them to the family's shapes."""
    rank = baselines.generator_rank(data.family)
    pos = {p: i for i, p in enumerate(problems)}
    cache: dict[Any, tuple[int, float]] = {}

    def snapped(g: baselines.GemmConfig) -> tuple[int, float]:
        key = (g.cta, g.warp, g.stages, g.split_k, g.swizzle)
        if key not in cache:
            c = baselines.snap(g, data.configs, rank)
            cache[key] = (data.index(c.name), baselines.snap_distance(g, c))
        return cache[key]

    n = data.table.n_shapes
    top1 = np.full(n, -1, dtype=np.int64)
    topk_sets: list[list[int]] = []
    model = np.full(n, -1, dtype=np.int64)
    alt = np.full(n, -1, dtype=np.int64) if batch.alt_top1 else None
    dist1, exact1, no_answer, distinct_k, model_fail = [], 0, 0, [], 0
    grid_tiles = {c.tb for c in data.configs}
    off_tile = split = stage1 = 0
    for i in range(n):
        j = pos[data.gemm_of(i)]
        if batch.top1[j]:
            g = batch.top1[j][0]
            off_tile += g.cta not in grid_tiles
            split += g.split_k > 1
            stage1 += g.stages < 2
            idx, d = snapped(g)
            top1[i] = idx
            dist1.append(d)
            exact1 += d == 0
        else:
            no_answer += 1
        ks = [snapped(g)[0] for g in batch.topk[j]]
        topk_sets.append(ks)
        distinct_k.append(len(set(ks)))
        if batch.model is not None:
            c = baselines.model_pick(batch.model[j], data.configs, rank)
            if c is None:
                model_fail += 1
            else:
                model[i] = data.index(c.name)
        if alt is not None and batch.alt_top1 is not None and batch.alt_top1[j]:
            alt[i] = snapped(batch.alt_top1[j][0])[0]
    picks = {"nvmmh_top1": top1, "nvmmh_topk": best_of(data.table, topk_sets)}
    if batch.model is not None:
        picks["nvmmh_model"] = model
    if alt is not None:
        picks["nvmmh_top1_alt"] = alt
    stats = {
        "precision": batch.precision, "alt_precision": batch.alt_precision, "problems": len(problems),
        "top1_no_answer": no_answer, "top1_in_grid": exact1 / max(1, n - no_answer),
        "top1_tile_not_in_grid": off_tile / max(1, n - no_answer), "top1_split_k": split / max(1, n - no_answer),
        "top1_single_stage": stage1 / max(1, n - no_answer),
        "top1_mean_snap_distance": float(np.mean(dist1)) if dist1 else float("nan"),
        "topk_mean_answers": float(np.mean([len(s) for s in topk_sets])) if topk_sets else 0.0,
        "topk_mean_distinct_snapped": float(np.mean(distinct_k)) if distinct_k else 0.0,
        "model_no_estimate": model_fail,
    }
    return NvmmhPicks(picks, stats)


def static_picks(data: FamilyData, nv: NvmmhPicks | None) -> dict[str, np.ndarray]:
    """Picks that need no training, for every shape of the family."""
    n = data.table.n_shapes
    out: dict[str, np.ndarray] = {}
    if data.family is SEED_CONFIG.family:
        out["seed"] = np.full(n, data.index(SEED_CONFIG.name), dtype=np.int64)
    try:
        from ..space import default_config

        out["generator_default"] = np.full(n, data.index(default_config(data.family).name), dtype=np.int64)
    except ImportError:  # pragma: no cover - nvidia-cutlass missing
        _LOG.warning("cutlass_library is not installed: no generator-default baseline")
    rank = baselines.generator_rank(data.family)
    wave_cache: dict[tuple[int, int, int], int] = {}
    wave = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        key = data.gemm_of(i)
        if key not in wave_cache:
            wave_cache[key] = data.index(baselines.wave_pick(*key, data.configs, data.sms, rank).name)
        wave[i] = wave_cache[key]
    out["wave"] = wave
    if nv is not None:
        out.update(nv.picks)
    return out

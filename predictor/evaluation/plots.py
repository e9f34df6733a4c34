"""The figures of the report (matplotlib, imported only when drawing)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..portfolio import picked_times
from .data import tile_name
from .metrics import METHODS, TARGET_ORACLE_FRACTION, FamilyEval

#: Method key -> (colour, line style, line width) of its CDF curve.
STYLES: dict[str, tuple[str, str, float]] = {
    "tree": ("C0", "-", 2.4), "portfolio_oracle": ("C0", ":", 1.6), "best_single": ("C2", "-", 1.4),
    "seed": ("C3", "-", 1.4), "generator_default": ("C5", "-", 1.2), "wave": ("C4", "-", 1.4),
    "nvmmh_top1": ("C1", "-", 1.8), "nvmmh_topk": ("C1", "--", 1.4), "nvmmh_model": ("C1", ":", 1.4),
    "nvmmh_top1_alt": ("C8", "-.", 1.0)}


def write_plots(evals: Sequence[FamilyEval], out: Path, seed: int) -> list[Path]:
    """CDF of picked/oracle per method, portfolio size vs quality, winner maps. Returns the files."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = [plot_cdf(plt, ev, out) for ev in evals]
    files.append(plot_portfolio_k(plt, evals, out))
    rng = np.random.default_rng(seed)
    files += [plot_winner_map(plt, ev, out, rng) for ev in evals]
    return files


def _save(plt: Any, fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_cdf(plt: Any, ev: FamilyEval, out: Path) -> Path:
    """``cdf_<family>.png``: the CDF of picked/oracle of every method, CV and network layers."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    for ax, res in zip(axes, (ev.cv, ev.net), strict=True):
        lo = 1.0
        for m, label in METHODS.items():
            if m not in res.picks or res.table.n_shapes == 0:
                continue
            r = np.sort(res.table.oracle / picked_times(res.table, res.picks[m]))
            lo = min(lo, float(r[0]))
            y = np.arange(1, len(r) + 1) / len(r)
            c, ls, lw = STYLES[m]
            gm = float(np.exp(np.mean(np.log(r))))
            ax.step(r, y, where="post", color=c, ls=ls, lw=lw, label=f"{label} (geomean {gm:.3f})")
        ax.set_xlim(max(0.0, lo - 0.02), 1.005)
        ax.set_xlabel("picked / oracle  (oracle_time / picked_time; 1 = fastest measured)")
        what = "nested CV (training shapes)" if res.name == "cv" else "held-out network layers"
        ax.set_title(f"{ev.data.family.value}: {what}, {res.table.n_shapes} shapes")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    axes[0].set_ylabel("fraction of shapes with score <= x")
    return _save(plt, fig, out / f"cdf_{ev.data.family.value}.png")


def plot_portfolio_k(plt: Any, evals: Sequence[FamilyEval], out: Path) -> Path:
    """``portfolio_k.png``: CV quality against portfolio size, one panel per family."""
    fig, axes = plt.subplots(1, len(evals), figsize=(6.5 * len(evals), 4.5), squeeze=False)
    for ax, ev in zip(axes[0], evals, strict=True):
        kc = ev.kcurve
        ax.plot(kc["k"], kc["tree"], "o-", color="C0", label="tree (CV, best other hyper-parameters)")
        ax.plot(kc["k"], kc["portfolio_oracle"], "s:", color="C0", alpha=0.7, label="portfolio oracle (CV)")
        ax.axvline(kc["chosen_k"], color="grey", ls="--", lw=1, label=f"trainer's k = {kc['chosen_k']}")
        ax.axhline(TARGET_ORACLE_FRACTION, color="C3", ls=":", lw=1, label=f"{TARGET_ORACLE_FRACTION} of oracle")
        ax.set_xlabel("portfolio size k")
        ax.set_ylabel("CV geomean of picked / oracle")
        ax.set_title(f"{ev.data.family.value}: portfolio size vs quality")
        ax.set_xticks(kc["k"])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    return _save(plt, fig, out / "portfolio_k.png")


def plot_winner_map(plt: Any, ev: FamilyEval, out: Path, rng: np.random.Generator) -> Path:
    """``winner_map_<family>.png``: the oracle's and our tree's threadblock tile over the (M, N)
    plane of the implicit GEMM (points jittered with ``rng``)."""
    d = ev.data
    t = d.table
    orc_tile = np.array([tile_name(t.configs[j]) for j in np.nanargmin(t.times, axis=1)])
    ours = np.full(t.n_shapes, "", dtype=object)
    for res in (ev.cv, ev.net):
        if "tree" in res.picks:
            ours[res.idx] = [tile_name(t.configs[j]) if j >= 0 else "?" for j in res.picks["tree"]]
    tiles = sorted(set(orc_tile) | set(ours) - {"", "?"},
                   key=lambda s: (int(s.split("x")[0]) * int(s.split("x")[1]), s))
    cmap = plt.get_cmap("tab20")
    color = {s: cmap(i % 20) for i, s in enumerate(tiles)}
    jitter = np.exp(rng.uniform(-0.04, 0.04, size=(t.n_shapes, 2)))
    x, y = d.gemm[:, 0] * jitter[:, 0], d.gemm[:, 1] * jitter[:, 1]
    fig, axes = plt.subplots(1, 2, figsize=(14, 6), sharex=True, sharey=True)
    for ax, lab, title in ((axes[0], orc_tile, "oracle winner's threadblock tile"),
                           (axes[1], ours, "our tree's pick (out-of-fold CV / held-out)")):
        for s in tiles:
            sel = lab == s
            if sel.any():
                ax.scatter(x[sel], y[sel], s=10, color=color[s], label=f"{s} ({int(sel.sum())})", alpha=0.8,
                           edgecolors="none")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("implicit GEMM M = N*P*Q")
        ax.set_title(f"{d.family.value}: {title}")
        ax.grid(alpha=0.3, which="both", lw=0.3)
        ax.legend(fontsize=7, markerscale=1.8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axes[0].set_ylabel("implicit GEMM N = K (output channels)")
    return _save(plt, fig, out / f"winner_map_{d.family.value}.png")

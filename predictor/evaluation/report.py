"""REPORT.md and the headline tables printed by the CLI."""
from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from .. import baselines
from ..features import DEFAULT_SMS
from .data import Settings, short_name
from .metrics import BUCKETS, METHODS, TARGET_BASELINES, TARGET_ORACLE_FRACTION, FamilyEval


def _fmt(r: Mapping[str, Any] | None) -> str:
    if not r:
        return "| - | - | - | - | - | - |"
    return (f"| {r['shapes']} | {r['geomean']:.4f} | {r['p10']:.4f} | {r['worst']:.4f} | {100 * r['exact']:.1f}% "
            f"| {r['missing']} |")


def headline_markdown(evals: Sequence[FamilyEval]) -> str:
    """The headline tables (per family and set)."""
    lines = []
    for ev in evals:
        for res in (ev.cv, ev.net):
            title = ("nested grouped CV over the training shapes" if res.name == "cv"
                     else "held-out real-network layers (`net:*`, never trained on)")
            lines += [f"**{ev.data.family.value} -- {title}**", "",
                      "| method | shapes | geomean | P10 | worst | exact | missing |", "|---|---|---|---|---|---|---|"]
            for m, r in res.metrics().items():
                lines.append(f"| {METHODS[m]} {_fmt(r)}")
            lines.append("")
    return "\n".join(lines)


def targets_lines(evals: Sequence[FamilyEval]) -> list[str]:
    """The table of the targets: tree >= 0.98 of oracle, tree ahead of each target baseline."""
    lines = ["| family | set | tree >= 0.98 of oracle | " + " | ".join(
        f"tree ahead of {METHODS[b]} (geomean / P10)" for b in TARGET_BASELINES) + " |",
        "|---|---|---|" + "---|" * len(TARGET_BASELINES)]
    for ev in evals:
        for res in (ev.cv, ev.net):
            ms = res.metrics()
            t = ms.get("tree")
            if not t:
                continue
            cells = [f"{'yes' if t['geomean'] >= TARGET_ORACLE_FRACTION else 'NO'} ({t['geomean']:.4f})"]
            for b in TARGET_BASELINES:
                r = ms.get(b)
                if not r:
                    cells.append("n/a")
                    continue
                g = "yes" if t["geomean"] > r["geomean"] else "NO"
                p = "yes" if t["p10"] > r["p10"] else "NO"
                cells.append(f"{g} / {p} ({r['geomean']:.3f} / {r['p10']:.3f})")
            lines.append(f"| {ev.data.family.value} | {res.name} | " + " | ".join(cells) + " |")
    return lines


def report_markdown(evals: Sequence[FamilyEval], *, command: str, sweep: Path, sha: str, meta: Mapping[str, Any],
                    s: Settings, nvmmh_info: Mapping[str, Any] | None, nvmmh_error: str | None, seconds: float,
                    files: Sequence[Path]) -> str:
    """REPORT.md: run and data, headline, figures, methods, nested CV details, time, files."""
    lines = header_lines(evals, command=command, sweep=sweep, sha=sha, meta=meta, s=s, seconds=seconds)
    lines += results_lines(evals)
    lines += figure_lines(evals, files)
    lines += methods_lines(evals, nvmmh_info, nvmmh_error)
    lines += nvmmh_diagnostics_lines(evals)
    lines += nested_cv_lines(evals)
    lines += full_model_lines(evals)
    lines += time_and_files_lines(evals, files)
    return "\n".join(lines)


def header_lines(evals: Sequence[FamilyEval], *, command: str, sweep: Path, sha: str, meta: Mapping[str, Any],
                 s: Settings, seconds: float) -> list[str]:
    """Title, the run, the sweep and GPU, the sets, grid and scoring, the data of each family."""
    dev = meta.get("device", {}) if isinstance(meta.get("device"), Mapping) else {}
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    gpu = dev.get("gpu") or (evals[0].data.gpu if evals else "?")
    lines = [
        f"# Offline evaluation: kernel picks vs baselines ({gpu})",
        "",
        f"- command: `{command}`",
        f"- date: {now} (run time {seconds:.0f} s on {_cpu_count()} CPU core(s))",
        f"- sweep: `{sweep}`, sha256 `{sha}`",
        f"- GPU (sweep metadata): {gpu}, {dev.get('sms', '?')} SMs, {dev.get('arch', meta.get('arch', '?'))}, driver "
        f"{dev.get('driver', '?')}, CUDA runtime {dev.get('cuda_runtime', '?')}, max SM clock "
        f"{dev.get('clock_max_sm', '?')}; measured {meta.get('date', '?')}, CUTLASS {meta.get('cutlass', '?')}",
        f"- sets: **CV** = nested `GroupKFold` by `shape_key` over the training shapes ({s.folds} folds, seed "
        f"{s.seed}; the trainer's own splits), every fold re-running the whole trainer "
        f"(`predictor.train.train_family`, its inner {s.folds}-fold CV included) on the other folds; **net** = the "
        f"real-network layers (`source` starting with `net:`), scored with the model trained on all training "
        f"shapes (what `python -m predictor.train` ships)",
        f"- hyper-parameter grid: {s.grid.describe()}; max portfolio {s.max_portfolio}, CV tolerance {s.tolerance}",
        "- scoring: only `status == \"ok\"` and verified rows; time = `time_us` (timing method 1) or "
        "`retime_us` else `time_us` (method 2), `predictor.portfolio.effective_times`; score = "
        "oracle_time / picked_time (1 = the fastest measured config); geomean, P10 (10th percentile), worst, "
        "exact = picked the fastest config. **Missing data rule**: a pick with no ok row for a shape (not "
        "implementable, wrong result, or not in the grid) is scored with that shape's *worst* ok time; the "
        "`missing` column counts how often that happened.",
        "",
    ]
    for ev in evals:
        d = ev.data
        lines.append(f"- {d.family.value}: {d.table.n_shapes} shapes with an ok row ({int((~d.net).sum())} training, "
                     f"{int(d.net.sum())} network layers; {d.dropped} dropped with no ok row); {len(d.configs)} "
                     f"eligible configs of the {d.sweep_configs} in the sweep (the trainer never selects a config "
                     f"that computed a wrong result on any shape; snapping and the heuristics choose among the "
                     f"same eligible configs, and a fixed config that is not eligible would score as missing)")
    return lines


def results_lines(evals: Sequence[FamilyEval]) -> list[str]:
    """The headline tables, the targets, the methods ranked and the score distributions."""
    lines = ["", "## Headline", "", headline_markdown(evals), "### Targets", "",
             "Aim: our pick ahead of nvMatmulHeuristics top-1, `SEED_CONFIG` and the best single config in "
             "geomean and P10, and >= 0.98 of oracle (geomean). Measured:", "", *targets_lines(evals), ""]
    lines += ["Methods ranked by geomean:", ""]
    for ev in evals:
        for res in (ev.cv, ev.net):
            ms = res.metrics()
            if ms:
                order = sorted(ms, key=lambda m: -ms[m]["geomean"])
                lines.append(f"- {ev.data.family.value} / {res.name}: " + " > ".join(
                    f"{m} {ms[m]['geomean']:.3f}" for m in order))
    lines += ["", "### Distribution of picked / oracle (share of shapes)", ""]
    for ev in evals:
        for res in (ev.cv, ev.net):
            ms = res.metrics()
            if not ms:
                continue
            labels = [b[2] for b in BUCKETS]
            lines += [f"**{ev.data.family.value} / {res.name}**", "", "| method | " + " | ".join(labels) + " |",
                      "|---|" + "---|" * len(labels)]
            for m, r in ms.items():
                lines.append(f"| {METHODS[m]} | " + " | ".join(f"{100 * r['buckets'][b]:.1f}%" for b in labels) + " |")
            lines.append("")
    return lines


def figure_lines(evals: Sequence[FamilyEval], files: Sequence[Path]) -> list[str]:
    """The figures written (``files``), with their captions and the k-curve numbers."""
    fig = {p.name for p in files}
    lines = ["## Figures", ""]
    for ev in evals:
        f = ev.data.family.value
        if f"cdf_{f}.png" in fig:
            lines += [f"CDF of picked/oracle, {f} (curves further right and lower are better):", "",
                      f"![cdf {f}](cdf_{f}.png)", ""]
    if "portfolio_k.png" in fig:
        lines += ["Portfolio size k vs CV quality (tree: for each k the best CV geomean over the other "
                  "hyper-parameters of the grid, on the trainer's folds -- selected on those folds, so slightly "
                  "optimistic; portfolio oracle: greedy portfolio of the training folds, best member on the test "
                  "fold):", "", "![portfolio k](portfolio_k.png)", ""]
        for ev in evals:
            kc = ev.kcurve
            pts = zip(kc["k"], kc["tree"], kc["portfolio_oracle"], strict=True)
            lines.append(f"- {ev.data.family.value}: " + ", ".join(f"k={k}: {t:.4f} / {o:.4f}" for k, t, o in pts)
                         + " (tree / portfolio oracle)")
        lines.append("")
    for ev in evals:
        f = ev.data.family.value
        if f"winner_map_{f}.png" in fig:
            lines += [f"Winning threadblock tile over the implicit-GEMM (M, N) plane, {f} (log axes; points "
                      "jittered by up to +-4% so that shapes with the same M and N stay visible; shapes that "
                      "differ only in GEMM K overlap):", "", f"![winner map {f}](winner_map_{f}.png)", ""]
    return lines


def methods_lines(evals: Sequence[FamilyEval], nvmmh_info: Mapping[str, Any] | None,
                  nvmmh_error: str | None) -> list[str]:
    """How each method picks (with the nvMatmulHeuristics run's settings, or why it did not run)."""
    lines = ["## Methods", "",
             "- **our tree**: the trainer's portfolio + decision tree (integer tree IR, what `predictor.select` "
             "runs); **portfolio oracle**: the best member of that portfolio on each shape (the tree's ceiling).",
             "- **best single config**: `predictor.portfolio.best_single` on the training shapes (of the fold, "
             "for CV); **SEED_CONFIG** (int8 only): 128x128x64, warp 64x64x64, 4 stages; **generator default**: "
             "`predictor.space.default_config` (cutlass_library's first, largest tile).",
             f"- **wave-quantisation heuristic** ({evals[0].data.sms if evals else DEFAULT_SMS} SMs, the sweep's "
             f"`sms`): {baselines.WAVE_FORMULA}",
             "- **nvMatmulHeuristics**: the conv's implicit GEMM (M = N*P*Q, N = K, K = C*R*S) is given to "
             "`nvMatmulHeuristicsGetGemmConfig` "
             + (f"(package version {nvmmh_info.get('version')}, GPU preset `{nvmmh_info.get('gpu')}`, target "
                f"`{nvmmh_info.get('target')}` = CUTLASS 2.x kernels, flags `{nvmmh_info.get('flags')}`, layout "
                f"`{nvmmh_info.get('layout')}` (A row-major, B column-major, D row-major, as cutlass_library's "
                f"heuristics_provider maps them), precision per family "
                f"{ {f.value: p for f, p in baselines.NVMMH_PRECISION.items()} }; run on the CPU in one "
                f"subprocess for all shapes)" if nvmmh_info else "(not run)")
             + f". Its top-1 and top-{_nvmmh_k(nvmmh_info)} answers are snapped to the nearest grid config: "
             f"{baselines.SNAP_FORMULA} Top-k is scored as the best of the k snapped configs. **perf model over "
             "our grid**: the library's `RUNTIME_RELATIVE_FAST_S` estimate "
             "(`nvMatmulHeuristicsEstimateSiliconMetricEx`) of every grid config, lowest wins (ties, e.g. stage "
             "counts it does not distinguish, broken as for the wave heuristic) -- this ranks our own grid, so "
             "no snapping is involved.",
             ""]
    if nvmmh_error:
        lines += [f"**nvMatmulHeuristics could not be evaluated**: {nvmmh_error}", ""]
    return lines


def nvmmh_diagnostics_lines(evals: Sequence[FamilyEval]) -> list[str]:
    """Per family, how nvMatmulHeuristics' top-1 answers relate to the grid (nothing if it did not run)."""
    if not any(ev.nvmmh for ev in evals):
        return []
    lines = ["### nvMatmulHeuristics diagnostics", "",
             "Per shape (top-1 answers): how often the answer is already a grid config, has a threadblock "
             "tile the grid lacks, asks for split-k, or asks for a single stage (CUTLASS 2.x multistage "
             "kernels need >= 2).", "",
             "| family | precision | GEMM problems | top-1 is a grid config | tile not in grid | split-k | "
             "1 stage | mean snap distance (top-1) | answers per top-k query | distinct snapped configs in "
             "top-k | no answer | alt. precision |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for ev in evals:
        st = ev.nvmmh
        if not st:
            continue
        cells = [ev.data.family.value, st["precision"], st["problems"]]
        cells += [f"{100 * st[k]:.1f}%" for k in ("top1_in_grid", "top1_tile_not_in_grid", "top1_split_k",
                                                   "top1_single_stage")]
        cells += [f"{st['top1_mean_snap_distance']:.2f}", f"{st['topk_mean_answers']:.2f}",
                  f"{st['topk_mean_distinct_snapped']:.2f}", st["top1_no_answer"], st["alt_precision"] or "-"]
        lines.append("| " + " | ".join(map(str, cells)) + " |")
    lines.append("")
    return lines


def nested_cv_lines(evals: Sequence[FamilyEval]) -> list[str]:
    """The hyper-parameters and inner CV score of every outer fold."""
    lines = ["## Nested CV details", "",
             "| family | fold | train | test | k | weighting | min_samples_leaf | max_depth | leaves "
             "| inner CV geomean |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for ev in evals:
        for fd in ev.folds:
            lines.append(f"| {ev.data.family.value} | {fd['fold']} | {fd['train']} | {fd['test']} | {fd['k']} | "
                         f"{fd['weighting']} | {fd['min_samples_leaf']} | {fd['max_depth']} | {fd['leaves']} | "
                         f"{fd['inner_cv_geomean']:.4f} |")
    return lines


def full_model_lines(evals: Sequence[FamilyEval]) -> list[str]:
    """The model trained on all training shapes, compared with the repository's model."""
    lines = ["", "The model trained on all training shapes (what the trainer ships with these settings):", ""]
    for ev in evals:
        sh = ev.shipped
        hp = sh["hyperparameters"]
        cvm, hm = sh["cv"]["model"], sh["holdout"]["model"]
        ours = ev.net.metrics().get("tree")
        same = (hm is not None and ours is not None and abs(hm["geomean"] - ours["geomean"]) < 1e-9)
        lines.append(f"- {ev.data.family.value}: k = {hp['k']}, weighting {hp['weighting']}, min_samples_leaf "
                     f"{hp['min_samples_leaf']}, max_depth {hp['max_depth']}, {sh['tree']['leaves']} leaves; the "
                     f"trainer's own (non-nested: hyper-parameters chosen on the same folds) CV geomean "
                     f"{cvm['geomean']:.4f}, P10 {cvm['p10']:.4f} vs nested {ev.cv.metrics()['tree']['geomean']:.4f}; "
                     f"held-out numbers {'identical to' if same else 'DIFFERENT from'} the trainer's summary")
        rep = sh.get("repository_model")
        if rep is None:
            lines.append("  - no repository model (`models/`) for this GPU and family")
        elif not rep.get("same_sweep", False):
            lines.append(f"  - repository model `models/{rep['path']}` was trained on another sweep "
                         f"({rep.get('error', 'different sha256')}): not compared")
        else:
            lines.append(f"  - repository model `models/{rep['path']}` (same sweep): same portfolio "
                         f"{'yes' if rep['same_portfolio'] else 'NO'}, same pick on {100 * rep['agreement']:.1f}% of "
                         f"the {rep['shapes']} shapes")
        lines.append("  - portfolio: " + ", ".join(f"`{short_name(n)}`" for n in sh["portfolio"]))
    return lines


def time_and_files_lines(evals: Sequence[FamilyEval], files: Sequence[Path]) -> list[str]:
    """Seconds per step and family, and the files written."""
    lines = ["", "## Time", ""]
    for ev in evals:
        lines.append(f"- {ev.data.family.value}: " + ", ".join(f"{k} {v:.1f} s" for k, v in ev.seconds.items()))
    lines += ["", "## Files", "",
              "- `per_shape.csv`: one row per (family, set, shape): shape, implicit GEMM, oracle config and time, "
              "worst time, and per method `<method>_config` (tile_wwarp_sstages[_swN][_analytic][_skN]), "
              "`<method>_ratio` (oracle/picked, missing scored with the worst time) and `<method>_missing`",
              "- `metrics.csv`: the headline numbers and distribution buckets", *[f"- `{p.name}`" for p in files], ""]
    return lines


def _nvmmh_k(info: Mapping[str, Any] | None) -> int | str:
    return info.get("count", "k") if info else "k"


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        return os.cpu_count() or 1

"""The human-readable summary of a trained model (``models/<slug>-<key>.summary.md``), from its summary dict
(:func:`predictor.train.train_family`)."""
from __future__ import annotations

from typing import Any

SCORING_NOTE = ("score of a pick = oracle_time / picked_time (1 = fastest measured config); a pick with "
                "no ok+verified row for the shape is scored with the shape's worst ok time")


def _fmt_metrics(m: dict[str, float] | None) -> str:
    if not m:
        return "| - | - | - | - | - |"
    return (f"| {m['shapes']} | {m['geomean']:.4f} | {m['p10']:.4f} | {m['worst']:.4f} | "
            f"{100 * m['exact']:.1f}% |")


def summary_markdown(s: dict[str, Any]) -> str:
    """Human-readable summary of one family's model."""
    lines = [
        f"# {s['gpu']} / {s['family']} kernel-selection model",
        "",
        f"- sweep: `{s['sweep']}` (sha256 `{s['sweep_sha256'][:16]}...`)",
        f"- target: {s['target'] or 'all configs of ' + s['gpu']}; sms = {s['sms']}",
        f"- shapes: {s['shapes']['train']} training, {s['shapes']['holdout']} held out "
        f"({', '.join(s['holdout_prefixes']) or 'none'}), {s['shapes']['dropped_no_ok']} dropped (no ok row); "
        f"configs: {s['configs']}",
        *([f"- choice across {', '.join(s['choice']['families'])}: trained on the problems measured in every "
           f"member family that implements them ({s['choice']['not_in_every_family']} dropped); exported configs per family: "
           + ", ".join(f"{f} {n}" for f, n in s["choice"]["portfolio_by_family"].items())] if "choice" in s else []),
        f"- chosen: k = {s['hyperparameters']['k']}, max_depth = {s['hyperparameters']['max_depth']}, "
        f"min_samples_leaf = {s['hyperparameters']['min_samples_leaf']}, weighting = "
        f"{s['hyperparameters']['weighting']}; tree: {s['tree']['splits']} splits, {s['tree']['leaves']} leaves, "
        f"depth {s['tree']['depth']}",
        *([f"- features: `{s['hyperparameters']['features']}` (predictor.features.FEATURE_SETS)"]
          if s["hyperparameters"].get("features") else []),
        f"- {SCORING_NOTE}; P10 = 10th percentile of the per-shape score, exact = picked the fastest",
        "- CV rows: the model and the best single config are chosen on the training folds and scored on "
        "the held-out fold; SEED_CONFIG involves no fitting, so its CV row is over all training shapes",
        *([f"- routed over the members' own models ({', '.join(s['hyperparameters']['route'])}, predictor.route): "
           "the chosen values above are its pointwise tree's; its CV row sends each problem to the member the "
           "router's CV chose, whose pick is that member's shipped model's, trained on every problem (in-sample): "
           "the leave-network-out report (predictor.route_lono) scores it out of sample"]
          if s["hyperparameters"].get("route") else []),
        "",
        "| set | picker | shapes | geomean | P10 | worst | exact |",
        "|---|---|---|---|---|---|---|",
    ]
    for set_name, block in (("CV (training shapes)", s["cv"]), ("held-out networks", s["holdout"]),
                            ("in-sample (training shapes)", s["in_sample"])):
        for picker, m in block.items():
            if picker.endswith("_config"):
                continue
            label = picker
            if picker == "best_single":
                label = "best single config"
            elif picker == "seed":
                label = "SEED_CONFIG"
            lines.append(f"| {set_name} | {label} {_fmt_metrics(m)}")
    lines += ["", f"Portfolio ({len(s['portfolio'])}):", ""]
    lines += [f"{i}. `{name}`" for i, name in enumerate(s["portfolio"])]
    if s["cv"].get("best_single_config"):
        lines += ["", f"Best single config (all training shapes): `{s['cv']['best_single_config']}`"]
    return "\n".join(lines) + "\n"


__all__ = ["SCORING_NOTE", "summary_markdown"]

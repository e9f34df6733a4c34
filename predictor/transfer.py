"""Does a kernel choice made on the whole GPU transfer to fewer SMs?  (SM-partition sweeps.)

    python -m predictor.transfer --full sweeps/h200.parquet \\
        --partition sweeps/h200-sm32.parquet --partition sweeps/h200-sm16.parquet \\
        --target-sms 16 --out reports/partitions

Scored on the problems measured at ``--target-sms`` (an H200 restricted to that many SMs by a
green context: its memory bandwidth and L2 are still the H200's), with grouped 5-fold
cross-validation over problems: a problem's rows at every SM count stay in one fold, and every
model picks for problems it never saw at any SM count.  Methods:

* ``full-GPU model``: trained on the whole-GPU sweep only, asked with ``sms = target``;
* ``without target sweep``: trained on the whole GPU and the other partitions (not the target);
* ``with target sweep``: trained on all sweeps including the target SM count;
* ``full-GPU winner``: the whole-GPU oracle config of each problem, run at the target SM count;
* ``best single (target)`` and ``SEED_CONFIG``.
Score = target-SM-count oracle time / picked time (a pick with no ok row scores the problem's
worst ok time).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import logging
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .cli import display_path, refuse_overwrite, run_main
from .config import SEED_CONFIG, Family
from .features import frame as feature_frame
from .portfolio import build_table, eligible_rows, metrics
from .schema import file_sha256, read_metadata, read_sweep, sm_keys
from .targets import TARGETS
from .train import base_keys, train_family

_LOG = logging.getLogger("predictor.transfer")
_GRID = {"k_grid": (8, 12), "depth_grid": (6, 8, 10), "min_leaf_grid": (2, 8), "weightings": ("uniform",)}


def _scores(table: Any, picks: Sequence[str]) -> np.ndarray:
    col = {c: j for j, c in enumerate(table.configs)}
    t = np.array([table.times[i, col[p]] if p in col else np.nan for i, p in enumerate(picks)])
    return np.where(np.isnan(t), table.worst, t)


def run(args: argparse.Namespace) -> dict[str, Any]:
    fam = Family(args.family)
    full = read_sweep(args.full)
    parts = {p: read_sweep(p) for p in args.partition}
    all_rows = pd.concat([full, *parts.values()], ignore_index=True)
    all_rows = all_rows[all_rows["family"] == fam.value]
    rows = eligible_rows(all_rows)
    rows = rows.assign(problem=sm_keys(rows["shape_key"], rows["sms"]))
    target = rows[rows["sms"] == args.target_sms]
    if target.empty:
        raise ValueError(f"no ok rows at sms={args.target_sms} in {args.partition}")
    full_sms = int(full["sms"].max())
    tgt_table, _ = build_table(target, args.target_sms)
    full_t, _ = build_table(rows[rows["sms"] == full_sms], full_sms)
    full_winner = dict(zip(full_t.keys, np.array(full_t.configs)[np.nanargmin(full_t.times, axis=1)]))
    keys = tgt_table.keys
    from sklearn.model_selection import GroupKFold

    folds = GroupKFold(n_splits=args.folds, shuffle=True, random_state=args.seed).split(
        np.zeros(len(keys)), groups=base_keys(keys))
    picks: dict[str, list[str]] = {m: [""] * len(keys) for m in
                                   ("full-GPU model", "without target sweep", "with target sweep")}
    other_sms = [s for s in sorted(rows["sms"].unique()) if s not in (args.target_sms,)]
    for fold, (tr, te) in enumerate(folds):
        test_keys = set(keys[te])
        train_rows = rows[~rows["shape_key"].isin(test_keys)]
        variants = {
            "full-GPU model": train_rows[train_rows["sms"] == full_sms],
            "without target sweep": train_rows[train_rows["sms"].isin(other_sms)],
            "with target sweep": train_rows,
        }
        X = feature_frame(tgt_table.shapes.iloc[te]).to_numpy(dtype=np.int64)
        for name, tr_rows in variants.items():
            m = train_family(tr_rows.drop(columns=["problem", "t_eff"]), fam, sweep=Path("transfer"), sweep_sha="-",
                             target=None, max_portfolio=12, seed=args.seed, holdout_prefixes=(), folds=3,
                             tolerance=0.0, **_GRID)
            for i, x in zip(te, X):
                picks[name][i] = m.ir.predict(tuple(int(v) for v in x))
        _LOG.info("fold %d done", fold)
    oracle = tgt_table.oracle
    results: dict[str, Any] = {name: metrics(oracle, _scores(tgt_table, p)) for name, p in picks.items()}
    results["full-GPU winner"] = metrics(oracle, _scores(tgt_table, [full_winner.get(k, "") for k in keys]))
    gm = np.exp(np.nanmean(np.log(oracle[:, None] / np.where(np.isnan(tgt_table.times), tgt_table.worst[:, None],
                                                             tgt_table.times)), axis=0))
    best_single = tgt_table.configs[int(np.argmax(gm))]
    results["best single (target, in-sample)"] = metrics(oracle, _scores(tgt_table, [best_single] * len(keys)))
    if fam is Family.INT8_NC32HW32:
        results["SEED_CONFIG"] = metrics(oracle, _scores(tgt_table, [SEED_CONFIG.name] * len(keys)))
    same = np.mean([full_winner.get(k) == tgt_table.configs[j] for k, j in zip(keys, np.nanargmin(tgt_table.times, 1))])
    return {"results": results, "problems": len(keys), "full_winner_still_wins": float(same),
            "target_sms": args.target_sms, "full_sms": full_sms}


def report(res: dict[str, Any], args: argparse.Namespace) -> str:
    meta = read_metadata(args.partition[0]) if args.partition else {}
    lines = [
        f"# Kernel choice at {res['target_sms']} SMs (green-context partition of the H200)",
        "",
        f"- command: `python -m predictor.transfer {' '.join(sys.argv[1:])}`",
        f"- date: {_dt.datetime.now(_dt.timezone.utc).isoformat(timespec='seconds')}",
        f"- GPU: {meta.get('device', {}).get('gpu', '?')} (whole GPU: {res['full_sms']} SMs); the partitions keep "
        "the H200's memory bandwidth and 60 MB L2, so they are not an Orin",
        "- sweeps: " + ", ".join(f"`{p}` (sha256 {file_sha256(p)[:12]}…)" for p in [args.full, *args.partition]),
        f"- problems scored: {res['problems']} int8 NCxHWx<32> problems measured at {res['target_sms']} SMs, "
        f"grouped {args.folds}-fold CV over problems (a problem is never trained on at any SM count when scored)",
        f"- the whole-GPU winner is still the fastest at {res['target_sms']} SMs on "
        f"{100 * res['full_winner_still_wins']:.0f}% of problems",
        "",
        "| method | geomean | P10 | worst | exact |",
        "|---|---|---|---|---|",
    ]
    for name, m in res["results"].items():
        lines.append(f"| {name} | {m['geomean']:.4f} | {m['p10']:.4f} | {m['worst']:.4f} | {100 * m['exact']:.1f}% |")
    lines += ["", "Score = oracle time at the target SM count / time of the pick (1 = fastest measured)."]
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m predictor.transfer", description=__doc__.split("\n\n")[0])
    p.add_argument("--full", required=True, help="whole-GPU sweep")
    p.add_argument("--partition", action="append", default=[], help="sweep measured on an SM partition (repeatable)")
    p.add_argument("--target-sms", type=int, default=TARGETS["sm_87"].sms,
                   help="the SM count whose problems are scored (default: a Jetson Orin's)")
    p.add_argument("--family", default=Family.INT8_NC32HW32.value, choices=[f.value for f in Family],
                   help="family to evaluate")
    p.add_argument("--folds", type=int, default=5, help="GroupKFold splits over problems")
    p.add_argument("--seed", type=int, default=0, help="seed of the folds and the trees")
    p.add_argument("--out", default="reports/partitions",
                   help="folder of REPORT_sm<target>.md; an existing report is replaced only with --overwrite")
    p.add_argument("--overwrite", action="store_true", help="replace the report already in --out")
    return p


def _main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = Path(args.out)
    target = out / f"REPORT_sm{args.target_sms}.md"
    refuse_overwrite([target], [out], args.overwrite,
                     f"pass --overwrite to replace it, or --out DIR (now {display_path(out)})")
    res = run(args)
    out.mkdir(parents=True, exist_ok=True)
    text = report(res, args)
    target.write_text(text)
    print(text)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; unusable input ends in one line on stderr (exit 2)."""
    return run_main("predictor.transfer", _main, argv)


if __name__ == "__main__":
    sys.exit(main())

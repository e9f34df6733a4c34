"""Run-to-run noise of the sweep: the same problems re-measured later on another H200.

    python scripts/repeat_noise.py sweeps/h200.parquet sweeps/runs/h200-repeat-shard0.parquet
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from predictor.portfolio import effective_times  # noqa: E402
from predictor.schema import read_metadata, read_sweep  # noqa: E402


def main(first: str, repeat: str) -> None:
    a, b = read_sweep(first), read_sweep(repeat)
    for d in (a, b):
        d["t"] = effective_times(d)
    m = a.merge(b, on=["family", "shape_key", "config"], suffixes=("_a", "_b"))
    m = m[(m["status_a"] == "ok") & (m["status_b"] == "ok")]
    r = m["t_b"] / m["t_a"]
    wa = m.loc[m.groupby("shape_key")["t_a"].idxmin()].set_index("shape_key")["config"]
    piv = m.pivot(index="shape_key", columns="config", values="t_b")
    score = piv.min(axis=1) / np.array([piv.at[k, c] for k, c in wa.items()])
    wb = piv.idxmin(axis=1)
    ma, mb = read_metadata(first), read_metadata(repeat)
    ma = (ma.get("history") or [ma])[0]  # rows extended later keep the first run's metadata in history
    print(f"first: {first} ({ma.get('date')}, {ma.get('device', {}).get('gpu_uuid')}); "
          f"repeat: {repeat} ({mb.get('date')}, {mb.get('device', {}).get('gpu_uuid')})")
    print(f"{len(r)} timings of {m['shape_key'].nunique()} problems: repeat/first median {r.median():.3f}, "
          f"P5 {r.quantile(0.05):.3f}, P95 {r.quantile(0.95):.3f}")
    print(f"the first run's winner, timed in the repeat: geomean {np.exp(np.log(score).mean()):.4f}, "
          f"P10 {np.quantile(score, 0.1):.4f}; same winner on {100 * float((wa == wb.reindex(wa.index)).mean()):.0f}%")
    print(f"status agreement: {100 * float((a.merge(b, on=['family', 'shape_key', 'config']).pipe(lambda x: (x.status_x == x.status_y).mean()))):.1f}%")


if __name__ == "__main__":
    main(*(sys.argv[1:3] if len(sys.argv) > 2 else ("sweeps/h200.parquet", "sweeps/runs/h200-repeat-shard0.parquet")))

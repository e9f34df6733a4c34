"""Answer the int8 NCxHWx<32> 3x3 fprop question of shared/seeds/000_* from a sweep.

    python scripts/int8_question.py sweeps/h200.parquet > docs/int8_nc32hw32_3x3.md

Everything printed is computed from the sweep file given (its GPU is named in the output).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from predictor.config import SEED_CONFIG, KernelConfig  # noqa: E402
from predictor.portfolio import effective_times, eligible_rows  # noqa: E402
from predictor.schema import file_sha256, read_metadata, read_sweep  # noqa: E402
from predictor.selector import select  # noqa: E402


def gm(x: pd.Series | np.ndarray) -> float:
    x = np.asarray(x, float)
    x = x[np.isfinite(x)]
    return float(np.exp(np.log(x).mean())) if len(x) else float("nan")


def short(name: str) -> str:
    c = KernelConfig.from_name(name)
    sk = "" if c.split_k_slices == 1 else f", split-k {c.split_k_slices}"
    return (f"{c.tb[0]}x{c.tb[1]}x{c.tb[2]} / warp {c.warp[0]}x{c.warp[1]}x{c.warp[2]} / {c.stages} st / "
            f"swz {c.swizzle.value} / {c.iterator.value}{sk}")


def main(path: str) -> None:
    df = read_sweep(path)
    meta = read_metadata(path)
    df = df[df["family"] == "i8nc32"]
    ok = eligible_rows(df)
    ok = ok.assign(t=effective_times(ok))
    r3 = ok[(ok["R"] == 3) & (ok["S"] == 3) & (ok["dilation"] == 1)]
    piv = r3.pivot(index="shape_key", columns="config", values="t")
    best = piv.min(axis=1)
    rel = piv.rdiv(best, axis=0)  # oracle / time, 1 = fastest
    info = r3.drop_duplicates("shape_key").set_index("shape_key")
    gpu = meta.get("device", {}).get("gpu", "?")
    out = []
    w = out.append
    w("# int8 NCxHWx<32> 3x3 conv2d fprop: which CUTLASS configuration wins\n")
    w(f"Measured on **{gpu}** ({meta.get('device', {}).get('sms', '?')} SMs, SM80-family kernels built for "
      f"{meta.get('arch', '?')}), sweep `{path}` (sha256 `{file_sha256(path)[:16]}…`, {meta.get('date', '?')}); "
      "regenerate with `python scripts/int8_question.py sweeps/h200.parquet > docs/int8_nc32hw32_3x3.md`.\n")
    w("**This is not an Orin measurement.** The question (shared/seeds/000_*) is about a Jetson AGX Orin "
      "(sm_87, 16 SMs, LPDDR5). We have no Orin and TensorRT could not be run here, so the 12% gap to "
      "TensorRT is neither reproduced nor refuted. What the H200 data can say is how the question's "
      "configuration compares with the other CUTLASS configurations on the same kernels and layouts, "
      "and which knobs matter. An Orin owner gets the Orin answer with the same collector:\n")
    w("```bash\npip install -e '.[gpu]'\npython -m predictor.collect --arch sm_87 --family i8nc32 --out sweeps/orin.parquet\n"
      "python -m predictor.train sweeps/orin.parquet --target sm_87\npython scripts/int8_question.py sweeps/orin.parquet\n```\n")
    w("The SM-partition sweeps (`reports/partitions/`) show the whole-GPU choice transfers badly to 16 SMs, so "
      "measure on the Orin rather than reuse these picks.\n")
    w("## The kernel contract\n")
    w("The filter must be stored `TensorCxRSKx<32>` **and reordered with `cutlass::reorder_convK<32>`** "
      "(`cutlass/util/host_reorder.h`). Without the reorder the kernels return wrong results (most elements "
      "on the H200); the collector's check catches it (`tests/test_gpu.py::test_missing_reorder_is_caught`). "
      "`predictor/layouts.py` gives the storage map, tested against CUTLASS's own host function.\n")
    seed = SEED_CONFIG.name
    s_rel = rel[seed]
    w(f"## The question's configuration over {len(piv)} 3x3 problems\n")
    w(f"`{seed}` = {short(seed)} (what the question and TensorRT's kernel name use).\n")
    w(f"- geomean speed relative to the fastest measured config per problem: **{gm(s_rel):.3f}** "
      f"(P10 {np.nanpercentile(s_rel, 10):.3f}, worst {np.nanmin(s_rel):.3f}); it is the fastest on "
      f"{100 * float((s_rel >= 0.999).mean()):.1f}% of them.")
    wins = piv.idxmin(axis=1).value_counts()
    w(f"- {len(wins)} different configs win at least one 3x3 problem. Most frequent winners:\n")
    w("| config | wins | geomean vs fastest over all 3x3 problems |")
    w("|---|---|---|")
    for name, n in wins.head(8).items():
        w(f"| {short(name)} | {n} | {gm(rel[name]):.3f} |")
    single = rel.apply(gm).sort_values(ascending=False)
    w(f"\nBest single config for 3x3 layers: {short(single.index[0])} ({single.iloc[0]:.3f} geomean). "
      f"The question's config ranks {list(single.index).index(seed) + 1} of {len(single)}.\n")
    # network layers
    net = info[info["source"].str.startswith("net:") & info["N"].isin([1, 8])]
    w("## Typical network layers (3x3, batch 1 and 8)\n")
    w("| network | N | C | HxW | K | stride | fastest config | its µs | question's µs | question / fastest | model's pick / fastest |")
    w("|---|---|---|---|---|---|---|---|---|---|---|")
    for key, row in net.sort_values(["source", "N", "C", "H"]).iterrows():
        b = piv.loc[key].idxmin()
        pick = select(int(row.N), int(row.C), int(row.H), int(row.W), int(row.K), 3, 3, stride=int(row.stride),
                      pad=int(row.pad), family="i8nc32").name
        pr = rel.loc[key].get(pick, np.nan)
        w(f"| {row.source[4:]} | {row.N} | {row.C} | {row.H}x{row.W} | {row.K} | {row.stride} | {short(b)} | "
          f"{piv.loc[key, b]:.1f} | {piv.loc[key, seed]:.1f} | {1 / rel.loc[key, seed]:.2f}x | {pr:.3f} |")
    # knobs
    w("\n## Which knobs matter (3x3 problems; geomean of fastest-variant time / variant time)\n")

    spans: dict[str, list[float]] = {}

    def knob(title: str, base: dict, field: str, values: list) -> None:
        names = {}
        for v in values:
            for n in piv.columns:
                c = KernelConfig.from_name(n)
                d = c.to_dict()
                if all(d.get(k) == x for k, x in base.items()) and d.get(field) == v and c.split_k_slices == 1:
                    names[v] = n
        if len(names) < 2:
            return
        sub = piv[list(names.values())]
        r = sub.rdiv(sub.min(axis=1), axis=0)
        scores = {v: gm(r[n]) for v, n in names.items()}
        spans.setdefault(title.split(",")[0], []).append(1 - min(scores.values()))
        w(f"- **{title}**: " + ", ".join(f"{v}: {s:.3f}" for v, s in scores.items()))

    for tb, wm in (((128, 128, 64), (64, 64, 64)), ((128, 64, 64), (64, 32, 64)), ((64, 64, 64), (32, 32, 64))):
        knob(f"stages, tile {tb[0]}x{tb[1]}x{tb[2]} warp {wm[0]}x{wm[1]}",
             {"tb_m": tb[0], "tb_n": tb[1], "tb_k": tb[2], "warp_m": wm[0], "warp_n": wm[1], "swizzle": "Identity1",
              "iterator": "Optimized"}, "stages", [2, 3, 4, 5, 6, 8, 10])
    for tb, wm, st in (((128, 128, 64), (64, 64, 64), 5), ((128, 64, 64), (64, 32, 64), 6), ((64, 64, 64), (32, 32, 64), 10)):
        knob(f"swizzle, tile {tb[0]}x{tb[1]}x{tb[2]} {st} stages",
             {"tb_m": tb[0], "tb_n": tb[1], "tb_k": tb[2], "warp_m": wm[0], "stages": st, "iterator": "Optimized"},
             "swizzle", ["Identity1", "Identity2", "Identity4", "Identity8"])
        knob(f"iterator, tile {tb[0]}x{tb[1]}x{tb[2]} {st} stages",
             {"tb_m": tb[0], "tb_n": tb[1], "tb_k": tb[2], "warp_m": wm[0], "stages": st, "swizzle": "Identity1"},
             "iterator", ["Analytic", "Optimized"])
    for st in (3, 4):
        knob(f"warp tile, tile 128x64x64 {st} stages", {"tb_m": 128, "tb_n": 64, "tb_k": 64, "stages": st,
             "swizzle": "Identity1", "iterator": "Optimized"}, "warp_n", [32, 64])
    tiles = {}
    for n in piv.columns:
        c = KernelConfig.from_name(n)
        if c.split_k_slices == 1:
            tiles.setdefault(c.tb, []).append(n)
    best_per_tile = pd.DataFrame({tb: piv[ns].min(axis=1) for tb, ns in tiles.items()})
    r = best_per_tile.rdiv(best_per_tile.min(axis=1), axis=0)
    w("- **threadblock tile** (best stages/swizzle/warp for each tile): " + ", ".join(
        f"{a}x{b}x{k}: {gm(r[(a, b, k)]):.3f}" for (a, b, k) in sorted(tiles, key=lambda t: -gm(r[t]))))
    sk = ok[(ok["R"] == 3)]
    wrong = df[(df["R"] == 3) & (df["status"] == "wrong_result")]
    w(f"- **serial split-k**: with int8 output, partial sums are clamped to int8 between slices; "
      f"{wrong['shape_key'].nunique()} of {df[df['R'] == 3]['shape_key'].nunique()} 3x3 problems got a wrong result "
      "from at least one split-k config, so the trainer never selects split-k configs for this family.")
    spans["threadblock tile"] = [1 - float(r.apply(gm).min())]
    w("\nReading (largest loss of the worst variant against the best, per knob): " + "; ".join(
        f"{k} up to {100 * max(v):.0f}%" for k, v in sorted(spans.items(), key=lambda kv: -max(kv[1]))) + ".\n")
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "sweeps/h200.parquet")

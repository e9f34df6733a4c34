"""Offline leave-network-group-out study (CPU): one model over several families (e.g. f16nhwc+f16nhwc90, their common problems) and an extended feature set (--extra: CTA counts/tails/waves of 128x256, 256x128, 64x256, 256x64 tiles; M/N/K tile-padding waste per mille).  Usage: python scripts/xfamily_study.py FAMS SWEEP_STEMS... [--extra] [--pointwise]"""
import logging, sys, numpy as np, pandas as pd
from pathlib import Path; ROOT = Path(__file__).resolve().parent.parent; sys.path.insert(0, str(ROOT))
from predictor.schema import read_sweep
from predictor.portfolio import eligible_rows, build_table
from predictor.lono import Settings, evaluate_network, network_groups, networks
logging.basicConfig(level=logging.WARNING)
extra = "--extra" in sys.argv
sys.argv = [a for a in sys.argv if a != "--mflop"]
pointwise = "--pointwise" in sys.argv
argv = [a for a in sys.argv[1:] if a not in ("--extra", "--pointwise")]
if "--save" in argv:
    argv = argv[:argv.index("--save")]
fams = argv[0].split("+"); files = argv[1:]
df = pd.concat([read_sweep(ROOT / "sweeps" / f"{f}.parquet") for f in files])
df = df[(df.sms == 132) & df.family.isin(fams)]
keys = set.intersection(*[set(df[df.family == f].shape_key) for f in fams])
df = df[df.shape_key.isin(keys)]
if pointwise:  # 1x1, stride 1, pad 0, dilation 1 only (what a GEMM family runs)
    df = df[(df.R == 1) & (df.S == 1) & (df.stride == 1) & (df.pad == 0) & (df.dilation == 1)]
table, _ = build_table(eligible_rows(df), 132)
F = table.features()
if extra:
    cd = lambda a, b: -(-a // b)
    m, n, k, sms = F.gemm_m, F.gemm_n, F.gemm_k, F.sms
    for tm, tn in [(128, 256), (256, 128), (64, 256), (256, 64)]:
        c = cd(m, tm) * cd(n, tn)
        F[f"ctas_{tm}x{tn}"] = c
        F[f"tail_{tm}x{tn}"] = ((c - 1) % sms + 1) * 1000 // sms
        F[f"waves_{tm}x{tn}"] = cd(c, sms)
    for t in (64, 128, 256):
        F[f"nwaste_{t}"] = (cd(n, t) * t - n) * 1000 // (cd(n, t) * t)
        F[f"mwaste_{t}"] = (cd(m, t) * t - m) * 1000 // (cd(m, t) * t)
    F["kwaste_64"] = (cd(k, 64) * 64 - k) * 1000 // (cd(k, 64) * 64)
    if "--mflop" in sys.argv: F["mflop"] = m * n // 1024 * k // 1024
X = F.to_numpy(dtype=np.int64)
print("problems", table.n_shapes, "configs", len(table.configs), "features", X.shape[1])
st = Settings(kinds=("repick",), max_portfolio=16, groups=6)
parts = [evaluate_network(table, X, g, st, "+".join(fams)) for g in network_groups(networks(table), 6)]
lay = pd.DataFrame([r for p in parts for r in p[0]])
d = lay.drop_duplicates("shape_key")
if "--save" in sys.argv[-2:-1]:
    d.to_csv(sys.argv[-1], index=False)
for name, g in [("all", d), (">8GF", d[d.gflop > 8])]:
    s = g.score.to_numpy()
    print(name, len(g), "geomean %.4f P10 %.4f worst %.4f bound %.4f" % (np.exp(np.mean(np.log(s))), np.percentile(s, 10), s.min(), np.exp(np.mean(np.log(g.bound)))))

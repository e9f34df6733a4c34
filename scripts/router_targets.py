"""What the fp16 choice's router should learn: the member family holding the faster *config* (what
``predictor.route`` trains on) or the member whose *model's pick* runs faster?  An offline estimate from the
committed leave-out reports: on the 2094 network layers of ``reports/lono/h200-choice-route`` the two members'
leave-out picks (``reports/lono/h200-f16nhwc``, ``reports/lono/h200-f16nhwc90``: each layer's pick by a model that
never saw its network group) are what a routed problem runs; a router tree is trained leave-one-network-out on the
other networks' layers with either target (weight ``|log ratio|``, as ``predictor.route``) and each layer scored as
fastest config of both grids / the time of the pick of the member it is sent to.

    python scripts/router_targets.py --out reports/lono/experiments/router/targets-s49.md
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from predictor.features import ARGS, compute  # noqa: E402
from predictor.portfolio import metrics  # noqa: E402
from predictor.route import WEIGHT_FLOOR  # noqa: E402

LONO = ROOT / "reports" / "lono"
GRID = ((4, 64), (6, 32), (6, 64), (8, 32), (10, 32))


def main(argv: list[str] | None = None) -> int:
    from sklearn.tree import DecisionTreeClassifier

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    key = ["network", "shape_key"]
    choice = pd.read_csv(LONO / "h200-choice-route" / "layers.csv")
    m = choice
    for tag, folder in (("a", "h200-f16nhwc"), ("b", "h200-f16nhwc90")):
        member = pd.read_csv(LONO / folder / "layers.csv")[key + ["pick_us", "fastest_us"]]
        m = m.merge(member.rename(columns={"pick_us": f"{tag}_pick", "fastest_us": f"{tag}_fast"}), on=key,
                    validate="one_to_one")
    if len(m) != len(choice):
        raise SystemExit(f"{len(choice) - len(m)} layers of the choice's report lack a member's pick")
    X = np.array([compute({x: int(r[x]) for x in ARGS}) for r in m[list(ARGS)].to_dict("records")], np.float32)
    fastest, nets = m["fastest_us"].to_numpy(), m["network"].to_numpy()

    def score(t: np.ndarray) -> str:
        return "{geomean:.4f} / {p10:.3f} / {worst:.3f}".format(**metrics(fastest, t))

    def routed(ta: np.ndarray, tb: np.ndarray, depth: int, leaf: int) -> np.ndarray:
        y, w = (tb < ta).astype(int), np.abs(np.log(ta / tb)) + WEIGHT_FLOOR
        sent = np.zeros(len(m), int)
        for n in np.unique(nets):
            tr, te = nets != n, nets == n
            clf = DecisionTreeClassifier(max_depth=depth, min_samples_leaf=leaf, random_state=0)
            sent[te] = clf.fit(X[tr], y[tr], sample_weight=w[tr]).predict(X[te])
        return np.where(sent == 1, m["b_pick"], m["a_pick"])

    pa, pb = m["a_pick"].to_numpy(), m["b_pick"].to_numpy()
    rows = [f"| shipped routed choice (`h200-choice-route`, its router trained on every problem of the table) | "
            f"{score(m['pick_us'].to_numpy())} |",
            f"| oracle: the faster of the two members' picks | {score(np.minimum(pa, pb))} |"]
    for depth, leaf in GRID:
        rows.append(f"| depth {depth}, min leaf {leaf}: target the family of the faster config | "
                    f"{score(routed(m['a_fast'].to_numpy(), m['b_fast'].to_numpy(), depth, leaf))} |")
        rows.append(f"| depth {depth}, min leaf {leaf}: target the member whose pick runs faster | "
                    f"{score(routed(pa, pb, depth, leaf))} |")
    text = "\n".join([
        "# The fp16 choice's router: which target", "",
        f"- command: `python scripts/router_targets.py --out {a.out}`",
        f"- inputs: the committed leave-out reports `h200-choice-route`, `h200-f16nhwc`, `h200-f16nhwc90` "
        f"({len(m)} layers of {len(np.unique(nets))} networks, H200 timings); routers trained leave-one-network-out "
        "on these layers only", "",
        "| router | fastest of both grids / pick: geomean / P10 / worst |", "|---|---|", *rows, ""])
    a.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

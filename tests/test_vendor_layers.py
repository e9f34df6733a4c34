"""bench/vendor_layers.py on the CPU: the layers each vendor baseline is compared on (the int8 1x1
layers for cuBLASLt are exactly the catalog layers of i8gemm90's default problem set), the report
table, and the refusal of incomplete or contradictory arguments."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from predictor.config import Family
from predictor.shapes import default_shapes
from tests.script_module import script_module



@pytest.fixture(scope="module")
def vl():  # type: ignore[no-untyped-def]
    return script_module("bench/vendor_layers.py")


def test_int8_layers_are_the_gemm_familys_catalog_layers(vl) -> None:  # type: ignore[no-untyped-def]
    d = vl.catalog_layers(None, 16, pointwise=True)
    assert len(d) == d["shape_key"].nunique() > 900
    assert ((d["R"] == 1) & (d["S"] == 1) & (d["stride"] == 1) & (d["pad"] == 0) & (d["dilation"] == 1)).all()
    assert ((d["C"] % 16 == 0) & (d["K"] % 16 == 0)).all()
    net = {s.problem.key for s in default_shapes(Family.I8_GEMM_SM90, 1200) if s.source.startswith("net:")}
    assert set(d["shape_key"]) == net
    fp16 = vl.catalog_layers(None)  # the cuDNN comparison's layers: every fp16 catalog layer
    assert len(fp16) > len(d) and set(d["shape_key"]) <= set(fp16["shape_key"])


def test_summary_names_the_vendor_and_counts_verified_picks(vl) -> None:  # type: ignore[no-untyped-def]
    d = pd.DataFrame({"gflop": [1.0, 10.0, 3.0], "cublaslt_int8_us": [10.0, 50.0, math.nan],
                      "best_i8gemm90_us": [8.0, 60.0, 5.0], "best_i8gemm90_verified": [True, True, False]})
    head, _, row = vl.summary(d, ["best_i8gemm90"], "cublaslt_int8")
    assert "cuBLASLt / ours" in head and head.endswith("verified |")
    assert row.startswith("| best_i8gemm90 | 2 | ") and row.endswith(" 2/3 |")
    cudnn = vl.summary(d.rename(columns={"cublaslt_int8_us": "cudnn_us"}), ["best_i8gemm90"])
    assert "cuDNN / ours" in cudnn[0] and "verified" not in cudnn[0]


@pytest.mark.parametrize("extra", [
    ["--vendor", "cublaslt_int8"],  # nothing to time
    ["--vendor", "cublaslt_int8", "--family", "i8nhwc90", "--picks", "x.parquet"],  # a family without its library
    ["--vendor", "cublaslt_int8", "--library", "x.so", "--picks", "x.parquet"],  # a library without a family
    ["--library", "x.so", "--family", "f16nhwc90", "--every-layer"],  # every layer: int8 dispatchers only
    ["--vendor", "cublaslt_int8", "--library", "x.so", "--family", "i8nhwc90", "--picks", "x.parquet",
     "--every-layer"],  # ... without picks
])
def test_incomplete_arguments_are_refused(vl, extra: list[str], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as exc:
        vl.main(["--out", str(tmp_path / "o"), *extra])
    assert exc.value.code == 2


def test_pool_summarises_the_runs_together_and_refuses_a_layer_twice(vl, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    runs = []
    for i, (vendor, ours) in enumerate([((10.0, 40.0), (5.0, 40.0)), ((20.0,), (10.0,))]):
        d = pd.DataFrame({"shape_key": [f"s{i}_{j}" for j in range(len(ours))], "gflop": [1.0, 9.0][:len(ours)],
                          "cublaslt_int8_us": vendor, "x_us": ours, "x_verified": [True] * len(ours)})
        runs.append(tmp_path / f"r{i}.csv")
        d.to_csv(runs[-1], index=False)
    assert vl.main(["--vendor", "cublaslt_int8", "--pool", *map(str, runs), "--out", str(tmp_path / "p")]) == 0
    row = [r for r in (tmp_path / "p.md").read_text().splitlines() if r.startswith("| x |")][0]
    assert row == f"| x | 3 | {(2.0 * 1.0 * 2.0) ** (1 / 3):.3f} | 67% | 1 | 1.000 | 3/3 |"
    with pytest.raises(SystemExit, match="more than one CSV"):
        vl.main(["--vendor", "cublaslt_int8", "--pool", str(runs[0]), str(runs[0]), "--out", str(tmp_path / "q")])


def test_layer_sums_weight_each_layer_by_its_calls(tmp_path: Path) -> None:
    """bench/layer_sums.py: a network's sums count each distinct layer as often as the network calls it (the
    catalog's ``count``), 1x1 layers apart, and name the layers that lose the most time."""
    ls = script_module("bench/layer_sums.py")
    calls = ls.network_calls("resnet50")
    calls = calls[calls["N"] == 8]
    assert calls["count"].sum() == 53 and calls["shape_key"].is_unique  # torchvision's ResNet-50: 53 convs
    ones = (calls["R"] == 1) & (calls["S"] == 1)
    fam = "f16nhwc+f16nhwc90+f16gemm90"
    run = pd.DataFrame({"shape_key": calls["shape_key"], "cudnn_us": 2.0,
                        f"{fam}_us": [4.0 if one else 1.0 for one in ones]})
    csv = tmp_path / "run.csv"
    run.to_csv(csv, index=False)
    text = ls.report(csv, fam, ["resnet50"])
    n1, n3 = int(calls.loc[ones, "count"].sum()), int(calls.loc[~ones, "count"].sum())
    row = next(line for line in text.splitlines() if line.startswith("| resnet50 | 8 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:] == [str(n1 + n3), f"{2.0 * (n1 + n3):.1f}", f"{4.0 * n1 + n3:.1f}",
                         f"{2.0 * (n1 + n3) / (4.0 * n1 + n3):.3f}", "0.500", "2.000"]
    lost = [line for line in text.splitlines() if line.startswith("| resnet50 | n8_")]
    assert lost and all("_r1_s1_" in line for line in lost)  # the 1x1 layers lose here

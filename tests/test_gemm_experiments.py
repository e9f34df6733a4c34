"""Sessions 21-22's experiments, on the CPU: the 1x1 gap to cuDNN (the swap configs; the committed reports of
``scripts/gemm_swap_tiles.py``, ``scripts/pdl_pairs.py``, ``scripts/sched_variants.py`` and
``bench/separated_layers.py`` regenerated from the
committed runs) and the Orin-sized ``i8nc32`` as ``dense`` (``scripts/partial_lono.py``'s report from its kept folds)."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from predictor.config import Family, KernelConfig
from predictor.space import family_grid
from tests.script_module import script_module

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "sweeps" / "runs" / "s21"
CUDNN = ROOT / "bench" / "vendor_layers" / "h200-netlayers-choice3n-heuristic.csv"


def test_swap_configs_are_transposed_outside_the_grid_and_round_trip() -> None:
    cfgs = script_module("scripts/gemm_swap_tiles.py").configs()
    grid = {c.name for c in family_grid(Family.F16_GEMM_SM90)}
    assert len(cfgs) == 18 and all(c.swap_ab for c in cfgs)
    assert not grid & {c.name for c in cfgs}
    assert all(KernelConfig.from_name(c.name) == c for c in cfgs)
    assert min(c.tb[0] * c.tb[1] for c in cfgs) >= 64 * 128  # the grid transposes only tiles with N 8-32


def test_swap_report_regenerates_from_the_committed_run() -> None:
    if not CUDNN.exists():
        pytest.skip(f"{CUDNN.name} is not in this checkout")
    swap = script_module("scripts/gemm_swap_tiles.py")
    gw = script_module("scripts/gemm_wave_tiles.py")
    text = gw.report(RUNS / "swap.parquet", CUDNN, new={c.name for c in swap.configs()},
                     title="f16gemm90 configs outside the grid: the transposed kernels with large tiles",
                     script="scripts/gemm_swap_tiles.py")
    assert text == (RUNS / "swap.md").read_text()


def test_pdl_report_regenerates_from_the_committed_runs() -> None:
    pp = script_module("scripts/pdl_pairs.py")
    text = pp.report(RUNS / "pdl0.parquet", RUNS / "pdl1.parquet")
    assert text == (RUNS / "pdl.md").read_text()
    assert "plain / PDL geomean 1.099" in text


def test_separated_summary_divides_the_right_columns() -> None:
    sl = script_module("bench/separated_layers.py")
    d = pd.DataFrame({"R": [1, 3], "S": [1, 3], "N": [8, 32],
                      "cudnn_b2b_us": [4.0, 10.0], "cudnn_sep_us": [5.0, 10.0],
                      "ours_b2b_us": [8.0, 5.0], "ours_sep_us": [8.0, 4.0]})
    rows = {r.split(" | ")[0]: r for r in sl.summary(d)[2:]}
    assert rows["| 1x1"] == "| 1x1 | 1 | 0.500 | 0.625 | 1.250 | 1.000 |"
    assert rows["| other"] == "| other | 1 | 2.000 | 2.500 | 1.000 | 0.800 |"
    assert rows["| all"].startswith(f"| all | 2 | {math.sqrt(0.5 * 2.0):.3f} | {math.sqrt(0.625 * 2.5):.3f} |")
    assert set(rows) == {"| all", "| 1x1", "| other", "| N = 8", "| N = 32"}


@pytest.mark.parametrize("name,layers", [("h200-choice3c-shipped", 150), ("h200-choice3c-pdl", 150),
                                         ("h200-holdout-choice3c-shipped", 948)])
def test_separated_tables_come_from_their_csvs(name: str, layers: int) -> None:
    sl = script_module("bench/separated_layers.py")
    d = pd.read_csv(ROOT / "bench" / "separated" / f"{name}.csv")
    md = (ROOT / "bench" / "separated" / f"{name}.md").read_text()
    assert len(d) == layers
    for row in sl.summary(d):
        assert row in md


def test_partial_lono_report_regenerates_from_its_kept_folds() -> None:
    exp = ROOT / "reports" / "lono" / "experiments" / "h200-sm87-i8nc32-dense-partial"
    pl = script_module("scripts/partial_lono.py")
    text = pl.report(exp / "parts", ROOT / "reports" / "lono" / "h200-sm87" / "layers.csv", "i8nc32")
    assert text == (exp / "REPORT.md").read_text()
    assert text.count("| all | ") == 1 and "`dense`" in text and "`repick`" in text


def test_cv_groups_comparison_regenerates_from_the_committed_layers() -> None:
    """``reports/lono/experiments/cvgroups.md`` (the inner CV grouped by network against by problem) is what
    ``scripts/compare_lono_runs.py`` writes from the committed ``layers.csv`` files; a run against itself changes
    nothing, and runs sharing no layer are refused."""
    cl = script_module("scripts/compare_lono_runs.py")
    text = cl.report(list(cl.PAIRS))
    assert text == (ROOT / "reports" / "lono" / "experiments" / "cvgroups.md").read_text()
    same = pd.read_csv(ROOT / cl.PAIRS[0][0])
    c = cl.compare(same, same)
    assert c["changed"] == 0 and c["ratio"] == 1.0 and c["time"] == 1.0 and c["gain"] == c["lose"] == 0
    with pytest.raises(ValueError, match="share no"):
        cl.compare(same, same.assign(network="elsewhere"))


def test_sched_report_regenerates_from_the_committed_runs() -> None:
    runs = ROOT / "sweeps" / "runs" / "s22"
    sv = script_module("scripts/sched_variants.py")
    text = sv.report(runs / "sched-default.parquet",
                     [runs / f"sched-{n}.parquet" for n in ("default2", "sw2", "sw4", "sw8", "alongm")])
    assert text == (runs / "sched.md").read_text()
    assert "| `sw8` | 704 | 0.850 |" in text and "| `default2` | 704 | 1.002 |" in text


def _nosrc_report(session: str, *extra: str) -> tuple[Path, str]:
    """``scripts/nosrc_pairs.py`` on a session's runs (``extra`` files, then its four grid sets); checks the text
    against the committed ``nosrc.md`` below its command line (which names paths)."""
    runs = ROOT / "sweeps" / "runs" / session
    paths = [runs / e for e in extra] + [
        runs / "grid" / f"raw-{n}.parquet" for n in ("train-graph", "train-eager", "holdout-graph", "holdout-eager")]
    text = script_module("scripts/nosrc_pairs.py").report(paths)
    assert text.split("\n", 3)[3] == (runs / "nosrc.md").read_text().split("\n", 3)[3]
    return runs, text


def test_nosrc_report_is_regenerated_from_the_committed_runs() -> None:
    """``scripts/nosrc_pairs.py`` on session 23's runs writes the committed ``nosrc.md``: each source-less config
    paired with its sourced twin (the same name without ``_nosrc``) on the problems both ran."""
    runs, text = _nosrc_report("s23", "layers.parquet", "conv.parquet")
    pairs = script_module("scripts/nosrc_pairs.py").pairs(pd.read_parquet(runs / "layers.parquet"))
    assert len(pairs) == 704 and pairs["twin"].nunique() == 11 and not pairs["twin"].str.contains("_nosrc").any()
    assert "| `layers.parquet` | 3 | 704 | 1.065 |" in text


def test_conv_nosrc_report_is_regenerated_from_the_committed_runs() -> None:
    """Session 24's report: f16nhwc90's 12 source-less twins against their sourced configs on its four problem sets."""
    _, text = _nosrc_report("s24")
    assert "| `raw-train-graph.parquet` | 3 | 19056 | 1.050 |" in text

"""Targets as data (predictor.targets): the table, a config's fit judged from its measured shared
memory, and the trainer's --target filter, which no longer reads the sweep's sm87_ok column."""
from __future__ import annotations

import pytest

from predictor import targets
from predictor.config import SEED_CONFIG, Family
from predictor.portfolio import configs_fit, family_table, measured_smem
from predictor.space import family_grid
from tests.synthetic import make_sweep


def test_the_table() -> None:
    orin, h200 = targets.target("sm_87"), targets.target("sm_90")
    assert (orin.smem_per_block, orin.sms) == (163 * 1024, 16)
    assert (h200.smem_per_block, h200.sms) == (227 * 1024, 132)
    assert targets.SMEM_LIMIT_BYTES["sm_80"] == 163 * 1024
    assert targets.gencode("sm_87") == "-gencode=arch=compute_87,code=sm_87"
    assert targets.gencode("sm_90a") == "-gencode=arch=compute_90a,code=sm_90a"
    with pytest.raises(ValueError, match="known: sm_80"):
        targets.target("sm_70")
    with pytest.raises(ValueError, match="unknown arch"):
        targets.gencode("sm_87a")


def test_emit_builds_every_target_with_the_tables_gencode() -> None:
    from predictor import emit

    for name in targets.TARGETS:
        assert emit.gencode(name) == targets.gencode(name)


def test_a_config_fits_by_its_measured_shared_memory() -> None:
    assert not targets.fits(-1, "sm_87") and targets.fits(163 * 1024, "sm_87")
    assert not targets.fits(163 * 1024 + 1, "sm_87")
    est = SEED_CONFIG.smem_bytes_estimate
    assert est <= 163 * 1024
    assert SEED_CONFIG.fits("sm_87") and SEED_CONFIG.fits("sm_87", -1)  # unknown: the estimate decides
    assert not SEED_CONFIG.fits("sm_87", 200 * 1024)  # measured: the kernel's size decides
    assert SEED_CONFIG.fits("sm_90", 200 * 1024)
    sm90 = family_grid(Family.F16_NHWC_SM90)[0]
    assert not sm90.fits("sm_87", 1024)  # the family cannot run there, however small


def test_target_filter_reads_smem_bytes_not_the_sm87_ok_column() -> None:
    df = make_sweep(n_shapes=60, families=("i8nc32",))
    df["sm87_ok"] = True  # a column that lies: nothing may decide from it
    smem = measured_smem(df)
    fit87 = configs_fit(smem, "sm_87")
    too_big = {c for c, ok in fit87.items() if not ok}
    assert too_big and all(smem[c] > 163 * 1024 for c in too_big)
    ft = family_table(df, Family.INT8_NC32HW32, "sm_87")
    assert set(ft.configs_dropped_for_target) == too_big & set(ft.fam_rows["config"])
    assert not set(ft.table.configs) & too_big
    # a target with less shared memory drops more; one with more drops none of these configs
    ft86 = family_table(df, Family.INT8_NC32HW32, "sm_86")
    assert set(ft86.configs_dropped_for_target) > set(ft.configs_dropped_for_target)
    assert family_table(df, Family.INT8_NC32HW32, "sm_90").configs_dropped_for_target == []
    # a kernel measured larger than its estimate is dropped although its estimate fits
    kept = ft.table.configs[0]
    bigger = df.assign(smem_bytes=df["smem_bytes"].where(df["config"] != kept, 170 * 1024))
    assert kept in family_table(bigger, Family.INT8_NC32HW32, "sm_87").configs_dropped_for_target


def test_train_and_lono_offer_every_target() -> None:
    from predictor import lono, train

    for parser in (train.build_parser(), lono.build_parser()):
        action = next(a for a in parser._actions if a.dest == "target")
        assert list(action.choices) == list(targets.TARGETS)

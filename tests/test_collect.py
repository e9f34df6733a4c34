"""Collector bookkeeping on the CPU, with the SYNTHETIC backend of tests/synthetic_backend.py
(timings made up, labelled gpu="synthetic"): resume after kill -9, shards + merge, layer CSVs."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from predictor import collect, collect_multi
from predictor.schema import KEY_COLUMNS, SweepFormatError, read_metadata, read_sweep, write_sweep

ROOT = Path(__file__).resolve().parent.parent
BACKEND = "tests.synthetic_backend:SyntheticBackend"
COMMON = ["--family", "i8nc32", "--shapes", "40", "--max-configs", "6", "--backend", BACKEND, "--quiet"]


def _run(args: list[str], **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "predictor.collect", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, **kw)


def test_full_run_has_every_row_once(tmp_path: Path) -> None:
    out = tmp_path / "s.parquet"
    assert collect.main(["--out", str(out), *COMMON]) == 0
    df = read_sweep(out)
    assert df["shape_key"].nunique() == 40
    assert len(df) == 40 * 6
    assert not df.duplicated(KEY_COLUMNS).any()
    meta = read_metadata(out)
    assert meta["complete"] is True and meta["problems"] == 40
    # re-running does no new work and changes nothing
    assert collect.main(["--out", str(out), *COMMON]) == 0
    again = read_sweep(out)
    pd.testing.assert_frame_equal(df, again)


def test_resume_after_kill_9(tmp_path: Path) -> None:
    out = tmp_path / "k.parquet"
    env_delay = {"SYNTHETIC_DELAY": "0.05"}
    env = {**os.environ, "PYTHONPATH": str(ROOT), **env_delay}
    proc = subprocess.Popen([sys.executable, "-m", "predictor.collect", "--out", str(out), *COMMON,
                             "--flush-seconds", "0"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    parts = tmp_path / "k.parts"
    deadline = time.time() + 60
    while time.time() < deadline and len(list(parts.glob("part-*.parquet"))) < 5:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    saved = len(list(parts.glob("part-*.parquet")))
    assert 5 <= saved < 40, "the kill should land mid-sweep"
    assert not out.exists()
    res = _run(["--out", str(out), *COMMON])
    assert res.returncode == 0, res.stderr
    df = read_sweep(out)
    assert df["shape_key"].nunique() == 40
    assert len(df) == 40 * 6
    assert not df.duplicated(KEY_COLUMNS).any()


def test_shards_merge_to_the_full_sweep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    full = tmp_path / "full.parquet"
    assert collect.main(["--out", str(full), *COMMON]) == 0
    shard_files = []
    for i in range(3):
        o = tmp_path / f"shard{i}.parquet"
        assert collect.main(["--out", str(o), *COMMON, "--shard", f"{i}/3"]) == 0
        shard_files.append(str(o))
    merged = tmp_path / "merged.parquet"
    assert collect.main(["merge", *shard_files, "--out", str(merged)]) == 0
    a = read_sweep(full).sort_values(KEY_COLUMNS).reset_index(drop=True)
    b = read_sweep(merged).sort_values(KEY_COLUMNS).reset_index(drop=True)
    pd.testing.assert_frame_equal(a[KEY_COLUMNS + ["time_us"]], b[KEY_COLUMNS + ["time_us"]])
    # merging a shard twice: duplicates detected; --strict refuses
    assert collect.main(["merge", shard_files[0], shard_files[0], "--out", str(merged)]) == 0
    assert len(read_sweep(merged)) == len(read_sweep(shard_files[0]))
    capsys.readouterr()
    assert collect.main(["merge", shard_files[0], shard_files[0], "--out", str(merged), "--strict"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("predictor.collect: error: ") and "duplicated" in err and err.count("\n") == 1


def test_shards_sharing_a_parts_folder_keep_to_their_own_rows(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Two shards run one after the other with one --parts folder (a warm GPU machine): each output holds
    its own shard's problems once, none of the other's."""
    parts = tmp_path / "shared.parts"
    outs = [tmp_path / f"s{i}.parquet" for i in range(2)]
    for i, o in enumerate(outs):
        assert collect.main(["--out", str(o), "--parts", str(parts), *COMMON, "--shard", f"{i}/2"]) == 0
    a, b = (read_sweep(o) for o in outs)
    assert a["shape_key"].nunique() == b["shape_key"].nunique() == 20
    assert not set(a["shape_key"]) & set(b["shape_key"])
    assert "duplicated" not in caplog.text


def test_bad_shard_argument() -> None:
    with pytest.raises(SystemExit):
        collect.main(["--out", "x.parquet", "--shard", "3/3", "--dry-run"])


def test_user_layer_csv(tmp_path: Path) -> None:
    csv = tmp_path / "layers.csv"
    csv.write_text("N,C,H,W,K,R,S,stride,pad,dilation\n1,64,56,56,64,3,3,1,same,1\n"
                   "8,256,14,14,512,1,1,2,0,1\n1,3,224,224,64,7,7,2,3,1\n")
    out = tmp_path / "u.parquet"
    assert collect.main(["--out", str(out), "--family", "i8nc32", "--layers", str(csv), "--max-configs", "3",
                         "--backend", BACKEND, "--quiet"]) == 0
    df = read_sweep(out)
    # the C=3 layer cannot run in the interleaved layout and is reported, not swept
    assert df["shape_key"].nunique() == 2
    assert set(df["source"]) == {"user:layers.csv"}


def test_user_layer_csv_missing_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "bad.csv"
    csv.write_text("N,C,H,W,K,R\n1,64,56,56,64,3\n")
    assert collect.main(["--out", str(tmp_path / "o.parquet"), "--layers", str(csv), "--backend", BACKEND]) == 2
    err = capsys.readouterr().err
    assert "missing column(s) ['S']" in err and err.count("\n") == 1


def test_malformed_sweep_names_missing_column(tmp_path: Path) -> None:
    out = tmp_path / "s.parquet"
    assert collect.main(["--out", str(out), *COMMON]) == 0
    df = read_sweep(out).drop(columns=["status"])
    bad = tmp_path / "bad.parquet"
    write_sweep(df, bad)
    with pytest.raises(SweepFormatError, match="missing column.*status"):
        read_sweep(bad)
    (tmp_path / "garbage.parquet").write_text("not parquet")
    with pytest.raises(SweepFormatError, match="not a readable parquet"):
        read_sweep(tmp_path / "garbage.parquet")


def test_strip_options() -> None:
    argv = ["--out", "a.parquet", "--gpus", "2", "--family", "i8nc32", "--shard=1/2", "--quiet"]
    assert collect_multi.strip_options(argv, {"--gpus": 1, "--shard": 1, "--out": 1}) == ["--family", "i8nc32", "--quiet"]


def test_multi_gpu_workers_split_and_merge(tmp_path: Path, monkeypatch) -> None:
    """Two worker processes (the synthetic backend stands in for GPUs 0 and 1): every problem once."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.chdir(ROOT)
    out = tmp_path / "m.parquet"
    assert collect.main(["--out", str(out), *COMMON, "--gpus", "all"]) == 0
    df = read_sweep(out)
    assert df["shape_key"].nunique() == 40 and len(df) == 40 * 6
    meta = read_metadata(out)
    assert meta["gpus"] == ["0", "1"] and meta["complete"] is True
    assert len(meta["workers"]) == 2


def test_extending_a_sweep_keeps_the_earlier_runs_metadata(tmp_path: Path) -> None:
    out = tmp_path / "e.parquet"
    common = ["--family", "i8nc32", "--max-configs", "3", "--backend", BACKEND, "--quiet"]
    assert collect.main(["--out", str(out), "--shapes", "10", *common]) == 0
    first = read_metadata(out)
    first_keys = set(read_sweep(out)["shape_key"])
    assert collect.main(["--out", str(out), "--shapes", "20", "--seed", "0", *common]) == 0
    meta = read_metadata(out)
    keys = read_sweep(out).groupby("shape_key")["config"].count()
    # the 10 earlier problems are kept and 10 new ones added, each with its 3 configs
    assert len(first_keys) == 10 and first_keys < set(keys.index) and len(keys) == 20 and (keys == 3).all()
    assert meta["history"][0]["command"] == first["command"]


def test_problem_that_kills_the_process_is_recorded_after_two_crashes(tmp_path: Path) -> None:
    """A problem during which the collector dies (a sticky CUDA error) is retried once, then its
    configs are recorded as launch_error and the sweep completes: no endless loop, no lost rows."""
    out = tmp_path / "c.parquet"
    args = ["--out", str(out), *COMMON, "--shapes", "12", "--flush-seconds", "0"]
    from predictor.shapes import default_shapes
    from predictor.config import Family

    bad = default_shapes(Family.INT8_NC32HW32, 12)[5].problem.key
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SYNTHETIC_CRASH_KEY": bad}
    for _ in range(2):
        res = subprocess.run([sys.executable, "-m", "predictor.collect", *args], cwd=ROOT, env=env,
                             capture_output=True, text=True)
        assert res.returncode == 17
    res = subprocess.run([sys.executable, "-m", "predictor.collect", *args], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    df = read_sweep(out)
    assert df["shape_key"].nunique() == 12 and len(df) == 12 * 6
    crashed = df[df["shape_key"] == bad]
    assert set(crashed["status"]) == {"launch_error"}
    assert crashed["error"].str.contains("died 2 time").all()
    assert (df[df["shape_key"] != bad]["status"] == "ok").mean() > 0.9


# ---------------------------------------------------------------------------- the row type and the backend protocol
def test_rows_written_by_the_collector_have_every_column_in_row_order(tmp_path: Path) -> None:
    from dataclasses import fields

    from predictor.schema import COLUMNS, Row

    out = tmp_path / "r.parquet"
    assert collect.main(["--out", str(out), *COMMON, "--shapes", "3"]) == 0
    df = pd.read_parquet(out)
    assert list(df.columns) == [f.name for f in fields(Row)] == list(COLUMNS)
    assert {"error", "gpu_uuid", "timing_method"} <= set(COLUMNS)


def test_an_older_file_without_the_optional_columns_still_reads(tmp_path: Path) -> None:
    from predictor.schema import OPTIONAL, REQUIRED

    # the columns every sweep file has had since the first sweeps: validation demands no more
    assert set(REQUIRED) == {
        "family", "shape_key", "source", "N", "C", "H", "W", "K", "R", "S", "stride", "pad", "dilation", "config",
        "kernel", "status", "verified", "max_abs_err", "bad_frac", "time_us", "time_p20_us", "time_p80_us",
        "time_min_us", "retime_us", "iters", "reps", "smem_bytes", "sm87_ok", "sms", "gpu"}
    out = tmp_path / "o.parquet"
    assert collect.main(["--out", str(out), *COMMON, "--shapes", "2"]) == 0
    old = tmp_path / "old.parquet"
    write_sweep(pd.read_parquet(out).drop(columns=list(OPTIONAL)), old)
    df = read_sweep(old)
    assert (df["timing_method"] == 1).all() and (df["error"] == "").all() and (df["gpu_uuid"] == "").all()


def test_failed_row_and_crashed_row() -> None:
    import math

    from predictor.config import SEED_CONFIG
    from predictor.schema import Row

    r = collect.crashed_row(SEED_CONFIG, 2)
    assert (r.config, r.kernel, r.status, r.verified, r.smem_bytes) == (
        SEED_CONFIG.name, SEED_CONFIG.kernel_name, "launch_error", False, -1)
    assert math.isnan(r.time_us) and "died 2 time" in r.error
    with pytest.raises(ValueError, match="failed row"):
        Row.failed("a", "b", "ok")


def test_a_backend_without_the_protocol_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    from predictor.backend import Backend
    from tests.synthetic_backend import SyntheticBackend

    assert isinstance(SyntheticBackend(), Backend)
    assert collect.main(["--out", "never.parquet", "--family", "i8nc32", "--shapes", "1", "--max-configs", "1",
                         "--backend", "collections:OrderedDict", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "not a predictor.backend.Backend" in err and "measure" in err and err.count("\n") == 1


def test_sm_count_keys_round_trip() -> None:
    from predictor.schema import sm_key, sm_keys, split_sm_key

    key = "n1_c64_h56_w56_k64_r3_s3_u1_p1_d1"
    assert sm_key(key, 16) == f"{key}@sm16"
    assert split_sm_key(sm_key(key, 132)) == (key, 132)
    assert split_sm_key(key) == (key, None)
    assert list(sm_keys(pd.Series([key, key]), pd.Series([16.0, 132.0]))) == [f"{key}@sm16", f"{key}@sm132"]


def test_default_problem_count_comes_from_the_family_spec(capsys: pytest.CaptureFixture[str]) -> None:
    from predictor.config import Family

    assert collect.main(["--out", "never.parquet", "--family", "f16nhwc", "--max-configs", "1", "--backend", BACKEND,
                         "--dry-run"]) == 0
    assert f"x {Family.FP16_NHWC.spec.default_problems} problems" in capsys.readouterr().out


def test_problems_from_measures_another_sweeps_problems_with_their_sources(tmp_path: Path) -> None:
    """A new family measured on an existing sweep's problems (so that the two can form a choice): the
    same shape keys and sources."""
    first = tmp_path / "first.parquet"
    assert collect.main(["--out", str(first), *COMMON]) == 0
    again = tmp_path / "again.parquet"
    assert collect.main(["--out", str(again), "--problems-from", str(first), "--family", "i8nhwc",
                         "--max-configs", "2", "--backend", BACKEND, "--quiet"]) == 0
    a, b = read_sweep(first), read_sweep(again)
    assert set(b["family"]) == {"i8nhwc"}
    pairs = lambda d: set(zip(d["shape_key"], d["source"]))  # noqa: E731
    assert pairs(b) == pairs(a) and b["shape_key"].nunique() == 40


def test_resuming_with_another_grid_is_refused(tmp_path: Path) -> None:
    """A problem counts as done once saved: resuming with other configs would keep the old ones silently."""
    out = tmp_path / "g.parquet"
    assert collect.main(["--out", str(out), *COMMON]) == 0
    other = [a if a != "6" else "4" for a in COMMON]  # --max-configs 4: another grid
    with pytest.raises(SystemExit, match="the grid changed"):
        collect.main(["--out", str(out), *other])
    assert collect.main(["--out", str(out), *COMMON]) == 0  # the same grid resumes


def test_batch_sizes_keep_only_those_problems_of_any_problem_set(tmp_path: Path) -> None:
    """--batch-sizes (what a small GPU runs) filters layer lists and another sweep's problems alike,
    and the file records it."""
    csv = tmp_path / "net.csv"
    csv.write_text("N,C,H,W,K,R,S,stride,pad\n" + "".join(f"{n},64,28,28,{k},3,3,1,1\n" for n in (1, 8, 32)
                                                            for k in (64, 128)))
    first = tmp_path / "first.parquet"
    args = ["--family", "i8nc32", "--max-configs", "2", "--backend", BACKEND, "--quiet"]
    assert collect.main(["--out", str(first), "--layers", str(csv), *args]) == 0
    a = read_sweep(first)
    assert a["shape_key"].nunique() == 6
    small = set(a.loc[a["N"].isin([1, 8]), "shape_key"])
    for i, extra in enumerate((["--layers", str(csv)], ["--problems-from", str(first)])):
        out = tmp_path / f"b{i}.parquet"
        assert collect.main(["--out", str(out), *extra, "--batch-sizes", "1,8", *args]) == 0
        assert set(read_sweep(out)["shape_key"]) == small and len(small) == 4
        assert read_metadata(out)["batch_sizes"] == [1, 8]
    with pytest.raises(SystemExit):
        collect.main(["--out", str(tmp_path / "x.parquet"), "--batch-sizes", "0,1", "--dry-run"])


def test_small_problems_lists_each_problem_once_fastest_first_and_collect_reads_it(tmp_path):
    """scripts/small_problems.py (the problem lists of the graph re-sweeps): one row per problem whose fastest ok
    config of the given families ran in [min, max) µs, fastest first, with its source; ``collect --problems-from``
    takes the file as written."""
    from predictor.portfolio import effective_times, eligible_rows
    from predictor.schema import read_sweep
    from predictor.shapes import sweep_shapes
    from tests.script_module import script_module
    from tests.synthetic import write_synthetic_sweep

    mod = script_module("scripts/small_problems.py")
    sweep = write_synthetic_sweep(tmp_path / "s.parquet", n_shapes=60, n_configs=6, families=("i8nc32", "f16nhwc"))
    d = read_sweep(sweep)
    best = d[(d["status"] == "ok") & (d["family"] == "f16nhwc")].groupby("shape_key")["time_us"].min()
    lo, hi = float(best.quantile(0.2)), float(best.quantile(0.7))
    out = tmp_path / "p.parquet"
    span = ["--family", "f16nhwc", "--min-us", str(lo), "--max-us", str(hi), "--out", str(out)]
    assert mod.main([str(sweep), *span, "--times", "first-pass"]) == 0
    p = read_sweep(out)
    want = best[(best >= lo) & (best < hi)]
    assert sorted(p["shape_key"]) == sorted(want.index) and p["shape_key"].is_unique
    assert p["time_us"].tolist() == sorted(want.tolist())  # fastest first, each problem's fastest time
    assert set(p["family"]) == {"f16nhwc"}
    shapes = sweep_shapes(p)
    assert [s.problem.key for s in shapes] == p["shape_key"].tolist()
    assert all(s.source for s in shapes)
    # the default ranks by the labels' times (eligible rows, re-timed where comparable), as training does
    rows = eligible_rows(d[d["family"] == "f16nhwc"])
    label = effective_times(rows).groupby(rows["shape_key"]).min()
    assert mod.main([str(sweep), *span]) == 0
    p = read_sweep(out)
    want = label[(label >= lo) & (label < hi)]
    assert sorted(p["shape_key"]) == sorted(want.index) and p["time_us"].tolist() == sorted(want.tolist())
    # --exclude drops the problems of another sweep; --source keeps those of one source
    assert mod.main([str(sweep), *span, "--exclude", str(out)]) == 0 and read_sweep(out).empty
    assert mod.main([str(sweep), *span]) == 0
    source = str(read_sweep(out)["source"].iloc[0])
    assert mod.main([str(sweep), *span, "--source", source]) == 0
    kept = read_sweep(out)
    assert len(kept) and set(kept["source"].astype(str)) == {source}


def test_extra_configs_are_swept_next_to_the_grid_and_a_foreign_one_is_refused(tmp_path, capsys):
    """``--extra-configs``: configs named in full outside their family's grid (experiments) are measured like the
    grid's; a name of a family the sweep does not cover, or one that does not parse, ends in one line (exit 2)."""
    import dataclasses

    from predictor.config import Family, KernelConfig
    from predictor.schema import read_sweep
    from predictor.space import family_grid

    grid = family_grid(Family.INT8_NC32HW32)
    names = {c.name for c in grid}
    extra = next(x for c in grid for s in (2, 3, 4, 5, 6, 7, 8)
                 if (x := dataclasses.replace(c, stages=s)).name not in names)
    assert KernelConfig.from_name(extra.name) == extra
    csv = tmp_path / "l.csv"
    csv.write_text("N,C,H,W,K,R,S,stride,pad\n1,64,28,28,64,3,3,1,1\n8,64,14,14,128,1,1,1,0\n")
    out = tmp_path / "x.parquet"
    args = ["--family", "i8nc32", "--max-configs", "2", "--backend", BACKEND, "--quiet", "--layers", str(csv)]
    assert collect.main(["--out", str(out), *args, "--extra-configs", extra.name]) == 0
    d = read_sweep(out)
    assert set(d["config"]) == {grid[0].name, grid[1].name, extra.name} and len(d) == 6
    foreign = family_grid(Family.FP16_NHWC)[0].name
    for bad in (foreign, "i8nc32_not_a_config"):
        capsys.readouterr()
        assert collect.main(["--out", str(tmp_path / "y.parquet"), *args, "--extra-configs", bad]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("predictor.collect: error:"), err

"""The README's results table is generated from the committed reports (``python -m predictor.results``)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from predictor import results
from predictor.report_header import header_lines, report_command, report_date, report_sweeps
from predictor.report_header import lono_protocol as read_protocol

ROOT = Path(__file__).resolve().parent.parent


def test_readme_table_is_the_reports():
    text = (ROOT / "README.md").read_text()
    assert results.replace_block(text, results.headline_table(ROOT)) == text
    assert results.main(["--check", str(ROOT / "README.md")]) == 0


def test_every_shipped_model_has_a_row():
    table = results.headline_table(ROOT)
    for slug, key, kind, _ in results.shipped_models(ROOT):
        assert f"| `{slug}` `{key}` | `{kind}` (" in table


def test_held_out_networks_counted_from_the_report():
    """The header's network count is the held-out report's networks: those of its layers.csv."""
    import pandas as pd

    rep = ROOT / "reports/holdout/h200"
    names = results.holdout_networks(rep / "REPORT.md")
    assert names == set(pd.read_csv(rep / "layers.csv", usecols=["network"])["network"])
    assert f"| {len(names)} held-out networks |" in results.headline_table(ROOT).splitlines()[0]


def _mini_root(tmp_path: Path) -> Path:
    """A repository with one shipped model (f16nhwc90) and its two real reports."""
    for rel in ("models/h200-f16nhwc90.summary.json", "models/h200-f16nhwc90.tree.json",
                "reports/lono/h200-f16nhwc90/REPORT.md", "reports/holdout/h200/REPORT.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, tmp_path / rel)
    return tmp_path


def test_one_row_from_the_reports_cells(tmp_path):
    root = _mini_root(tmp_path)
    rows = results.headline_table(root).splitlines()[2:]
    assert len(rows) == 1
    ((_, key, kind, _),) = results.shipped_models(root)  # the shipped kind, read from the model's summary
    lono = results.lono_summaries(root / "reports/lono/h200-f16nhwc90/REPORT.md")[(key, kind)]
    hold = results.holdout_summaries(root / "reports/holdout/h200/REPORT.md")[0]["f16nhwc90"]
    assert f"| {lono.score} ({lono.layers}) | {lono.big} | {lono.tuned} | {hold.score} ({hold.layers}) |" in rows[0]
    # how its folds chose, from the report; the feature set its trees read (tiles since session 43), from the model
    assert f"| `{kind}` (24), features `tiles` | k 24, tol 0, CV by network | {lono.score}" in rows[0]


def test_the_folds_protocol_is_read_from_the_report(tmp_path):
    """The column of how the leave-out folds chose their hyper-parameters: both wordings of the report's line."""
    rep = tmp_path / "REPORT.md"
    rep.write_text("- model kinds (`predictor.fitting`): `cost`; hyper-parameters of every fold chosen by 5-fold "
                   "grouped CV inside its training set (k ≤ 24 from [2, 3, 4, 6, 8, 10, 12, 16, 24], depth, "
                   "min_samples_leaf, weighting; tolerance 0.002)\n")
    assert results.lono_protocol(rep) == "k 2-24, tol 0.002"
    rep.write_text("- model kinds: `soft`; ... (depth, min_samples_leaf, weighting; k from [24]; tolerance 0.0), as "
                   "predictor.train chooses them except k\n")
    assert results.lono_protocol(rep) == "k 24, tol 0"
    rep.write_text("- model kinds: `repick`; ... (k from [2, 3, 4]; tolerance 0.0), as predictor.train chooses them "
                   "and except the CV's groups: each network's layers kept in one fold (`--cv-groups network`)\n")
    assert results.lono_protocol(rep) == "k 2-4, tol 0, CV by network"
    assert results.lono_cv_groups(rep) == "network"
    assert results.lono_features(rep) == "base"
    rep.write_text("- model kinds: `soft`; ... (k from [24]; tolerance 0.0), as predictor.train chooses them; the "
                   "trees read the feature set `tiles` (`--features`)\n")
    assert read_protocol(rep) == ((24,), "0.0", "problem", "tiles")
    assert read_protocol(tmp_path).k_and_tolerance == "k from [24]; tolerance 0.0"  # the folder holding it
    assert results.lono_features(rep) == "tiles"
    rep.write_text("- model kinds: `soft`\n")
    with pytest.raises(results.ResultsError, match="no portfolio sizes"):
        results.lono_protocol(rep)
    with pytest.raises(ValueError, match="REPORT.md: no portfolio sizes"):
        read_protocol(tmp_path)


def test_a_holdout_report_of_another_model_is_refused(tmp_path):
    root = _mini_root(tmp_path)
    tree = root / "models/h200-f16nhwc90.tree.json"
    tree.write_text(tree.read_text() + " ")
    with pytest.raises(results.ResultsError, match="regenerate it"):
        results.headline_table(root)


def test_a_report_whose_folds_grouped_otherwise_is_refused(tmp_path):
    """The leave-out report must choose hyper-parameters as the shipped model did: the same CV groups."""
    import json

    root = _mini_root(tmp_path)
    summary = root / "models/h200-f16nhwc90.summary.json"
    d = json.loads(summary.read_text())
    by = results.model_cv_groups(root, "h200", "f16nhwc90")
    assert by == results.lono_cv_groups(root / "reports/lono/h200-f16nhwc90/REPORT.md")
    d["cv_grid"]["cv_groups"] = other = next(g for g in ("problem", "network") if g != by)
    summary.write_text(json.dumps(d))
    with pytest.raises(results.ResultsError, match=f"run predictor.lono with --cv-groups {other}"):
        results.headline_table(root)


def test_a_report_whose_trees_read_other_features_is_refused(tmp_path):
    """The leave-out report's trees must read the shipped model's feature set (``--features``)."""
    root = _mini_root(tmp_path)
    report = root / "reports/lono/h200-f16nhwc90/REPORT.md"
    shipped = results.model_features(root, "h200", "f16nhwc90")
    assert shipped == results.lono_features(report) == "tiles"  # since session 43
    text = report.read_text()
    said = "; the trees read the feature set `tiles` (`--features`)"
    assert said in text
    report.write_text(text.replace(said, ""))  # as a run without --features writes it
    assert results.lono_features(report) == "base"
    with pytest.raises(results.ResultsError, match="run predictor.lono with --features tiles"):
        results.headline_table(root)


def test_no_or_two_leave_network_out_reports_are_refused(tmp_path):
    root = _mini_root(tmp_path)
    shutil.copytree(root / "reports/lono/h200-f16nhwc90", root / "reports/lono/h200-copy")
    with pytest.raises(results.ResultsError, match="2 leave-network-out reports"):
        results.headline_table(root)
    shutil.rmtree(root / "reports/lono")
    (root / "reports/lono").mkdir()
    ((_, _, kind, _),) = results.shipped_models(root)
    with pytest.raises(results.ResultsError, match=f"0 leave-network-out reports score it as {kind}"):
        results.headline_table(root)


def test_reports_belong_to_the_longest_run_slug():
    slugs = ["h200", "h200-sm87"]
    assert results._run_of("h200", slugs) == "h200"
    assert results._run_of("h200-f16nhwc90", slugs) == "h200"
    assert results._run_of("h200-sm87-i8nhwc", slugs) == "h200-sm87"
    assert results._run_of("experiments", slugs) is None


def test_check_fails_on_a_stale_block_and_write_fixes_it(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{results.BEGIN}\n| old |\n{results.END}\nrest\n")
    assert results.main(["--check", str(readme)]) == 1
    assert results.main(["--write", str(readme)]) == 0
    assert results.main(["--check", str(readme)]) == 0
    assert readme.read_text().startswith("intro\n") and readme.read_text().endswith(f"{results.END}\nrest\n")
    (tmp_path / "plain.md").write_text("no block\n")
    assert results.main(["--check", str(tmp_path / "plain.md")]) == 2


def test_every_shipped_report_names_its_command_and_sweeps():
    """The shared header reader (predictor.report_header) reads every committed leave-out and held-out report:
    its generator, existing sweep files and a date."""
    reports = sorted(ROOT.glob("reports/lono/*/REPORT.md")) + sorted(ROOT.glob("reports/holdout/*/REPORT.md"))
    assert len(reports) >= 20
    for path in reports:
        generator = "predictor.holdout" if path.parts[-3] == "holdout" else None
        command = report_command(path, generator)
        if "--choice" in command:  # predictor.route_lono: the sweeps of the choice's own leave-out report
            path = ROOT / command[command.index("--choice") + 1]
            generator = "predictor.lono"
        sweeps = report_sweeps(path, generator)
        assert sweeps, path
        assert all((ROOT / s).exists() for s in sweeps), path
        assert report_date(path)[:4] == "2026", path


def test_the_header_written_is_the_header_read(tmp_path):
    command = "python -m predictor.lono sweeps/a.parquet 'sweeps/b c.parquet' --family f16nhwc90"
    (tmp_path / "REPORT.md").write_text("\n".join(header_lines("T", "predictor.lono", command, "2026-12-06")) + "\n")
    assert report_command(tmp_path, "predictor.lono") == ["sweeps/a.parquet", "sweeps/b c.parquet", "--family",
                                                          "f16nhwc90"]
    assert report_sweeps(tmp_path) == [Path("sweeps/a.parquet"), Path("sweeps/b c.parquet")]
    assert report_date(tmp_path / "REPORT.md") == "2026-12-06"
    with pytest.raises(ValueError, match="not a predictor.holdout report"):
        report_command(tmp_path, "predictor.holdout")
    (tmp_path / "REPORT.md").write_text("# nothing\n")
    with pytest.raises(ValueError, match=r"REPORT.md: not a generated report"):
        report_command(tmp_path)
    with pytest.raises(ValueError, match="no '- date:' line"):
        report_date(tmp_path)

"""The shipped files are what the shipped inputs generate, byte for byte: the C++ headers and the
dispatchers from the shipped models, the models from the shipped sweeps (retrained here), and the
Python selector (generated from the shipped models when they are loaded) agrees with the trees."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from predictor.model_key import Key, all_keys
from predictor.export_cpp import export_models_dir, header_path
from predictor.features import ARGS, compute, same_pad
from predictor.train import SHIPPED_DISPATCHERS, SHIPPED_RUNS, _versions, main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory like the repository's root, with the shipped models and sweeps (links)
    and an empty export/: generated files name their inputs relative to it, as --all does."""
    for name in ("models", "sweeps"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "export").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_headers_are_generated_from_the_shipped_models(layout: Path) -> None:
    for run in SHIPPED_RUNS:
        out = export_models_dir(Path("models"), run.slug, Path("export"))
        shipped = header_path(ROOT / "export", run.slug)
        assert out.read_bytes() == shipped.read_bytes(), f"{shipped} is stale: python -m predictor.train --all"


def test_dispatchers_are_generated_from_the_shipped_models(layout: Path) -> None:
    pytest.importorskip("cutlass_library")
    from predictor.dispatcher import generate

    for run in SHIPPED_RUNS:
        export_models_dir(Path("models"), run.slug, Path("export"))
    for slug, families, folder in SHIPPED_DISPATCHERS:
        generate(Path("models"), slug, Path("export"), Path("export") / folder, families=families)
        fresh = sorted(p.name for p in (layout / "export" / folder).iterdir())
        assert fresh == sorted(p.name for p in (ROOT / "export" / folder).iterdir())
        for name in fresh:
            assert (layout / "export" / folder / name).read_bytes() == (ROOT / "export" / folder / name).read_bytes(), (
                f"export/{folder}/{name} is stale: python -m predictor.train --all")


def test_retraining_reproduces_the_shipped_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SM90 families (the smallest sweeps: a few minutes to train) retrained from the shipped sweeps
    with the shipped run's settings: ``f16nhwc90`` with its method's options, and ``i8nhwc90`` as users retrain one
    shipped key, ``python -m predictor.train --all --family i8nhwc90`` in a copy of the shipped ``models/`` and
    ``export/``, which also retrains the routed int8 choice that grafts its model and regenerates the ``h200`` header
    and (with ``cutlass_library``) dispatchers: every file identical (--all does the same for all)."""
    fams = ("f16nhwc90", "i8nhwc90")
    shipped = {f: json.loads((ROOT / "models" / f"h200-{f}.tree.json").read_text()) for f in fams}
    if any(s["meta"]["versions"] != _versions() for s in shipped.values()):
        pytest.skip(f"the shipped models were trained with {shipped[fams[0]]['meta']['versions']}, this is "
                    f"{_versions()}: the pickles differ")
    shutil.copytree(ROOT / "models", tmp_path / "models")
    shutil.copytree(ROOT / "export", tmp_path / "export")
    (tmp_path / "sweeps").symlink_to(ROOT / "sweeps")
    monkeypatch.chdir(tmp_path)
    run = SHIPPED_RUNS[0]
    methods = {m.key: m.cli() for m in run.methods}
    assert methods["f16nhwc90"][:2] == ("--kind", "soft")
    assert main([*run.sweeps, "--family", "f16nhwc90", *methods["f16nhwc90"], "--models-dir", "fresh",
                 "--export-dir", "fresh-export", "--quiet"]) == 0
    for ext in (".tree.json", ".joblib", ".summary.json", ".summary.md"):
        name = f"h200-f16nhwc90{ext}"
        assert (tmp_path / "fresh" / name).read_bytes() == (ROOT / "models" / name).read_bytes(), name
    routed = "i8nhwc+i8nhwc90+i8gemm90"
    assert methods[routed][-3:] == ("--route", "i8nhwc", "i8nhwc90")
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "models").glob(f"h200-{routed}.*")}
    assert len(before) == 4
    assert main(["--all", "--family", "i8nhwc90", "--quiet"]) == 0
    assert all(p.stat().st_mtime_ns != t for p, t in before.items())  # rewritten, not left as copied
    for folder in ("models", "export"):
        fresh = sorted(p.relative_to(tmp_path) for p in (tmp_path / folder).rglob("*") if p.is_file())
        assert fresh == sorted(p.relative_to(ROOT) for p in (ROOT / folder).rglob("*") if p.is_file())
        for rel in fresh:
            assert (tmp_path / rel).read_bytes() == (ROOT / rel).read_bytes(), rel


def test_constraints_pin_the_versions_the_shipped_models_record() -> None:
    """``constraints.txt`` (``pip install -e . -c constraints.txt``, README) pins exactly the libraries that every
    shipped model records in ``meta.versions`` (its ``sklearn`` is the distribution ``scikit-learn``)."""
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    pins = dict(line.split("==") for line in lines if line and not line.startswith("#"))
    for f in sorted((ROOT / "models").glob("*.tree.json")):
        recorded = json.loads(f.read_text())["meta"]["versions"]
        assert {("scikit-learn" if k == "sklearn" else k): v for k, v in recorded.items() if k != "python"} == pins, f.name


@pytest.mark.parametrize("slug,family", [(r.slug, f) for r in SHIPPED_RUNS for f in all_keys()
                                         if (ROOT / "models" / f"{r.slug}-{f.value}.tree.json").exists()],
                         ids=str)
def test_python_selector_agrees_with_the_shipped_tree(slug: str, family: Key) -> None:
    """Families and choices (``f16nhwc+f16nhwc90``) alike."""
    import predictor
    from predictor.selector import load_model

    m = load_model(slug, family)
    rng = random.Random(0)
    cm = family.channel_multiple
    for _ in range(2000):
        r = rng.choice((1, 3, 5, 7))
        hw = rng.randint(max(1, r), 160)
        a = dict(N=rng.choice((1, 2, 8, 32)), C=cm * rng.randint(1, 64), H=hw, W=rng.randint(max(1, r), 160),
                 K=cm * rng.randint(1, 64), R=r, S=r, stride=rng.choice((1, 2)), pad=same_pad(r), dilation=1)
        sel = predictor.select(**{k: a[k] for k in "NCHWKRS"}, stride=a["stride"], family=family.value, gpu=slug)
        assert sel.name == m.ir.predict(compute({**a, "sms": m.sms})), a
    assert set(ARGS) == {*"NCHWKRS", "stride", "pad", "dilation", "sms"}


def test_shipped_files_have_no_run_information() -> None:
    """No date, duration or command line of the training run in what ships (they go to the log)."""
    for p in sorted((ROOT / "models").glob("*.json")):
        d = json.loads(p.read_text())
        meta = d.get("meta", d)
        assert not {"trained", "command", "seconds"} & set(meta), p.name
        assert "seconds" not in d.get("cv_grid", {}), p.name
    for p in sorted((ROOT / "export").rglob("*")):
        if p.is_file() and p.suffix in (".hpp", ".cu", ".txt"):
            text = p.read_text()
            assert "/tmp/" not in text and "/root/" not in text and "// trained " not in text, p.name


def test_readme_python_example_shows_what_select_returns() -> None:
    """The README's Python block, run: every ``expr  # 'value'`` / ``# (a, b, c)`` line is checked."""
    import ast
    import re

    text = (ROOT / "README.md").read_text()
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)  # type: ignore[union-attr]
    ns: dict[str, object] = {}
    checked = 0
    for line in block.splitlines():
        code, _, comment = line.partition("#")
        exec(code, ns)  # noqa: S102 - the README's own example
        expect = re.match(r"\s*('[^']*'|\([\d, ]+\))", comment)
        if expect and "=" not in code:
            assert eval(code, ns) == ast.literal_eval(expect.group(1)), line  # noqa: S307
            checked += 1
    assert checked == 3

"""The wheel carries the models and headers: built from the source tree, installed into a fresh
virtual environment, ``predictor.select`` works from a folder outside the checkout."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "predictor", "models", "export")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pip wheel`` of a copy of the source tree (the checkout itself stays untouched)."""
    pytest.importorskip("wheel")  # the [test] extra: setuptools < 70 builds wheels with it
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        p = ROOT / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.o"))
        else:
            shutil.copy(p, src / name)
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(dist), str(src)], check=True, capture_output=True, text=True)
    (whl,) = dist.glob("cutlass_conv_predictor-*.whl")
    return whl


def test_wheel_contains_models_and_headers(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for p in sorted((ROOT / "models").glob("h200-*")):
        assert f"predictor/_models/{p.name}" in names
    for p in sorted((ROOT / "export").glob("*.hpp")):
        assert f"predictor/_export/{p.name}" in names
    assert "predictor/_export/dispatch/h200_dispatch.cu" in names
    assert not any(n.startswith(("models/", "export/")) for n in names)  # nothing at the top of site-packages


def test_installed_wheel_selects_outside_the_checkout(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    # the system site-packages provide numpy & co. (no download); the venv's own predictor wins
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--ignore-installed", str(wheel)], check=True,
                   capture_output=True, text=True)
    work = tmp_path / "elsewhere"
    work.mkdir()
    code = ("import predictor, inspect; from predictor.resources import models_dir, export_dir; "
            "s = predictor.select(1, 64, 56, 56, 64, 3, 3); f = predictor.select(1, 64, 56, 56, 64, 3, 3, "
            "family='f16nhwc'); print(predictor.__file__); print(models_dir()); print(export_dir()); "
            "print(s.name); print(f.name); print(inspect.signature(predictor.select))")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    res = subprocess.run([str(py), "-c", code], cwd=work, capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
    pkg, models, export, i8, f16, sig = res.stdout.splitlines()
    site = str(venv)
    assert pkg.startswith(site) and models.startswith(site) and export.startswith(site)
    assert (Path(export) / "h200_conv_heuristics.hpp").is_file()
    assert i8.startswith("i8nc32_") and f16.startswith("f16nhwc_")
    assert sig.startswith("(N: 'int', C: 'int', H: 'int'")

"""Where the shipped files are: the repository's ``models/`` and ``export/`` folders, installed
as the packages ``predictor._models`` and ``predictor._export`` (pyproject.toml's package-dir), so
a wheel installed anywhere finds them through :mod:`importlib.resources`."""
from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

#: The top-level folders of a source checkout, relative to its root, and their package names.
PACKAGES = {"models": "predictor._models", "export": "predictor._export"}


def source_root() -> Path:
    """The folder above the ``predictor`` package: a source checkout's root (``pyproject.toml``, ``sweeps/``,
    ``reports/``), or ``site-packages`` in an installed wheel."""
    return Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=None)
def _folder(name: str) -> Path:
    root = source_root()
    if (root / "pyproject.toml").is_file() and (root / name / "__init__.py").is_file():
        # a source checkout (editable install, or on PYTHONPATH): its own folder, never the one an
        # editable install of another checkout maps the package name to
        return root / name
    return Path(str(resources.files(PACKAGES[name]))).resolve()  # an installed wheel


def models_dir() -> Path:
    """The shipped models (``<slug>-<family>.tree.json``, ``.joblib``, summaries)."""
    return _folder("models")


def export_dir() -> Path:
    """The shipped C++ headers (``<slug>_conv_heuristics.hpp``) and dispatchers (``dispatch*/``)."""
    return _folder("export")


__all__ = ["models_dir", "export_dir", "source_root", "PACKAGES"]

"""A script of the repository (``scripts/`` or ``bench/``, not part of the package) imported as a module for
tests, once per session (kept in ``sys.modules`` under its file name)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def script_module(relpath: str) -> ModuleType:
    """``ROOT/relpath`` (e.g. ``"scripts/small_problems.py"``) as a module named after the file."""
    name = Path(relpath).stem
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / relpath)
    assert spec is not None and spec.loader is not None, relpath
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod

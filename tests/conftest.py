"""Shared fixtures: a SYNTHETIC sweep and models trained on it, in temporary directories only."""
from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))


@pytest.fixture(scope="session")
def synthetic_models(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """Train ``predictor.train`` end to end on a SYNTHETIC sweep (both families) into tmp dirs."""
    from synthetic import write_synthetic_sweep

    from predictor.train import main

    d = tmp_path_factory.mktemp("synthetic")
    sweep = write_synthetic_sweep(d / "synthetic.parquet", n_shapes=300)
    rc = main([str(sweep), "--models-dir", str(d / "models"), "--export-dir", str(d / "export"), "--holdout-sources", "net:", "--quiet"])
    assert rc == 0
    return SimpleNamespace(dir=d, sweep=sweep, models=d / "models", export=d / "export", slug="synthetic",
                           families=("i8nc32", "f16nhwc"))

"""Every command-line tool ends on bad input or a missing optional dependency with one line on
stderr (naming the problem, or the extra to install) and exit code 2, never a traceback."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from predictor import baselines, collect, dispatcher, evaluate, export_cpp, gpu_eval, transfer
from predictor.cli import run_main

ROOT = Path(__file__).resolve().parent.parent
GPU_EXTRA = "pip install 'cutlass-conv-predictor[gpu]'"


def one_line(capsys: pytest.CaptureFixture[str], prog: str) -> str:
    err = capsys.readouterr().err
    assert err.startswith(f"{prog}: error: ") and err.count("\n") == 1, err
    return err


@pytest.fixture
def no_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine without the [gpu] extra (CI): ``import torch`` fails."""
    monkeypatch.setitem(sys.modules, "torch", None)


def test_collect_without_torch_names_the_extra(no_torch: None, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert collect.main(["--out", str(tmp_path / "s.parquet"), "--family", "i8nc32"]) == 2
    assert GPU_EXTRA in one_line(capsys, "predictor.collect")
    assert not (tmp_path / "s.parquet").exists()


def test_gpu_eval_without_torch_names_the_extra(no_torch: None, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert gpu_eval.main(["--out", str(tmp_path / "r")]) == 2
    assert GPU_EXTRA in one_line(capsys, "predictor.gpu_eval")


def test_cuda_backend_without_torch_names_the_extra(no_torch: None) -> None:
    from predictor.cli import MissingDependencyError
    from predictor.cuda_backend import CudaBackend

    with pytest.raises(MissingDependencyError, match=r"\[gpu\]"):
        CudaBackend()


def test_collect_without_torch_as_a_process(tmp_path: Path) -> None:
    """The real command line: no traceback, one line (torch hidden by a stub that fails to import)."""
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "torch.py").write_text("raise ImportError('No module named torch (test stub)')\n")
    res = subprocess.run([sys.executable, "-m", "predictor.collect", "--out", str(tmp_path / "s.parquet")],
                         cwd=tmp_path, capture_output=True, text=True, env={"PYTHONPATH": f"{stub}:{ROOT}", "PATH": ""})
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and GPU_EXTRA in res.stderr and "Traceback" not in res.stderr


def test_evaluate_without_nvmmh_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(baselines, "nvmmh_available", lambda: False)
    assert evaluate.main([str(ROOT / "sweeps" / "h200.parquet"), "--out", str(tmp_path / "r")]) == 2
    err = one_line(capsys, "predictor.evaluate")
    assert "pip install 'cutlass-conv-predictor[eval]'" in err and "--no-nvmmh" in err


def test_evaluate_folder_and_refused_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert evaluate.main([str(tmp_path), "--no-nvmmh"]) == 2
    assert "is a folder" in one_line(capsys, "predictor.evaluate")
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "REPORT.md").write_text("an earlier report\n")
    assert evaluate.main([str(ROOT / "sweeps" / "h200.parquet"), "--out", str(tmp_path / "r"), "--no-nvmmh"]) == 2
    assert "--overwrite" in one_line(capsys, "predictor.evaluate")
    assert (tmp_path / "r" / "REPORT.md").read_text() == "an earlier report\n"


def test_transfer_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "REPORT_sm16.md").write_text("x\n")
    assert transfer.main(["--full", "x.parquet", "--out", str(tmp_path)]) == 2
    assert "--overwrite" in one_line(capsys, "predictor.transfer")


def test_export_and_dispatcher_without_models(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert export_cpp.main(["--models-dir", str(tmp_path), "--slug", "nope", "--export-dir", str(tmp_path)]) == 2
    assert "no nope-<family>.tree.json model" in one_line(capsys, "predictor.export_cpp")
    pytest.importorskip("cutlass_library")
    assert dispatcher.main(["generate", "--models-dir", str(tmp_path), "--slug", "nope"]) == 2
    assert "no nope-<family>.tree.json model" in one_line(capsys, "predictor.dispatcher")


def test_run_main_keeps_tracebacks_of_bugs() -> None:
    def buggy(argv: object) -> int:
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        run_main("x", buggy, [])


@pytest.mark.parametrize("module", [collect, dispatcher, evaluate, export_cpp, gpu_eval, transfer,
                                    pytest.param(None, id="train")])
def test_every_option_has_help_text(module: object) -> None:
    import argparse

    from predictor import train

    parsers = [(module or train).build_parser()]  # type: ignore[attr-defined]
    seen = []
    while parsers:
        p = parsers.pop()
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                parsers += list(a.choices.values())
            elif not isinstance(a, argparse._HelpAction):
                seen.append(a.dest)
                assert a.help, f"{p.prog}: {a.option_strings or a.dest} has no help text"
    assert len(seen) >= 3

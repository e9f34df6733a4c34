"""What every command-line tool of the package shares: logging to stderr, and expected errors
become one line on stderr.

    def main(argv=None) -> int:
        return run_main("predictor.train", _main, argv)

:func:`run_main` sets up logging (:func:`setup_logging`, unless the caller configured it) and calls
the tool's real entry point; a :class:`ValueError` (bad input, malformed
sweep, unknown family ...), a missing file, a refused overwrite or a missing optional dependency
(:func:`require`) is printed as ``<prog>: error: <message>`` on one line of stderr and the exit
code is 2 (argparse's own usage errors exit with 2 as well).  ``PREDICTOR_TRACEBACK=1`` in the
environment re-raises instead, for debugging.  Anything else is a bug and keeps its traceback.
"""
from __future__ import annotations

import importlib
import logging
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterable, Sequence

#: ``pip install`` argument of each optional extra (pyproject.toml's [project.optional-dependencies]).
PACKAGE = "cutlass-conv-predictor"


class MissingDependencyError(ImportError):
    """An optional dependency is not installed; the message names the extra that installs it."""


class OverwriteError(FileExistsError):
    """A command would replace a shipped file without ``--overwrite``."""


def install_hint(extra: str) -> str:
    """``pip install 'cutlass-conv-predictor[<extra>]'``."""
    return f"pip install '{PACKAGE}[{extra}]'"


def require(module: str, extra: str, what: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` naming ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(f"{what} needs the '{module.split('.')[0]}' package ({exc}): "
                                     f"{install_hint(extra)}") from None


def refuse_overwrite(paths: Iterable[Path], protected: Iterable[Path], overwrite: bool, hint: str) -> None:
    """Raise :class:`OverwriteError` if any existing file of ``paths`` lies in a ``protected``
    folder (shipped files) and ``overwrite`` is False; ``hint`` says what to do instead."""
    if overwrite:
        return
    roots = [p.resolve() for p in protected]
    hit = [p for p in paths if p.exists() and any(p.resolve().is_relative_to(r) for r in roots)]
    if hit:
        raise OverwriteError(f"{display_path(hit[0])} is a shipped file ({len(hit)} would be replaced): {hint}")


def display_path(path: str | Path) -> str:
    """``path`` relative to the working directory where it lies below it (no host paths in output
    that does not need them), else as given."""
    p = Path(path)
    try:
        return Path(p.resolve().relative_to(Path.cwd().resolve())).as_posix() if p.is_absolute() else p.as_posix()
    except ValueError:
        return p.as_posix()


EXPECTED_ERRORS: tuple[type[BaseException], ...] = (ValueError, FileNotFoundError, FileExistsError,
                                                    NotADirectoryError, IsADirectoryError, MissingDependencyError)


#: Log record format of the command-line tools (``TIMED_LOG_FORMAT``: the long-running ones).
LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"
TIMED_LOG_FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"


def setup_logging(fmt: str = LOG_FORMAT, level: int = logging.INFO) -> None:
    """Log ``level`` and above to stderr as ``fmt``; nothing changes where logging is configured
    already (a program calling the tool, pytest)."""
    logging.basicConfig(level=level, format=fmt)


def run_main(prog: str, fn: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None = None,
             log_format: str = LOG_FORMAT) -> int:
    """Logging set up (:func:`setup_logging` with ``log_format``), then ``fn(argv)``; an expected
    error is printed as one line ``<prog>: error: ...`` (exit code 2)."""
    setup_logging(log_format)
    try:
        return fn(argv)
    except EXPECTED_ERRORS as exc:
        if os.environ.get("PREDICTOR_TRACEBACK"):
            raise
        msg = " ".join(str(exc).split()) or type(exc).__name__
        print(f"{prog}: error: {msg}", file=sys.stderr)
        return 2


def cores(most: int | None = None) -> int:
    """The CPU cores this process may use (at least 1, at most ``most``)."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        n = os.cpu_count() or 1
    return max(1, min(most, n) if most else n)


__all__ = ["cores", "run_main", "setup_logging", "LOG_FORMAT", "TIMED_LOG_FORMAT", "require", "refuse_overwrite", "display_path", "install_hint", "MissingDependencyError",
           "OverwriteError", "EXPECTED_ERRORS"]

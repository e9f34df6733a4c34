"""The sweep file format: the row type (:class:`Row`, whose fields are the columns), statuses,
reading with validation, merging with duplicate detection, SM-count problem keys.  One row per
(family, shape, config)."""
from __future__ import annotations

import hashlib
import json
import logging
import math
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from .features import ARGS
from .timing import TIMING_METHOD

_LOG = logging.getLogger(__name__)

STATUSES = ("ok", "cannot_implement", "compile_error", "launch_error", "wrong_result")

_NAN = math.nan


def _column(doc: str, default: Any = MISSING, *, older: Any = MISSING) -> Any:
    """A :class:`Row` field: its meaning (``doc``), the value of a new row (``default``), and for a
    column added after the first sweeps the value that an older file without it means (``older``)."""
    meta = {"doc": doc, **({} if older is MISSING else {"older": older})}
    return field(metadata=meta) if default is MISSING else field(default=default, metadata=meta)


@dataclass
class Row:
    """One row of a sweep file: one config measured on one problem.  The fields are the file's
    columns, in the order written; a backend fills the measurement (``config`` .. ``timing_method``),
    the collector the problem and the device (``family`` .. ``gpu_uuid``)."""

    config: str = _column("KernelConfig.name: every field that changes the kernel")
    kernel: str = _column("compiled kernel instance (config without split-k)")
    status: str = _column("ok | cannot_implement | compile_error | launch_error | wrong_result", "ok")
    verified: bool = _column("output matched the reference (only ok rows are verified)", False)
    max_abs_err: float = _column("largest |kernel - reference| over the output", _NAN)
    bad_frac: float = _column("fraction of output elements outside tolerance", _NAN)
    time_us: float = _column("median time of one launch (first pass), microseconds", _NAN)
    time_p20_us: float = _column("20th percentile of the timed batches", _NAN)
    time_p80_us: float = _column("80th percentile of the timed batches", _NAN)
    time_min_us: float = _column("fastest batch", _NAN)
    retime_us: float = _column("median of a second, interleaved timing of the shape's fastest configs (else empty)",
                               _NAN)
    iters: int = _column("launches per timed batch", 0)
    reps: int = _column("timed batches", 0)
    smem_bytes: int = _column("sizeof(SharedStorage) of the compiled kernel (-1: unknown)", -1)
    error: str = _column("compiler/runtime message of a failed row", "", older="")
    timing_method: int = _column("how the row was timed (predictor.timing): 1 = re-timing biased, use time_us; "
                                 "2 = warm-up batch dropped in every call, retime_us comparable; 3 = as 2, each batch "
                                 "one CUDA-graph replay",
                                 TIMING_METHOD, older=1)
    family: str = _column("config family (i8nc32 = int8 NCxHWx<32>, f16nhwc = fp16 NHWC)", "")
    shape_key: str = _column("canonical problem key (n.._c.._h.._w.._k.._r.._s.._u<stride>_p<pad>_d<dilation>)", "")
    source: str = _column("where the problem came from: grid, random, net:<network>, user:<file>", "")
    N: int = _column("problem size", 0)
    C: int = _column("problem size", 0)
    H: int = _column("problem size", 0)
    W: int = _column("problem size", 0)
    K: int = _column("problem size", 0)
    R: int = _column("problem size", 0)
    S: int = _column("problem size", 0)
    stride: int = _column("problem size", 0)
    pad: int = _column("problem size", 0)
    dilation: int = _column("problem size", 0)
    sm87_ok: bool = _column("fits a Jetson Orin (sm_87) block's shared memory; kept for older readers, decided "
                            "from smem_bytes (predictor.targets)", False)
    sms: int = _column("SMs the kernels could use", 0)
    gpu: str = _column("GPU name as the driver reports it", "")
    gpu_uuid: str = _column("GPU UUID as the driver reports it", "", older="")

    @classmethod
    def failed(cls, config: str, kernel: str, status: str, error: str = "", **fields_: Any) -> "Row":
        """The row of a config that was not timed: ``status`` (not ``ok``) and why; nothing measured."""
        if status == "ok" or status not in STATUSES:
            raise ValueError(f"a failed row needs a status of {STATUSES[1:]}, got {status!r}")
        return cls(config=config, kernel=kernel, status=status, error=error, **fields_)

    def asdict(self) -> dict[str, Any]:
        """The row as ``{column: value}``, in column order."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


#: The problem's columns: the arguments of ``predictor.features.ConvProblem``, in order
#: (:data:`predictor.features.ARGS` without ``sms``, which is the device's column).
SHAPE_COLUMNS = [a for a in ARGS if a != "sms"]
KEY_COLUMNS = ["family", "shape_key", "config"]

#: Every column and its meaning (sweeps/README.md documents the same list), in the order written.
COLUMNS: dict[str, str] = {f.name: f.metadata["doc"] for f in fields(Row)}

#: Columns added after the first sweeps, with the value that older files mean.
OPTIONAL: dict[str, tuple[str, Any]] = {f.name: (f.metadata["doc"], f.metadata["older"])
                                        for f in fields(Row) if "older" in f.metadata}

#: Columns every sweep file has (older files lack the :data:`OPTIONAL` ones).
REQUIRED = [c for c in COLUMNS if c not in OPTIONAL]


def rows_frame(rows: Iterable[Row]) -> pd.DataFrame:
    """A sweep frame of ``rows`` (every column, in order)."""
    return pd.DataFrame([r.asdict() for r in rows], columns=list(COLUMNS))


# ---------------------------------------------------------------------------- SM-count problem keys
SM_KEY_SEPARATOR = "@sm"


def sm_key(shape_key: str, sms: int) -> str:
    """The key of a problem measured at ``sms`` SMs, where several SM counts train one model
    (``<shape_key>@sm<count>``)."""
    return f"{shape_key}{SM_KEY_SEPARATOR}{int(sms)}"


def sm_keys(shape_keys: pd.Series, sms: pd.Series) -> pd.Series:
    """:func:`sm_key` of every row (columns ``shape_key`` and ``sms`` of a sweep frame)."""
    return shape_keys.astype(str) + SM_KEY_SEPARATOR + sms.astype(int).astype(str)


def split_sm_key(key: str) -> tuple[str, int | None]:
    """``(shape_key, sms)`` of a key made by :func:`sm_key`; ``sms`` is None for a plain shape key."""
    base, sep, sms = str(key).partition(SM_KEY_SEPARATOR)
    return base, (int(sms) if sep else None)


class SweepFormatError(ValueError):
    """A sweep file that cannot be used (missing column, bad status, ...)."""


def validate_frame(df: pd.DataFrame, where: str = "sweep") -> pd.DataFrame:
    """Check the columns, statuses and keys of a sweep frame; optional columns that an older file
    lacks are added with the value that file means."""
    for col, (_, default) in OPTIONAL.items():
        if col not in df.columns:
            df = df.assign(**{col: default})
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise SweepFormatError(f"{where}: missing column(s) {missing}")
    bad = sorted(set(df["status"].astype(str)) - set(STATUSES))
    if bad:
        raise SweepFormatError(f"{where}: unknown status value(s) {bad}; expected one of {STATUSES}")
    dups = df.duplicated(KEY_COLUMNS)
    if dups.any():
        raise SweepFormatError(f"{where}: {int(dups.sum())} duplicated (family, shape_key, config) rows")
    return df


def read_sweep(path: str | Path) -> pd.DataFrame:
    """Read and validate a sweep parquet file (clear error naming what is wrong)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"sweep file not found: {path}")
    try:
        df = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several types
        raise SweepFormatError(f"{path}: not a readable parquet file ({exc})") from exc
    return validate_frame(df, str(path))


def read_metadata(path: str | Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(b"predictor")
    return json.loads(raw) if raw else {}


def write_sweep(df: pd.DataFrame, path: str | Path, metadata: dict[str, Any] | None = None) -> None:
    """Write atomically (temp file + rename), with ``metadata`` as JSON in the parquet schema."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(df.reset_index(drop=True), preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[b"predictor"] = json.dumps(metadata or {}, sort_keys=True, default=str).encode()
    table = table.replace_schema_metadata(meta)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp, compression="zstd")
    tmp.replace(path)


def merge_frames(frames: Iterable[pd.DataFrame], strict: bool = False) -> pd.DataFrame:
    """Concatenate sweep pieces; duplicated (family, shape_key, config) rows are reported and the
    first kept (``strict``: raise instead)."""
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=REQUIRED)
    df = pd.concat(frames, ignore_index=True)
    dups = df.duplicated(KEY_COLUMNS)
    if dups.any():
        msg = f"{int(dups.sum())} duplicated (family, shape_key, config) rows"
        if strict:
            raise SweepFormatError(msg)
        _LOG.warning("%s: keeping the first of each", msg)
        df = df[~dups]
    return df.sort_values(KEY_COLUMNS, kind="stable").reset_index(drop=True)


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()

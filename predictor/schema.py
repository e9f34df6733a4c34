"""The sweep file format: columns, statuses, reading with validation, merging with duplicate
detection.  One row per (family, shape, config)."""
from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

_LOG = logging.getLogger(__name__)

STATUSES = ("ok", "cannot_implement", "compile_error", "launch_error", "wrong_result")

SHAPE_COLUMNS = ["N", "C", "H", "W", "K", "R", "S", "stride", "pad", "dilation"]
KEY_COLUMNS = ["family", "shape_key", "config"]

#: Required columns and their meaning (sweeps/README.md documents the same list).
COLUMNS: dict[str, str] = {
    "family": "config family (i8nc32 = int8 NCxHWx<32>, f16nhwc = fp16 NHWC)",
    "shape_key": "canonical problem key (n.._c.._h.._w.._k.._r.._s.._u<stride>_p<pad>_d<dilation>)",
    "source": "where the problem came from: grid, random, net:<network>, user:<file>",
    **{c: "problem size" for c in SHAPE_COLUMNS},
    "config": "KernelConfig.name: every field that changes the kernel",
    "kernel": "compiled kernel instance (config without split-k)",
    "status": "ok | cannot_implement | compile_error | launch_error | wrong_result",
    "verified": "output matched the reference (only ok rows are verified)",
    "max_abs_err": "largest |kernel - reference| over the output",
    "bad_frac": "fraction of output elements outside tolerance",
    "time_us": "median time of one launch (first pass), microseconds",
    "time_p20_us": "20th percentile of the timed batches",
    "time_p80_us": "80th percentile of the timed batches",
    "time_min_us": "fastest batch",
    "retime_us": "median of a second, interleaved timing of the shape's fastest configs (else empty)",
    "iters": "launches per timed batch",
    "reps": "timed batches",
    "smem_bytes": "sizeof(SharedStorage) of the compiled kernel",
    "sm87_ok": "fits a Jetson Orin (sm_87) block's 163 KB of shared memory",
    "sms": "SMs the kernels could use",
    "gpu": "GPU name as the driver reports it",
}

#: Columns added after the first sweeps, with the value that older files mean.
OPTIONAL: dict[str, tuple[str, Any]] = {
    "timing_method": ("how the row was timed (predictor.timing): 1 = re-timing biased, use time_us; "
                      "2 = warm-up batch dropped in every call, retime_us comparable", 1),
}

REQUIRED = list(COLUMNS)


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

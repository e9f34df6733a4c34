"""Convolution problems and the shape features, defined once.

Every feature is an integer expression over the problem's arguments, written in the expression
language of :mod:`predictor.codegen` (Python syntax restricted to ``+ - * // %``, ``cdiv``, ``min``,
``max`` and integer literals).  The same definitions are evaluated here in Python (training, the
Python selector, :class:`ConvProblem`'s output size) and translated to C++ (the exported header's
features and checks, the dispatcher's problem struct), so none of them can drift apart.  Features
are integers, so a fitted tree's float32 thresholds can be turned into exact integer thresholds
(see :mod:`predictor.tree_ir`).

Validation is defined here too: :data:`LIMITS` bounds every argument so that no feature overflows
int64, :data:`SPANS` says when the output is empty, and :func:`validate` raises ``ValueError``
naming the offending argument.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable, Mapping, Sequence

from .codegen import CppExpr, PythonExpr, expand, parse

#: Problem arguments, in the order of ``select()`` and of the C++ functions.
ARGS: tuple[str, ...] = ("N", "C", "H", "W", "K", "R", "S", "stride", "pad", "dilation", "sms")

#: Inclusive bounds of every argument.  With these, every feature below fits in int64.
LIMITS: dict[str, tuple[int, int]] = {
    "N": (1, 1 << 16), "C": (1, 1 << 16), "H": (1, 1 << 16), "W": (1, 1 << 16),
    "K": (1, 1 << 16), "R": (1, 1 << 10), "S": (1, 1 << 10),
    "stride": (1, 1 << 10), "pad": (0, 1 << 10), "dilation": (1, 1 << 10), "sms": (1, 1 << 12),
}

#: Arguments that must be multiples of the family's channel multiple (else the shape is unsupported).
CHANNEL_ARGS: tuple[str, ...] = ("C", "K")

#: The output extents, written once for both spatial dimensions: output ``P`` (``Q``) of input
#: extent ``H`` (``W``) under filter extent ``R`` (``S``), and the word the error messages use.
OUTPUT_EXTENTS: tuple[tuple[str, str, str, str], ...] = (("P", "H", "R", "height"), ("Q", "W", "S", "width"))

#: ``span`` of an output extent: the last position a dilated filter can start at in the padded
#: input.  The output extent is ``span // stride + 1``, so it is empty (< 1) exactly when the span is
#: negative: the check generated code makes before dividing (C++ division truncates).
SPANS: dict[str, str] = {out: f"{x} + 2 * pad - dilation * ({f} - 1) - 1" for out, x, f, _ in OUTPUT_EXTENTS}

#: Derived quantities used by several features (evaluated in order).
DERIVED: tuple[tuple[str, str], ...] = (
    *((out, f"({SPANS[out]}) // stride + 1") for out, *_ in OUTPUT_EXTENTS),
    ("gemm_m", "N * P * Q"),
    ("gemm_n", "K"),
    ("gemm_k", "C * R * S"),
)

#: The model's input features (name, expression).  Integer valued.
FEATURES: tuple[tuple[str, str], ...] = (
    ("N", "N"), ("C", "C"), ("H", "H"), ("W", "W"), ("K", "K"), ("R", "R"), ("S", "S"),
    ("stride", "stride"), ("pad", "pad"), ("dilation", "dilation"),
    ("P", "P"), ("Q", "Q"),
    ("gemm_m", "gemm_m"), ("gemm_n", "gemm_n"), ("gemm_k", "gemm_k"),
    ("k_iters_64", "cdiv(gemm_k, 64)"),
    ("ctas_64x64", "cdiv(gemm_m, 64) * cdiv(gemm_n, 64)"),
    ("ctas_128x64", "cdiv(gemm_m, 128) * cdiv(gemm_n, 64)"),
    ("ctas_64x128", "cdiv(gemm_m, 64) * cdiv(gemm_n, 128)"),
    ("ctas_128x128", "cdiv(gemm_m, 128) * cdiv(gemm_n, 128)"),
    ("ctas_256x128", "cdiv(gemm_m, 256) * cdiv(gemm_n, 128)"),
    ("waves_128x128", "cdiv(cdiv(gemm_m, 128) * cdiv(gemm_n, 128), sms)"),
    ("waves_64x64", "cdiv(cdiv(gemm_m, 64) * cdiv(gemm_n, 64), sms)"),
    # share of the SMs busy in the last wave, in per mille
    ("tail_128x128", "((cdiv(gemm_m, 128) * cdiv(gemm_n, 128) - 1) % sms + 1) * 1000 // sms"),
    ("tail_64x64", "((cdiv(gemm_m, 64) * cdiv(gemm_n, 64) - 1) % sms + 1) * 1000 // sms"),
    ("sms", "sms"),
    # the larger tiles of the SM90 grids: CTA count, share of the last wave (per mille), waves
    *((f"{kind}_{tm}x{tn}", expr.format(c=f"cdiv(gemm_m, {tm}) * cdiv(gemm_n, {tn})"))
      for tm, tn in ((128, 256), (256, 128), (64, 256), (256, 64))
      for kind, expr in (("ctas", "{c}"), ("tail", "(({c} - 1) % sms + 1) * 1000 // sms"), ("waves", "cdiv({c}, sms)"))
      if (kind, tm, tn) != ("ctas", 256, 128)),
    # GEMM extent wasted by padding to a tile multiple, per mille of the padded extent
    *((f"{d}waste_{t}", f"(cdiv({g}, {t}) * {t} - {g}) * 1000 // (cdiv({g}, {t}) * {t})")
      for d, g, tiles in (("n", "gemm_n", (64, 128, 256)), ("m", "gemm_m", (64, 128, 256)), ("k", "gemm_k", (64,)))
      for t in tiles),
    # 1 exactly when a GEMM family implements the problem (1x1 filter, stride 1, pad 0, dilation 1;
    # FamilySpec.implements): a choice with such a family routes on it (predictor.fitting.compose).  Within LIMITS
    # (R, S, stride, dilation >= 1, pad >= 0) the divisor is 1 exactly then, else larger: one division where
    # (1 // R) * (1 // S) * ... (the same values, until session 47) took five, 30-50 ns of a routed Python select
    ("pointwise", "1 // (R * S * stride * dilation + pad)"),
    # feature set "tiles" from here (FEATURE_SETS): the other tiles of the grids (SM90 64x96 / 128x192 / 256x96 ...,
    # SM80 32x64 / 64x32 ...): CTAs, share of the last wave (per mille), waves; N extent wasted by 32 / 96 / 192 tiles
    *((f"{kind}_{tm}x{tn}", expr.format(c=f"cdiv(gemm_m, {tm}) * cdiv(gemm_n, {tn})"))
      for tm, tn in ((64, 96), (128, 96), (128, 192), (256, 96), (256, 32), (128, 32), (64, 32), (32, 64),
                     (128, 64), (64, 128))
      for kind, expr in (("ctas", "{c}"), ("tail", "(({c} - 1) % sms + 1) * 1000 // sms"), ("waves", "cdiv({c}, sms)"))
      if (kind, tm, tn) not in (("ctas", 128, 64), ("ctas", 64, 128))),
    *((f"nwaste_{t}", f"(cdiv(gemm_n, {t}) * {t} - gemm_n) * 1000 // (cdiv(gemm_n, {t}) * {t})") for t in (32, 96, 192)),
)

FEATURE_NAMES: tuple[str, ...] = tuple(n for n, _ in FEATURES)

#: The feature sets a model can be trained on (``predictor.train --features``), each the leading features of
#: :data:`FEATURES` it reads, so that a feature's index is the same in every set: ``base`` (every model until
#: session 39), ``tiles`` (``base`` and the tile quantisation of every other tile of the grids:
#: ``reports/lono/experiments/tile-features/``).  A model's file names its features; a header or selector computes
#: only those its tree reads.
FEATURE_SETS: dict[str, tuple[str, ...]] = {"base": FEATURE_NAMES[:FEATURE_NAMES.index("pointwise") + 1],
                                            "tiles": FEATURE_NAMES}
#: The feature set of a model trained without ``--features``.
DEFAULT_FEATURE_SET = "base"


def feature_names(n_columns: int) -> tuple[str, ...]:
    """The names of the feature set of ``n_columns`` features (a fitted tree's ``n_features``); ``ValueError`` if
    none has that many."""
    names = FEATURE_NAMES[:n_columns]
    feature_set_of(names)
    return names


def feature_set_of(names: Sequence[str]) -> str:
    """The name of the feature set whose features are exactly ``names`` (a model file's ``feature_names``);
    ``ValueError`` if none is."""
    for name, names_of in FEATURE_SETS.items():
        if tuple(names) == names_of:
            return name
    raise ValueError(f"features {list(names)[:3]}... ({len(names)}) are none of predictor.features' feature sets "
                     f"({', '.join(f'{k}: {len(v)}' for k, v in FEATURE_SETS.items())}): retrain")

#: Default SM count of a model trained on one GPU when none is recorded (H200: 132 SMs).
DEFAULT_SMS = 132


def _exec(source: str, name: str) -> Callable[..., Any]:
    ns: dict[str, Any] = {}
    exec(compile(source, f"<predictor.features:{name}>", "exec"), ns)  # noqa: S102 - our own constants
    return ns[name]  # type: ignore[no-any-return]


def _attribute(name: str) -> Callable[[Any], int]:
    """Getter of the derived quantity ``name`` of an object with the argument attributes."""
    expr = PythonExpr({a: f"p.{a}" for a in ARGS})(expand(name, DERIVED))
    return _exec(f"def {name}(p):\n    return {expr}\n", name)


@dataclass(frozen=True, order=True)
class ConvProblem:
    """A conv2d fprop problem, NCHW sizes, square stride/pad/dilation.  ``pad=-1`` is not
    allowed: resolve "same" padding with :func:`same_pad` first.  ``P``, ``Q`` and ``gemm_*``
    are the :data:`DERIVED` quantities."""

    N: int
    C: int
    H: int
    W: int
    K: int
    R: int
    S: int
    stride: int = 1
    pad: int = 0
    dilation: int = 1

    P = property(_attribute("P"), doc="Output height.")
    Q = property(_attribute("Q"), doc="Output width.")
    gemm_m = property(_attribute("gemm_m"), doc="Implicit GEMM M (N * P * Q).")
    gemm_n = property(_attribute("gemm_n"), doc="Implicit GEMM N (K).")
    gemm_k = property(_attribute("gemm_k"), doc="Implicit GEMM K (C * R * S).")

    @property
    def key(self) -> str:
        return (f"n{self.N}_c{self.C}_h{self.H}_w{self.W}_k{self.K}_r{self.R}_s{self.S}"
                f"_u{self.stride}_p{self.pad}_d{self.dilation}")

    def args(self, sms: int = DEFAULT_SMS) -> dict[str, int]:
        """The problem's arguments (:data:`ARGS`), with ``sms``."""
        d = {f.name: int(getattr(self, f.name)) for f in fields(self)}
        d["sms"] = int(sms)
        return d

    @property
    def flops(self) -> int:
        return 2 * self.gemm_m * self.gemm_n * self.gemm_k


def same_pad(R: int, dilation: int = 1) -> int:
    """"Same" padding: the pad that makes the span of :data:`SPANS` ``H - 1``, so P == H at stride 1
    for an odd filter.  ``dilation * (R - 1) // 2``, for integers only (a float raises ``TypeError``
    instead of making a float pad)."""
    return dilation * (R - 1) >> 1


def _compile_features() -> Callable[..., tuple[int, ...]]:
    names = set(ARGS)
    py = PythonExpr()
    lines = [f"def _features({', '.join(ARGS)}):"]
    for name, expr in DERIVED:
        lines.append(f"    {name} = {py(parse(expr, names))}")
        names.add(name)
    lines.append("    return (" + ", ".join(f"({py(parse(e, names))})" for _, e in FEATURES) + ",)")
    return _exec("\n".join(lines) + "\n", "_features")


_FEATURES_FN = _compile_features()
_SPAN_FNS = {out: _exec(f"def span(a):\n    return {PythonExpr({n: f'a[{n!r}]' for n in ARGS})(parse(e, ARGS))}\n",
                        "span") for out, e in SPANS.items()}


def validate(args: Mapping[str, int]) -> None:
    """Raise ``ValueError`` naming the first argument that is out of range or makes P/Q < 1."""
    for name in ARGS:
        if name not in args:
            raise ValueError(f"missing argument {name!r}")
        v = args[name]
        if isinstance(v, bool) or not isinstance(v, int):
            try:
                import numpy as np

                ok = isinstance(v, np.integer)
            except ImportError:  # pragma: no cover
                ok = False
            if not ok:
                raise ValueError(f"{name} must be an integer, got {v!r}")
        lo, hi = LIMITS[name]
        if not lo <= int(v) <= hi:
            raise ValueError(f"{name}={v} is out of range [{lo}, {hi}]")
    a = {k: int(args[k]) for k in ARGS}
    for out, x, f, word in OUTPUT_EXTENTS:
        if _SPAN_FNS[out](a) < 0:
            raise ValueError(f"{f}={a[f]} (dilated) does not fit in {x}={a[x]} with pad={a['pad']}: "
                             f"output {word} {out} < 1")


def compute(args: Mapping[str, int], check: bool = True) -> tuple[int, ...]:
    """Feature vector (ints, in :data:`FEATURE_NAMES` order) of one problem."""
    if check:
        validate(args)
    return _FEATURES_FN(*(int(args[k]) for k in ARGS))


def frame(df, sms: int | None = None):  # type: ignore[no-untyped-def]
    """Feature matrix (pandas DataFrame of int64) for a frame with N..dilation (and sms) columns."""
    import numpy as np
    import pandas as pd

    cols = {k: df[k].to_numpy(dtype=np.int64) for k in ARGS if k != "sms"}
    cols["sms"] = (df["sms"].to_numpy(dtype=np.int64) if "sms" in df.columns and sms is None
                   else np.full(len(df), sms or DEFAULT_SMS, dtype=np.int64))
    rows = [_FEATURES_FN(*vals) for vals in zip(*(cols[k] for k in ARGS))]
    return pd.DataFrame(np.asarray(rows, dtype=np.int64).reshape(len(rows), len(FEATURES)),
                        columns=list(FEATURE_NAMES), index=df.index)


# --------------------------------------------------------------------------- the table in C++
def cpp_derived_code(indent: str = "  ") -> str:
    """C++ statements computing the :data:`DERIVED` values as int64 locals from the argument locals
    (the features themselves are computed where a tree needs them: :func:`cpp_feature_exprs`)."""
    names = set(ARGS) | {n for n, _ in DERIVED}
    cpp = CppExpr()
    return "\n".join(f"{indent}const std::int64_t {name} = {cpp(parse(expr, names))};" for name, expr in DERIVED)


def cpp_feature_exprs() -> dict[str, str]:
    """C++ expression of every feature over the argument and derived-value locals (for features
    computed where a tree first needs them, :func:`predictor.codegen.cpp_tree`)."""
    names = set(ARGS) | {n for n, _ in DERIVED}
    cpp = CppExpr()
    return {n: cpp(parse(e, names)) for n, e in FEATURES}


def cpp_validation_code(indent: str = "  ", error: str = "-1") -> str:
    """C++ statements returning ``error`` where :func:`validate` would raise (the limits are
    checked first, so the spans cannot overflow)."""
    out = [f"{indent}if ({name} < INT64_C({lo}) || {name} > INT64_C({hi})) return {error};"
           for name, (lo, hi) in ((n, LIMITS[n]) for n in ARGS)]
    plain = CppExpr(literal="{}", parens="needed")
    out += [f"{indent}if ({plain(parse(SPANS[o], ARGS))} < 0) return {error};" for o, *_ in OUTPUT_EXTENTS]
    return "\n".join(out)


def cpp_output_extents(names: Mapping[str, str]) -> dict[str, str]:
    """C++ expressions of the output extents (``{"P": ..., "Q": ...}``) of a validated problem,
    with the arguments renamed by ``names`` (e.g. ``{"H": "s[2]"}``)."""
    plain = CppExpr(names, literal="{}", parens="needed")
    return {out: plain(expand(out, DERIVED)) for out, *_ in OUTPUT_EXTENTS}

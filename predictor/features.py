"""Convolution problems and the shape features, defined once.

Every feature is an integer expression over the problem's arguments, written in a tiny language
(Python syntax restricted to ``+ - * //``, ``cdiv``, ``min``, ``max`` and integer literals).  The
same definitions are evaluated here in Python (training and the Python selector) and translated to
C++ by :func:`cpp_expr` (the exported header), so the three cannot drift apart.  Features are
integers, so a fitted tree's float32 thresholds can be turned into exact integer thresholds
(see :mod:`predictor.tree_ir`).

Validation is defined here too: :data:`LIMITS` bounds every argument so that no feature overflows
int64, and :func:`validate` raises ``ValueError`` naming the offending argument.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, fields
from typing import Callable, Iterable, Mapping

#: Problem arguments, in the order of ``select()`` and of the C++ functions.
ARGS: tuple[str, ...] = ("N", "C", "H", "W", "K", "R", "S", "stride", "pad", "dilation", "sms")

#: Inclusive bounds of every argument.  With these, every feature below fits in int64.
LIMITS: dict[str, tuple[int, int]] = {
    "N": (1, 1 << 16), "C": (1, 1 << 16), "H": (1, 1 << 16), "W": (1, 1 << 16),
    "K": (1, 1 << 16), "R": (1, 1 << 10), "S": (1, 1 << 10),
    "stride": (1, 1 << 10), "pad": (0, 1 << 10), "dilation": (1, 1 << 10), "sms": (1, 1 << 12),
}

#: Derived quantities used by several features (evaluated in order).
DERIVED: tuple[tuple[str, str], ...] = (
    ("P", "(H + 2 * pad - dilation * (R - 1) - 1) // stride + 1"),
    ("Q", "(W + 2 * pad - dilation * (S - 1) - 1) // stride + 1"),
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
)

FEATURE_NAMES: tuple[str, ...] = tuple(n for n, _ in FEATURES)

#: Default SM count of a model trained on one GPU when none is recorded (H200: 132 SMs).
DEFAULT_SMS = 132


@dataclass(frozen=True, order=True)
class ConvProblem:
    """A conv2d fprop problem, NCHW sizes, square stride/pad/dilation.  ``pad=-1`` is not
    allowed: resolve "same" padding with :func:`same_pad` first."""

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

    @property
    def key(self) -> str:
        return (f"n{self.N}_c{self.C}_h{self.H}_w{self.W}_k{self.K}_r{self.R}_s{self.S}"
                f"_u{self.stride}_p{self.pad}_d{self.dilation}")

    def args(self, sms: int = DEFAULT_SMS) -> dict[str, int]:
        d = {f.name: int(getattr(self, f.name)) for f in fields(self)}
        d["sms"] = int(sms)
        return d

    @property
    def P(self) -> int:
        return (self.H + 2 * self.pad - self.dilation * (self.R - 1) - 1) // self.stride + 1

    @property
    def Q(self) -> int:
        return (self.W + 2 * self.pad - self.dilation * (self.S - 1) - 1) // self.stride + 1

    @property
    def flops(self) -> int:
        return 2 * self.N * self.P * self.Q * self.K * self.C * self.R * self.S


def same_pad(R: int, dilation: int = 1) -> int:
    """Padding that keeps P == H at stride 1 for an odd filter."""
    return dilation * (R - 1) // 2


# --------------------------------------------------------------------------- expression language
_ALLOWED_CALLS = {"cdiv": 2, "min": 2, "max": 2}


def _check(node: ast.AST, names: set[str]) -> None:
    if isinstance(node, ast.Expression):
        _check(node.body, names)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)):
        _check(node.left, names)
        _check(node.right, names)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _ALLOWED_CALLS:
        if len(node.args) != _ALLOWED_CALLS[node.func.id] or node.keywords:
            raise ValueError(f"bad call {ast.dump(node)}")
        for a in node.args:
            _check(a, names)
    elif isinstance(node, ast.Name):
        if node.id not in names:
            raise ValueError(f"unknown name {node.id!r}")
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        pass
    else:
        raise ValueError(f"unsupported syntax in feature expression: {ast.dump(node)}")


def _parse(expr: str, names: set[str]) -> ast.Expression:
    tree = ast.parse(expr, mode="eval")
    _check(tree, names)
    return tree


def _cpp(node: ast.AST) -> str:
    if isinstance(node, ast.Expression):
        return _cpp(node.body)
    if isinstance(node, ast.BinOp):
        op = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "/", ast.Mod: "%"}[type(node.op)]
        return f"({_cpp(node.left)} {op} {_cpp(node.right)})"
    if isinstance(node, ast.Call):
        a, b = (_cpp(x) for x in node.args)
        fn = {"cdiv": "pk_cdiv", "min": "pk_min", "max": "pk_max"}[node.func.id]  # type: ignore[attr-defined]
        return f"{fn}({a}, {b})"
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant):
        return f"INT64_C({node.value})"
    raise AssertionError(node)


def _all_defs() -> list[tuple[str, str]]:
    return list(DERIVED) + [(f"f_{n}", e) for n, e in FEATURES]


def _compile_python() -> Callable[..., tuple[int, ...]]:
    names = set(ARGS)
    lines = [f"def _features({', '.join(ARGS)}):"]
    for name, expr in DERIVED:
        _parse(expr, names)
        names.add(name)
        lines.append(f"    {name} = {expr}")
    for _, expr in FEATURES:
        _parse(expr, names)
    lines.append("    return (" + ", ".join(f"({e})" for _, e in FEATURES) + ",)")
    ns: dict[str, object] = {"cdiv": lambda a, b: -(-a // b)}
    exec(compile("\n".join(lines), "<predictor.features>", "exec"), ns)  # noqa: S102 - our own constants
    return ns["_features"]  # type: ignore[return-value]


_FEATURES_FN = _compile_python()


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
    if a["H"] + 2 * a["pad"] - a["dilation"] * (a["R"] - 1) - 1 < 0:
        raise ValueError(f"R={a['R']} (dilated) does not fit in H={a['H']} with pad={a['pad']}: output height P < 1")
    if a["W"] + 2 * a["pad"] - a["dilation"] * (a["S"] - 1) - 1 < 0:
        raise ValueError(f"S={a['S']} (dilated) does not fit in W={a['W']} with pad={a['pad']}: output width Q < 1")


def compute(args: Mapping[str, int], check: bool = True) -> tuple[int, ...]:
    """Feature vector (ints, in :data:`FEATURE_NAMES` order) of one problem."""
    if check:
        validate(args)
    return _FEATURES_FN(*(int(args[k]) for k in ARGS))


def compute_many(rows: Iterable[Mapping[str, int]]) -> list[tuple[int, ...]]:
    return [compute(r) for r in rows]


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


def cpp_feature_code(indent: str = "  ") -> str:
    """C++ statements computing ``f_<name>`` int64 locals from the argument locals."""
    out = []
    for name, expr in _all_defs():
        out.append(f"{indent}const std::int64_t {name} = {_cpp(_parse(expr, set(ARGS) | {n for n, _ in _all_defs()}))};")
    return "\n".join(out)


def cpp_validation_code(indent: str = "  ", error: str = "-1") -> str:
    """C++ statements returning ``error`` where :func:`validate` would raise."""
    out = []
    for name in ARGS:
        lo, hi = LIMITS[name]
        out.append(f"{indent}if ({name} < INT64_C({lo}) || {name} > INT64_C({hi})) return {error};")
    out.append(f"{indent}if (H + 2 * pad - dilation * (R - 1) - 1 < 0) return {error};")
    out.append(f"{indent}if (W + 2 * pad - dilation * (S - 1) - 1 < 0) return {error};")
    return "\n".join(out)

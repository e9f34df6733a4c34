"""Run-time kernel selection from a shipped model (no scikit-learn, no GPU).

    >>> from predictor import select
    >>> s = select(1, 64, 56, 56, 64, 3, 3)          # int8 NC32HW32 on the H200 model
    >>> s.name, s.config.tb, s.fallback

Models are the ``models/<gpu>-<family>.tree.json`` files written by :mod:`predictor.train`
(``gpu`` is the model slug, e.g. ``h200`` or ``h200-sm87``; ``family`` a family or a choice across
families with identical tensors, ``f16nhwc+f16nhwc90``: :mod:`predictor.model_key`); they ship inside the package
(:func:`predictor.resources.models_dir`).  Each is loaded once and turned into
a generated Python function (:mod:`predictor.export_py`); loaded models are kept in
``functools.lru_cache`` caches and, for the fast path of :func:`select`, a dict by slug of dicts by
``family`` argument (the only state of this module; :func:`cache_clear` empties all of them).

Errors and fallbacks:

* an argument that is not an int, or outside :data:`predictor.features.LIMITS`, or a filter that
  does not fit (output P or Q < 1) raises ``ValueError`` naming the argument
  (:func:`predictor.features.validate`);
* ``pad=None`` means "same" padding, ``same_pad(R, dilation)``; it needs ``R == S`` (else
  ``ValueError`` naming ``pad``: pass the padding explicitly);
* ``on_unsupported`` other than ``"raise"`` or ``"pad"``: ``ValueError``;
* C or K not a multiple of the family's channel multiple (32 for ``i8nc32``, 8 for ``f16nhwc``):
  ``ValueError`` naming C or K, unless ``on_unsupported="pad"``: then the channels are rounded up
  to the multiple (what padding the tensors to the family's layout does) and the model's pick for
  the padded problem is returned with ``fallback=True`` and the reason;
* an unknown model raises :class:`ModelNotFoundError` (a ``FileNotFoundError`` and a
  ``ValueError`` naming ``gpu``/``family``);
* the pick's kernel may still refuse a problem at run time: CUTLASS 2.x (SM80-family) conv kernels refuse
  an activation, filter or output of 2 GiB or more (``can_implement``).  The generated dispatchers then
  run the next of :func:`candidates`, then (a choice) its member families' own picks, then the model's other
  configs; the held-out report scores what they run (:mod:`predictor.holdout`).
"""
from __future__ import annotations

import functools
import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .config import Family, KernelConfig
from .codegen import ResultCode
from .export_py import compile_selector
from .features import CHANNEL_ARGS, LIMITS, feature_set_of, same_pad, validate
from .model_key import Choice, Key, model_key
from .resources import models_dir
from .tree_ir import TreeIR

_RAISE = "raise"
_ON_UNSUPPORTED = (_RAISE, "pad")
#: ``same_pad(R)`` (dilation 1) by R over R's whole range: ``pad=None``'s usual case, a tuple read instead of a call.
_SAME_PAD: tuple[int, ...] = tuple(same_pad(r) for r in range(LIMITS["R"][1] + 1))
#: The fast path of :func:`select` (the shipped model, ``on_unsupported="raise"``): slug -> ``family`` argument as
#: given (``None``: the default family) -> (generated function, selections, the model's SM count, the model).
_FAST: dict[Any, dict[Any, tuple[Callable[..., int], tuple["Selection", ...], int, "LoadedModel"]]] = {}


class ModelNotFoundError(FileNotFoundError, ValueError):
    """No model for the requested GPU and family."""


@dataclass(frozen=True)
class Selection:
    """The selected kernel config, with how it was chosen.

    ``index`` is the config's position in the model's portfolio (the C++ header's table index);
    ``fallback`` is True when the answer is not the model's prediction for the exact problem
    asked (``reason`` says why)."""

    config: KernelConfig
    index: int
    fallback: bool = False
    reason: str = "model prediction"

    @property
    def name(self) -> str:
        return self.config.name

    def __str__(self) -> str:
        return self.config.name


@dataclass(frozen=True, eq=False)
class LoadedModel:
    """A tree IR ready for selection."""

    ir: TreeIR
    family: Key  # a Family, or a Choice across families with identical tensors (predictor.model_key)
    sms: int
    sms_range: tuple[int, int]
    configs: tuple[KernelConfig, ...]
    selections: tuple[Selection, ...]
    fn: Callable[..., int]
    source: str

    @classmethod
    def from_ir(cls, ir: TreeIR, source: str = "<memory>") -> "LoadedModel":
        try:
            feature_set_of(ir.feature_names)
        except ValueError as exc:
            raise ValueError(f"model {source}: {exc}") from None
        try:
            family = model_key(ir.meta["family"])
            sms = int(ir.meta["sms"])
            trained = [int(v) for v in ir.meta.get("sms_trained", [sms])]
        except (KeyError, ValueError, TypeError) as exc:
            raise ValueError(f"model {source}: metadata lacks a valid family/sms ({exc})") from exc
        configs = tuple(KernelConfig.from_name(n) for n in ir.classes)
        bad = [c.name for c in configs if c.family not in family.families]
        if bad:
            raise ValueError(f"model {source}: configs {bad} are not of family {family.value}")
        fn = compile_selector(ir, family.channel_multiple)
        sels = tuple(Selection(c, i) for i, c in enumerate(configs))
        return cls(ir.validate(), family, sms, (min(trained), max(trained)), configs, sels, fn, source)

    @functools.cached_property
    def candidates_fn(self) -> Callable[..., Any]:
        """The generated function of :func:`candidates` (compiled on first use): a tuple of indices,
        or a negative :class:`~predictor.codegen.ResultCode`."""
        return compile_selector(self.ir, self.family.channel_multiple, candidates=True)


def _sms_error(m: LoadedModel, sms: Any) -> None:
    lo, hi = m.sms_range
    trained = f"{lo} SMs" if lo == hi else f"{lo} to {hi} SMs"
    raise ValueError(f"sms={sms!r}: the {m.family.value} model {m.source} was trained at {trained} only; "
                     "its choice does not transfer to other SM counts (use a model trained with that count, "
                     "e.g. gpu='h200-sm87' for 16 to 132 SMs)")


def model_path(gpu: str, family: str | Family | Choice) -> Path:
    """The shipped model file of ``gpu`` (slug) and ``family`` (a family or a choice, canonical or not)."""
    try:
        fam = model_key(family).value
    except ValueError:
        fam = str(family)
    return models_dir() / f"{gpu}-{fam}.tree.json"


@functools.lru_cache(maxsize=64)
def _load_path(path: str) -> LoadedModel:
    return LoadedModel.from_ir(TreeIR.load(path), str(Path(path).resolve()))


@functools.lru_cache(maxsize=64)
def load_model(gpu: str = "h200", family: str | Family | Choice = Family.INT8_NC32HW32) -> LoadedModel:
    """The shipped model of ``gpu`` (slug) and ``family``: a family, or a choice across families with
    identical tensors such as ``"f16nhwc+f16nhwc90"`` (:mod:`predictor.model_key`); cached."""
    try:
        fam = model_key(family)
    except ValueError as exc:
        raise ValueError(f"family={family!r}: {exc}") from None
    if not isinstance(gpu, str) or not gpu:
        raise ValueError(f"gpu must be a model slug such as 'h200', got {gpu!r}")
    path = model_path(gpu, fam)
    if not path.exists():
        have = sorted(p.name[: -len(".tree.json")] for p in models_dir().glob("*.tree.json"))
        raise ModelNotFoundError(f"no model for gpu={gpu!r}, family={fam.value!r} ({path} does not exist; "
                                 f"available: {have or 'none'})")
    return _load_path(str(path))


@functools.lru_cache(maxsize=32)
def _from_ir(ir: TreeIR) -> LoadedModel:
    return LoadedModel.from_ir(ir)


def _resolve(model: Any, gpu: str, family: Any) -> LoadedModel:
    if model is None:
        return load_model(gpu, Family.INT8_NC32HW32 if family is None else family)
    if isinstance(model, LoadedModel):
        m = model
    elif isinstance(model, TreeIR):
        m = _from_ir(model)
    elif isinstance(model, (str, Path)):
        m = _load_path(str(model))
    else:
        raise ValueError(f"model must be a path, a TreeIR or a LoadedModel, got {type(model).__name__}")
    if family is not None and model_key(family) != m.family:
        raise ValueError(f"family={model_key(family).value!r} does not match the model's family {m.family.value!r}")
    return m


def select(N: int, C: int, H: int, W: int, K: int, R: int, S: int, *, stride: int = 1, pad: int | None = None,
           dilation: int = 1, family: str | Family | Choice | None = None, gpu: str = "h200", sms: int | None = None,
           model: Any = None, on_unsupported: str = "raise") -> Selection:
    """Pick the kernel config for a conv2d fprop problem (NCHW sizes, K x C x R x S filter).

    ``family`` defaults to ``i8nc32`` (or the family of ``model``); a choice of families with identical
    tensors, ``family="f16nhwc+f16nhwc90"`` (fp16 NHWC through CUTLASS 2.x SM80-family or 3.x SM90
    kernels, Hopper), gives one model's pick across both: ``config`` is a ``KernelConfig`` of either
    family (``config.family`` says which); ``gpu`` is the model slug;
    ``sms`` defaults to the SM count the model was trained with; ``model`` may be a path to a
    ``.tree.json``, a :class:`~predictor.tree_ir.TreeIR` or a :class:`LoadedModel` instead of the
    shipped model.  ``on_unsupported``: ``"raise"`` (a ``ValueError`` when C or K is not a multiple
    of the family's channel multiple) or ``"pad"`` (select for the channels rounded up, with
    ``fallback=True``).  See the module docstring for all errors."""
    if model is None and on_unsupported is _RAISE:  # the fast path: a shipped model, errors raised
        try:
            fn, sels, msms, m = _FAST[gpu][family]
        except (KeyError, TypeError):
            fn, sels, msms, m = _fast_entry(gpu, family)
    else:
        m = _model(model, gpu, family, on_unsupported)
        fn, sels, msms = m.fn, m.selections, m.sms
    if sms is None:
        sms = msms
    elif type(sms) is int and not m.sms_range[0] <= sms <= m.sms_range[1]:
        _sms_error(m, sms)
    if pad is None:
        try:
            pad = _SAME_PAD[R] if R == S and dilation == 1 else _same_pad(R, S, dilation)
        except (TypeError, IndexError):  # not an integer, or out of range: validation names the argument
            pad = _same_pad(R, S, dilation)
    i = fn(N, C, H, W, K, R, S, stride, pad, dilation, sms)
    if i >= 0:
        return sels[i]
    return _slow_path(m, i, N, C, H, W, K, R, S, stride, pad, dilation, sms, on_unsupported)


def _model(model: Any, gpu: str, family: Any, on_unsupported: str) -> LoadedModel:
    """The model :func:`select` and :func:`candidates` answer from (``on_unsupported`` checked first)."""
    if on_unsupported not in _ON_UNSUPPORTED:
        raise ValueError(f"on_unsupported must be 'raise' or 'pad', got {on_unsupported!r}")
    if model is None:
        return _resolve(None, gpu, family)
    if family is None and type(model) is str:
        return _load_path(model)
    return _resolve(model, gpu, family)


def _fast_entry(gpu: Any, family: Any) -> tuple[Callable[..., int], tuple[Selection, ...], int, LoadedModel]:
    """The fast path's entry of ``gpu`` and ``family`` as given to :func:`select` (loaded and kept where both are
    hashable; errors as :func:`load_model`)."""
    m = _resolve(None, gpu, family)
    entry = (m.fn, m.selections, m.sms, m)
    try:
        _FAST.setdefault(gpu, {})[family] = entry
    except TypeError:  # an unhashable family argument: answered, not kept
        pass
    return entry


def _same_pad(R: Any, S: Any, dilation: Any) -> int:
    """:func:`~predictor.features.same_pad` for the unusual cases: R != S (error naming pad), numpy
    integers, and values that validation will reject (0 placeholder: the error then names R, S or
    dilation)."""
    try:
        if isinstance(R, bool) or isinstance(S, bool) or isinstance(dilation, bool):
            return 0
        r, s_, d = operator.index(R), operator.index(S), operator.index(dilation)
    except TypeError:
        return 0
    if r != s_:
        raise ValueError(f"pad=None ('same' padding) needs R == S, got R={r}, S={s_}: pass pad explicitly")
    return same_pad(r, d)


def candidates(N: int, C: int, H: int, W: int, K: int, R: int, S: int, *, stride: int = 1, pad: int | None = None,
               dilation: int = 1, family: str | Family | Choice | None = None, gpu: str = "h200", sms: int | None = None,
               model: Any = None, on_unsupported: str = "raise") -> tuple[Selection, ...]:
    """The configs worth timing once for this problem (first-call tuning, the dispatcher's
    ``pkd_conv2d_tuned_*``): the candidates of the leaf the problem lands in, up to three, the
    :func:`select` pick first, then the model's configs of least summed regret over the leaf's
    training problems.  Arguments, errors and the ``on_unsupported="pad"`` fallback as :func:`select`
    (with ``fallback=True`` on every candidate); a model without recorded candidates gives the pick alone."""
    m = _model(model, gpu, family, on_unsupported)
    if sms is None:
        sms = m.sms
    elif type(sms) is int and not m.sms_range[0] <= sms <= m.sms_range[1]:
        _sms_error(m, sms)
    if pad is None:
        pad = _same_pad(R, S, dilation)
    fn = m.candidates_fn
    got = fn(N, C, H, W, K, R, S, stride, pad, dilation, sms)
    if type(got) is tuple:
        return tuple(m.selections[i] for i in got)
    got, reason = _retry(m, fn, got, N, C, H, W, K, R, S, stride, pad, dilation, sms, on_unsupported)
    if reason is None:
        return tuple(m.selections[i] for i in got)
    return tuple(Selection(m.configs[i], i, True, reason) for i in got)


def _retry(m: LoadedModel, fn: Callable[..., Any], code: int, N: Any, C: Any, H: Any, W: Any, K: Any, R: Any, S: Any,
           stride: Any, pad: Any, dilation: Any, sms: Any, on_unsupported: str) -> tuple[Any, str | None]:
    """The slow path of a generated function ``fn`` of ``m`` (:func:`select`'s index or
    :func:`candidates`' tuple) that returned the negative ``code``: (its result, None) for a valid
    problem (numpy integers), (its result for the padded problem, the reason) for the
    channel-padding fallback; errors raise."""
    ok = lambda got: type(got) is tuple or got >= 0  # noqa: E731 - a result, not a ResultCode
    args = dict(N=N, C=C, H=H, W=W, K=K, R=R, S=S, stride=stride, pad=pad, dilation=dilation, sms=sms)
    if code == ResultCode.INVALID_SHAPE:
        validate(args)  # raises ValueError naming the argument
        args = {k: int(v) for k, v in args.items()}  # e.g. numpy integers: valid, retry as int
        got = fn(*args.values())
        if ok(got):
            return got, None
        code = got
    if code != ResultCode.UNSUPPORTED_SHAPE:  # pragma: no cover - validate() and the generated checks agree
        raise AssertionError(f"generated selector returned {code} for valid arguments {args}")
    cm = m.family.channel_multiple
    bad = [a for a in CHANNEL_ARGS if args[a] % cm]
    if on_unsupported != "pad":
        if on_unsupported != "raise":
            raise ValueError(f"on_unsupported must be 'raise' or 'pad', got {on_unsupported!r}")
        a = bad[0]
        raise ValueError(f"{a}={args[a]} is not a multiple of {cm}, which family {m.family.value} needs "
                         f"(pass on_unsupported='pad' to select for {a} rounded up to {-(-args[a] // cm) * cm})")
    padded = {**args, **{a: -(-args[a] // cm) * cm for a in bad}}
    got = fn(*padded.values())
    if not ok(got):  # pragma: no cover - rounding up within LIMITS keeps the problem valid
        validate(padded)
        raise AssertionError(f"padded problem {padded} still unsupported")
    reason = ", ".join(f"{a}={args[a]} padded to {padded[a]}" for a in bad)
    return got, f"{reason} (multiple of {cm} required by {m.family.value})"


def _slow_path(m: LoadedModel, code: int, N: Any, C: Any, H: Any, W: Any, K: Any, R: Any, S: Any, stride: Any,
               pad: Any, dilation: Any, sms: Any, on_unsupported: str) -> Selection:
    """Errors, numpy integers and the channel-padding fallback of :func:`select` (:func:`_retry`)."""
    i, reason = _retry(m, m.fn, code, N, C, H, W, K, R, S, stride, pad, dilation, sms, on_unsupported)
    return m.selections[i] if reason is None else Selection(m.configs[i], i, True, reason)


def cache_clear() -> None:
    """Forget every loaded model (e.g. after retraining in the same process)."""
    _FAST.clear()
    load_model.cache_clear()
    _load_path.cache_clear()
    _from_ir.cache_clear()


def __getattr__(name: str) -> Any:
    if name == "MODELS_DIR":  # the former constant: the shipped models' folder
        return models_dir()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["select", "candidates", "Selection", "LoadedModel", "load_model", "model_path", "ModelNotFoundError",
           "cache_clear"]

"""Model keys: what one kernel-selection model chooses among.

A key is either a :class:`~predictor.config.Family` (the model picks one of the family's configs) or
a :class:`Choice`: several families whose kernels read and write the *same tensors* (element types
and layouts, :attr:`predictor.config.FamilySpec.tensors`), e.g. ``f16nhwc+f16nhwc90`` -- fp16 NHWC
through CUTLASS 2.x SM80-family kernels or CUTLASS 3.x SM90 kernels.  One model over a choice
learns which family's kernel is fastest for each problem; its configs are ordinary
:class:`~predictor.config.KernelConfig` names, each carrying its family.

Both kinds answer the :class:`ModelKey` protocol (``value``, ``identifier``, ``families``,
``channel_multiple``, ``tensor_kind``, ``description``), so a consumer needs no case for either:

* ``value``: the key's name everywhere text is fine -- sweep-free model files
  ``<slug>-<value>.tree.json``, ``--family``, ``predictor.select(family=...)``;
* ``identifier``: the C++ / C ABI name (``select_<identifier>``, ``pkd_conv2d_<identifier>``);
  a family's is its value, a choice's joins the members' values with ``_``
  (``f16nhwc_f16nhwc90``).

:func:`model_key` parses either from its value.  Everything is derived from ``FAMILY_SPECS``.
"""
from __future__ import annotations

import argparse
import itertools
from dataclasses import dataclass
from typing import Callable, Protocol, Union

from .config import FAMILY_SPECS, Family

#: Joins the members of a choice in its value (``f16nhwc+f16nhwc90``).
SEPARATOR = "+"


class ModelKey(Protocol):
    """What a consumer of a model needs to know about its key (a Family or a Choice)."""

    @property
    def value(self) -> str: ...

    @property
    def identifier(self) -> str: ...

    @property
    def families(self) -> tuple[Family, ...]: ...

    @property
    def partial(self) -> tuple[Family, ...]: ...

    @property
    def channel_multiple(self) -> int: ...

    @property
    def tensor_kind(self) -> str: ...

    @property
    def description(self) -> str: ...


def member_order(f: Family) -> tuple[int, int, int]:
    """Where a family stands in a choice's name: conv families before those that run only some
    convolutions, older kernel generations first (``arch_min``), then :class:`~predictor.config.Family`
    order (``i8nhwc+i8nhwc90+i8gemm90``)."""
    spec = FAMILY_SPECS[f]
    return (spec.operation != "conv", spec.arch_level, list(Family).index(f))


@dataclass(frozen=True)
class Choice:
    """Several families with identical tensors, chosen across by one model (members in
    :func:`member_order`; ``ValueError`` if fewer than two, repeated, their
    tensors differ, or none runs every convolution).  Members that run only some convolutions
    (:attr:`partial`) are answered only on the problems they implement."""

    families: tuple[Family, ...]

    def __post_init__(self) -> None:
        fams = tuple(Family(f) for f in self.families)
        if fams and all(FAMILY_SPECS[f].operation != "conv" for f in fams):
            raise ValueError(f"{', '.join(dict.fromkeys(f.value for f in fams))}: runs only some convolutions; a "
                             "choice needs at least one family that runs every convolution")
        if len(fams) < 2 or len(set(fams)) != len(fams):
            raise ValueError(f"a choice needs at least two different families, got {[f.value for f in fams]}")
        fams = tuple(sorted(fams, key=member_order))
        first = FAMILY_SPECS[fams[0]].tensors
        for f in fams[1:]:
            if FAMILY_SPECS[f].tensors != first:
                raise ValueError(f"families {fams[0].value} and {f.value} read or write different tensors "
                                 f"({'/'.join(first)} vs {'/'.join(FAMILY_SPECS[f].tensors)}): one model cannot "
                                 "choose across them")
        object.__setattr__(self, "families", fams)

    @property
    def value(self) -> str:
        return SEPARATOR.join(f.value for f in self.families)

    @property
    def partial(self) -> tuple[Family, ...]:
        """Members that run only some convolutions (``FamilySpec.operation != "conv"``, e.g. the GEMM
        family: 1x1 / stride 1 / pad 0 / dilation 1 only); the model routes them by the
        ``pointwise`` feature (:func:`predictor.fitting.compose`)."""
        return tuple(f for f in self.families if FAMILY_SPECS[f].operation != "conv")

    @property
    def conv_members(self) -> tuple[Family, ...]:
        """Members that run every convolution."""
        return tuple(f for f in self.families if FAMILY_SPECS[f].operation == "conv")

    @property
    def identifier(self) -> str:
        return "_".join(f.value for f in self.families)

    @property
    def channel_multiple(self) -> int:
        """C and K must be multiples of this: the largest of the members' (every member can then run)."""
        return max(FAMILY_SPECS[f].channel_multiple for f in self.families)

    @property
    def tensor_kind(self) -> str:
        return FAMILY_SPECS[self.families[0]].tensor_kind

    @property
    def description(self) -> str:
        apis = "/".join(f"{FAMILY_SPECS[f].cutlass_api}.x" for f in self.families)
        return (f"one model choosing across the kernels of {', '.join(f.value for f in self.families)} (CUTLASS "
                f"{apis}) for the same tensors ({self.tensor_kind}); C and K multiples of {self.channel_multiple}")

    def __str__(self) -> str:
        return self.value


Key = Union[Family, Choice]


def model_key(key: str | Family | Choice) -> Key:
    """The key named by ``key``: a family value (``f16nhwc``) or a choice (``f16nhwc+f16nhwc90``, members
    in any order); ``ValueError`` (one line) naming what is wrong."""
    if isinstance(key, (Family, Choice)):
        return key
    text = str(key)
    parts = text.split(SEPARATOR)
    known = [f.value for f in Family]
    unknown = [p for p in parts if p not in known]
    if unknown:
        raise ValueError(f"unknown family {unknown[0]!r} in {text!r} (families: {', '.join(known)}; "
                         f"a choice joins families with identical tensors by {SEPARATOR!r}, "
                         f"e.g. {', '.join(c.value for c in choices()) or 'none'})")
    if len(parts) == 1:
        return Family(text)
    return Choice(tuple(Family(p) for p in parts))


def default_families(present: "list[str] | set[str]") -> list[str]:
    """The families a run covers when none is named (``train``, ``lono``): each family of the sweeps that
    runs every convolution, sorted; a GEMM family runs only in a choice with a conv family, or when named."""
    known = {f.value for f in Family}
    return [f for f in sorted(present) if f in known and Family(f).spec.operation == "conv"]


def members_with_models(key: Key, has_model: Callable[[str], bool]) -> list[str]:
    """The member families (values) of the choice ``key`` that have a model of their own (``has_model(value)``), in
    the choice's family order; none for a single family.  Their picks are a generated dispatcher's fall-back where the
    choice's pick and its leaf's candidates cannot run a problem (:func:`predictor.dispatcher.member_models`,
    :func:`predictor.holdout.member_models`)."""
    return [f.value for f in key.families if has_model(f.value)] if len(key.families) > 1 else []


def choices() -> list[Choice]:
    """Every choice the families allow (each group of two or more families with identical tensors)."""
    out = []
    for n in range(2, len(Family) + 1):
        for group in itertools.combinations(Family, n):
            try:
                out.append(Choice(group))
            except ValueError:
                continue
    return out


def all_keys() -> list[Key]:
    """Every family, then every :func:`choices` entry."""
    return [*Family, *choices()]


def sort_key(key: Key) -> tuple[int, int, str]:
    """Order of keys in the exports: the families in declaration order, then choices by value."""
    if isinstance(key, Family):
        return (0, list(Family).index(key), "")
    return (1, 0, key.value)


def cli_model_key(text: str) -> str:
    """``argparse`` type of ``--family``: the canonical value of a family or a choice."""
    try:
        return model_key(text).value
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


#: ``--family`` help suffix shared by the command-line tools.
CLI_HELP = (f"a family ({', '.join(f.value for f in Family)}) or a choice of families with identical tensors "
            f"joined by {SEPARATOR!r} ({', '.join(c.value for c in choices())}): one model over the members' "
            "configs, trained on the problems measured in every member that runs them (a member that runs only "
            f"some convolutions, {' or '.join(f.value for f in Family if FAMILY_SPECS[f].operation != 'conv')}, is "
            "routed by the pointwise feature)")

__all__ = ["ModelKey", "Choice", "Key", "SEPARATOR", "model_key", "default_families", "members_with_models", "choices", "all_keys", "sort_key", "cli_model_key",
           "CLI_HELP"]

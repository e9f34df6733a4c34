"""The shipped models: every run of ``python -m predictor.train --all`` (sweeps, target, choices and how each model key
is trained) and the shipped dispatchers, and which of them ``--all --family`` retrains (:func:`shipped_selection`).
Data; :mod:`predictor.train` trains them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

from .model_key import model_key


class Method(NamedTuple):
    """How one model key of a shipped run is trained where it differs from the defaults."""

    key: str
    #: model kind (:data:`predictor.fitting.KINDS`)
    kind: str
    #: largest portfolio (``--max-portfolio``)
    max_portfolio: int
    #: what one inner CV fold keeps together (``--cv-groups``, :data:`predictor.cv_folds.CV_GROUPS`)
    cv_groups: str = "problem"
    #: a choice routed over these members' own models (``--route``, :mod:`predictor.route`): a router tree sends
    #: each problem to one of them; ``kind`` then fits only the pointwise problems of a choice holding a GEMM family
    route: tuple[str, ...] = ()
    #: with ``route``, a choice without a GEMM family: its pointwise problems keep its own tree (``--keep-pointwise``)
    keep_pointwise: bool = False
    #: the features its trees read (``--features``, :data:`predictor.features.FEATURE_SETS`)
    features: str = "base"

    def cli(self) -> tuple[str, ...]:
        """The ``predictor.train`` options that train this key so."""
        return ("--kind", self.kind, "--max-portfolio", str(self.max_portfolio), "--cv-groups", self.cv_groups,
                *(("--route", *self.route) if self.route else ()), *(("--keep-pointwise",) if self.keep_pointwise else ()),
                *(("--features", self.features) if self.features != "base" else ()))


@dataclass(frozen=True)
class ShippedRun:
    """One training run of ``python -m predictor.train --all`` (paths relative to the repository root)."""

    slug: str
    sweeps: tuple[str, ...]
    target: str | None = None
    #: choices (:mod:`predictor.model_key`) trained besides every family of the sweeps
    choices: tuple[str, ...] = ()
    #: the keys trained otherwise than the defaults (``DEFAULT_KIND``, ``--max-portfolio``, ``--cv-groups``): what
    #: leave-network-group-out and the held-out networks chose
    methods: tuple[Method, ...] = ()


#: The shipped models (``models/<slug>-<family>.*``) and headers (``export/``) and how they are made.
SHIPPED_RUNS = (
    ShippedRun("h200", ("sweeps/h200.parquet", "sweeps/h200-nets.parquet", "sweeps/h200-sm90.parquet",
                        "sweeps/h200-sm90-nets.parquet", "sweeps/h200-sm90-i8.parquet",
                        "sweeps/h200-sm90-i8-nets.parquet", "sweeps/h200-gemm90.parquet",
                        "sweeps/h200-gemm90-small.parquet", "sweeps/h200-gemm90-swap.parquet",
                        # f16gemm90's 96-wide tiles and 2x2 / 4x1 clusters (session 13): eager batches on the
                        # 1200 problems above, graph batches on the graph-labelled 1x1 problems below
                        "sweeps/h200-gemm90-wave.parquet", "sweeps/h200-graph-gemm90-wave.parquet",
                        # and its 8 configs with a fixed epilogue subtile (session 14), alike
                        "sweeps/h200-gemm90-epi.parquet", "sweeps/h200-graph-gemm90-epi.parquet",
                        # and the source-less twins of its 11 best 1x1 configs (session 23), alike
                        "sweeps/h200-gemm90-nosrc.parquet", "sweeps/h200-graph-gemm90-nosrc.parquet",
                        "sweeps/h200-i8gemm90.parquet", "sweeps/h200-i8nhwc.parquet",
                        # the int8 choice's problems under 5.1 / 10 / 30 us as graph replays (sessions 25, 26)
                        "sweeps/h200-graph-i8.parquet", "sweeps/h200-graph-i8-rest.parquet", "sweeps/h200-graph-i8-30us.parquet",
                        # the fp16 choice's problems under 8 µs again, every config of its three families timed as
                        # graph replays (timing method 3), which label them alone (portfolio.one_method_per_problem)
                        "sweeps/h200-graph-f16.parquet",
                        # f16nhwc90's 9 explicit configs (tile K 32, tile N 32 / 96; session 14) and the source-less
                        # twins of 12 (session 24): eager on its eager-labelled problems, graph on the others
                        "sweeps/h200-sm90-k32.parquet", "sweeps/h200-graph-sm90-k32.parquet",
                        "sweeps/h200-sm90-nosrc.parquet", "sweeps/h200-graph-sm90-nosrc.parquet"),
               choices=("f16nhwc+f16nhwc90", "f16nhwc+f16nhwc90+f16gemm90", "i8nhwc90+i8gemm90",
                        "i8nhwc+i8nhwc90+i8gemm90"),
               # each kind is what leave-network-group-out chose (reports/lono/; those replaced: .../experiments/)
               # f16nhwc90 and the fp16 choice: their inner CV keeps each network together since session 36
               # (reports/lono/h200-f16nhwc90/, h200-choice/, reports/lono/experiments/cvgroups.md)
               # f16nhwc90 reads the tiles features since session 43 (reports/lono/experiments/tile-features/)
               methods=(Method("i8nc32", "dense", 24), Method("f16nhwc90", "soft", 24, "network", features="tiles"),
                        Method("i8nhwc", "blend", 24),
                        Method("f16nhwc+f16nhwc90+f16gemm90", "cost", 24, route=("f16nhwc", "f16nhwc90")),
                        # the int8 and the routed fp16 choice: routed over their conv members' own models since
                        # session 38 (reports/lono/h200-{i8choice3,choice3}-route/, reports/lono/experiments/router/)
                        Method("i8nhwc+i8nhwc90+i8gemm90", "cost", 24, route=("i8nhwc", "i8nhwc90")),
                        # i8nhwc90 reads the tiles features since session 41 (reports/lono/experiments/tile-features/)
                        Method("f16nhwc", "soft10", 24), Method("i8nhwc90", "blend", 24, features="tiles"),
                        # routed too, its own tree kept on 1x1 problems (reports/lono/h200-choice-route/)
                        Method("f16nhwc+f16nhwc90", "cost", 24, "network", ("f16nhwc", "f16nhwc90"), True),
                        # its conv problems to i8nhwc90's own model, its 1x1 ones to its own tree, since session 45
                        # (reports/lono/h200-i8choice-route/)
                        Method("i8nhwc90+i8gemm90", "repick", 12, route=("i8nhwc90",)))),
    # the Orin-sized models: the whole GPU and 16/32-SM partitions, sms a feature; f16nhwc repick (the default)
    ShippedRun("h200-sm87", ("sweeps/h200.parquet", "sweeps/h200-nets.parquet", "sweeps/h200-sm16.parquet",
                             "sweeps/h200-sm16-nets.parquet", "sweeps/h200-sm32.parquet",
                             "sweeps/h200-sm32-f16nhwc.parquet", "sweeps/h200-i8nhwc.parquet",
                             "sweeps/h200-sm16-i8nhwc.parquet", "sweeps/h200-sm32-i8nhwc.parquet"), "sm_87",
               # i8nc32: dense since session 22 (reports/lono/h200-sm87-i8nc32/), as above
               methods=(Method("i8nhwc", "distill", 24), Method("i8nc32", "dense", 24))),
)
#: The shipped dispatchers: (slug, families or None for the default SM80 ones, folder under export/).
#: ``dispatch`` holds the SM80-family models that were built and run on the H200 (``i8nhwc``'s own model,
#: a default family since 2026-12-01, is in no shipped dispatcher; its kernels run through the int8 choice's,
#: ``dispatch_i8_choice3``, GPU-tested on 2026-12-01).
SHIPPED_DISPATCHERS: tuple[tuple[str, tuple[str, ...] | None, str], ...] = (
    ("h200", ("i8nc32", "f16nhwc"), "dispatch"),
    ("h200", ("f16nhwc90",), "dispatch_sm90"),
    ("h200", ("f16nhwc+f16nhwc90",), "dispatch_f16_choice"),
    ("h200", ("f16nhwc+f16nhwc90+f16gemm90",), "dispatch_f16_choice3"),
    ("h200", ("i8nhwc+i8nhwc90+i8gemm90",), "dispatch_i8_choice3"),
)
SHIPPED_SLUGS = frozenset(r.slug for r in SHIPPED_RUNS)


def shipped_selection(families: Sequence[str], slug: str | None,
                      keys_of: Callable[[ShippedRun], Sequence[str]]) -> list[tuple[ShippedRun, list[str]]]:
    """``--all --family F ... [--slug S]``: each shipped run (of slug ``S``) holding a requested key, with the keys it
    retrains: the requested ones and every routed choice whose members' models they are (:attr:`Method.route`,
    transitively: its model grafts theirs), in ``keys_of``'s order (``keys_of(run)``: the keys the run trains,
    ``predictor.train.shipped_keys``). A requested key no run trains is a ``ValueError``."""
    runs = [r for r in SHIPPED_RUNS if slug is None or r.slug == slug]
    if not runs:
        raise ValueError(f"--slug {slug}: no shipped run has that slug (shipped: {', '.join(r.slug for r in SHIPPED_RUNS)})")
    want = {model_key(f).value for f in families}
    out, found = [], set()
    for run in runs:
        keys = [model_key(k).value for k in keys_of(run)]
        sel = want & set(keys)
        found |= sel
        routes = {model_key(m.key).value: {model_key(x).value for x in m.route} for m in run.methods}
        while True:  # routed choices over a retrained member
            more = {k for k in keys if routes.get(k, set()) & sel} - sel
            if not more:
                break
            sel |= more
        if sel:
            out.append((run, [k for k in keys if k in sel]))
    missing = sorted(want - found)
    if missing:
        where = f" of slug {slug}" if slug else ""
        raise ValueError(f"--all --family {missing[0]}: no shipped run{where} trains it (python -m predictor.train "
                         "--help lists the shipped runs)")
    return out

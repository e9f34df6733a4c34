"""First-call tuning candidates of a fitted tree's nodes (:func:`node_candidates`), shared by every model kind of
:mod:`predictor.fitting`."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .tree_ir import MAX_CANDIDATES


def node_candidates(costs: np.ndarray, answers: np.ndarray, configs: Sequence[str], allowed: Sequence[str],
                    n: int = MAX_CANDIDATES, path: Any = None, regret: np.ndarray | None = None
                    ) -> list[tuple[str, ...]]:
    """Every node's candidates, up to ``n``: its answer, then ``allowed`` configs.

    With the training problems' membership (``path``: problems x nodes, ``predictor.fitting._decision_path``) and
    log-regrets (``regret``: problems x configs), each next candidate is the one that most lowers
    the node's total log-regret of *the best of the candidates so far* (what first-call tuning
    runs: the fastest candidate), so a candidate covers the problems its predecessors lose;
    once none lowers it (or without ``path``), the rest follow by least ``costs`` (nodes x configs,
    ``predictor.fitting._node_costs``: the total log-regret, alone). Ties go to table order."""
    index = {c: j for j, c in enumerate(configs)}
    cols = np.array(sorted(index[c] for c in allowed), dtype=np.int64)
    members = None if path is None or regret is None else path.tocsc()
    out = []
    for node in range(costs.shape[0]):
        first = int(answers[node])
        c = costs[node, cols]
        order = [int(j) for j in cols[np.lexsort((cols, c))] if np.isfinite(costs[node, j])]
        chosen = [first]
        if members is not None:
            rows = members.indices[members.indptr[node]:members.indptr[node + 1]]
            R = regret[np.ix_(rows, cols)]
            best = regret[rows, first]
            while len(chosen) < n:
                total = np.minimum(best[:, None], R).sum(axis=0)
                total[np.isin(cols, chosen) | ~np.isfinite(c)] = np.inf
                j = int(np.argmin(total))  # first minimum: table order
                if not np.isfinite(total[j]) or total[j] >= best.sum() - 1e-12:
                    break
                chosen.append(int(cols[j]))
                best = np.minimum(best, R[:, j])
        rest = [j for j in order if j not in chosen]
        out.append(tuple(configs[j] for j in [*chosen, *rest][:n]))
    return out


__all__ = ["node_candidates"]

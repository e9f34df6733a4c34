"""The inner cross-validation's folds (:func:`predictor.fitting.cross_validate`): what one fold keeps together."""
from __future__ import annotations

import numpy as np

from .portfolio import ShapeTable, TrainError
from .schema import split_sm_key
from .shapes import NET_PREFIX


def base_keys(keys: np.ndarray) -> np.ndarray:
    """Problem keys without the ``@sm<count>`` suffix of multi-SM-count training: the same
    convolution measured at several SM counts stays in one fold."""
    return np.array([split_sm_key(k)[0] for k in keys])


#: What the inner cross-validation keeps together in one fold (:func:`cross_validate`): ``problem``, each problem
#: (all its SM counts; what ``train`` ships); ``network``, also every network's layers (source ``net:<name>``, :data:`~predictor.shapes.NET_PREFIX`), so
#: hyper-parameters are chosen for networks the fold's model has not seen, as leave-one-network-out scores them.
CV_GROUPS = ("problem", "network")


def cv_group_labels(table: ShapeTable, by: str = "problem") -> np.ndarray:
    """The group of every problem of ``table`` for :data:`CV_GROUPS` ``by``."""
    if by not in CV_GROUPS:
        raise ValueError(f"cv groups {by!r}: one of {', '.join(CV_GROUPS)}")
    keys = base_keys(table.keys)
    if by == "problem":
        return keys
    src = np.asarray(table.sources).astype(str)
    return np.where(np.char.startswith(src, NET_PREFIX), src, keys)


def _folds(table: ShapeTable, folds: int, seed: int, by: str = "problem") -> list[tuple[np.ndarray, np.ndarray]]:
    from sklearn.model_selection import GroupKFold

    groups = cv_group_labels(table, by)
    n_splits = min(folds, len(set(groups)))
    if n_splits < 2:
        raise TrainError(f"need at least 2 training problems for cross-validation, have {len(set(groups))}")
    try:
        gkf = GroupKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    except TypeError:  # scikit-learn < 1.6: no shuffling; groups are balanced deterministically
        gkf = GroupKFold(n_splits=n_splits)
    return list(gkf.split(np.zeros(table.n_shapes), groups=groups))

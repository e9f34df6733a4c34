"""Experiment (session 28): ``scripts/leaf_rules.py`` with the ``cost`` teacher's (problem, config) pairs weighted
towards each problem's fastest configs, ``exp(-log-regret / TAU) + 0.1``, instead of equally: does a teacher that ranks
the near-fastest configs better (``scripts/teacher_variants.py``) give better trees?

    python scripts/teacher_weighting.py TAU REPORT.md FAMILY KIND SWEEP... > OUT.md
    python scripts/teacher_weighting.py TAU lono LONO-ARGS...     # predictor.lono with the weighted teacher

(the second form's report names ``python -m predictor.lono`` as its command: keep it out of ``reports/lono`` or say so)
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from predictor import cost_teacher  # noqa: E402

TAU = float(sys.argv.pop(1))


def _fit(self: cost_teacher.CostTeacher, X: np.ndarray, regret: np.ndarray) -> cost_teacher.CostTeacher:
    from sklearn.ensemble import HistGradientBoostingRegressor

    y = regret.ravel()
    self.model = HistGradientBoostingRegressor(random_state=self.seed, **cost_teacher.PARAMS)
    self.model.fit(cost_teacher.pair_matrix(X, self.C, self.fields), y, sample_weight=np.exp(-y / TAU) + 0.1)
    return self


cost_teacher.CostTeacher.fit = _fit  # type: ignore[method-assign]
if sys.argv[1] == "lono":
    from predictor import lono

    sys.exit(lono.main(sys.argv[2:]))
import leaf_rules  # noqa: E402

leaf_rules.main()

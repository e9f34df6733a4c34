"""Experiment (session 28): ``scripts/leaf_rules.py`` with the ``cost`` teacher's (problem, config) pairs weighted
towards each problem's fastest configs, ``exp(-log-regret / TAU) + 0.1`` (``CostTeacher(near=TAU)``), instead of
equally: does a teacher that ranks the near-fastest configs better (``scripts/teacher_variants.py``) give better trees?

    python scripts/teacher_weighting.py TAU REPORT.md FAMILY KIND SWEEP... > OUT.md

(the leave-out run of this teacher is the model kind ``near``: ``python -m predictor.lono ... --kind near``)
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from predictor import fitting  # noqa: E402

if len(sys.argv) < 6:
    sys.exit(__doc__)
TAU = float(sys.argv.pop(1))
fitting.NEAR[sys.argv[3]] = TAU  # KIND's teacher weighted as the near kind's (predictor.fitting.NEAR)
import leaf_rules  # noqa: E402

leaf_rules.main()

"""The offline evaluation (``python -m predictor.evaluate``), one module per step, bottom up:

* :mod:`.data` -- a family's measurements (:class:`~.data.FamilyData`), hyper-parameter grids, settings;
* :mod:`.picks` -- picks that need no training (fixed configs, wave heuristic, nvMatmulHeuristics
  snapped to the grid) and the scoring helpers :func:`~.picks.best_of`, :func:`~.picks.missing_mask`;
* :mod:`.metrics` -- the methods compared, their scores per set and per shape;
* :mod:`.nested` -- the trained methods: nested CV, the full model on the network layers, the k curve;
* :mod:`.plots`, :mod:`.report` -- the figures and ``REPORT.md``;
* :mod:`.driver` -- :func:`~.driver.run`, the whole evaluation of a sweep;
* :mod:`.cli` -- the command line (its docstring describes the method).

Importing the package imports none of them.
"""

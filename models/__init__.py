"""The shipped models (the repository's ``models/`` folder), installed as ``predictor._models``."""

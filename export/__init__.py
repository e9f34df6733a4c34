"""The shipped C++ headers and dispatchers (the repository's ``export/`` folder), installed as
``predictor._export``."""

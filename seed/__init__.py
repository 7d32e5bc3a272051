"""The demo corpora ``graphsvc seed`` loads (graphsvc.seed reads them).

This folder sits beside ``graphsvc/`` in the repository, as the design lays it out;
the wheel installs it as the package ``graphsvc.seed_data`` (pyproject.toml's
``package-dir``), so the corpora are found with importlib.resources either way.
"""

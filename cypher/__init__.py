"""The Cypher queries, one per ``.cypher`` file (graphsvc.store.queries reads them).

This folder sits beside ``graphsvc/`` in the repository, as the design lays it out;
the wheel installs it as the package ``graphsvc.cypher`` (pyproject.toml's
``package-dir``), so the queries are found with importlib.resources either way.
"""

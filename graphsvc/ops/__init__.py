"""Use cases, one module per public operation; Service delegates to them.

``Database`` is the connection every use case takes (:mod:`graphsvc.store.connection`),
named here for the facades, which hold one and import no store module.
"""

from graphsvc.store.connection import Database

__all__ = ["Database"]

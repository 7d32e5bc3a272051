"""One worker process of ``graphsvc serve --workers N``: uvicorn's app factory.

uvicorn's supervisor spawns each worker, which imports this module and calls
:func:`app`. The parent (``graphsvc serve``) has started the managed Neo4j, applied
the schema and chosen the auth file, and named both in the environment
(``GRAPHSVC_NEO4J_URI``, ``GRAPHSVC_AUTH_FILE``): a worker reads its settings from
there, loads the model, and serves as a replica of its own
(:func:`graphsvc.runtime.serving`, entered and left by the app's lifespan).
"""

from __future__ import annotations

from starlette.types import ASGIApp

from graphsvc.http.app import create_app
from graphsvc.http.blas_threads import limit_blas_threads
from graphsvc.http.gc_policy import limit_malloc_arenas
from graphsvc.keys.auth import AuthTable
from graphsvc.runtime import build_service, serving
from graphsvc.settings import Settings
from graphsvc.telemetry.logging_setup import configure_logging

__all__ = ["app"]


def app() -> ASGIApp:
    """The HTTP surface of one worker (the environment names its database and tokens)."""
    settings = Settings.from_env()
    limit_malloc_arenas(settings.http.malloc_arenas)  # before this worker starts threads
    limit_blas_threads(settings.http.blas_threads)
    service, runtime = build_service(settings, load_model=True)
    auth = AuthTable.from_file(settings.paths.auth_file)
    configure_logging(settings.http.log_format, settings.http.log_level)
    return create_app(service, auth, serving=lambda: serving(service), close=runtime.close)

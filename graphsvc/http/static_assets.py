"""Browser assets served by graphsvc itself: ``/static`` and the offline GraphiQL page.

Everything under ``graphsvc/http/static/`` ships in the package; third-party files are in
``static/vendor/`` with their versions and licences in ``static/vendor/VENDORED.md``.
No page served here loads anything from another host, so it all works offline.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

__all__ = ["STATIC_DIR", "graphiql_html", "static_mount"]

STATIC_DIR = Path(__file__).resolve().parent / "static"


@cache
def graphiql_html() -> str:
    """The GraphiQL page (replaces strawberry's, which loads its assets from a CDN)."""
    return (STATIC_DIR / "graphiql.html").read_text(encoding="utf-8")


def static_mount() -> Mount:
    """``/static/...`` → files under ``graphsvc/http/static`` (read-only, no listing)."""
    return Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static")

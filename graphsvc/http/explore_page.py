"""``/explore``: a single-page graph explorer served by graphsvc (issue 17).

The page (``static/explore.html`` + ``explore.js`` + ``explore.css``) holds no data and
needs no auth: it asks for an API token, keeps it in the tab's ``sessionStorage`` and
calls ``/graphql`` (``search``, ``inspect``, ``lineage``, ``read``) with it. The graph
is drawn with the vendored cytoscape.js and its fcose layout (``static/vendor``), so
the page works with no network.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from graphsvc.http.page_headers import html_page
from graphsvc.http.static_assets import STATIC_DIR

__all__ = ["explore_route"]


async def _page(_: Request) -> Response:
    html = (STATIC_DIR / "explore.html").read_text(encoding="utf-8")
    return html_page(html, no_store=True)


def explore_route() -> Route:
    """The ``/explore`` route, to add to the app's routes."""
    return Route("/explore", _page, methods=["GET"])

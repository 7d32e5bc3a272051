"""``/lineage``: retired; it redirects to the explorer (API-5).

The explorer (``/explore``) draws an atom's ``derives_from`` lineage with its links
and entities, with arrows, a legend and each edge's signature checked; the old SVG
page drew a second, poorer picture of the same thing. One drawing code path:
``/lineage?atom=<atomId>`` answers 307 to ``/explore?atom=<atomId>&lineage=1``
(the explorer opens the atom and scrolls its side panel to the lineage list);
without an atom, to ``/explore``. The atom id is URL-encoded; nothing else of the
request (a token, for one) is carried over.
"""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

__all__ = ["lineage_route"]


async def _redirect(request: Request) -> Response:
    atom = request.query_params.get("atom") or request.query_params.get("atomId")
    target = "/explore" + ("?" + urlencode({"atom": atom, "lineage": "1"}) if atom else "")
    return RedirectResponse(target, status_code=307)


def lineage_route() -> Route:
    """The ``/lineage`` route (a redirect), to add to the app's routes."""
    return Route("/lineage", _redirect, methods=["GET"])

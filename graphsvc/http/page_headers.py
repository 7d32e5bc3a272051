"""Security headers of the HTML pages graphsvc serves (GraphiQL, ``/explore``).

Each page gets a Content-Security-Policy that its own files satisfy and nothing
else: scripts from graphsvc itself (``/static``) plus the page's own inline scripts,
each allowed by its SHA-256 hash (computed here from the page, so a changed page
keeps working and an injected script does not run); styles from graphsvc and inline
(GraphiQL's bundle sets styles at run time); requests to graphsvc only; no plugin,
no frame may embed the page (``frame-ancestors 'none'``, ``X-Frame-Options: DENY``),
and no content-type sniffing.
"""

from __future__ import annotations

import base64
import hashlib
import re
from functools import cache

from starlette.responses import HTMLResponse

__all__ = ["content_security_policy", "html_page"]

_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


@cache
def content_security_policy(html: str) -> str:
    """The policy of one page: its inline scripts allowed by hash, nothing foreign."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"
        for body in _INLINE_SCRIPT.findall(html)
    )
    script_src = f"'self' {hashes}".strip()
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src {script_src}",
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data:",
            "font-src 'self' data:",
            "connect-src 'self'",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        ]
    )


def html_page(html: str, *, no_store: bool = False) -> HTMLResponse:
    """An HTML response with the page's security headers."""
    headers = {
        "Content-Security-Policy": content_security_policy(html),
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }
    if no_store:
        headers["Cache-Control"] = "no-store"
    return HTMLResponse(html, headers=headers)

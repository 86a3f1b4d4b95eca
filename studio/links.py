"""Links between the app's pages, written so that they open where they point, in the reader's language.

A link in a table, a tile or a Markdown text is a plain ``<a href>``: following it loads the app afresh, in
a new browser session. So a link says the page and the language itself:

- The Run page is the app's default page, and Streamlit serves a default page at the app's root only: its
  ``url_path`` is not routed, so ``/run?…`` lands on "Page not found". A link to it is ``./?…``.
- Links are relative (``./debates?…``), so an app served under a base URL path opens them too.
- ``lang`` carries the session's language (``?lang=zh``): the new session would otherwise start from the
  configured or the browser's language, and a reader who chose 简体中文 would land on English.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote, urlencode

DEFAULT_PAGE = "run"
"""The url_path of the app's default page (app.py's navigation), served at the app's root."""


def page_url(page: str, params: Mapping[str, object] | None = None, *, lang: str | None = None) -> str:
    """The relative address of ``page`` (its url_path) with ``params``, then ``lang`` when given."""
    query = {k: str(v) for k, v in (params or {}).items()}
    if lang:
        query["lang"] = lang
    path = "" if page == DEFAULT_PAGE else page
    return f"./{path}" + (f"?{urlencode(query, quote_via=quote)}" if query else "")


def _origin(url: str) -> tuple[str, str, int | None]:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


def sign_in_mismatch(redirect_uri: str | None, page_url: str | None) -> tuple[str, str] | None:
    """``(the origin sign-in returns to, the fixed redirect_uri)`` when the provider's ``redirect_uri`` is on
    another origin than the page (``localhost`` against ``127.0.0.1``, another port): the browser keeps the
    sign-in's cookie per origin, so the callback finds no sign-in under way and Streamlit only logs
    "Missing provider for OAuth callback". None when they match, or when either is unknown."""
    if not redirect_uri or not page_url:
        return None
    want, here = _origin(redirect_uri), _origin(page_url)
    if not want[1] or not here[1] or want == here:
        return None
    scheme, host, port = here
    default = {"http": 80, "https": 443}.get(scheme)
    fixed = f"{scheme}://{host}" + (f":{port}" if port and port != default else "") + "/oauth2callback"
    return redirect_uri.rsplit("/oauth2callback", 1)[0], fixed

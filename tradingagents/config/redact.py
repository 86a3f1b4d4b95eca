"""What of the settings may be shown or written: ``redact_url`` and ``public_config``.

No key, token or secret ever reaches a file, a log line or the page; URLs keep their host and path
but lose their credentials. This module imports nothing of the config package (the frozen
``Settings`` uses it for its ``repr``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from tradingagents.urls import redact_url as redact_database_url

SECRET_WORDS = ("key", "token", "secret", "password")
"""A settings key that contains one of these words is left out of ``public_config`` (at any depth)."""

# query parameters whose value is a credential (an Azure ``sig``, a ``?api_key=``, an ``access_token``)
_SECRET_QUERY_WORDS = ("key", "token", "secret", "pass", "pwd", "sig", "auth", "credential", "session")
REDACTED = "***"

_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>]+")


def redact_url(text: str) -> str:
    """``text`` with the credentials of every URL in it masked: ``user:pass@`` and secret query values.

    ``http://u:p@host:8000/v1?api_key=s&x=1`` → ``http://***@host:8000/v1?api_key=***&x=1``; text
    without a URL comes back unchanged.
    """
    if "://" not in text:
        return text
    return _URL_RE.sub(lambda m: _redact_one(m.group(0)), text)


def _redact_one(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED
    netloc = parts.netloc
    if "@" in netloc:
        netloc = REDACTED + "@" + netloc.rpartition("@")[2]
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode(
            [(k, REDACTED if any(w in k.lower() for w in _SECRET_QUERY_WORDS) else v) for k, v in pairs],
            safe="*",
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def _is_secret(key: object) -> bool:
    return isinstance(key, str) and any(word in key.lower() for word in SECRET_WORDS)


def _public_value(value: Any) -> Any:
    """A plain (mutable, JSON-able) copy of ``value`` with secret keys dropped and URLs redacted."""
    if isinstance(value, str):
        return redact_url(value)
    if isinstance(value, Mapping):
        return {k: _public_value(v) for k, v in value.items() if not _is_secret(k)}
    if isinstance(value, (list, tuple)):
        return [_public_value(v) for v in value]
    return value


def public_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """A plain, mutable copy that is safe to write to disk or show: no key, token or secret of any kind.

    Keys naming a secret are left out (at any depth), and every URL has its credentials masked
    (``backend_url`` like ``http://user:pass@host/v1`` → ``http://***@host/v1``; ``storage_url``
    keeps its user name, never its password or query).
    """
    out = {k: _public_value(v) for k, v in config.items() if not _is_secret(k)}
    if config.get("storage_url"):  # the database's password and query never reach a file (user kept)
        out["storage_url"] = redact_database_url(str(config["storage_url"]))
    return out

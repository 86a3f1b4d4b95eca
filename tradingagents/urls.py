"""Database URLs as settings: the one check of ``storage_url`` and the one redaction of its password.

Below the config (which checks ``storage_url`` with it) and the storage (which connects with it), so
neither imports the other in a circle. Imports nothing of the package but its errors.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from tradingagents.errors import ConfigError

SCHEMES = ("postgresql", "postgres")


def redact_url(url: str | None) -> str:
    """``postgresql://user@host:port/db``: no password, no query string (it may carry one)."""
    if not url:
        return ""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<unparseable database URL>"
    user = f"{parts.username}@" if parts.username else ""
    return urlunsplit((parts.scheme, f"{user}{host}{port}", parts.path, "", ""))


def validate_storage_url(value: object, where: str = "storage_url") -> str | None:
    """A config value as a PostgreSQL URL; ConfigError otherwise. For files: None when unset (the environment
    variable may still name a database: ``storage.storage_url``), ``""`` when blank (files, forced: a settings
    object keeps the difference, so a caller's ``""`` is not overridden by the environment).

    Made to serve as the ``storage_url`` check of the settings; ``where`` names the key or variable.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be text like postgresql://user@host/db, not {type(value).__name__}.")
    value = value.strip()
    if not value:
        return ""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018  (raises on a bad port)
    except ValueError:
        raise ConfigError(f"{where} is not a valid URL; use postgresql://user@host:5432/dbname.") from None
    if parts.scheme not in SCHEMES or not parts.path.strip("/"):
        raise ConfigError(
            f"{where} = {redact_url(value)!r} is not a PostgreSQL URL with a database name; use "
            "postgresql://user@host:5432/dbname, or leave it empty to keep everything in files."
        )
    return value


SMTP_SCHEMES = ("smtp", "smtps")


def validate_smtp_url(value: object, where: str = "smtp_url") -> str | None:
    """A config value as a mail server URL (``smtp://user@host:587``, ``smtps://user@host:465``), or None
    (None or blank: no e-mail). A password in the URL is refused: it comes from the environment
    (``TRADINGAGENTS_SMTP_PASSWORD``), so it never reaches a file the app writes."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be text like smtp://user@mail.example.com:587, not {type(value).__name__}.")
    value = value.strip()
    if not value:
        return None
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018  (raises on a bad port)
    except ValueError:
        raise ConfigError(f"{where} is not a valid URL; use smtp://user@host:587.") from None
    if parts.scheme not in SMTP_SCHEMES or not parts.hostname:
        raise ConfigError(f"{where} = {redact_url(value)!r} is not a mail server URL; use smtp://user@host:587 "
                          "(STARTTLS when the server offers it) or smtps://user@host:465.")
    if parts.password:
        raise ConfigError(f"{where} carries a password; remove it from the URL and set TRADINGAGENTS_SMTP_PASSWORD "
                          "in the environment instead.")
    return value

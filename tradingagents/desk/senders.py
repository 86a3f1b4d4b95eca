"""The two ways a digest or an alert leaves the desk: e-mail through SMTP and a JSON webhook.

``send_email(smtp_url, recipients, subject, text, html)``: ``smtp://user@host:587`` speaks STARTTLS
when the server offers it (required before a login), ``smtps://user@host:465`` TLS from the start; the
login's password comes from ``TRADINGAGENTS_SMTP_PASSWORD`` (never from a file), the sender from
``TRADINGAGENTS_SMTP_FROM``, else the URL's user when it is an address, else ``tradingagents@<host>``.
Certificates are checked against the system's authorities (``SSL_CERT_FILE`` names another bundle).

``post_webhook(url, payload)``: one POST of JSON (``{"text": …}`` is what Slack's and Teams' incoming
webhooks read), 2xx is delivered.

Both try ``ATTEMPTS`` times with a growing pause and return a ``Delivery`` record (channel, target,
ok, attempts, error): a failure is recorded, never raised, so it never loses the run it reports on.
"""

from __future__ import annotations

import json
import os
import smtplib
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any
from urllib.parse import unquote, urlsplit

from tradingagents.config.redact import redact_url
from tradingagents.i18n import N_

__all__ = ["ATTEMPTS", "CHANNELS", "Delivery", "post_webhook", "send_email"]

CHANNELS = {"email": N_("e-mail"), "webhook": N_("webhook")}
"""Each channel's name for people (``t(CHANNELS[channel])``); records keep the canonical key."""

ATTEMPTS = 3
RETRY_BACKOFF_S = 2.0  # before the second attempt; doubled before each next one
TIMEOUT_S = 30.0
PASSWORD_VAR = "TRADINGAGENTS_SMTP_PASSWORD"
FROM_VAR = "TRADINGAGENTS_SMTP_FROM"


@dataclass
class Delivery:
    channel: str  # "email" | "webhook"
    target: str  # the recipients, or the webhook's URL without its secret parts
    ok: bool
    attempts: int
    error: str | None = None
    at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _retrying(channel: str, target: str, attempt_fn, attempts: int | None = None,
              backoff: float | None = None) -> Delivery:
    attempts = ATTEMPTS if attempts is None else max(1, int(attempts))
    pause = RETRY_BACKOFF_S if backoff is None else backoff
    error = None
    for n in range(1, attempts + 1):
        try:
            attempt_fn()
            return Delivery(channel, target, True, n, None, time.time())
        except Exception as exc:  # noqa: BLE001 - recorded, retried, never raised
            error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        if n < attempts:
            time.sleep(pause * (2 ** (n - 1)))
    return Delivery(channel, target, False, attempts, error, time.time())


def send_email(smtp_url: str, recipients: Sequence[str], subject: str, text: str, html: str | None = None, *,
               attempts: int | None = None, backoff: float | None = None,
               environ: Mapping[str, str] | None = None) -> Delivery:
    env = os.environ if environ is None else environ
    parts = urlsplit(smtp_url)
    host, user = parts.hostname or "localhost", unquote(parts.username or "")
    sender = env.get(FROM_VAR) or (user if "@" in user else f"tradingagents@{host}")
    msg = EmailMessage()
    msg["Subject"], msg["From"], msg["To"] = subject, sender, ", ".join(recipients)
    msg["Date"], msg["Message-ID"] = formatdate(localtime=True), make_msgid(domain="tradingagents")
    msg.set_content(text)
    if html:
        msg.add_alternative(html, subtype="html")

    def attempt() -> None:
        context = ssl.create_default_context()
        if parts.scheme == "smtps":
            client: smtplib.SMTP = smtplib.SMTP_SSL(host, parts.port or 465, timeout=TIMEOUT_S, context=context)
        else:
            client = smtplib.SMTP(host, parts.port or 587, timeout=TIMEOUT_S)
        with client:
            client.ehlo()
            if parts.scheme == "smtp" and client.has_extn("starttls"):
                client.starttls(context=context)
                client.ehlo()
            if user:
                password = env.get(PASSWORD_VAR)
                if not password:
                    raise RuntimeError(f"{PASSWORD_VAR} is not set: the login of {user} needs it")
                client.login(user, password)
            client.send_message(msg, from_addr=sender, to_addrs=list(recipients))

    return _retrying("email", ", ".join(recipients), attempt, attempts, backoff)


def post_webhook(url: str, payload: Mapping[str, Any], *, attempts: int | None = None,
                 backoff: float | None = None) -> Delivery:
    body = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")

    def attempt() -> None:
        request = urllib.request.Request(url, data=body, method="POST",
                                         headers={"Content-Type": "application/json; charset=utf-8",
                                                  "User-Agent": "TradingAgents-desk"})
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310 - the desk's own URL
            if not 200 <= response.status < 300:
                raise RuntimeError(f"the webhook answered {response.status}")
            response.read(65536)

    parts = urlsplit(url)
    shown = redact_url(f"{parts.scheme}://{parts.netloc}") + (parts.path[:24] + "…" if len(parts.path) > 24 else parts.path)
    return _retrying("webhook", shown, attempt, attempts, backoff)

"""Local receivers for the desk's digests: a real SMTP server (aiosmtpd) and an HTTP webhook, on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SMTPReceiver:
    """aiosmtpd on 127.0.0.1; ``messages`` are the parsed e-mails received. With ``tls_dir``: a self-signed
    certificate for 127.0.0.1, STARTTLS required, and a login of ``user``/``password`` required."""

    def __init__(self, tls_dir: Path | None = None, user: str = "desk", password: str = "s3cret") -> None:
        from aiosmtpd.controller import Controller

        self.messages: list[Message] = []
        self.logins: list[str] = []
        self.cert: Path | None = None
        receiver = self

        class Handler:
            async def handle_DATA(self, server, session, envelope):  # noqa: N802
                receiver.messages.append(message_from_bytes(envelope.original_content or envelope.content))
                return "250 OK"

        kwargs: dict[str, Any] = {}
        if tls_dir is not None:
            import ssl

            self.cert, key = tls_dir / "cert.pem", tls_dir / "key.pem"
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                            "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key),
                            "-out", str(self.cert)], check=True, capture_output=True)
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(str(self.cert), str(key))

            def authenticator(server, session, envelope, mechanism, auth_data):
                from aiosmtpd.smtp import AuthResult

                ok = auth_data.login == user.encode() and auth_data.password == password.encode()
                if ok:
                    receiver.logins.append(user)
                return AuthResult(success=ok)

            kwargs = {"tls_context": context, "require_starttls": True, "authenticator": authenticator,
                      "auth_required": True}
        self.port = free_port()
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port, **kwargs)

    def __enter__(self) -> SMTPReceiver:
        self.controller.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.controller.stop()

    def texts(self) -> list[str]:
        out = []
        for m in self.messages:
            part = m.get_body(preferencelist=("plain",)) if hasattr(m, "get_body") else None
            if part is None:
                for p in m.walk():
                    if p.get_content_type() == "text/plain":
                        part = p
                        break
            out.append(part.get_payload(decode=True).decode("utf-8") if part is not None else str(m))
        return out


class WebhookReceiver:
    """An HTTP server on 127.0.0.1 keeping every JSON posted to it; the first ``fail`` posts get a 500."""

    def __init__(self, fail: int = 0) -> None:
        self.posts: list[dict[str, Any]] = []
        self.attempts = 0
        self.fail = fail
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.attempts += 1
                if receiver.attempts <= receiver.fail:
                    self.send_response(500)
                    self.end_headers()
                    return
                receiver.posts.append(json.loads(body))
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"ok")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/desk"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> WebhookReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

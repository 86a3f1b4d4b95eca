"""Shared fixtures: every test gets a temporary TRADINGAGENTS_HOME and no network beyond loopback."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _is_local(address) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True
    host = address[0]
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class NetworkBlocked(OSError):
    pass


def _guard(address):
    if not _is_local(address):
        raise NetworkBlocked(f"tests must not touch the network: connect to {address!r} refused")


def _connect(self, address):
    _guard(address)
    return _real_connect(self, address)


def _connect_ex(self, address):
    _guard(address)
    return _real_connect_ex(self, address)


def _getaddrinfo(host, *args, **kwargs):
    if host not in (None, "localhost") and not _is_local((host, 0)):
        raise NetworkBlocked(f"tests must not touch the network: DNS lookup of {host!r} refused")
    return _real_getaddrinfo(host, *args, **kwargs)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    monkeypatch.setattr(socket.socket, "connect", _connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", _getaddrinfo)
    yield


@pytest.fixture(autouse=True)
def ta_home(tmp_path_factory, monkeypatch) -> Path:
    """A fresh, temporary TRADINGAGENTS_HOME for every test; the user's home is never touched."""
    home = tmp_path_factory.mktemp("ta_home")
    monkeypatch.setenv("TRADINGAGENTS_HOME", str(home))
    for key in list(os.environ):
        if key.startswith("TRADINGAGENTS_") and key != "TRADINGAGENTS_HOME":
            monkeypatch.delenv(key)
    for key in ("OPENAI_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    return home

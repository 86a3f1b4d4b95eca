"""The ownership table (tradingagents/ownership.py), enforced by the storage: a saved watchlist is its
owner's (or a desk lead's) to change or delete, and every change is in the audit trail (issue 41, point 7).
Files and a real PostgreSQL server."""

from __future__ import annotations

import pytest

from tests import pg_server as _pg
from tradingagents import storage
from tradingagents.config import resolve_config
from tradingagents.errors import NotAllowed
from tradingagents.ownership import RULES, allowed

pg_server, pg_url = _pg.pg_server, _pg.pg_url
ANN, BOB = "ann@desk.example · 0123456789", "bob@desk.example · 1111111111"


def test_the_table():
    assert allowed("stop_job", who=ANN, owner=ANN) and not allowed("stop_job", who=BOB, owner=ANN)
    assert allowed("stop_job", who=BOB, owner=ANN, lead=True)
    assert allowed("stop_job", who=BOB, owner=None)  # nobody's: anyone's
    assert not allowed("edit_memory", who=ANN) and allowed("edit_memory", who=ANN, lead=True)
    assert allowed("run_watchlist", who=BOB, owner=ANN)
    assert not allowed("read_audit", who=ANN, owner=ANN)
    assert set(RULES) >= {"stop_job", "resume_job", "continue_backtest", "adopt_run", "save_watchlist",
                          "delete_watchlist", "edit_memory", "read_audit"}


@pytest.fixture(params=["files", "desk"])
def cfg(request, ta_home):
    if request.param == "files":
        return resolve_config({})
    url = request.getfixturevalue("pg_url")
    return resolve_config({"storage_url": url})


def test_a_watchlist_is_its_owners_and_every_change_is_audited(cfg):
    storage.save_watchlist("morning", "NVDA, AAPL", cfg, owner=ANN, by="ann@desk.example")
    with pytest.raises(NotAllowed, match="saved by ann@desk.example"):
        storage.save_watchlist("morning", "TSLA", cfg, owner=BOB, by="bob@desk.example")
    with pytest.raises(NotAllowed):
        storage.delete_watchlist("morning", cfg, owner=BOB, by="bob@desk.example")
    assert storage.list_watchlists(cfg) == {"morning": ["NVDA", "AAPL"]}
    storage.save_watchlist("morning", "NVDA, AAPL, MSFT", cfg, owner=ANN, by="ann@desk.example")
    storage.save_watchlist("bobs", "TSLA", cfg, owner=BOB, by="bob@desk.example")  # a new name: anyone's to take
    storage.save_watchlist("morning", "NVDA", cfg, owner=BOB, lead=True, by="bob@desk.example")  # a lead may
    assert storage.open_watchlists(cfg).owners() == {"morning": ANN, "bobs": BOB}  # still Ann's
    assert storage.delete_watchlist("morning", cfg, owner=ANN, by="ann@desk.example")
    trail = [(e["by"], e["action"], e["target"]) for e in storage.read_audit(cfg)]
    assert trail == [("ann@desk.example", "watchlist_save", "morning"), ("ann@desk.example", "watchlist_save", "morning"),
                     ("bob@desk.example", "watchlist_save", "bobs"), ("bob@desk.example", "watchlist_save", "morning"),
                     ("ann@desk.example", "watchlist_delete", "morning")]

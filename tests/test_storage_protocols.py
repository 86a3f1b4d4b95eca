"""The declared seams: every backend the factories hand out offers its protocol's methods.

mypy (``make test``) checks the signatures statically (the factories are annotated with the protocols);
this checks what it cannot see: the objects a real config returns, on the embedded default (files)."""

from __future__ import annotations

import pytest

from tradingagents import storage
from tradingagents.config import DATA_VENDORS, resolve_config
from tradingagents.dataflows.interface import get_provider
from tradingagents.dataflows.provider import MarketData
from tradingagents.memory import FinancialSituationMemory, TradingMemoryLog
from tradingagents.storage.audit import FileAudit, PgAudit, open_audit
from tradingagents.storage.pg_memory_log import PgMemoryLog
from tradingagents.storage.pg_role_memory import PgRoleMemory
from tradingagents.storage.pg_watchlists import PgWatchlists
from tradingagents.storage.protocols import AuditTrail, MemoryLog, RoleMemory, RunRecords, Watchlists
from tradingagents.storage.runs import FileRunRecords, PgRunRecords
from tradingagents.storage.watchlists import FileWatchlists


def _methods(protocol: type) -> set[str]:
    return {name for name, value in vars(protocol).items() if callable(value) and not name.startswith("_")}


@pytest.mark.parametrize(("protocol", "backends"), [
    (MemoryLog, (TradingMemoryLog, PgMemoryLog)),
    (RoleMemory, (FinancialSituationMemory, PgRoleMemory)),
    (RunRecords, (FileRunRecords, PgRunRecords)),
    (Watchlists, (FileWatchlists, PgWatchlists)),
    (AuditTrail, (FileAudit, PgAudit)),
])
def test_both_backends_of_a_kind_offer_every_method_of_its_protocol(protocol, backends):
    methods = _methods(protocol)
    assert methods, protocol
    for backend in backends:
        missing = sorted(m for m in methods if not callable(getattr(backend, m, None)))
        assert not missing, f"{backend.__name__} lacks {missing} of {protocol.__name__}"


def test_the_factories_hand_out_objects_of_their_protocols(tmp_path):
    cfg = resolve_config({"home": str(tmp_path)})
    assert isinstance(storage.open_memory_log(cfg), MemoryLog)
    assert isinstance(storage.open_role_memory("bull_memory", cfg), RoleMemory)
    assert isinstance(storage.open_run_records(cfg), RunRecords)
    assert isinstance(storage.open_watchlists(cfg), Watchlists)
    assert isinstance(open_audit(cfg), AuditTrail)
    # a stand-in that lacks the log's methods is not taken for one
    assert not isinstance(object(), MemoryLog)


@pytest.mark.parametrize("vendor", [v for v in DATA_VENDORS])
def test_every_market_data_source_is_a_market_data(tmp_path, vendor):
    provider = get_provider({"home": str(tmp_path), "data_vendor": vendor})
    assert isinstance(provider, MarketData)
    assert provider.vendor == vendor

"""Hostile surroundings: credentials in URLs, damaged checkpoints, odd input, bad homes, full disks."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAIServer
from tests.graph_helpers import fail_once_at
from tradingagents import cli
from tradingagents.default_config import public_config, redact_url
from tradingagents.graph.trading_graph import TradingAgentsGraph

DATE = "2024-05-10"
PASSWORD = "hunter2-" + "Xq" * 10


def _files_containing(root: Path, secret: bytes) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and secret in p.read_bytes()]


# ------------------------------------------------------------------ 12.4 secrets in URLs
def test_redact_url_masks_userinfo_and_secret_query_values():
    assert redact_url("http://user:pw@host:8000/v1") == "http://***@host:8000/v1"
    assert redact_url("https://h/v1?api_key=s3&api-version=2024") == "https://h/v1?api_key=***&api-version=2024"
    assert redact_url("postgresql://app:pw@db:5432/ta") == "postgresql://***@db:5432/ta"
    assert redact_url("no url here") == "no url here"
    cfg = public_config({"backend_url": "http://u:pw@h/v1", "storage_url": "postgresql://u:pw@db/x",
                         "nested": {"url": "http://u:pw@h", "api_key": "sk"}, "openai_api_key": "sk"})
    assert "pw" not in json.dumps(cfg) and "sk" not in json.dumps(cfg)
    assert cfg["backend_url"] == "http://***@h/v1"


def test_credentials_in_the_backend_url_reach_no_file_event_log_or_output(ta_home, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    events = []
    with FakeOpenAIServer() as server:
        url = server.base_url.replace("http://", f"http://admin:{PASSWORD}@")
        cfg = server.llm_config(backend_url=url)
        graph = TradingAgentsGraph(["market"], config=cfg)
        graph.propagate("NVDA", "2024-05-01", on_event=events.append)
        # a failed run keeps its checkpoint (the database is scanned too)
        failing = TradingAgentsGraph(["market"], config=cfg, callbacks=[fail_once_at("Trader")])
        with pytest.raises(RuntimeError):
            failing.propagate("NVDA", "2024-05-20", on_event=events.append)
        assert failing.has_resumable_run("NVDA", "2024-05-20")
        # and the CLI, with the URL as a flag
        code = cli.main(["NVDA", DATE, "--analysts", "market", "--provider", "openai_compatible",
                         "--backend-url", url, "--quick-model", "fake-quick", "--deep-model", "fake-deep"])
        assert code == 0
    out = capsys.readouterr()
    saved = json.loads((ta_home / "results" / "NVDA" / "2024-05-01" / "state.json").read_text())
    assert saved["meta"]["config"]["backend_url"].startswith("http://***@127.0.0.1:")
    files = [p for p in ta_home.rglob("*") if p.is_file()]
    assert any(p.name == "state.json" for p in files) and any(".sqlite" in p.name for p in files)
    assert _files_containing(ta_home, PASSWORD.encode()) == []
    assert PASSWORD not in json.dumps([e.data for e in events], default=str)
    assert PASSWORD not in caplog.text
    assert PASSWORD not in out.out + out.err

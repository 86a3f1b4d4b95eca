"""The app-run offers (Resume after a server restart) behind the storage interface: files and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import pg_server as _pg
from tradingagents import storage
from tradingagents.config import resolve_config
from tradingagents.validation import ValidationError

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures
TID = "a" * 64


def _doc(tid: str = TID, ticker: str = "NVDA", **config) -> dict:
    return {"thread_id": tid, "ticker": ticker, "date": "2024-05-10", "analysts": ["market"],
            "config": {"llm_provider": "openai_compatible", "backend_url": "http://bob:pw-123456@10.0.0.1/v1",
                       "openai_api_key": "sk-never-kept-123456", "max_debate_rounds": 2, **config}}


def _roundtrip(config: dict) -> None:
    assert storage.load_app_runs(config) == {} and storage.app_run(config, TID) is None
    storage.save_app_run(config, _doc())
    storage.save_app_run(config, _doc("b" * 64, ticker="AAPL"))
    kept = storage.app_run(config, TID)
    assert kept["ticker"] == "NVDA" and kept["analysts"] == ["market"] and kept["config"]["max_debate_rounds"] == 2
    # only public settings are kept: no key, no credentials of a URL
    assert "openai_api_key" not in kept["config"] and kept["config"]["backend_url"] == "http://***@10.0.0.1/v1"
    assert "pw-123456" not in json.dumps(kept) and "sk-never-kept" not in json.dumps(kept)
    assert set(storage.load_app_runs(config)) == {TID, "b" * 64}
    storage.save_app_run(config, _doc(ticker="MSFT"))  # a thread's document is replaced, not duplicated
    assert storage.app_run(config, TID)["ticker"] == "MSFT" and len(storage.load_app_runs(config)) == 2
    storage.delete_app_run(config, TID)
    storage.delete_app_run(config, TID)  # forgetting twice is fine
    assert storage.app_run(config, TID) is None and set(storage.load_app_runs(config)) == {"b" * 64}
    for bad in ("../x", "", ".hidden", "a/b"):
        with pytest.raises(ValidationError, match="thread id"):
            storage.save_app_run(config, _doc(bad))
        with pytest.raises(ValidationError):
            storage.app_run(config, bad)


def test_files_keep_one_document_per_thread_under_app_runs_dir(ta_home):
    _roundtrip({})
    folder = Path(resolve_config()["app_runs_dir"])
    assert folder == ta_home / "checkpoints" / "app_runs"  # derived from checkpoint_dir
    assert sorted(p.name for p in folder.iterdir()) == [f"{'b' * 64}.json"]  # no temp file left behind


def test_app_runs_dir_follows_checkpoint_dir_unless_set(ta_home, tmp_path):
    assert resolve_config({"checkpoint_dir": str(tmp_path / "cp")})["app_runs_dir"] == str(tmp_path / "cp" / "app_runs")
    cfg = {"app_runs_dir": str(tmp_path / "offers")}
    storage.save_app_run(cfg, _doc())
    assert (tmp_path / "offers" / f"{TID}.json").is_file()
    assert not (ta_home / "checkpoints" / "app_runs").exists()


def test_a_damaged_file_is_left_out_not_raised(ta_home):
    storage.save_app_run({}, _doc())
    folder = Path(resolve_config()["app_runs_dir"])
    (folder / f"{'c' * 64}.json").write_text("{not json", encoding="utf-8")
    (folder / f"{'d' * 64}.json").write_text('["no config"]', encoding="utf-8")
    assert set(storage.load_app_runs({})) == {TID}
    assert storage.app_run({}, "c" * 64) is None and storage.app_run({}, "d" * 64) is None


def test_the_desk_database_keeps_them_for_every_machine(ta_home, pg_url, tmp_path):
    cfg = {"storage_url": pg_url}
    _roundtrip(cfg)
    other = {"storage_url": pg_url, "home": str(tmp_path / "other-machine")}  # another home, the same desk
    assert set(storage.load_app_runs(other)) == {"b" * 64}
    assert not (ta_home / "checkpoints" / "app_runs").exists()  # nothing went to files

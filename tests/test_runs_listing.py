"""The saved runs' listing reads each state.json once per version of the file (``files_runs._ROWS``)."""

from __future__ import annotations

import shutil

import pytest

from tradingagents.storage import files_runs, list_runs, save_run, update_run_meta


def _state(ticker: str, date: str = "2024-05-10") -> dict:
    return {"company_of_interest": ticker, "trade_date": date, "final_trade_decision": f"**Rating**: Buy\n{ticker}"}


@pytest.fixture
def reads(monkeypatch):
    """The state files the listing reads, in order (a fresh table of rows first)."""
    files_runs._ROWS.clear()
    seen: list[str] = []
    real = files_runs.load_document

    def counted(path):
        seen.append(f"{path.parent.parent.name}/{path.parent.name}" if path.parent.parent.name != "previous"
                    else f"{path.parents[3].name}/{path.parents[2].name}@{path.parent.name}")
        return real(path)

    monkeypatch.setattr(files_runs, "load_document", counted)
    yield seen
    files_runs._ROWS.clear()


def _fresh(config, **kw) -> list[dict]:
    """What a listing that has kept nothing gives."""
    kept = dict(files_runs._ROWS._kept)
    files_runs._ROWS.clear()
    try:
        return list_runs(config, **kw)
    finally:
        files_runs._ROWS._kept.update(kept)


def test_a_listing_reads_only_the_runs_it_has_not_seen_in_that_version(tmp_path, reads):
    config = {"home": str(tmp_path)}
    for ticker in ("NVDA", "AAPL", "MSFT"):
        save_run(config, _state(ticker), "Buy", {"llm_provider": "offline"})
    first = list_runs(config)
    assert sorted(reads) == ["AAPL/2024-05-10", "MSFT/2024-05-10", "NVDA/2024-05-10"]
    reads.clear()
    again = list_runs(config)
    assert reads == [] and again == first == _fresh(config)

    save_run(config, _state("JPM"), "Sell", {"llm_provider": "offline"})  # a new run: only it is read
    save_run(config, _state("NVDA"), "Hold", {"llm_provider": "openai"})  # a re-analysis: a new file
    reads.clear()
    rows = list_runs(config, include_previous=True)
    assert sorted(reads) == ["JPM/2024-05-10", "NVDA/2024-05-10", "NVDA/2024-05-10@1"]  # the earlier one: new
    assert rows == _fresh(config, include_previous=True)
    assert {(r["ticker"], r["version"]): r["rating"] for r in rows} == {
        ("NVDA", None): "Hold", ("NVDA", 1): "Buy", ("AAPL", None): "Buy", ("MSFT", None): "Buy", ("JPM", None): "Sell"}

    update_run_meta(config, "AAPL", "2024-05-10", {"by": "ann@desk.example"})  # the file rewritten in place
    shutil.rmtree(tmp_path / "results" / "MSFT")  # a deleted run
    reads.clear()
    rows = list_runs(config)
    assert reads == ["AAPL/2024-05-10"]
    assert {r["ticker"]: r["by"] for r in rows}["AAPL"] == "ann@desk.example"
    assert sorted(r["ticker"] for r in rows) == ["AAPL", "JPM", "NVDA"] and rows == _fresh(config)


def test_a_row_handed_out_is_a_copy(tmp_path, reads):
    config = {"home": str(tmp_path)}
    save_run(config, _state("NVDA"), "Buy", {"llm_provider": "offline"})
    [row] = list_runs(config)
    row["rating"], row["ticker"] = "Sell", "XXX"
    assert [(r["ticker"], r["rating"]) for r in list_runs(config)] == [("NVDA", "Buy")]


def test_a_file_that_is_not_a_run_is_read_again_only_once_it_changes(tmp_path, reads):
    config = {"home": str(tmp_path)}
    save_run(config, _state("NVDA"), "Buy", {"llm_provider": "offline"})
    broken = tmp_path / "results" / "AAPL" / "2024-05-10" / "state.json"
    broken.parent.mkdir(parents=True)
    broken.write_text('{"ticker": "AAPL", "rating": ', encoding="utf-8")  # cut short
    hidden = tmp_path / "results" / ".trash" / "2024-05-10" / "state.json"  # glob's "*" skips hidden folders
    hidden.parent.mkdir(parents=True)
    hidden.write_text('{"ticker": "OLD", "date": "2024-05-10", "rating": "Buy"}', encoding="utf-8")
    assert [r["ticker"] for r in list_runs(config)] == ["NVDA"]
    reads.clear()
    assert [r["ticker"] for r in list_runs(config)] == ["NVDA"] and reads == []
    broken.write_text('{"ticker": "AAPL", "date": "2024-05-10", "rating": "Sell", "saved_at": "2099-01-01"}',
                      encoding="utf-8")
    assert [r["ticker"] for r in list_runs(config)] == ["AAPL", "NVDA"] and reads == ["AAPL/2024-05-10"]


def test_a_hand_edited_file_the_fast_parser_refuses_reads_as_it_always_did(tmp_path):
    path = tmp_path / "state.json"
    path.write_text('{"rating": "Buy", "meta": {"ratio": NaN, "big": 123456789012345678901234567890}}',
                    encoding="utf-8")
    doc = files_runs.load_document(path)
    assert doc["rating"] == "Buy" and doc["meta"]["big"] == 123456789012345678901234567890
    assert doc["meta"]["ratio"] != doc["meta"]["ratio"]  # NaN
    path.write_text('{"rating": ', encoding="utf-8")
    with pytest.raises(ValueError):
        files_runs.load_document(path)


def test_the_lessons_track_record_reads_each_run_once_per_version(tmp_path, reads):
    from tradingagents.storage import list_memory_used

    config = {"home": str(tmp_path)}
    used = {"past_decisions": [], "lessons": {"bull_memory": [{"id": "l1", "score": 1.0}]}}
    for ticker in ("NVDA", "BRK-B", "BRK"):  # listed in the order of their files' paths, as before
        save_run(config, _state(ticker), "Buy", {"llm_provider": "offline", "memory_used": used})
    save_run(config, _state("AAPL"), "Buy", {"llm_provider": "offline"})  # records none: not listed
    first = list_memory_used(config)
    assert [r["ticker"] for r in first] == ["BRK-B", "BRK", "NVDA"] and first[0]["memory_used"] == used
    assert len(reads) == 4
    reads.clear()
    assert list_memory_used(config) == first and reads == []
    update_run_meta(config, "AAPL", "2024-05-10", {"memory_used": used})
    reads.clear()
    assert [r["ticker"] for r in list_memory_used(config)] == ["AAPL", "BRK-B", "BRK", "NVDA"]
    assert reads == ["AAPL/2024-05-10"]


def test_a_new_runs_eta_is_the_median_of_the_same_shape_of_run_read_from_the_listing(tmp_path, reads):
    from studio.runs import expected_duration
    from tradingagents.config import resolve_config

    config = resolve_config({"home": str(tmp_path), "llm_provider": "offline", "data_vendor": "demo",
                             "selected_analysts": ["market", "news"], "max_debate_rounds": 1})
    shape = {"llm_provider": "offline", "data_vendor": "demo", "analysts": ["news", "market"], "max_debate_rounds": 1}
    for i, (ticker, elapsed) in enumerate([("NVDA", 10.0), ("AAPL", 30.0), ("MSFT", 20.0)]):
        save_run(config, _state(ticker, f"2024-05-1{i}"), "Buy", {**shape, "elapsed_s": elapsed})
    save_run(config, _state("JPM"), "Buy", {**shape, "max_debate_rounds": 3, "elapsed_s": 99.0})  # other rounds
    save_run(config, _state("XOM"), "Buy", {**shape, "analysts": ["market"], "elapsed_s": 99.0})  # other analysts
    save_run(config, _state("KO"), "Buy", {**shape, "elapsed_s": None})  # no time recorded
    assert expected_duration(config) == 20.0
    reads.clear()
    assert expected_duration(config) == 20.0 and reads == []  # a job's start opens no run's document
    assert expected_duration({**config, "llm_provider": "openai"}) is None

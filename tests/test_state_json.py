"""A saved run's state.json: indented JSON written in C (``document_json``), read back as what was saved."""

from __future__ import annotations

import json

from tradingagents.storage import load_run, save_run
from tradingagents.storage.files_runs import STATE_FILE, document_json, run_dir


def _config(tmp_path):
    return {"home": str(tmp_path)}


def _state(text: str = "plain") -> dict:
    return {"company_of_interest": "NVDA", "trade_date": "2024-05-10", "final_trade_decision": text,
            "market_report": "Close 188.90; RSI 61.2; 中文 «quotes» \"escaped\" \\ back\tslash\nnext line \x01"}


def test_the_saved_file_is_the_standard_librarys_indented_text(tmp_path):
    meta = {"usage": {"prompt_tokens": 12_345, "cost_usd": 0.0107, "by_node": {"Trader": [1, 2.5, None, True]}},
            "warnings": [], "evidence": {}, "nested": [[{"a": {}}]]}
    folder = save_run(_config(tmp_path), _state(), "Buy", meta)
    text = (folder / STATE_FILE).read_text(encoding="utf-8")
    doc = json.loads(text)
    assert text == json.dumps(doc, ensure_ascii=False, indent=2)
    assert doc["meta"]["usage"] == meta["usage"] and doc["state"]["market_report"] == _state()["market_report"]


def test_a_non_finite_number_in_the_meta_is_saved_as_null_and_the_run_is_not_lost(tmp_path):
    # the state's own non-finite numbers were null already (to_jsonable); one in the meta failed the save
    meta = {"order": {"weight_after": float("nan"), "notional": float("inf")}, "usage": {"cost_usd": -float("inf")}}
    save_run(_config(tmp_path), _state(), "Hold", meta)
    run = load_run(_config(tmp_path), "NVDA", "2024-05-10")
    assert run["meta"]["order"] == {"weight_after": None, "notional": None}
    assert run["meta"]["usage"] == {"cost_usd": None}
    assert run["rating"] == "Hold"


def test_what_the_fast_writer_refuses_is_written_the_standard_way(tmp_path):
    huge = 2**70  # beyond 64 bits: orjson refuses it
    assert json.loads(document_json({"n": huge, 3: "int key", "f": [0.1, 1e-05, 1e22]})) == {
        "n": huge, "3": "int key", "f": [0.1, 1e-05, 1e22]}
    save_run(_config(tmp_path), _state(), "Sell", {"count": huge, "ratio": float("nan")})
    path = run_dir(_config(tmp_path), "NVDA", "2024-05-10") / STATE_FILE
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["meta"]["count"] == huge and doc["meta"]["ratio"] is None and doc["rating"] == "Sell"

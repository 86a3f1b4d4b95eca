"""Settlement with the user's own CSV prices: an entry that cannot be priced stays pending."""

from __future__ import annotations

from pathlib import Path

from tests.test_data_csv_returns import write_csv
from tradingagents.config import resolve_config
from tradingagents.graph.trading_graph import TradingAgentsGraph


def _rows(start_close: float, days: int):
    import pandas as pd

    dates = pd.bdate_range("2024-05-01", periods=days)
    out = []
    for i, d in enumerate(dates):
        c = start_close * (1 + 0.01 * i)
        out.append((d.date().isoformat(), c, c * 1.01, c * 0.99, c, 1000 + i))
    return out


def test_missing_benchmark_file_leaves_entry_pending_and_others_settle(ta_home):
    cfg = resolve_config({"data_vendor": "csv", "checkpoint_enabled": False})
    folder = Path(cfg["csv_data_dir"])
    folder.mkdir(parents=True, exist_ok=True)
    write_csv(folder, "ACME", _rows(10.0, 20))
    write_csv(folder, "ACME.L", _rows(5.0, 20))  # benchmark ^FTSE has no file
    write_csv(folder, "SPY", _rows(400.0, 20))
    graph = TradingAgentsGraph(["market"], config=cfg)
    graph.propagate("ACME", "2024-05-02")  # logs the decision as pending (settlement needs no run of its own)
    graph.propagate("ACME.L", "2024-05-02")

    settled = graph.settle_pending()

    assert [(s["ticker"], s["date"]) for s in settled] == [("ACME", "2024-05-02")]
    assert settled[0]["raw"] > 0 and settled[0]["benchmark"] == "SPY"
    pending = graph.memory_log.get_pending_entries()
    assert [(e["ticker"], e["date"]) for e in pending] == [("ACME.L", "2024-05-02")]
    assert len(graph.settle_problems) == 1 and "ACME.L" in graph.settle_problems[0]
    assert "FTSE" in graph.settle_problems[0]

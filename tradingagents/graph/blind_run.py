"""A blind analysis (``run --blind``, ``batch --blind``, the backtest's blind steps): the team works on
the alias and the shifted calendar of a ``dataflows.blind.BlindMap``, in a desk of its own, and what is
shown and stored is mapped back to the real ticker and dates.

The map itself lives with the data it disguises (``dataflows/blind.py``, between the providers and the
tools); running the graph through it, and copying its files back, is graph-level work, so it is here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tradingagents.config import resolve_config
from tradingagents.dataflows.blind import BlindMap
from tradingagents.dataflows.interface import get_provider
from tradingagents.fileio import atomic_write
from tradingagents.graph.trading_graph import TradingAgentsGraph


def blind_config(settings: Mapping[str, Any], blind: BlindMap, root: str | Path) -> dict[str, Any]:
    """``settings`` seen through ``blind``, in a desk of their own under ``root`` (results, log,
    lessons and checkpoints in blind terms: a blind run never reads the real desk's memory)."""
    root = Path(root)
    return {**dict(settings), "blind": blind.to_dict(), "storage_url": None,
            "results_dir": str(root / "results"), "memory_dir": str(root / "memory"),
            "memory_log_path": str(root / "memory" / "trading_memory.md"),
            "checkpoint_dir": str(root / "checkpoints")}


def unblind_files(src: str | Path, dst: str | Path, blind: BlindMap, *, provider: Any = None,
                  ticker: str | None = None) -> None:
    """Copy the text files under ``src`` to ``dst`` with the map undone (real ticker and dates); with the
    blind run's ``provider`` (a ``BlindProvider``) and its real ``ticker``, the prices and money amounts
    quoted in the text go back to the real scale too (``BlindProvider.real_prices_text``)."""
    prices = getattr(provider, "real_prices_text", None) if ticker else None
    src, dst = Path(src), Path(dst)
    if not src.exists():
        return
    files = [src] if src.is_file() else [p for p in src.rglob("*") if p.is_file()]
    for path in files:
        if path.suffix not in (".md", ".json", ".txt", ".csv", ".jsonl"):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if prices is not None:
            text = prices(text, ticker)
        atomic_write(dst if src.is_file() else dst / path.relative_to(src), blind.unblind_text(text))


def run_blind(settings: Mapping[str, Any], ticker: str, date: str, *, asset_type: str = "stock",
              on_event=None, should_stop=None, api_key: str | None = None, debug: bool = False,
              watchlist: Iterable[str] | None = None) -> dict[str, Any]:
    """One blind analysis of ``ticker`` on ``date``: the models see the alias and the shifted date;
    the events shown and the run stored (``<home>/blind/real_results/<TICKER>/<date>/``, and the
    blind desk's log mapped back to ``<home>/blind/real_memory/``) are in real names and dates.
    ``watchlist`` (a batch's tickers) are all mapped, so none of them is named in another's texts.
    Returns ``{rating, results_path, alias, blind_date, record}``."""
    cfg = resolve_config(settings)
    names = [ticker.upper(), *(t.upper() for t in (watchlist or ()) if t.upper() != ticker.upper())]
    blind = BlindMap.make(names, date, get_provider(cfg))
    root = Path(cfg["home"]) / "blind"
    bcfg = resolve_config(blind_config(cfg, blind, root / "desk"))

    def shown(event: Any) -> None:
        if on_event is not None:
            on_event(blind.unblind_value(event) if isinstance(event, Mapping | str) else event)

    graph = TradingAgentsGraph(bcfg.get("selected_analysts"), debug=debug, config=bcfg, api_key=api_key)
    alias, bdate = blind.alias(ticker), blind.blind_date(date)
    _state, rating = graph.propagate(alias, bdate, asset_type, on_event=shown, should_stop=should_stop)
    record = blind.unblind_value(dict(graph.last_run.get("record") or {}))
    real = root / "real_results" / ticker.upper() / date
    unblind_files(graph.last_run.get("results_path") or "", real, blind, provider=get_provider(bcfg),
                  ticker=ticker.upper())
    unblind_files(bcfg["memory_dir"], root / "real_memory", blind)
    return {"rating": rating, "results_path": str(real), "alias": alias, "blind_date": bdate, "record": record}

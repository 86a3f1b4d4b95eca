"""A blind analysis (``run --blind``, ``batch --blind``, the backtest's blind steps): the team works on
the alias and the shifted calendar of a ``dataflows.blind.BlindMap``, in a desk of its own, and what is
shown and stored is mapped back to the real ticker and dates.

The map itself lives with the data it disguises (``dataflows/blind.py``, between the providers and the
tools); running the graph through it, and copying its files back, is graph-level work, so it is here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

from tradingagents import pricing, storage
from tradingagents.config import resolve_config
from tradingagents.dataflows.blind import BlindMap, BlindProvider
from tradingagents.dataflows.interface import get_provider
from tradingagents.fileio import atomic_write
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.memory.log_format import SEPARATOR
from tradingagents.storage.files_runs import REPORT_FILE, STATE_FILE

CARD_PRICES = ("entry_price", "price_target", "stop_loss")
"""The decision card's prices (``graph/decision_card``): numbers, so no text mapping reaches them."""


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
    blind run's ``provider`` (a ``BlindProvider``), the prices and money amounts quoted in the text go
    back to the real scale too (``BlindProvider.real_prices_text``): with the factors of ``ticker``, or
    without one (a desk's memory: several tickers), piece by piece with the factors of the one ticker
    each piece names (a log entry by its tag, a role memory by its line; a piece naming none or
    several keeps its numbers rather than take another ticker's factors). A log's parsed-entries
    cache is not copied (it is rebuilt from the log)."""
    prices = getattr(provider, "real_prices_text", None)
    src, dst = Path(src), Path(dst)
    if not src.exists():
        return
    files = [src] if src.is_file() else [p for p in src.rglob("*") if p.is_file()]
    for path in files:
        if path.suffix not in (".md", ".json", ".txt", ".csv", ".jsonl") or path.name.endswith("-entries.json"):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if prices is not None and ticker:
            text = prices(text, ticker)
        elif prices is not None:
            text = _real_prices_by_piece(text, blind, prices, SEPARATOR if path.suffix == ".md" else "\n")
        atomic_write(dst if src.is_file() else dst / path.relative_to(src), blind.unblind_text(text))


def _real_prices_by_piece(text: str, blind: BlindMap, prices: Any, sep: str) -> str:
    """``text`` split on ``sep``, each piece's prices on the real scale of the one ticker it names."""
    out = []
    for piece in text.split(sep):
        named = [real for alias, real in blind.real.items()
                 if re.search(r"(?<![A-Za-z0-9])" + re.escape(alias) + r"(?![A-Za-z0-9])", piece)]
        out.append(prices(piece, named[0]) if len(named) == 1 else piece)
    return sep.join(out)


def real_results_dir(settings: Mapping[str, Any]) -> Path:
    """Where blind runs are stored in real names and dates: ``<home>/blind/real_results`` (a results_dir)."""
    return Path(settings["home"]) / "blind" / "real_results"


class BlindAnalysis:
    """A graph-like object whose ``propagate(ticker, date, …)`` is one blind analysis (what the job
    registry's run path and ``run_blind`` call): the models see the alias and the shifted date; every
    event passed to ``on_event`` has its data mapped back (a terminal event only once the run's files
    are copied back, its record naming the real folder), and the state returned is mapped back.
    ``watchlist`` (a batch's tickers) are all mapped, so none of them is named in another's texts."""

    def __init__(self, settings: Mapping[str, Any], *, selected_analysts: Iterable[str] | None = None,
                 api_key: str | None = None, debug: bool = False, watchlist: Iterable[str] | None = None) -> None:
        self.config = resolve_config(settings)
        self.selected_analysts = list(selected_analysts) if selected_analysts is not None else None
        self.api_key, self.debug = api_key, debug
        self.watchlist = [t.upper() for t in (watchlist or ())]
        self.last_run: dict[str, Any] = {}
        self.blind: BlindMap | None = None

    def propagate(self, ticker: str, date: str, asset_type: str = "stock", *, on_event=None,
                  should_stop=None, fresh: bool = False) -> tuple[dict[str, Any], str | None]:
        from dataclasses import replace

        from tradingagents.graph.events import TERMINAL_KINDS

        cfg = self.config
        ticker = ticker.upper()
        names = [ticker, *(t for t in self.watchlist if t != ticker)]
        blind = self.blind = BlindMap.make(names, date, get_provider(cfg))
        root = Path(cfg["home"]) / "blind"
        bcfg = resolve_config(blind_config(cfg, blind, root / "desk"))
        held: list[Any] = []
        # a blind config's provider is the BlindProvider (dataflows/blind.py: get_provider wraps the real one)
        provider = cast(BlindProvider, get_provider(bcfg))
        prices = provider.real_prices_text

        def back(value: Any) -> Any:
            """Names, dates and quoted prices mapped back (what is shown or returned)."""
            if isinstance(value, str):
                return blind.unblind_text(prices(value, ticker))
            if isinstance(value, Mapping):
                return {k: back(v) for k, v in value.items()}
            if isinstance(value, list):
                return [back(v) for v in value]
            return value

        def mapped(event: Any) -> Any:
            if isinstance(event, Mapping | str):
                return back(event)
            if hasattr(event, "data") and isinstance(event.data, Mapping):
                return replace(event, data=back(dict(event.data)))
            return event

        def shown(event: Any) -> None:
            if getattr(event, "kind", None) in TERMINAL_KINDS:
                held.append(event)  # told once the files are back, with the real folder
            elif on_event is not None:
                on_event(mapped(event))

        analysts = self.selected_analysts if self.selected_analysts is not None else bcfg.get("selected_analysts")
        graph = TradingAgentsGraph(analysts, debug=self.debug, config=bcfg, api_key=self.api_key)
        alias, bdate = blind.alias(ticker), blind.blind_date(date)
        saved: dict[str, Any] | None = None
        try:
            state, rating = graph.propagate(alias, bdate, asset_type, on_event=shown, should_stop=should_stop,
                                            fresh=fresh)
            saved = self._save_real(graph, back(dict(state)), rating, ticker, date, alias, bdate, back,
                                    provider, blind)
        finally:
            unblind_files(bcfg["memory_dir"], root / "real_memory", blind, provider=provider)
            self.last_run = blind.unblind_value(dict(graph.last_run))
            self.last_run.update({"alias": alias, "blind_date": bdate})
            if saved is not None:
                self.last_run.update(results_path=saved["results_path"], record=saved)
            for event in held:
                out = mapped(event)
                if saved is not None and getattr(out, "kind", None) == "run_finished":
                    out = replace(out, data={**dict(out.data), "record": saved})
                if on_event is not None:
                    on_event(out)
        return back(dict(state)), rating

    def _save_real(self, graph: TradingAgentsGraph, state: dict[str, Any], rating: str | None, ticker: str,
                   date: str, alias: str, bdate: str, back: Any, provider: Any, blind: BlindMap) -> dict[str, Any]:
        """The finished blind run in real names, dates and prices, saved where every run is (the real
        desk's results or its database: History lists it, ``show`` and the Run page open it) and its
        decision in the real memory log, both marked blind (``meta.blind``: the alias and the date the
        models saw). Returns its record (results_path, report_path, state_path, meta)."""
        cfg = self.config
        meta = back(dict((graph.last_run.get("record") or {}).get("meta") or {}))  # names, dates, quoted prices
        card = meta.get("decision")
        if isinstance(card, Mapping):
            try:
                real_per_blind = 1.0 / provider.price_factor(ticker)
            except Exception:  # noqa: BLE001 - no prices to rebase by: the card's prices are dropped
                real_per_blind = None
            meta["decision"] = {k: (None if real_per_blind is None else round(float(v) * real_per_blind, 2))
                                if k in CARD_PRICES and isinstance(v, int | float) else v for k, v in card.items()}
        session = str(meta.get("date") or date)
        meta.update(ticker=ticker, date=session, blind={"alias": alias, "date": blind.blind_date(session)},
                    log_note=None, version_note=None)
        log = storage.open_memory_log(cfg)
        settled = any(e["ticker"] == ticker and e["date"] == session and not e["pending"]
                      for e in log.load_entries())
        if settled:
            meta["log_note"] = (f"the memory log keeps the settled decision of {session}; this blind {rating} run "
                                "is saved as the session's current run and is not logged")
        folder = storage.save_run(cfg, state, rating, meta)
        if not settled:
            provenance = {"data_vendor": cfg.get("data_vendor"), "llm_provider": cfg.get("llm_provider"),
                          "by": storage.default_user(cfg), "blind": True}
            models = pricing.models_used(cfg)  # none for the offline engine: no model ran
            if models:
                provenance["models"] = models
            decision = str(state.get("final_trade_decision") or "")
            update = getattr(log, "update_pending", None)
            if callable(update):
                update(ticker, session, decision, rating=rating, provenance=provenance)
            else:
                log.store_decision(ticker, session, decision, rating=rating)
        on_disk = isinstance(folder, Path)
        return {"results_path": str(folder), "report_path": str(folder / REPORT_FILE) if on_disk else None,
                "state_path": str(folder / STATE_FILE) if on_disk else None, "meta": meta}


def run_blind(settings: Mapping[str, Any], ticker: str, date: str, *, asset_type: str = "stock",
              on_event=None, should_stop=None, api_key: str | None = None, debug: bool = False,
              watchlist: Iterable[str] | None = None, fresh: bool = False) -> dict[str, Any]:
    """One blind analysis of ``ticker`` on ``date`` (``BlindAnalysis``): the models see the alias and the
    shifted date; the events shown and the run stored (``<home>/blind/real_results/<TICKER>/<date>/``,
    and the blind desk's log mapped back to ``<home>/blind/real_memory/``) are in real names and dates.
    Returns ``{rating, results_path, alias, blind_date, record}``."""
    analysis = BlindAnalysis(settings, api_key=api_key, debug=debug, watchlist=watchlist)
    _state, rating = analysis.propagate(ticker, date, asset_type, on_event=on_event, should_stop=should_stop,
                                        fresh=fresh)
    run = analysis.last_run
    return {"rating": rating, "results_path": run.get("results_path"), "alias": run["alias"],
            "blind_date": run["blind_date"], "record": dict(run.get("record") or {})}

"""The factory that picks a market-data provider from a config (``get_provider``).

The contract every provider implements (``MarketDataProvider``, the sentinels, the shared checks,
the errors) lives in ``provider.py``; its names are re-exported here for existing callers.
Every provider is point-in-time: it never returns a row, a statement period, a news item or a post
dated after the ``end``/``as_of`` it is asked for, nor after today.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from tradingagents.config import resolve_config
from tradingagents.dataflows.provider import (  # noqa: F401  (re-exported: the contract's names)
    DATA_UNAVAILABLE,
    NO_DATA,
    OHLCV_COLUMNS,
    STATEMENT_FREQS,
    STATEMENT_KINDS,
    VENDOR_ALIASES,
    VENDORS,
    DataNotFound,
    DataUnavailable,
    MarketData,
    MarketDataProvider,
    ProviderUnavailable,
    check_date,
    check_days,
    check_range,
    check_statement_args,
    check_ticker,
    check_vendor,
    clamp_end,
    clip_frame,
    empty_ohlcv,
    today,
)
from tradingagents.i18n import language_of_output

_CACHE: dict[tuple, MarketData] = {}
_CACHE_LOCK = threading.Lock()


def _provider_key(cfg: Mapping[str, Any]) -> tuple:
    """What tells two providers apart; ``cfg`` is resolved (its keys were checked by the config)."""
    vendor = cfg["data_vendor"]
    if vendor == "csv":
        return (vendor, cfg["csv_data_dir"])
    if vendor == "yfinance":
        return (vendor, cfg["data_cache_dir"], cfg["data_retry_backoff"])
    if vendor == "demo":  # the demo market writes its headlines and posts in the run's output language
        return (vendor, language_of_output(cfg.get("output_language")))
    return (vendor,)


def get_provider(config: Mapping[str, Any] | None = None) -> MarketData:
    """The provider chosen by ``config["data_vendor"]`` (demo, yfinance, csv); partial config OK.

    Instances are cached per (vendor, relevant paths; the demo market: the output language its headlines
    are written in), so repeated calls are cheap; a provider holds no per-run state.
    """
    cfg = resolve_config(config)
    key = _provider_key(cfg)
    vendor = key[0]
    blind = cfg.get("blind")
    if blind:  # a blind run: the models see aliases, shifted dates and rebased prices (dataflows/blind.py)
        import json

        from tradingagents.dataflows.blind import BlindMap, BlindProvider
        from tradingagents.dataflows.worlds import plain

        blind = plain(blind)
        bkey = (*key, "blind", json.dumps(blind, sort_keys=True), json.dumps(plain(cfg.get("synthetic_world"))))
        with _CACHE_LOCK:
            prov = _CACHE.get(bkey)
        if prov is None:
            prov = BlindProvider(get_provider({**dict(cfg), "blind": None}), BlindMap.from_dict(blind))
            with _CACHE_LOCK:
                prov = _CACHE.setdefault(bkey, prov)
        return prov
    world = cfg.get("synthetic_world")
    if world:  # a backtest's no-edge control world: the source's prices replaced by random walks
        import json

        from tradingagents.dataflows.worlds import WorldProvider, plain

        world = plain(world)
        wkey = (*key, "world", json.dumps(world, sort_keys=True))
        with _CACHE_LOCK:
            prov = _CACHE.get(wkey)
        if prov is None:
            prov = WorldProvider(get_provider({**dict(cfg), "synthetic_world": None}), world)
            with _CACHE_LOCK:
                prov = _CACHE.setdefault(wkey, prov)
        return prov
    with _CACHE_LOCK:
        prov = _CACHE.get(key)
        if prov is not None:
            return prov
        if vendor == "demo":
            from tradingagents.dataflows.demo import DemoProvider

            prov = DemoProvider(key[1])
        elif vendor == "csv":
            from tradingagents.dataflows.csv_provider import CSVProvider

            prov = CSVProvider(cfg["csv_data_dir"])
        else:
            from tradingagents.dataflows.yfinance_provider import YFinanceProvider

            prov = YFinanceProvider(cfg["data_cache_dir"], backoff=key[2])
        _CACHE[key] = prov
        return prov


def check_instrument(config: Mapping[str, Any] | None, ticker: str) -> bool:
    """Before any model call: whether ``ticker`` is an instrument the data source knows.

    On the demo market a ticker its table does not list is refused (``UnknownInstrumentError``,
    exit 2, naming the closest known tickers: "did you mean NVDA?") unless ``allow_synthetic`` is
    set; then it is analysed as an invented instrument and this returns True (the run labels it so
    everywhere). Index tickers (``^…``) and the benchmarks of the suffix map count as known. Other
    sources refuse a ticker without data in ``session.check_prices`` (their own message). A blind
    run or a no-edge world checks the real ticker before it is aliased, so they pass here.
    """
    from tradingagents.errors import UnknownInstrumentError
    from tradingagents.validation import validate_ticker

    cfg = resolve_config(config)
    t = validate_ticker(ticker)
    if cfg["data_vendor"] != "demo" or cfg.get("blind") or cfg.get("synthetic_world"):
        return False
    from tradingagents.dataflows.demo import INDEX_TICKERS
    from tradingagents.dataflows.demo_identities import known, suggest

    if known(t) is not None or t in INDEX_TICKERS:
        return False
    if cfg.get("allow_synthetic"):
        return True
    close = suggest(t)
    hint = (f"did you mean {' or '.join(close)}? " if close else "")
    raise UnknownInstrumentError(
        f"The demo market does not list {t}: {hint}It lists the S&P 100, the big ETFs, major listings in "
        "Hong Kong, Tokyo, London, India, China, Toronto and Sydney, and the benchmark indices. To analyse "
        "an invented instrument anyway, pass --allow-synthetic (the app's \"allow an invented instrument\").",
        ticker=t, suggestions=tuple(close),
    )


def input_notes(config: Mapping[str, Any] | None, provider: MarketData, ticker: str, as_of: str) -> list[str]:
    """Before any model call: what the run's report must say about its input (rows dropped, a short
    history), or the source's refusal (``BadCSVError``, exit 3: rows that do not parse without
    ``csv_skip_bad_rows``, bars that are not daily). Sources without such a check have nothing to say."""
    check = getattr(provider, "input_check", None)
    if not callable(check):
        return []
    return list(check(ticker, as_of, skip_bad_rows=bool(resolve_config(config).get("csv_skip_bad_rows"))))

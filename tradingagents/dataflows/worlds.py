"""No-edge control worlds: the market of a backtest with its prices replaced by random walks.

A world is described by plain data (``world_spec``), carried in a run's config as
``synthetic_world``; ``get_provider`` then wraps the configured data source in ``WorldProvider``,
so every tool, the trader, the settlement and the scoring of that run read the world's prices.

Rules of a world (seed ``s``, world number ``k``):

* For each ticker of the backtest **and its benchmark**: daily log returns
  ``ln(C[t]/C[t-1]) = μ + σ·z[t]``, ``z`` i.i.d. standard normal from
  ``numpy.random.default_rng([s, k, crc32(ticker)])``, with ``μ`` and ``σ`` the mean and sample
  standard deviation of the real series' daily log returns over the backtest's range (the drift
  and volatility are matched, nothing else: the returns are independent of each other and of
  everything a model can read, so **no signal exists by construction**).
* The days are the real source's trading days for that ticker (its calendar only); the walk starts
  ``ORIGIN_YEARS`` before the backtest's start (so indicators have their history) and is rebased so
  that the close on the backtest's first day equals the real close there.
* ``Open`` is the previous close; ``High``/``Low`` are ``max``/``min`` of open and close widened by
  ``½σ·|z'|``; ``Volume`` is the real volume (it says nothing about the world's returns).
* Point in time: the walk is a function of the calendar and the seed; ``ohlcv(t, start, end)`` returns
  only rows up to ``end``, like every provider. Every other tool result (news, fundamentals, posts)
  is the real source's: it carries no information about the world's returns.
"""

from __future__ import annotations

import math
import threading
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tradingagents.dataflows.provider import (
    MarketData,
    MarketDataProvider,
    check_range,
    check_ticker,
    clip_frame,
    today,
)

ORIGIN_YEARS = 2


def plain(value: Any) -> Any:
    """``value`` with every mapping a dict and every sequence a list (a frozen config's world spec)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def matched_params(closes: Sequence[float]) -> dict[str, float]:
    """``{mu, sigma}`` of the daily log returns of ``closes`` (sample standard deviation)."""
    c = np.asarray([float(x) for x in closes], float)
    lr = np.diff(np.log(c))
    if len(lr) < 2:
        return {"mu": 0.0, "sigma": 0.0}
    return {"mu": float(lr.mean()), "sigma": float(lr.std(ddof=1))}


def world_spec(seed: int, world: int, start: str, series: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """The plain-data description of world ``world``: ``series`` is ``{ticker: {mu, sigma, level}}``."""
    origin = (pd.Timestamp(start) - pd.DateOffset(years=ORIGIN_YEARS)).date().isoformat()
    return {"seed": int(seed), "world": int(world), "start": start, "origin": origin,
            "series": {t: {k: float(v) for k, v in p.items()} for t, p in sorted(series.items())}}


class WorldProvider(MarketDataProvider):
    """The base source with the world's tickers' prices replaced by the world's random walks."""

    supports_social = False

    def __init__(self, base: MarketData, spec: Mapping[str, Any]) -> None:
        self.base = base
        self.spec = dict(spec)
        self.vendor = base.vendor
        self.supports_social = base.supports_social
        self.local = bool(getattr(base, "local", False))
        self.label = f"{base.label} (no-edge random-walk world {int(spec['world'])})"
        self._paths: dict[str, pd.DataFrame] = {}
        self._lock = threading.Lock()

    def path(self, ticker: str) -> pd.DataFrame:
        """The world's whole OHLCV of ``ticker`` from its origin to today (cached)."""
        with self._lock:
            if ticker in self._paths:
                return self._paths[ticker]
        p = self.spec["series"][ticker]
        real = self.base.ohlcv(ticker, self.spec["origin"], today())
        real = real[~real.index.duplicated(keep="last")]
        n = len(real)
        rng = np.random.default_rng([int(self.spec["seed"]) & 0xFFFFFFFF, int(self.spec["world"]),
                                     zlib.crc32(ticker.encode("utf-8"))])
        z = rng.standard_normal((n, 3))
        mu, sigma = float(p["mu"]), float(p["sigma"])
        log_close = np.cumsum(mu + sigma * z[:, 0])
        first = int(real.index.searchsorted(pd.Timestamp(self.spec["start"])))
        first = min(first, n - 1)
        close = float(p["level"]) * np.exp(log_close - log_close[first])
        opens = np.concatenate([[close[0] * math.exp(-(mu + sigma * z[0, 0]))], close[:-1]])
        high = np.maximum(opens, close) * np.exp(0.5 * sigma * np.abs(z[:, 1]))
        low = np.minimum(opens, close) * np.exp(-0.5 * sigma * np.abs(z[:, 2]))
        frame = pd.DataFrame({"Open": opens, "High": high, "Low": low, "Close": close,
                              "Volume": real["Volume"].to_numpy() if "Volume" in real else np.zeros(n, "int64")},
                             index=real.index)
        frame.attrs["data_source"] = self.label
        with self._lock:
            self._paths[ticker] = frame
        return frame

    def ohlcv(self, ticker: str, start: str, end: str) -> pd.DataFrame:
        t = check_ticker(ticker)
        if t not in self.spec["series"]:
            return self.base.ohlcv(t, start, end)
        s, e = check_range(start, end)
        out = clip_frame(self.path(t), s, e).copy()
        out.attrs["data_source"] = self.label
        return out

    # everything else is the real source's (no information about the world's returns)
    def __getattr__(self, name: str) -> Any:
        if name == "base":
            raise AttributeError(name)
        return getattr(self.base, name)

    def identity(self, ticker: str) -> dict[str, Any]:
        return self.base.identity(ticker)

    def fundamentals(self, ticker: str, as_of: str) -> dict[str, Any]:
        return self.base.fundamentals(ticker, as_of)

    def statements(self, ticker: str, kind: str, freq: str, as_of: str) -> pd.DataFrame:
        return self.base.statements(ticker, kind, freq, as_of)

    def missing_prices_hint(self, ticker: str, as_of: str) -> str:
        return self.base.missing_prices_hint(ticker, as_of)

    def news(self, ticker: str, start: str, end: str) -> list[dict[str, Any]]:
        return self.base.news(ticker, start, end)

    def global_news(self, as_of: str, look_back_days: int = 7) -> list[dict[str, Any]]:
        return self.base.global_news(as_of, look_back_days)

    def social(self, ticker: str, as_of: str, look_back_days: int = 7) -> list[dict[str, Any]]:
        return self.base.social(ticker, as_of, look_back_days)


def summarise(values: Sequence[float]) -> dict[str, float | None]:
    """``{mean, p05, p50, p95}`` of a distribution (``None`` when empty)."""
    v = np.asarray([x for x in values if x is not None], float)
    if len(v) == 0:
        return {"mean": None, "p05": None, "p50": None, "p95": None}
    q = np.percentile(v, [5, 50, 95])
    return {"mean": float(v.mean()), "p05": float(q[0]), "p50": float(q[1]), "p95": float(q[2])}

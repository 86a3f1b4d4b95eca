"""The demo market: a seeded, synthetic market that is identical on every machine and process.

Everything is derived from the ticker string through SHA-256 (never Python's ``hash()``), and the
random draws of each calendar year are seeded by (ticker, year), so the path up to a date never
depends on today's date: a run of 2024-05-10 sees the same bytes next year.

Prices: business days from 2000-01-03. An index (every benchmark of the suffix map, or any ``^``
ticker) follows a market model with a slowly varying drift (trends and drawdowns), volatility
clustering (a log-volatility AR(1) with a leverage effect) and rare crash jumps. A stock is tied to
its benchmark by a beta, has its own clustering volatility, a weak pull towards a long-run growth
path, idiosyncratic jumps and earnings-day reactions to a per-quarter earnings surprise.

Fundamentals and statements: a company of the calibration table (``demo_calibration``: every listed
stock of ``demo_identities``) reports revenue, margins, debt and shares of its real size within the
table's tolerance; a fictional ticker earns what its price averaged over the past year supports at a seeded P/E, so its revenue moves
slowly; market cap = price × shares either way. News is generated from the path (earnings,
guidance, large moves, analyst notes, sector notes, routine company items several times a week),
global headlines from the benchmark path and a macro calendar, social posts with a tone that
follows the recent return. Every object says it is synthetic demo data.

Known instruments (``demo_identities``: the S&P 100, the big ETFs, major listings in Hong Kong,
Tokyo, London, India, Shanghai/Shenzhen, Toronto, Sydney, and every benchmark index) carry their
real name, sector, industry, exchange and currency; their seeded path is bent through two anchor
closes of 2024 (indices also through their level of 2000-01-03; a few names through later real
closes too) and scaled to their volatility (an index's yearly volatility kept in a band), so
prices have the right order of magnitude while the history itself stays synthetic. Funds move
with the index they track (SPY with ^GSPC); news reasons fit the industry (a bank's news is about
loans and deposits). Other tickers get a generated, fictional profile.
"""

from __future__ import annotations

import functools
import hashlib
import math
from typing import Any

import numpy as np
import pandas as pd

from tradingagents.config import BENCHMARK_MAP, DEFAULT_BENCHMARK
from tradingagents.dataflows.demo_calibration import TOLERANCE, calibrated, net_margin, quarter_revenue
from tradingagents.dataflows.demo_identities import ANCHOR_DATES, INDEX_START_DATE, LEAD_IN_DATE, known
from tradingagents.dataflows.provider import (
    DataNotFound,
    MarketDataProvider,
    check_date,
    check_days,
    check_range,
    check_statement_args,
    check_ticker,
    today,
)
from tradingagents.i18n import N_, Translator, sector_label, translator

LABEL = "synthetic demo data"
TAG = f"[{LABEL}]"
HEADLINE_MARK = N_("Synthetic headline: ")
POST_MARK = N_("Synthetic post: ")
POST_SOURCE = N_("DemoSocial ({label})")
START = "2000-01-03"
FIRST_YEAR = 2000

INDEX_TICKERS = {DEFAULT_BENCHMARK, *BENCHMARK_MAP.values()}
_SUFFIX_INFO = {  # suffix: (exchange, currency) of a generated (fictional) profile
    ".NS": ("NSE (demo)", "INR"), ".BO": ("BSE (demo)", "INR"), ".T": ("Tokyo (demo)", "JPY"),
    ".HK": ("Hong Kong (demo)", "HKD"), ".L": ("London (demo)", "GBp"), ".TO": ("Toronto (demo)", "CAD"),
    ".AX": ("ASX (demo)", "AUD"), ".SS": ("Shanghai (demo)", "CNY"), ".SZ": ("Shenzhen (demo)", "CNY"),
}
# Realised daily volatility of the market model at scale 1 (its log-vol process averages ~17%/year),
# and the factor between a stock's ``idio_vol`` parameter and its realised idiosyncratic daily vol.
_MODEL_INDEX_VOL = 0.17
_IDIO_LEVEL = 0.54
_SECTOR_BETA = {
    "Technology": 1.2, "Healthcare": 0.7, "Financial Services": 1.1, "Consumer Cyclical": 1.15,
    "Consumer Defensive": 0.55, "Industrials": 1.0, "Energy": 0.9, "Communication Services": 1.0,
    "Utilities": 0.5, "Basic Materials": 1.0, "Real Estate": 0.9,
}
_SECTORS = [
    ("Technology", ["Semiconductors", "Software—Infrastructure", "Consumer Electronics", "Software—Application"]),
    ("Healthcare", ["Drug Manufacturers", "Medical Devices", "Biotechnology"]),
    ("Financial Services", ["Banks—Diversified", "Asset Management", "Insurance—Diversified"]),
    ("Consumer Cyclical", ["Auto Manufacturers", "Internet Retail", "Restaurants"]),
    ("Consumer Defensive", ["Beverages—Non-Alcoholic", "Discount Stores", "Household Products"]),
    ("Industrials", ["Aerospace & Defense", "Railroads", "Specialty Machinery"]),
    ("Energy", ["Oil & Gas Integrated", "Oil & Gas E&P"]),
    ("Communication Services", ["Internet Content & Information", "Telecom Services", "Entertainment"]),
    ("Utilities", ["Utilities—Regulated Electric"]),
    ("Basic Materials", ["Specialty Chemicals", "Steel"]),
]
_NAME_ENDINGS = ["Systems Inc.", "Holdings Corp.", "Technologies Ltd.", "Group plc", "Industries Inc.", "Labs Inc."]
# sector -> (typical P/E, net margin, gross margin)
_SECTOR_PROFILE = {
    "Technology": (30.0, 0.22, 0.60), "Healthcare": (22.0, 0.16, 0.65), "Financial Services": (13.0, 0.25, 0.90),
    "Consumer Cyclical": (20.0, 0.07, 0.35), "Consumer Defensive": (21.0, 0.09, 0.40),
    "Industrials": (19.0, 0.10, 0.30), "Energy": (11.0, 0.10, 0.35), "Communication Services": (20.0, 0.15, 0.55),
    "Utilities": (17.0, 0.12, 0.45), "Basic Materials": (14.0, 0.09, 0.28), "Real Estate": (35.0, 0.25, 0.70),
    "Index": (20.0, 0.11, 0.45),
}


# ----------------------------------------------------------------------------------------------
# seeding
# ----------------------------------------------------------------------------------------------
def _seed(*parts: object) -> int:
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def _rng(*parts: object) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(_seed(*parts)))


def _unit(*parts: object) -> float:
    """A deterministic number in [0, 1) from the parts."""
    return _seed(*parts) / 2.0**64


def _pick(options: list, *parts: object):
    return options[int(_unit(*parts) * len(options))]


def is_index(ticker: str) -> bool:
    """Whether the demo market treats a ticker as a market index (its path is the market model)."""
    row = known(ticker)
    if row is not None:
        return row["kind"] == "index"
    return ticker.startswith("^") or ticker in INDEX_TICKERS


def demo_benchmark(ticker: str) -> str:
    """The benchmark a demo stock is tied to (the default suffix map; config never changes the market)."""
    upper = ticker.upper()
    for suffix in sorted(BENCHMARK_MAP, key=len, reverse=True):
        if upper.endswith(suffix):
            return BENCHMARK_MAP[suffix]
    return DEFAULT_BENCHMARK


# ----------------------------------------------------------------------------------------------
# the static profile of an instrument
# ----------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4096)
def profile(ticker: str) -> dict[str, Any]:
    """The static profile of an instrument: its identity and the parameters of its price path.

    ``kind`` is "index" (the market model), "etf" (a fund: no company data) or "stock";
    ``index`` is True for anything without company data (statements, earnings, analyst notes).
    Tickers of ``demo_identities`` get their real identity and price anchors, others a generated
    (fictional) profile.
    """
    row = known(ticker)
    if row is not None:
        return _known_profile(ticker, row)
    t = ticker
    if is_index(t):
        start = math.exp(math.log(500) + 2.0 * (_unit(t, "lvl") - 0.5))
        exch, cur = "Index (demo)", "USD"
        for suffix, (e, c) in _SUFFIX_INFO.items():
            if t.endswith(suffix) or BENCHMARK_MAP.get(suffix) == t:
                exch, cur = e, c
        return {
            "ticker": t, "kind": "index", "index": True, "known": False, "name": f"{t.lstrip('^')} Index (demo)",
            "sector": "Index", "industry": "Market index", "exchange": exch, "currency": cur,
            "start_price": float(start), "beta": 1.0, "growth": 0.03 + 0.04 * _unit(t, "g"), "benchmark": t,
            "anchors": (), "vol_scale": 1.0, "seed": t,
        }
    sector, industries = _pick(_SECTORS, t, "sector")
    industry = _pick(industries, t, "industry")
    base = t.split(".")[0].replace("^", "").replace("=", "").replace("_", " ").replace("+", " ").strip("-") or t
    name = f"{base.title()} {_pick(_NAME_ENDINGS, t, 'name')}"
    exch, cur = "NASDAQ (demo)" if _unit(t, "ex") < 0.5 else "NYSE (demo)", "USD"
    for suffix, (e, c) in _SUFFIX_INFO.items():
        if t.endswith(suffix):
            exch, cur = e, c
    start_price = math.exp(math.log(4.0) + (math.log(150.0) - math.log(4.0)) * _unit(t, "p0"))
    if cur in ("JPY", "INR", "GBp"):
        start_price *= 60.0
    mcap0 = math.exp(math.log(1.5e9) + (math.log(2.5e11) - math.log(1.5e9)) * _unit(t, "mcap"))
    prof = _company_params(t, sector)
    prof.update({
        "ticker": t, "kind": "stock", "index": False, "known": False, "name": name, "sector": sector,
        "industry": industry, "exchange": exch, "currency": cur, "start_price": start_price,
        "beta": 0.55 + 1.3 * _unit(t, "beta"), "growth": -0.02 + 0.16 * _unit(t, "g"),
        "idio_vol": 0.010 + 0.014 * _unit(t, "iv"), "benchmark": demo_benchmark(t),
        "shares0": mcap0 / (start_price * (0.01 if cur == "GBp" else 1.0)), "anchors": (), "seed": None,
    })
    return prof


def _unit_of(prof: dict[str, Any]) -> float:
    """Accounts currency per quoted price unit: London quotes in pence (GBp), accounts are in pounds."""
    return 0.01 if prof["currency"] == "GBp" else 1.0


def _accounts_currency(prof: dict[str, Any]) -> str:
    return "GBP" if prof["currency"] == "GBp" else prof["currency"]


def _company_params(t: str, sector: str) -> dict[str, Any]:
    """Seeded accounting parameters of a company, around its sector's typical figures."""
    pe, margin, gross = _SECTOR_PROFILE.get(sector, _SECTOR_PROFILE["Index"])
    return {
        "share_drift": -0.02 + 0.04 * _unit(t, "sd"),  # buybacks (<0) or dilution (>0) per year
        "pe": pe * (0.7 + 0.6 * _unit(t, "pe")),
        "net_margin": max(0.02, margin * (0.6 + 0.8 * _unit(t, "nm"))),
        "gross_margin": min(0.95, gross * (0.8 + 0.4 * _unit(t, "gm"))),
        "asset_turn": 0.4 + 1.2 * _unit(t, "at"),
        "equity_ratio": 0.3 + 0.35 * _unit(t, "eq"),
        "debt_ratio": 0.05 + 0.35 * _unit(t, "dr"),
        "payout": 0.0 if _unit(t, "div") < 0.35 else 0.15 + 0.45 * _unit(t, "po"),
        "earn_lag": 18 + int(20 * _unit(t, "lag")),
    }


# The real anchors stop at the end of 2024. So that a date up to today trades at a plausible level
# (not wherever a free random walk drifted), the path is also pulled through one synthetic anchor at
# each later year end, through CARRY_THROUGH: the last real close moved by a damped share of the 2024
# trend (a sixth root, between −8 % and +15 % a year). Fixed numbers, not today's date, so every date
# sees the same bytes on every machine and in every year.
CARRY_THROUGH = 2035


def _carried_forward(anchors: tuple) -> tuple:
    if len(anchors) < 2:
        return anchors
    (_, p0), (d1, p1) = anchors[-2], anchors[-1]
    yearly = min(1.15, max(0.92, (p1 / p0) ** (1 / 6)))
    first_year = int(d1[:4]) + 1
    later = tuple((f"{year}-12-31", round(p1 * yearly ** (year - first_year + 1), 4))
                  for year in range(first_year, CARRY_THROUGH + 1))
    return (*anchors, *later)


def _known_profile(t: str, row: dict[str, Any]) -> dict[str, Any]:
    """A profile for a ticker of the identity table: real identity, anchored synthetic path."""
    anchors = tuple(row["anchors"])
    if row["kind"] != "index":
        # a synthetic lead-in anchor a year earlier (half the 2024 trend, within ±40%), so the year
        # before the first real anchor is pulled too: no invented crash or spike into 2024
        p0, p1 = (dict(anchors)[d] for d in ANCHOR_DATES)
        anchors = ((LEAD_IN_DATE, p0 * min(1.4, max(0.6, math.sqrt(p0 / p1)))), *anchors)
    anchors = _carried_forward(anchors)
    first = anchors[0][1]
    prof: dict[str, Any] = {
        "ticker": t, "kind": row["kind"], "index": row["kind"] != "stock", "known": True,
        "name": row["name"], "sector": row["sector"], "industry": row["industry"],
        "exchange": row["exchange"], "currency": row["currency"], "anchors": anchors,
        "start_price": first, "seed": row["seed"] or (t if row["kind"] == "index" else None),
        "vol": row["vol"],
    }
    if row["kind"] == "index":
        prof.update({"beta": 1.0, "growth": 0.05, "benchmark": t, "vol_scale": row["vol"] / _MODEL_INDEX_VOL})
        return prof
    bench = demo_benchmark(t)
    bench_vol = profile(bench)["vol"] if known(bench) else _MODEL_INDEX_VOL
    beta = row["beta"] if row["beta"] is not None else _SECTOR_BETA.get(row["sector"], 1.0)
    beta = max(-0.8, min(beta, 0.8 * row["vol"] / bench_vol))  # the market never explains more than it moves
    idio_annual = math.sqrt(max(row["vol"] ** 2 - (beta * bench_vol) ** 2, (0.35 * row["vol"]) ** 2))
    prof.update({
        "beta": beta, "growth": 0.08 if row["kind"] == "stock" else 0.05, "benchmark": bench,
        "idio_vol": idio_annual / math.sqrt(252.0) / _IDIO_LEVEL,
        # jumps and earnings reactions scale with the stock's volatility (a utility jumps less)
        "jump_scale": min(1.0, row["vol"] / 0.35),
    })
    if row["kind"] == "stock":
        prof.update(_company_params(t, row["sector"]))
        years = (pd.Timestamp(anchors[0][0]) - pd.Timestamp(START)).days / 365.25
        prof["shares0"] = row["shares"] * math.exp(-prof["share_drift"] * years)
    else:
        prof["shares0"] = 5.0e8 / first  # a fund's units: only its trading volume uses this
    return prof


# ----------------------------------------------------------------------------------------------
# calendars
# ----------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=8)
def _calendar(last_year: int) -> pd.DatetimeIndex:
    return pd.bdate_range(START, f"{last_year}-12-31", name="Date")


@functools.lru_cache(maxsize=4096)
def earnings_calendar(ticker: str, last_year: int) -> tuple[tuple[pd.Timestamp, pd.Timestamp, float], ...]:
    """(quarter end, earnings date, surprise z-score) for each fiscal quarter; stocks only.

    One stream per ticker, four quarters per year drawn in order, so earlier quarters never depend
    on ``last_year``.
    """
    prof = profile(ticker)
    if prof["kind"] != "stock":
        return ()
    years = last_year - FIRST_YEAR + 2
    draws = _rng(ticker, "earnings").random((years * 4, 2))
    out = []
    i = 0
    for y in range(FIRST_YEAR - 1, last_year + 1):
        for m, d in ((3, 31), (6, 30), (9, 30), (12, 31)):
            qe = pd.Timestamp(y, m, d)
            u_lag, u_s = draws[i]
            i += 1
            day = (qe + pd.Timedelta(days=prof["earn_lag"] + int(6 * u_lag))).date()
            while day.weekday() >= 5:
                day += _ONE_DAY
            if day < _START_DATE:
                continue
            z = _norm_ppf(float(u_s))
            out.append((qe, pd.Timestamp(day), z))
    return tuple(out)


_ONE_DAY = pd.Timedelta(days=1).to_pytimedelta()
_START_DATE = pd.Timestamp(START).date()


def _norm_ppf(u: float) -> float:
    """Inverse normal CDF (Acklam's rational approximation; |error| < 1.2e-9)."""
    u = min(max(u, 1e-12), 1 - 1e-12)
    a = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02, 1.383577518672690e02,
         -3.066479806614716e01, 2.506628277459239e00)
    b = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02, 6.680131188771972e01,
         -1.328068155288572e01)
    c = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00, -2.549671010584755e00,
         4.374664141464968e00, 2.938163982698783e00)
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)
    if u < 0.02425:
        q = math.sqrt(-2 * math.log(u))
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
            (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    if u > 1 - 0.02425:
        return -_norm_ppf(1 - u)
    q = u - 0.5
    r = q * q
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / (
        ((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)


# ----------------------------------------------------------------------------------------------
# price paths
# ----------------------------------------------------------------------------------------------
def ar1(inputs: np.ndarray, phi: float, x0: float = 0.0) -> np.ndarray:
    """x[t] = phi * x[t-1] + inputs[t], with x[-1] = x0.

    Plain IEEE float arithmetic in a fixed order (no BLAS), so every machine gets the same bits.
    """
    out: list[float] = []
    append = out.append
    x = x0
    for e in inputs.tolist():
        x = phi * x + e
        append(x)
    return np.asarray(out, dtype=float)


def _draws(ticker: str, last_year: int, k: int, purpose: str = "px") -> tuple[pd.DatetimeIndex, np.ndarray]:
    """k standard-normal draws per business day from one stream, in date order (prefix-stable)."""
    days = _calendar(last_year)
    return days, _rng(ticker, purpose).standard_normal((len(days), k))


def _uniform(z: np.ndarray) -> np.ndarray:
    """An approximately uniform number in (0, 1) from a standard normal draw (logistic fit of the CDF)."""
    return 1.0 / (1.0 + np.exp(-1.702 * z))


def _raw_index_returns(ticker: str, last_year: int, growth: float, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """The market model's daily log returns and volatility (scaled to the index's volatility)."""
    days, z = _draws(ticker, last_year, 6)
    g = growth / 252.0
    hbar = math.log(0.0095)
    shock = z[:, 0]
    # volatility clustering with a leverage effect: yesterday's down-shock raises today's log-vol
    lev = np.concatenate([[0.0], np.maximum(0.0, -shock[:-1])])
    h = hbar + ar1(0.11 * z[:, 2] + 0.06 * lev - 0.024, 0.975)
    sig = np.exp(h) * scale
    drift = ar1(0.00006 * z[:, 1], 0.995)  # slowly varying trend: bull runs and drawdowns
    jumps = np.where(_uniform(z[:, 3]) > 0.9965, -0.025 + 0.025 * z[:, 4], 0.0)
    pre = (drift + jumps) * scale + sig * shock
    # weak pull of the log level back towards its long-run growth path
    dev = ar1(pre, 0.9985)
    dev_prev = np.concatenate([[0.0], dev[:-1]])
    r = g + pre - 0.0015 * dev_prev
    return r, sig


def _anchor(r: np.ndarray, anchors: tuple, last_year: int, start_price: float) -> tuple[np.ndarray, float]:
    """Bend daily log returns through the anchor closes; returns (returns, the level before day 0).

    Between two anchors every day gets the same extra drift, so the path keeps its own moves and
    hits each anchor's close exactly; before the first anchor and after the last it runs free.
    """
    if not anchors:
        return r, start_price
    days = _calendar(last_year)
    pos = [int(days.searchsorted(pd.Timestamp(d))) for d, _ in anchors]
    r = r.copy()
    x = np.cumsum(r)
    for k in range(len(anchors) - 1):
        i, j = pos[k], pos[k + 1]
        a, b = anchors[k][1], anchors[k + 1][1]
        if not i < j < len(r):
            continue
        r[i + 1:j + 1] += ((math.log(b) - math.log(a)) - (x[j] - x[i])) / (j - i)
        if j - i <= _SHORT_SEGMENT:
            r[i + 1:j + 1] = _pull_towards_line(r[i + 1:j + 1])
    x = np.cumsum(r)
    first = pos[0]
    return r, anchors[0][1] / math.exp(float(x[first]))


_SHORT_SEGMENT = 400  # business days: a segment this short (the 2024 anchors) also gets a pull
_PULL = 0.02  # per day: keeps a year between two anchors within roughly ±40% of the straight line


def _pull_towards_line(seg: np.ndarray) -> np.ndarray:
    """Daily log returns of a bridge segment (their sum already hits the next anchor), with the
    deviation from the straight line between the anchors mean-reverting (an Ornstein-Uhlenbeck
    pull), so the day-to-day moves stay but a year cannot wander to three times its anchors."""
    n = len(seg)
    slope = float(sum(seg.tolist())) / n
    dev = 0.0
    pulled: list[float] = []
    for k, step in enumerate(seg.tolist()):
        # the pull tightens near the next anchor (a bridge), so the path arrives there on its own
        dev = dev + (step - slope) - max(_PULL, 1.0 / (n - k)) * dev
        pulled.append(dev)
    end = pulled[-1]
    levels = [slope * (k + 1) + d - end * (k + 1) / n for k, d in enumerate(pulled)]
    prev = [0.0, *levels[:-1]]
    return np.asarray([lv - pv for lv, pv in zip(levels, prev, strict=True)], dtype=float)


@functools.lru_cache(maxsize=512)
def _market(ticker: str, last_year: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(returns, volatility, level before day 0) of an index, or of a fund that tracks one."""
    prof = profile(ticker)
    seed = prof["seed"]
    if seed and seed != ticker:
        r, sig, _ = _market(seed, last_year)
    else:
        r, sig = _raw_index_returns(ticker, last_year, prof["growth"], prof.get("vol_scale", 1.0))
        r, sig = _bound_yearly_vol(r, sig, _calendar(last_year), prof.get("vol", _MODEL_INDEX_VOL))
    r, base = _anchor(r, prof["anchors"], last_year, prof["start_price"])
    return r, sig, base


# An index's realised volatility in any calendar year stays within this band around its typical
# level (the S&P 500 at 16 %: 12-20 % a year): the clustering model alone wandered to 26 % and more.
_YEAR_VOL_BAND = (0.75, 1.25)


def _bound_yearly_vol(r: np.ndarray, sig: np.ndarray, days: pd.DatetimeIndex, vol: float) -> tuple[np.ndarray, np.ndarray]:
    """Scale each calendar year's moves about its mean so its annualised volatility lies in the band
    (exact sums: every machine gets the same bits)."""
    years = days.year.to_numpy()
    r, sig = r.copy(), sig.copy()
    lo, hi = (vol * f for f in _YEAR_VOL_BAND)
    edges = np.flatnonzero(np.diff(years)) + 1
    for a, b in zip([0, *edges.tolist()], [*edges.tolist(), len(years)], strict=True):
        seg = r[a:b].tolist()
        if len(seg) < 2:
            continue
        mean = math.fsum(seg) / len(seg)
        realised = math.sqrt(math.fsum((x - mean) ** 2 for x in seg) / len(seg) * 252.0)
        factor = lo / realised if realised < lo else (hi / realised if realised > hi else 1.0)
        if factor != 1.0:
            r[a:b] = mean + (r[a:b] - mean) * factor
            sig[a:b] = sig[a:b] * factor
    return r, sig


# Anchors run through CARRY_THROUGH, so a path is always generated at least that far (a shorter
# horizon is a prefix of it: every date sees the same bytes whatever the horizon or today's date).
_MIN_HORIZON = max(CARRY_THROUGH, *(int(d[:4]) + 1 for d in (*ANCHOR_DATES, INDEX_START_DATE)))


@functools.lru_cache(maxsize=512)
def _path(ticker: str, last_year: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Full OHLCV path from 2000 through the end of ``last_year`` (internal; callers clip to today)."""
    if last_year < _MIN_HORIZON:
        df, r = _path(ticker, _MIN_HORIZON)
        n = len(_calendar(last_year))
        return df.iloc[:n], r[:n]
    prof = profile(ticker)
    days = _calendar(last_year)
    n = len(days)
    z = _rng(ticker, "bar").standard_normal((n, 4))
    if prof["kind"] == "index" or prof["seed"]:
        r, sig, base = _market(ticker, last_year)
        if prof["kind"] == "etf" or ticker == DEFAULT_BENCHMARK:
            vol_base = 8.0e6 + 6.0e7 * _unit(ticker, "turn")
        else:
            vol_base = 3.0e8
    else:
        br, bsig, _ = _market(prof["benchmark"], last_year)
        _, zz = _draws(ticker, last_year, 5)
        ereact = np.zeros(n)
        cal = earnings_calendar(ticker, last_year)
        if cal:
            pos = days.get_indexer([e for _, e, _ in cal])
            surprises = np.array([s for _, _, s in cal])
            ok = pos >= 0
            ereact[pos[ok]] = (0.035 * surprises[ok] + 0.02 * zz[pos[ok], 4]) * prof.get("jump_scale", 1.0)
        hbar = math.log(prof["idio_vol"])
        beta = prof["beta"]
        g = prof["growth"] / 252.0
        h = hbar + ar1(0.12 * zz[:, 2] - 0.022, 0.97)
        s = np.exp(h)
        drift = ar1(0.00005 * zz[:, 1], 0.994)
        jumps = np.where(_uniform(zz[:, 3]) > 0.996, 0.06 * prof.get("jump_scale", 1.0) * zz[:, 4], 0.0)
        pre = drift + s * zz[:, 0] + jumps + ereact
        dev = ar1(pre, 0.9985)
        dev_prev = np.concatenate([[0.0], dev[:-1]])
        idio = g - beta * 0.0003 + pre - 0.0015 * dev_prev
        r = beta * br + idio
        sig = np.sqrt((beta * bsig) ** 2 + s * s)
        r, base = _anchor(r, prof["anchors"], last_year, prof["start_price"])
        if prof["kind"] == "etf":
            vol_base = 8.0e6 + 6.0e7 * _unit(ticker, "turn")
        else:
            vol_base = prof["shares0"] * (0.003 + 0.01 * _unit(ticker, "turn"))
    close = base * np.exp(np.cumsum(r))
    prev = np.concatenate([[base], close[:-1]])
    open_ = prev * np.exp(0.25 * r + 0.25 * sig * z[:, 0])
    hi = np.maximum(open_, close) * np.exp(np.abs(z[:, 1]) * 0.45 * sig)
    lo = np.minimum(open_, close) * np.exp(-np.abs(z[:, 2]) * 0.45 * sig)
    o, h_, l_, c = (np.maximum(np.round(a, 2), 0.01) for a in (open_, hi, lo, close))
    h_ = np.maximum(np.maximum(h_, o), c)
    l_ = np.minimum(np.minimum(l_, o), c)
    surprise = np.abs(r) / np.maximum(sig, 1e-6)
    volume = vol_base * np.exp(0.3 * z[:, 3] + 0.35 * np.minimum(surprise, 6.0))
    df = pd.DataFrame(
        {"Open": o, "High": h_, "Low": l_, "Close": c, "Volume": volume.astype("int64")}, index=days,
    )
    return df, r


def _full(ticker: str) -> pd.DataFrame:
    return _path(ticker, today().year)[0]


def close_on_or_before(ticker: str, day: pd.Timestamp) -> tuple[pd.Timestamp, float] | None:
    df = _full(ticker)
    pos = df.index.searchsorted(day, side="right") - 1
    if pos < 0:
        return None
    return df.index[pos], float(df["Close"].iloc[pos])


def _trailing_sd(r: np.ndarray, i: int) -> float:
    """Standard deviation of the 20 daily returns before row i (known at the open of day i)."""
    window = r[max(0, i - 20):i]
    if len(window) < 2:
        return 0.01
    m = sum(window.tolist()) / len(window)
    return math.sqrt(sum((x - m) ** 2 for x in window.tolist()) / len(window)) or 0.01


# ----------------------------------------------------------------------------------------------
# fundamentals and statements
# ----------------------------------------------------------------------------------------------
def _quarters(ticker: str, as_of: pd.Timestamp) -> list[dict[str, Any]]:
    """Reported quarters (earnings date <= as_of), oldest first, with all figures (do not mutate)."""
    return [q for q in _all_quarters(ticker, today().year) if q["report_date"] <= as_of]


def _shares(ticker: str, prof: dict[str, Any], when: pd.Timestamp) -> float:
    """Shares outstanding at a date: the calibration table's count around mid-2024 (else the identity
    table's), moved by the company's buybacks or dilution."""
    row = calibrated(ticker) if prof.get("known") else None
    if row is not None:
        years = (when - _CALIBRATION_MID).days / 365.25
        return row["shares"] * math.exp(prof["share_drift"] * years)
    years = (when - pd.Timestamp(START)).days / 365.25
    return prof["shares0"] * math.exp(prof["share_drift"] * years)


_CALIBRATION_MID = pd.Timestamp("2024-07-01")
_SMOOTH_DAYS = 250  # an uncalibrated company's earnings follow its price over the past year, not the day


@functools.lru_cache(maxsize=512)
def _all_quarters(ticker: str, last_year: int) -> tuple[dict[str, Any], ...]:
    """Every fiscal quarter's figures. A company of the calibration table follows its real size
    (revenue, margins, debt, shares; small seeded noise); any other one earns what its average price
    of the past year supports at its P/E, so its revenue moves slowly (no quarter halves on a bad week)."""
    prof = profile(ticker)
    cal = earnings_calendar(ticker, last_year)
    noise = _rng(ticker, "quarters").standard_normal((len(cal), 6))  # in quarter order: prefix-stable
    full = _path(ticker, last_year)[0]
    closes = full["Close"].to_numpy()
    logs = [0.0]  # running sums of log closes, in plain float arithmetic (the same bits everywhere)
    for c in closes.tolist():
        logs.append(logs[-1] + math.log(c))
    row = calibrated(ticker) if prof.get("known") else None
    out: list[dict[str, Any]] = []
    for (qe, edate, surprise), rz in zip(cal, noise, strict=True):
        pos = full.index.searchsorted(qe, side="right") - 1
        if pos < 0:
            continue
        price = float(closes[pos]) * _unit_of(prof)  # in the currency of the accounts
        shares = _shares(ticker, prof, qe)
        if row is not None:
            revenue = quarter_revenue(row, qe.date()) * math.exp(0.015 * _clip(rz[0], 2.5))
            margin = net_margin(row, qe.date()) * math.exp(0.03 * _clip3(rz[1]))
            net_income = revenue * margin
            # a thin gross margin (a defence contractor's 12%) may sit just above the net one
            gross = min(0.97, max(margin + 0.02, row["gross_margin"] * math.exp(0.01 * _clip3(rz[2]))))
            debt = row["debt"] * math.exp(0.03 * _clip3(rz[5]))
        else:
            first = max(0, pos + 1 - _SMOOTH_DAYS)
            smooth = math.exp((logs[pos + 1] - logs[first]) / (pos + 1 - first)) * _unit_of(prof)
            pe = prof["pe"] * math.exp(0.04 * _clip3(rz[0]))
            net_income = smooth * shares / pe / 4.0
            margin = max(0.01, prof["net_margin"] * math.exp(0.03 * _clip3(rz[1])))
            revenue = net_income / margin
            gross = min(0.97, max(margin + 0.05, prof["gross_margin"] * math.exp(0.01 * _clip3(rz[2]))))
            debt = None
        op_income = min(revenue * gross, net_income * 1.3)
        tax = net_income * 0.21 / 0.79
        pretax = net_income + tax
        assets = revenue * 4.0 / prof["asset_turn"]
        if debt is None:
            debt = assets * prof["debt_ratio"]
        assets = max(assets, debt / 0.6)
        interest = debt * 0.045 / 4.0
        equity = assets * prof["equity_ratio"]
        cash = assets * (0.05 + 0.1 * _unit(ticker, "cash"))
        ocf = net_income * (1.15 + 0.1 * rz[3])
        capex = -revenue * (0.03 + 0.05 * _unit(ticker, "capex"))
        dividends = -max(0.0, net_income) * prof["payout"]  # a loss-making quarter pays none
        eps = net_income / shares
        estimate = eps / (1.0 + 0.04 * surprise)
        out.append({
            "period_end": qe, "report_date": edate, "surprise": surprise, "price": price,
            "shares": shares, "revenue": revenue, "cost_of_revenue": revenue * (1 - gross),
            "gross_profit": revenue * gross, "operating_income": op_income,
            "operating_expense": revenue * gross - op_income, "interest_expense": interest,
            "pretax_income": pretax, "tax": tax, "net_income": net_income, "eps": eps,
            "eps_estimate": estimate, "total_assets": assets, "equity": equity, "debt": debt,
            "cash": cash, "current_assets": cash + assets * 0.2, "current_liabilities": assets * 0.15,
            "total_liabilities": assets - equity, "retained_earnings": equity * 0.6,
            "ocf": ocf, "capex": capex, "fcf": ocf + capex, "dividends": dividends,
            "buybacks": -max(0.0, -prof["share_drift"]) * price * shares / 4.0,
        })
    return tuple(out)


def _clip(z: float, at: float) -> float:
    """A normal draw cut at ``at`` standard deviations (so a stated tolerance holds for every quarter)."""
    return max(-at, min(at, float(z)))


def _clip3(z: float) -> float:
    return _clip(z, 3.0)


_INCOME_ROWS = [
    ("Total Revenue", "revenue"), ("Cost Of Revenue", "cost_of_revenue"), ("Gross Profit", "gross_profit"),
    ("Operating Expense", "operating_expense"), ("Operating Income", "operating_income"),
    ("Interest Expense", "interest_expense"), ("Pretax Income", "pretax_income"), ("Tax Provision", "tax"),
    ("Net Income", "net_income"), ("Diluted EPS", "eps"), ("Diluted Average Shares", "shares"),
]
_BALANCE_ROWS = [
    ("Total Assets", "total_assets"), ("Current Assets", "current_assets"),
    ("Cash And Cash Equivalents", "cash"), ("Total Liabilities Net Minority Interest", "total_liabilities"),
    ("Current Liabilities", "current_liabilities"), ("Total Debt", "debt"),
    ("Stockholders Equity", "equity"), ("Retained Earnings", "retained_earnings"),
    ("Ordinary Shares Number", "shares"),
]
_CASHFLOW_ROWS = [
    ("Operating Cash Flow", "ocf"), ("Capital Expenditure", "capex"), ("Free Cash Flow", "fcf"),
    ("Cash Dividends Paid", "dividends"), ("Repurchase Of Capital Stock", "buybacks"),
]
_FLOW_KEYS = {"revenue", "cost_of_revenue", "gross_profit", "operating_expense", "operating_income",
              "interest_expense", "pretax_income", "tax", "net_income", "eps", "ocf", "capex", "fcf",
              "dividends", "buybacks"}


# (industry keyword or sector, group label, reasons for a jump, reasons for a slide): the first match wins,
# so a bank's news talks about loans and deposits and a drug maker's about trials and approvals.
_NEWS_GROUPS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("Bank", N_("Bank"), (N_("as net interest income beats expectations"), N_("as credit quality improves"),
                      N_("after passing the regulator's stress test"), N_("on higher trading revenue"), N_("after an analyst upgrade")),
     (N_("on rising loan-loss provisions"), N_("as deposit costs squeeze margins"), N_("on weaker investment-banking fees"),
      N_("on a report of a regulatory probe"), N_("after an analyst downgrade"))),
    ("Insurance", N_("Insurance"), (N_("as underwriting margins improve"), N_("on strong premium growth"), N_("after an analyst upgrade")),
     (N_("on higher catastrophe losses"), N_("as claims costs rise"), N_("after an analyst downgrade"))),
    ("Capital Markets", N_("Brokerage"), (N_("on record trading volumes"), N_("as dealmaking picks up"), N_("after an analyst upgrade")),
     (N_("as trading volumes fade"), N_("on weaker advisory fees"), N_("after an analyst downgrade"))),
    ("Semiconductor", N_("Chip"), (N_("on strong data-centre chip demand"), N_("as a new chip launch beats expectations"),
                              N_("after an analyst upgrade"), N_("on upbeat foundry orders")),
     (N_("on export-control worries"), N_("as a key customer cuts orders"), N_("after an analyst downgrade"),
      N_("on signs of a chip inventory glut"))),
    ("Drug", N_("Pharma"), (N_("on positive late-stage trial data"), N_("after a drug approval"), N_("on strong prescription data"),
                        N_("after an analyst upgrade")),
     (N_("after a trial setback"), N_("on drug-pricing worries"), N_("as a patent expiry nears"), N_("after an analyst downgrade"))),
    ("Oil", N_("Oil"), (N_("as crude prices climb"), N_("on a new discovery"), N_("on higher refining margins"), N_("after an analyst upgrade")),
     (N_("as crude prices slide"), N_("on a production outage"), N_("on weaker refining margins"), N_("after an analyst downgrade"))),
    ("Auto", N_("Auto"), (N_("as deliveries beat expectations"), N_("on strong order intake"), N_("after an analyst upgrade")),
     (N_("as deliveries disappoint"), N_("on price-cut worries"), N_("after a recall"), N_("after an analyst downgrade"))),
    ("Technology", N_("Tech"), (N_("as a product launch beats expectations"), N_("on a new multi-year cloud contract"),
                            N_("after an analyst upgrade"), N_("on strong enterprise spending data")),
     (N_("as a key customer delays orders"), N_("on slowing enterprise spending"), N_("after an analyst downgrade"),
      N_("on a report of a regulatory probe"))),
    ("Healthcare", N_("Healthcare"), (N_("on strong procedure volumes"), N_("after a product approval"), N_("after an analyst upgrade")),
     (N_("on reimbursement worries"), N_("after a product recall"), N_("after an analyst downgrade"))),
    ("Financial Services", N_("Financial"), (N_("on strong payment volumes"), N_("as fee income grows"), N_("after an analyst upgrade")),
     (N_("as payment volumes slow"), N_("on a report of a regulatory probe"), N_("after an analyst downgrade"))),
    ("Consumer Cyclical", N_("Consumer"), (N_("on upbeat consumer-spending data"), N_("as same-store sales beat expectations"),
                                       N_("after an analyst upgrade")),
     (N_("on weak consumer-spending data"), N_("as same-store sales disappoint"), N_("after an analyst downgrade"))),
    ("Consumer Defensive", N_("Consumer staples"), (N_("as price increases stick"), N_("on resilient volumes"), N_("after an analyst upgrade")),
     (N_("on input-cost pressure"), N_("as volumes soften"), N_("after an analyst downgrade"))),
    ("Industrials", N_("Industrial"), (N_("on a large new order"), N_("as the order backlog grows"), N_("on upbeat manufacturing data"),
                                   N_("after an analyst upgrade")),
     (N_("on supply-chain delays"), N_("on weak manufacturing data"), N_("after a safety incident report"), N_("after an analyst downgrade"))),
    ("Communication Services", N_("Media and telecom"), (N_("on subscriber growth"), N_("as advertising revenue beats expectations"),
                                                     N_("after an analyst upgrade")),
     (N_("on subscriber losses"), N_("as advertising spending slows"), N_("on a report of a regulatory probe"),
      N_("after an analyst downgrade"))),
    ("Utilities", N_("Utility"), (N_("after a favourable rate-case decision"), N_("on falling bond yields"), N_("after an analyst upgrade")),
     (N_("after an unfavourable rate-case decision"), N_("on rising bond yields"), N_("after an analyst downgrade"))),
    ("Basic Materials", N_("Materials"), (N_("as commodity prices rise"), N_("on strong demand from China"), N_("after an analyst upgrade")),
     (N_("as commodity prices fall"), N_("on weak demand from China"), N_("after an analyst downgrade"))),
    ("Real Estate", N_("Real estate"), (N_("on falling bond yields"), N_("as occupancy improves"), N_("after an analyst upgrade")),
     (N_("on rising bond yields"), N_("as occupancy weakens"), N_("after an analyst downgrade"))),
)
_MARKET_REASONS = ((N_("as markets rally"), N_("on broad buying"), N_("as bond yields ease"), N_("on strong fund inflows")),
                   (N_("as markets sell off"), N_("on broad selling"), N_("as bond yields jump"), N_("on heavy fund outflows")))


def _news_group(prof: dict[str, Any]) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """(group label, reasons for a jump, reasons for a slide) that fit an instrument's industry."""
    if prof["kind"] != "stock":
        return N_("Market"), *_MARKET_REASONS
    for key, label, ups, downs in _NEWS_GROUPS:
        if key in prof["industry"] or key == prof["sector"]:
            return label, ups, downs
    return prof["sector"], (N_("after an analyst upgrade"), N_("on heavy institutional buying")), (
        N_("after an analyst downgrade"), N_("on heavy institutional selling"))


class DemoProvider(MarketDataProvider):
    vendor = "demo"
    label = LABEL
    supports_social = True
    local = True

    def __init__(self, language: str | None = None) -> None:
        """``language``: what the headlines and posts are written in (a code or an ``output_language``:
        "zh", "Chinese" → 简体中文; anything else English), the run's output language, passed in by
        ``get_provider``. Figures, dates, tickers, names and the order of items are the same in every
        language, and so is each headline's tone (a translated item carries its English twin's tone)."""
        self.language = translator(language).lang

    def cache_token(self) -> Any:
        """The demo market is a pure function of (ticker, dates, today's year, language): its tool results
        may be kept in-process. The token holds today, the language and the data methods themselves, so a
        method replaced on the class or the instance (a test's stand-in) never meets an old result."""
        return (today(), self.language, *(getattr(self, name) for name in self.DATA_METHODS))

    # -- prices ---------------------------------------------------------------------------------
    def ohlcv(self, ticker: str, start: str, end: str) -> pd.DataFrame:
        t = check_ticker(ticker)
        s, e = check_range(start, end)
        full = _full(t)
        lo = full.index.searchsorted(pd.Timestamp(s))
        hi = full.index.searchsorted(pd.Timestamp(e), side="right")
        out = full.iloc[lo:hi].copy()
        out.attrs["data_source"] = LABEL
        return out

    # -- identity -------------------------------------------------------------------------------
    def identity(self, ticker: str) -> dict[str, Any]:
        p = profile(check_ticker(ticker))
        return {"name": p["name"], "sector": p["sector"], "industry": p["industry"],
                "exchange": p["exchange"], "currency": p["currency"], "data_source": LABEL,
                "note": (f"Real identity; every price, figure and headline of {p['name']} here is {LABEL}, "
                         "not real history." if p["known"] else
                         f"{p['name']} is a fictional company of the {LABEL} market.")}

    def missing_prices_hint(self, ticker: str, as_of: str) -> str:
        return f"the {LABEL} market has prices from {START} on: choose a later date"

    # -- fundamentals ---------------------------------------------------------------------------
    def fundamentals(self, ticker: str, as_of: str) -> dict[str, Any]:
        t = check_ticker(ticker)
        day = pd.Timestamp(check_date(as_of))
        prof = profile(t)
        px = close_on_or_before(t, day)
        if px is None:
            raise DataNotFound(f"The {LABEL} market has no price for {t} on or before {day.date()}.")
        price_day, price = px
        base = {"ticker": t, "name": prof["name"], "as_of": day.date().isoformat(),
                "price_date": price_day.date().isoformat(), "price": round(price, 2),
                "currency": prof["currency"], "data_source": LABEL, "sector": prof["sector"],
                "industry": prof["industry"]}
        hist = _full(t)
        year = hist.loc[(hist.index > day - pd.Timedelta(days=365)) & (hist.index <= day)]
        base["fifty_two_week_high"] = round(float(year["High"].max()), 2)
        base["fifty_two_week_low"] = round(float(year["Low"].min()), 2)
        base["average_volume_3m"] = int(year["Volume"].tail(63).mean())
        if prof["index"]:
            return base
        qs = _quarters(t, day)
        if len(qs) < 4:
            raise DataNotFound(f"The {LABEL} market has fewer than four reported quarters for {t} by {day.date()}.")
        last4 = qs[-4:]
        shares = _shares(t, prof, day)
        ttm = {k: sum(q[k] for q in last4) for k in ("revenue", "net_income", "gross_profit", "operating_income",
                                                     "ocf", "fcf", "dividends")}
        ttm_eps = ttm["net_income"] / shares
        latest = qs[-1]
        mcap = price * _unit_of(prof) * shares
        growth = (latest["revenue"] / qs[-5]["revenue"] - 1.0) if len(qs) >= 5 else None
        egrowth = (latest["net_income"] / qs[-5]["net_income"] - 1.0) if len(qs) >= 5 else None
        base.update({
            "financial_currency": _accounts_currency(prof),
            "market_cap": round(mcap, 0),
            "shares_outstanding": round(shares, 0),
            "pe_ratio_ttm": round(price * _unit_of(prof) / ttm_eps, 2) if ttm_eps > 0 else None,
            "eps_ttm": round(ttm_eps, 2),
            "price_to_book": round(mcap / latest["equity"], 2),
            "price_to_sales_ttm": round(mcap / ttm["revenue"], 2),
            "revenue_ttm": round(ttm["revenue"], 0),
            "net_income_ttm": round(ttm["net_income"], 0),
            "gross_margin": round(ttm["gross_profit"] / ttm["revenue"], 4),
            "operating_margin": round(ttm["operating_income"] / ttm["revenue"], 4),
            "profit_margin": round(ttm["net_income"] / ttm["revenue"], 4),
            "revenue_growth_yoy": round(growth, 4) if growth is not None else None,
            "earnings_growth_yoy": round(egrowth, 4) if egrowth is not None else None,
            "debt_to_equity": round(latest["debt"] / latest["equity"], 2),
            "current_ratio": round(latest["current_assets"] / latest["current_liabilities"], 2),
            "return_on_equity": round(ttm["net_income"] / latest["equity"], 4),
            "free_cash_flow_ttm": round(ttm["fcf"], 0),
            "dividend_yield": round(-ttm["dividends"] / mcap, 4),
            "beta": round(prof["beta"], 2),
            "last_reported_quarter": latest["period_end"].date().isoformat(),
            "last_earnings_date": latest["report_date"].date().isoformat(),
            "last_eps": round(latest["eps"], 2),
            "last_eps_estimate": round(latest["eps_estimate"], 2),
        })
        return base

    def statements(self, ticker: str, kind: str, freq: str, as_of: str) -> pd.DataFrame:
        t = check_ticker(ticker)
        k, f = check_statement_args(kind, freq)
        day = pd.Timestamp(check_date(as_of))
        if profile(t)["index"]:
            raise DataNotFound(f"{t} is an index in the {LABEL} market; it has no financial statements.")
        qs = _quarters(t, day)
        rows = {"balance_sheet": _BALANCE_ROWS, "cashflow": _CASHFLOW_ROWS, "income_statement": _INCOME_ROWS}[k]
        periods: list[tuple[pd.Timestamp, dict[str, float]]] = []
        if f == "quarterly":
            for q in qs[-8:]:
                periods.append((q["period_end"], q))
        else:
            by_year: dict[int, list[dict]] = {}
            for q in qs:
                by_year.setdefault(q["period_end"].year, []).append(q)
            for y in sorted(by_year)[-4:]:
                group = by_year[y]
                if len(group) != 4:
                    continue
                agg = dict(group[-1])
                for key in _FLOW_KEYS:
                    agg[key] = sum(g[key] for g in group)
                agg["eps"] = agg["net_income"] / group[-1]["shares"]
                periods.append((group[-1]["period_end"], agg))
        if not periods:
            raise DataNotFound(f"No {f} {k.replace('_', ' ')} of {t} was reported by {day.date()} ({LABEL}).")
        periods.sort(key=lambda p: p[0], reverse=True)
        data = {pe: [round(v[key], 2 if key == "eps" else 0) for _, key in rows] for pe, v in periods}
        df = pd.DataFrame(data, index=[label for label, _ in rows])
        df.attrs["data_source"] = LABEL
        return df

    # -- news -----------------------------------------------------------------------------------
    # Each headline is written by a function of a Translator (``text(t) -> (title, summary)``), so the same
    # item can be written in the provider's language and, for its tone, in English (see ``_item``).
    def news(self, ticker: str, start: str, end: str) -> list[dict[str, Any]]:
        t = check_ticker(ticker)
        s, e = check_range(start, end)
        s_ts, e_ts = pd.Timestamp(s), pd.Timestamp(e)
        prof = profile(t)
        df = _full(t)
        r = _path(t, today().year)[1]
        items: list[dict[str, Any]] = []
        lo = df.index.searchsorted(s_ts)
        hi = df.index.searchsorted(e_ts, side="right")
        closes = df["Close"].to_numpy()
        name = prof["name"]
        cur = prof["currency"]
        for i in range(max(lo, 21), hi):
            day = df.index[i]
            ret = float(r[i])
            sd = _trailing_sd(r, i)
            if abs(ret) >= max(0.035, 2.5 * sd):
                up = ret > 0
                _, ups, downs = _news_group(prof)
                reason = _pick(ups if up else downs, t, "why", day.date())
                fields = {"name": name, "ticker": t, "pct": f"{abs(ret) * 100:.1f}",
                          "close": f"{closes[i]:.2f}", "currency": cur, "times": f"{abs(ret) / sd:.1f}"}
                stock = prof["kind"] == "stock"

                def move(t: Translator, up=up, reason=reason, fields=fields, stock=stock) -> tuple[str, str]:
                    if stock:
                        title = (t("{name} ({ticker}) shares jump {pct}% {reason}", reason=t(reason), **fields) if up
                                 else t("{name} ({ticker}) shares slide {pct}% {reason}", reason=t(reason), **fields))
                    else:
                        title = (t("{name} ({ticker}) rises {pct}% {reason}", reason=t(reason), **fields) if up
                                 else t("{name} ({ticker}) falls {pct}% {reason}", reason=t(reason), **fields))
                    summary = (t("{ticker} closed at {close} {currency}, up {pct}% on the day, about {times} times "
                                  "its recent daily volatility.", **fields) if up else
                               t("{ticker} closed at {close} {currency}, down {pct}% on the day, about {times} times "
                                  "its recent daily volatility.", **fields))
                    return title, summary

                items.append(self._item(day, "16:30:00", move, "large_move"))
            elif _unit(t, "note", day.date()) < 0.025 and not prof["index"]:
                prev = float(closes[i - 1])
                tz = float(_rng(t, "target", day.date()).standard_normal())
                mom = closes[i - 1] / closes[i - 21] - 1.0
                target = prev * (1.0 + 0.08 + 0.5 * mom + 0.08 * tz)
                stance = N_("Buy") if target > prev * 1.1 else (N_("Sell") if target < prev * 0.95 else N_("Neutral"))
                fields = {"name": name, "target": f"{target:.2f}", "currency": cur, "move": f"{mom * 100:+.1f}",
                          "prev": f"{prev:.2f}"}

                def note(t: Translator, stance=stance, fields=fields) -> tuple[str, str]:
                    return (t("Demo Securities rates {name} {stance}, price target {target} {currency}",
                               stance=t(stance), **fields),
                            t("The analyst note cites the stock's {move}% move over the past month; the previous "
                               "close was {prev} {currency}.", **fields))

                items.append(self._item(day, "08:15:00", note, "analyst_note"))
            if not prof["index"] and (day.day_of_week in (1, 3) or _unit(t, "brief", day.date()) < 0.3):
                items.append(self._company_brief(t, prof, day, closes[i - 6:i]))
            if not prof["index"] and _unit(prof["sector"], "sector_news", day.date()) < 0.08:
                bench = prof["benchmark"]
                bdf = _full(bench)
                bpos = bdf.index.searchsorted(day, side="right") - 1
                if bpos >= 5:
                    bret = float(bdf["Close"].iloc[bpos] / bdf["Close"].iloc[bpos - 5] - 1.0)
                    group = _news_group(prof)[0]
                    fields = {"bench": bench, "move": f"{bret * 100:+.1f}"}

                    def sector(t: Translator, gains=bret > 0, group=group, fields=fields) -> tuple[str, str]:
                        g = t(group) if t.has(group) else sector_label(group, t.lang)
                        title = (t("{group} stocks track broader market gains", group=g) if gains else
                                 t("{group} stocks track broader market losses", group=g))
                        return title, t("{group} stocks ({industry}) moved with the market; the {bench} benchmark is "
                                         "{move}% over five sessions.", group=g,
                                         industry=sector_label(prof["industry"], t.lang), **fields)

                    items.append(self._item(day, "12:00:00", sector, "sector"))
        if not prof["index"]:
            for qe, edate, surprise in earnings_calendar(t, today().year):
                if edate < s_ts or edate > e_ts:
                    continue
                qs = _quarters(t, edate)
                if not qs or qs[-1]["report_date"] != edate:
                    continue
                q = qs[-1]
                beat = q["eps"] >= q["eps_estimate"]
                growth = f"{q['revenue'] / qs[-5]['revenue'] - 1.0:+.1%}" if len(qs) >= 5 else None
                fields = {"name": name, "q": (qe.month - 1) // 3 + 1, "year": qe.year, "eps": f"{q['eps']:.2f}",
                          "estimate": f"{q['eps_estimate']:.2f}", "revenue": f"{q['revenue'] / 1e6:,.0f}",
                          "currency": _accounts_currency(prof), "growth": growth,
                          "margin": f"{q['net_income'] / q['revenue']:.1%}"}

                def earnings(t: Translator, beat=beat, fields=fields) -> tuple[str, str]:
                    fields = {**fields, "quarter": t("Q{q} {year}", **fields)}
                    title = (t("{name} beats estimates: {quarter} EPS {eps} vs {estimate} expected", **fields) if beat
                             else t("{name} misses estimates: {quarter} EPS {eps} vs {estimate} expected", **fields))
                    summary = (t("Revenue was {revenue} million {currency}, revenue {growth} year on year; net margin "
                                  "{margin}.", **fields) if fields["growth"] else
                               t("Revenue was {revenue} million {currency}; net margin {margin}.", **fields))
                    return title, summary

                items.append(self._item(edate, "07:00:00", earnings, "earnings"))
                guide = "raises" if surprise > 0.5 else ("cuts" if surprise < -0.5 else "reaffirms")

                def guidance(t: Translator, guide=guide, fields=fields) -> tuple[str, str]:
                    fields = {**fields, "quarter": t("Q{q} {year}", **fields)}
                    if guide == "raises":
                        return (t("{name} raises full-year guidance", **fields),
                                t("Management raises its outlook alongside {quarter} results.", **fields))
                    if guide == "cuts":
                        return (t("{name} cuts full-year guidance", **fields),
                                t("Management cuts its outlook alongside {quarter} results.", **fields))
                    return (t("{name} reaffirms full-year guidance", **fields),
                            t("Management reaffirms its outlook alongside {quarter} results.", **fields))

                items.append(self._item(edate, "07:05:00", guidance, "guidance"))
        for it in items:
            it["ticker"] = t
        items.sort(key=lambda x: x["published"], reverse=True)
        return items

    _BRIEFS = (
        N_("{name} signs a multi-year supply agreement with a major customer"),
        N_("{name} to present at an industry conference next week"),
        N_("{name} unveils an update to its {industry} line-up"),
        N_("{name} announces a partnership in its {industry} business"),
        N_("Investors weigh {name}'s outlook ahead of its next quarterly report"),
        N_("{name} shares in focus after a {week}% week"),
        N_("Options traders position for a larger move in {name}"),
        N_("{name} management reiterates its capital-return priorities"),
        N_("Institutional holders adjust their stakes in {name}, filings show"),
        N_("{name} appoints a new head of its {industry} unit"),
        N_("Short interest in {name} eases, exchange data show"),
        N_("{name} expands capacity with a new facility"),
    )

    def _company_brief(self, t: str, prof: dict[str, Any], day: pd.Timestamp, before: np.ndarray) -> dict[str, Any]:
        """A routine company headline (every Tuesday and Thursday, and on about a third of other days),
        so a company's news flow has several items every week; it knows only the closes before ``day``."""
        prev = float(before[-1])
        week = float(before[-1] / before[0] - 1.0)
        pick = int(_unit(t, "brief_pick", day.date()) * len(self._BRIEFS))
        title = self._BRIEFS[pick]
        if pick == 10 and week <= 0:
            title = N_("Short interest in {name} rises, exchange data show")
        fields = {"name": prof["name"], "ticker": t, "week": f"{week * 100:+.1f}", "prev": f"{prev:.2f}",
                  "currency": prof["currency"]}

        def brief(t: Translator) -> tuple[str, str]:
            industry = sector_label(prof["industry"], t.lang)
            return (t(title, industry=industry.lower() if t.lang == "en" else industry, **fields),
                    t("{ticker} last closed at {prev} {currency}, {week}% over the five sessions before.", **fields))

        return self._item(day, "11:00:00", brief, "company")

    def _item(self, day: pd.Timestamp, hhmmss: str, text: Any, kind: str) -> dict[str, Any]:
        """One headline in the provider's language; the headline itself says it is invented, also where it is
        quoted without its source. A translated item carries ``tone``: what the word lexicon reads in its
        English twin (the tool tallies it and the offline engine scores it), so a Chinese run weighs the
        same news as an English one."""
        t = translator(self.language)
        title, summary = text(t)
        label = t(LABEL)
        item = {"title": f"{t(HEADLINE_MARK)}{title}", "source": t("DemoWire ({label})", label=label),
                "published": f"{day.date().isoformat()}T{hhmmss}", "summary": f"{summary} [{label}]",
                "kind": kind, "synthetic": True}
        if t.lang != "en":
            from tradingagents.lexicon import tone

            en = translator("en")
            en_title, en_summary = text(en)
            score = tone(f"{HEADLINE_MARK}{en_title} {item['published']} | DemoWire ({LABEL}) {en_summary} {TAG}")
            item["tone"] = "bullish" if score > 0 else "bearish" if score < 0 else "neutral"
        return item

    def global_news(self, as_of: str, look_back_days: int = 7) -> list[dict[str, Any]]:
        e = pd.Timestamp(check_date(as_of))
        look = check_days(look_back_days, 3650)
        s = e - pd.Timedelta(days=look - 1)
        bench = "SPY"
        df = _full(bench)
        r = _path(bench, today().year)[1]
        lo = max(df.index.searchsorted(s), 6)
        hi = df.index.searchsorted(e, side="right")
        items: list[dict[str, Any]] = []
        for i in range(lo, hi):
            day = df.index[i]
            ret = float(r[i])
            close = f"{df['Close'].iloc[i]:.2f}"
            if abs(ret) < 0.015:
                breadth = _pick([N_("breadth was mixed"), N_("defensive sectors led"), N_("cyclicals outperformed"),
                                 N_("trading volume was below average"), N_("megacaps drove the index")],
                                "breadth", day.date())

                def quiet(t: Translator, up=ret > 0, move=f"{ret * 100:+.2f}", close=close, why=breadth):
                    return ((t("Markets close higher: S&P 500 proxy {move}%", move=move) if up else
                             t("Markets close lower: S&P 500 proxy {move}%", move=move)),
                            t("SPY settled at {close}; {why}.", close=close, why=t(why)))

                items.append(self._item(day, "16:10:00", quiet, "market"))
            else:
                macro = _pick([N_("Treasury yields moved sharply"), N_("the dollar swung against major currencies"),
                               N_("oil prices moved more than 3%"), N_("investors rotated between growth and value")],
                              "macro", day.date())

                def big(t: Translator, up=ret > 0, move=f"{abs(ret) * 100:.1f}", close=close, why=macro):
                    return ((t("Stocks rally: S&P 500 proxy gains {move}%", move=move) if up else
                             t("Stocks sell off: S&P 500 proxy drops {move}%", move=move)),
                            t("SPY closed at {close}; {why}.", close=close, why=t(why)))

                items.append(self._item(day, "16:15:00", big, "market"))
            if day.day_of_week == 4:
                wret = float(df["Close"].iloc[i] / df["Close"].iloc[i - 5] - 1.0)
                items.append(self._item(day, "17:00:00", lambda t, m=f"{wret * 100:+.1f}", c=close: (
                    t("Weekly wrap: S&P 500 proxy {move}% this week", move=m),
                    t("SPY ended the week at {close}.", close=c)), "market"))
                if day.day <= 7:
                    jobs = int(150 + 120 * float(_rng("jobs", day.date()).standard_normal()))
                    items.append(self._item(day, "08:30:00", lambda t, j=jobs: (
                        t("Payrolls report: economy adds {jobs}k jobs", jobs=j),
                        t("The monthly employment report shaped rate expectations.")), "macro"))
            if 10 <= day.day <= 14 and day.day_of_week == 2:
                cpi = 2.5 + 1.2 * float(_rng("cpi", day.year, day.month).standard_normal())
                items.append(self._item(day, "08:30:00", lambda t, c=f"{cpi:.1f}": (
                    t("Consumer prices rise {cpi}% year on year", cpi=c),
                    t("The inflation print fed into the rate outlook.")), "macro"))
            if day.month in (1, 3, 5, 6, 7, 9, 11, 12) and 15 <= day.day <= 21 and day.day_of_week == 2:
                u = _unit("fed", day.year, day.month)
                act = (N_("Central bank holds rates steady") if u < 0.6 else
                       N_("Central bank cuts rates by 25 bp") if u < 0.8 else N_("Central bank raises rates by 25 bp"))
                items.append(self._item(day, "14:00:00", lambda t, a=act: (
                    t(a), t("Policymakers pointed to incoming data for the next move.")), "macro"))
        items.sort(key=lambda x: x["published"], reverse=True)
        return items

    _POSTS = {
        "bullish": (N_("${ticker} breaking out, adding more here"), N_("Loving the momentum in ${ticker}, {move} this week"),
                    N_("${ticker} dips get bought every time. Long and strong"),
                    N_("${ticker} earnings power is underrated, holding"), N_("Strong tape in ${ticker} today, closed at {close}")),
        "bearish": (N_("${ticker} looks heavy, trimming my position"), N_("${ticker} {move} this week, support is breaking"),
                    N_("Not touching ${ticker} until it stops bleeding"), N_("${ticker} valuation makes no sense here"),
                    N_("Sold my ${ticker} at {close}, chart looks broken")),
        "neutral": (N_("${ticker} going nowhere, waiting for a catalyst"),
                    N_("Anyone else watching ${ticker} chop around {close}?"),
                    N_("${ticker} {move} this week, volume is light"), N_("Holding ${ticker}, no strong view right now")),
    }

    def social(self, ticker: str, as_of: str, look_back_days: int = 7) -> list[dict[str, Any]]:
        t = check_ticker(ticker)
        e = pd.Timestamp(check_date(as_of))
        look = check_days(look_back_days, 365)
        s = e - pd.Timedelta(days=look - 1)
        df = _full(t)
        lo = max(df.index.searchsorted(s), 6)
        hi = df.index.searchsorted(e, side="right")
        closes = df["Close"].to_numpy()
        r = _path(t, today().year)[1]
        tr = translator(self.language)
        mark, label = tr(POST_MARK), tr(LABEL)
        posts: list[dict[str, Any]] = []
        for i in range(lo, hi):
            day = df.index[i]
            wk = float(closes[i] / closes[i - 5] - 1.0)
            sd = _trailing_sd(r, i)
            score = math.tanh(wk / (sd * math.sqrt(5.0)))
            rz = _rng(t, "social", day.date()).standard_normal(8)
            count = 2 + int(abs(rz[0]) * 1.5)
            first = int(_unit(t, "post", day.date()) * 20)
            for j in range(min(count, 5)):
                tone_v = score + 0.6 * rz[1 + j]
                tone = "bullish" if tone_v > 0.35 else ("bearish" if tone_v < -0.35 else "neutral")
                pool = self._POSTS[tone]
                text = mark + tr(pool[(first + j) % len(pool)], ticker=t, move=f"{wk * 100:+.1f}%", close=f"{closes[i]:.2f}")
                posts.append({
                    "published": f"{day.date().isoformat()}T{10 + j * 2:02d}:{int(_unit(t, day.date(), j) * 60):02d}:00",
                    "author": f"demo_trader_{int(_unit(t, 'author', day.date(), j) * 9000) + 1000}",
                    "text": f"{text} [{label}]", "tone": tone,
                    "likes": int(5 + 200 * _unit(t, "likes", day.date(), j) * (1 + abs(score))),
                    "source": tr(POST_SOURCE, label=label), "synthetic": True, "ticker": t,
                })
        posts.sort(key=lambda x: x["published"], reverse=True)
        return posts


def calibration_check(ticker: str, as_of: str) -> dict[str, tuple[float, float, bool]]:
    """How the demo market's figures for a company of the calibration table stand against the table
    on a date: {measure: (demo value, table value, within ``TOLERANCE``)}; the P/E's table value is
    the middle of its band. Measured through the provider's own answers (fundamentals, statements).

    Losses and break-even years (INTC 2024, BA, a write-off year): the EPS is judged against the size
    of the four quarters' profits and losses (the sum of their absolute values, the same as the TTM
    when no quarter changes sign), so a TTM that nets a profit against a loss near zero is not held
    to ±15% of almost nothing (the key is then "eps_mixed", both values as a fraction of that size).
    The P/E is judged by what the table's trailing earnings are: where
    they are a clear profit (at least 2% of revenue and half the quarters' gross size), it must lie in
    the row's band; a clear loss must show no P/E (the provider gives none for negative earnings, as
    Yahoo Finance does); near break-even, where a P/E means nothing, it must show none or one above
    the band's low end. The key says which case applied: "pe", "pe_loss" or "pe_break_even".
    """
    row = calibrated(ticker)
    if row is None:
        raise DataNotFound(f"{ticker} is not in the demo market's calibration table.")
    p = DemoProvider()
    f = p.fundamentals(ticker, as_of)
    inc = p.statements(ticker, "income_statement", "quarterly", as_of)
    bal = p.statements(ticker, "balance_sheet", "quarterly", as_of)
    ends = [pd.Timestamp(c).date() for c in inc.columns]  # newest first
    revenue = [float(v) for v in inc.loc["Total Revenue"]]
    want_q = [quarter_revenue(row, e) for e in ends]
    want_ni = [quarter_revenue(row, e) * net_margin(row, e) for e in ends[:4]]
    shares = row["shares"]
    out: dict[str, tuple[float, float, bool]] = {}

    def rel(key: str, got: float, want: float) -> None:
        out[key] = (got, want, abs(got / want - 1.0) <= TOLERANCE[key])

    def pts(key: str, got: float, want: float) -> None:
        out[key] = (got, want, abs(got - want) <= TOLERANCE[key])

    rel("revenue", revenue[0], want_q[0])
    pts("net_margin", f["profit_margin"], sum(want_ni) / sum(want_q[:4]))
    pts("gross_margin", f["gross_margin"], row["gross_margin"])
    if len(revenue) >= 5:
        got, want = revenue[0] / revenue[4], want_q[0] / want_q[4]
        out["revenue_growth"] = (got - 1.0, want - 1.0, abs(got / want - 1.0) <= TOLERANCE["revenue_growth"])
    rel("debt", float(bal.loc["Total Debt"].iloc[0]), row["debt"])
    want_eps, size = sum(want_ni) / shares, sum(abs(x) for x in want_ni) / shares
    ok = abs(f["eps_ttm"] - want_eps) <= TOLERANCE["eps"] * size
    if size <= abs(want_eps) * (1.0 + 1e-9):
        out["eps"] = (f["eps_ttm"], want_eps, ok)
    else:  # a profit and a loss among the four quarters: both EPS as a fraction of the quarters' size
        out["eps_mixed"] = (f["eps_ttm"] / size, want_eps / size, ok)
    lo, hi = row["pe_band"]
    pe = f["pe_ratio_ttm"]
    case = pe_case(sum(want_ni), sum(abs(x) for x in want_ni), sum(want_q[:4]))
    ok = {"profit": pe is not None and lo <= pe <= hi, "loss": pe is None,
          "break_even": pe is None or pe >= lo}[case]
    out[{"profit": "pe", "loss": "pe_loss", "break_even": "pe_break_even"}[case]] = (
        pe if pe is not None else float("nan"), (lo + hi) / 2.0, ok)
    drop = min(b / a - 1.0 for a, b in zip(revenue[1:], revenue, strict=False))
    out["steady_drop"] = (drop, -TOLERANCE["steady_drop"], drop > -TOLERANCE["steady_drop"])
    return out


def pe_case(ttm_net_income: float, quarters_size: float, ttm_revenue: float) -> str:
    """Which P/E the table's trailing earnings call for: "profit" (a P/E in the band), "loss" (none),
    or "break_even" (none, or a large one): a clear profit or loss is at least 2% of revenue and half
    the size of the four quarters' profits and losses together."""
    clear = max(0.02 * ttm_revenue, 0.5 * quarters_size)
    if ttm_net_income >= clear:
        return "profit"
    if ttm_net_income <= -clear:
        return "loss"
    return "break_even"


def clear_cache() -> None:
    """Drop the in-process caches (the bench times a cold generation)."""
    _path.cache_clear()
    profile.cache_clear()
    earnings_calendar.cache_clear()
    _calendar.cache_clear()
    _market.cache_clear()
    _all_quarters.cache_clear()


__all__ = ["DemoProvider", "LABEL", "calibration_check", "pe_case", "TAG", "profile", "earnings_calendar", "demo_benchmark", "is_index",
           "clear_cache"]

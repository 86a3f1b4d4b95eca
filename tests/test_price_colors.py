"""Candles follow the listing's convention (issue 43): red up on Shanghai, Shenzhen and Hong Kong, green up
elsewhere; one rule (``studio.theme.price_colors``) read by the price chart and the HTML export's sparkline."""

from __future__ import annotations

import pandas as pd

from studio import charts, export, theme


def _frame() -> pd.DataFrame:
    days = pd.bdate_range("2024-05-06", periods=4)
    return pd.DataFrame({"Open": [10.0, 11.0, 10.5, 10.0], "High": [11.5, 11.6, 11.0, 10.8],
                         "Low": [9.5, 10.2, 9.9, 9.4], "Close": [11.0, 10.5, 10.8, 9.6],
                         "Volume": [100, 200, 150, 120]}, index=days)


def test_china_and_hong_kong_listings_rise_red_and_others_green():
    assert theme.price_colors("600519.SS") == theme.price_colors("000001.sz") == theme.price_colors("0700.HK") \
        == (theme.FALL, theme.RISE) == ("#EB5757", "#1DB954")
    for ticker in ("NVDA", "7203.T", "BP.L", "SHEL", "", None):
        assert theme.price_colors(ticker) == ("#1DB954", "#EB5757"), ticker


def test_the_price_chart_draws_a_rising_day_in_the_listings_colour():
    for ticker, rise, fall in (("0700.HK", "#EB5757", "#1DB954"), ("NVDA", "#1DB954", "#EB5757")):
        fig = charts.price_figure(_frame(), ticker, "2024-05-09", "Buy")
        candle = next(tr for tr in fig.data if tr.type == "candlestick")
        assert (candle.increasing.line.color, candle.decreasing.line.color) == (rise, fall), ticker
        volume = next(tr for tr in fig.data if tr.type == "bar")
        assert list(volume.marker.color) == [rise, fall, rise, fall], ticker  # close ≥ open: a rising day


def test_the_html_exports_sparkline_follows_the_same_rule():
    up = [10.0, 10.5, 11.0]
    cn = export.report_html({"company_of_interest": "600519.SS", "trade_date": "2024-05-10"}, "Buy", {}, closes=up)
    us = export.report_html({"company_of_interest": "NVDA", "trade_date": "2024-05-10"}, "Buy", {}, closes=up)
    assert 'stroke="#EB5757"' in cn and 'stroke="#1DB954"' in us

"""The sidebar's "Model prices" editor: this session's price edits, used by the next runs' estimates and costs."""

from __future__ import annotations

import os
from typing import Any

import streamlit as st

from studio.ui.lang import _
from tradingagents import pricing
from tradingagents.config import (
    resolve_config,
)
from tradingagents.errors import ConfigError

KEY_PRICING = "_llm_pricing"  # the session's valid price edits: {model: (input, output)}
KEY_PRICES_EDITOR = "set_prices_editor"
PRICE_COLUMNS = ("model", "$/1M input", "$/1M output")


def list_prices() -> dict[str, tuple[float, float]]:
    """The table the editor starts from: the settings' prices without this session's edits.

    (The defaults, then ``llm_pricing`` of the config, then ``TRADINGAGENTS_LLM_PRICING``.)
    """
    return pricing.pricing_table(resolve_config())


def prices_from_rows(rows: list[dict[str, Any]], base: dict[str, tuple[float, float]]) -> dict:
    """The edited table's rows → the override (only what differs from ``base``); ConfigError if bad."""
    table: dict[str, Any] = {}
    for i, row in enumerate(rows, start=1):
        model = str(row.get(PRICE_COLUMNS[0]) or "").strip()
        inp, out = row.get(PRICE_COLUMNS[1]), row.get(PRICE_COLUMNS[2])
        blank = [v is None or (isinstance(v, float) and v != v) for v in (inp, out)]
        if not model and all(blank):
            continue  # an empty new row
        if not model:
            raise ConfigError(_("Model prices, row {row}: give the model's name (as typed in Quick/Deep model).",
                                row=i))
        if any(blank):
            raise ConfigError(_("Model prices, {model}: give both prices, $ per 1M input and per 1M output tokens.",
                                model=repr(model)))
        if model in table:
            raise ConfigError(_("Model prices: {model} is listed twice; keep one row.", model=repr(model)))
        table[model] = [inp, out]
    valid = pricing.validate_pricing(table, "Model prices") or {}
    return {m: p for m, p in valid.items() if base.get(m) != p}


def _reset_prices() -> None:
    st.session_state.pop(KEY_PRICING, None)
    st.session_state.pop(KEY_PRICES_EDITOR, None)
    st.session_state.pop(KEY_PRICES_START, None)


KEY_PRICES_OPEN = "prices_open"  # the expander's open state (its content is built only while it is open)
KEY_PRICES_START = "_prices_start"  # the rows the open editor started from: the list prices with the session's edits


def prices_editor() -> None:
    """The "Model prices" expander: this session's prices, used by the next runs' estimates and costs.

    The table is built only while the expander is open: its data editor loads pandas (~0.5 s), which
    every page's first run paid before the page drew anything. The session's edits (``KEY_PRICING``)
    outlive a closed expander, and it opens on them again."""
    box = st.expander(_("Model prices"), icon=":material/payments:", key=KEY_PRICES_OPEN, on_change="rerun")
    if not box.open:
        st.session_state.pop(KEY_PRICES_START, None)
        if st.session_state.get(KEY_PRICING):
            with box:
                st.caption(_("Edited in this session: {names}.", names=", ".join(sorted(st.session_state[KEY_PRICING]))))
        return
    base = list_prices()
    with box:
        st.caption(_("USD per 1M tokens. Edits apply to the next runs of this browser session only (never saved "
                     "to a file). Add a row for a model that is not listed."))
        if os.environ.get(pricing.ENV_VAR, "").strip():
            st.caption(_("{env} is set: its models' prices win over edits here.", env=pricing.ENV_VAR))
        rows = st.session_state.get(KEY_PRICES_START)
        if rows is None:  # opened now: start from the prices in force (the editor's edits apply on top of these)
            table = {**base, **(st.session_state.get(KEY_PRICING) or {})}
            rows = [{PRICE_COLUMNS[0]: m, PRICE_COLUMNS[1]: p[0], PRICE_COLUMNS[2]: p[1]} for m, p in table.items()]
            st.session_state[KEY_PRICES_START] = rows
        df = st.data_editor(
            rows, key=KEY_PRICES_EDITOR, num_rows="dynamic", hide_index=True, width="stretch",
            column_config={
                PRICE_COLUMNS[0]: st.column_config.TextColumn(_("model")),
                PRICE_COLUMNS[1]: st.column_config.NumberColumn(_("$/1M input"), min_value=0.0, format="%.3f"),
                PRICE_COLUMNS[2]: st.column_config.NumberColumn(_("$/1M output"), min_value=0.0, format="%.3f"),
            })
        try:
            override = prices_from_rows(list(df), base)
        except ConfigError as exc:
            st.error(_("{problem} Until it is fixed, the last valid prices stay in force.", problem=exc),
                     icon=":material/error:")
        else:
            if override:
                st.session_state[KEY_PRICING] = override
            else:
                st.session_state.pop(KEY_PRICING, None)
        if st.session_state.get(KEY_PRICING):
            names = ", ".join(sorted(st.session_state[KEY_PRICING]))
            st.caption(_("Edited in this session: {names}.", names=names))
        st.button(_("Reset to list prices"), key="prices_reset", on_click=_reset_prices,
                  icon=":material/restart_alt:", disabled=not st.session_state.get(KEY_PRICING))

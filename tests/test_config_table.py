"""The settings table (``tradingagents/config/table.py``): one name per setting, the CLIs derived from it."""

from __future__ import annotations

import pytest

from tradingagents import config
from tradingagents.backtest.cli import build_parser as backtest_parser
from tradingagents.cli import FLAG_OF_KEY, _run_parser, _settings_from
from tradingagents.config import (
    CHECKS,
    DEFAULTS,
    ROUND_LIMITS,
    ConfigError,
    flag_of,
    key_for_url,
    prefill_names,
    setting,
    setting_label,
    settings_table,
    url_name,
)
from tradingagents.i18n import translator


def test_every_row_is_a_setting_with_its_one_check_and_its_bounds():
    rows = settings_table()
    assert len({r.key for r in rows}) == len(rows)
    for row in rows:
        assert row.key in DEFAULTS and row.check is CHECKS[row.key], row.key
    for key in ("max_debate_rounds", "max_risk_discuss_rounds"):
        assert setting(key).bounds == ROUND_LIMITS
    lo, hi = setting("max_concurrent_llm_calls").bounds
    # the bounds the table shows are the ones the check enforces
    assert config.check_setting("max_concurrent_llm_calls", hi, "x") == hi
    for outside in (lo - 1, hi + 1):
        with pytest.raises(ConfigError):
            config.check_setting("max_concurrent_llm_calls", outside, "x")
    assert setting("llm_provider").bounds is None


def test_names_labels_and_links_come_from_the_row():
    assert url_name("max_debate_rounds") == "debate_rounds" and key_for_url("debate_rounds") == "max_debate_rounds"
    assert url_name("data_vendor") == "vendor" and url_name("ticker") == "ticker" == key_for_url("ticker")
    assert flag_of("max_debate_rounds") == "--debate-rounds"
    assert flag_of("analyst_execution") == "--parallel/--sequential"
    assert setting_label("max_debate_rounds") == "Debate rounds"
    assert setting_label("max_debate_rounds", translator("zh")) != "Debate rounds"
    # a link's prefill by the form's names; a setting given both ways keeps the form's name's value
    assert prefill_names({"max_debate_rounds": 3, "ticker": "NVDA"}) == {"debate_rounds": 3, "ticker": "NVDA"}
    assert prefill_names({"max_debate_rounds": 3, "debate_rounds": 2}) == {"debate_rounds": 2}


@pytest.mark.parametrize("parser", [_run_parser, backtest_parser])
def test_the_command_lines_spell_each_setting_as_the_table_does(parser):
    options = {o for action in parser()._actions for o in action.option_strings}
    for key in ("llm_provider", "data_vendor", "max_debate_rounds", "max_risk_discuss_rounds", "max_cost_usd", "home"):
        assert setting(key).flag in options, key
    for key, flag in FLAG_OF_KEY.items():
        if key != "pm_notes":
            assert flag == flag_of(key)


def test_the_run_commands_flags_become_settings(monkeypatch):
    args = _run_parser().parse_args(["NVDA", "2024-05-10", "--debate-rounds", "3", "--sequential", "--no-checkpoint",
                                     "--no-stream", "--allow-synthetic", "--analysts", "news,market"])
    settings = _settings_from(args, check_llm=False)
    assert settings["max_debate_rounds"] == 3 and settings["analyst_execution"] == "sequential"
    assert settings["checkpoint_enabled"] is False and settings["llm_streaming"] is False
    assert settings["allow_synthetic"] is True and settings["selected_analysts"] == ["news", "market"]
    # a flag left out leaves the setting to the environment (TRADINGAGENTS_<KEY>) and the default
    monkeypatch.setenv("TRADINGAGENTS_MAX_DEBATE_ROUNDS", "2")
    settings = _settings_from(_run_parser().parse_args(["NVDA", "2024-05-10"]), check_llm=False)
    assert settings["max_debate_rounds"] == 2 and settings["checkpoint_enabled"] is True
    assert settings["allow_synthetic"] is False

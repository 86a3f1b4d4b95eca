"""Config, validation, rating and the initial-state contract."""

from __future__ import annotations

import datetime as dt
import typing

import pytest

from tradingagents.agents.utils.agent_states import AgentState, InvestDebateState, RiskDebateState
from tradingagents.config import (
    DEFAULT_CONFIG,
    ConfigError,
    Settings,
    benchmark_for,
    public_config,
    resolve_config,
)
from tradingagents.graph.propagation import Propagator
from tradingagents.rating import RATINGS_5_TIER, parse_rating
from tradingagents.validation import (
    InvalidDateError,
    InvalidTickerError,
    ValidationError,
    safe_path_component,
    validate_date,
    validate_ticker,
)

# ---------------------------------------------------------------- config


def test_defaults_have_the_documented_keys_and_values():
    cfg = resolve_config()
    assert cfg["llm_provider"] == "offline"
    assert cfg["data_vendor"] == "demo"
    assert cfg["max_debate_rounds"] == 1 and cfg["max_risk_discuss_rounds"] == 1
    assert cfg["max_recur_limit"] == 100 and cfg["holding_days"] == 5
    assert cfg["benchmark_ticker"] is None and cfg["memory_log_max_entries"] is None
    assert cfg["output_language"] == "English"
    assert cfg["benchmark_map"][".T"] == "^N225"
    for key in ("deep_think_llm", "quick_think_llm", "backend_url", "checkpoint_enabled", "analyst_execution"):
        assert key in cfg


def test_paths_follow_the_home_at_call_time(ta_home, monkeypatch, tmp_path):
    cfg = resolve_config()
    assert cfg["memory_log_path"].startswith(str(ta_home))
    assert cfg["checkpoint_dir"] == str(ta_home / "checkpoints")
    other = tmp_path / "other"
    monkeypatch.setenv("TRADINGAGENTS_HOME", str(other))
    assert resolve_config()["results_dir"] == str(other / "results")
    assert resolve_config({"home": str(tmp_path / "x")})["memory_dir"] == str(tmp_path / "x" / "memory")


def test_env_overrides_are_coerced(monkeypatch):
    monkeypatch.setenv("TRADINGAGENTS_MAX_DEBATE_ROUNDS", "3")
    monkeypatch.setenv("TRADINGAGENTS_CHECKPOINT_ENABLED", "off")
    monkeypatch.setenv("TRADINGAGENTS_MEMORY_LOG_MAX_ENTRIES", "50")
    monkeypatch.setenv("TRADINGAGENTS_SELECTED_ANALYSTS", "market,news")
    cfg = resolve_config()
    assert cfg["max_debate_rounds"] == 3
    assert cfg["checkpoint_enabled"] is False
    assert cfg["memory_log_max_entries"] == 50
    assert cfg["selected_analysts"] == ["market", "news"]
    # an explicit config beats the environment
    assert resolve_config({"max_debate_rounds": 2})["max_debate_rounds"] == 2


def test_bad_env_value_names_the_variable(monkeypatch):
    monkeypatch.setenv("TRADINGAGENTS_HOLDING_DAYS", "five")
    with pytest.raises(ConfigError, match="TRADINGAGENTS_HOLDING_DAYS"):
        resolve_config()


def test_settings_are_frozen_and_never_share_state():
    a = resolve_config({"selected_analysts": ["market"]})
    for change in (lambda: a["benchmark_map"].__setitem__(".T", "changed"),
                   lambda: a["selected_analysts"].append("news"),
                   lambda: a.__setitem__("llm_provider", "openai"),
                   lambda: setattr(a, "llm_provider", "openai"),
                   lambda: a["benchmark_map"].update({".T": "x"})):
        with pytest.raises(TypeError, match="read-only"):
            change()
    assert resolve_config()["benchmark_map"][".T"] == "^N225"
    assert DEFAULT_CONFIG["benchmark_map"][".T"] == "^N225"
    src = {"selected_analysts": ["market"]}
    resolve_config(src)
    assert src == {"selected_analysts": ["market"]}
    with pytest.raises(TypeError):
        DEFAULT_CONFIG["llm_provider"] = "openai"  # type: ignore[index]
    with pytest.raises(TypeError):
        DEFAULT_CONFIG["selected_analysts"].append("x")  # no global mutable config, nested values too


def test_settings_read_like_a_mapping_and_attributes_and_serialise(ta_home):
    import copy
    import json
    import pickle

    s = resolve_config({"selected_analysts": ["market", "News"], "max_debate_rounds": "2"})
    assert isinstance(s, Settings)
    assert s.selected_analysts == s["selected_analysts"] == ["market", "news"]
    assert s.max_debate_rounds == 2 and s.get("nope", 7) == 7
    with pytest.raises(AttributeError):
        s.no_such_setting  # noqa: B018
    plain = json.loads(json.dumps(dict(s)))
    assert plain["benchmark_map"][".T"] == "^N225" and plain["home"] == str(ta_home)
    assert pickle.loads(pickle.dumps(s)) == s and copy.deepcopy(s) is s
    editable = s.to_dict()
    editable["selected_analysts"].append("social")  # a plain copy: the settings stay as they were
    assert s.selected_analysts == ["market", "news"]


def test_resolving_settings_again_is_idempotent_and_cheap(monkeypatch):
    s = resolve_config({"holding_days": 3})
    monkeypatch.setenv("TRADINGAGENTS_HOLDING_DAYS", "9")  # resolved once: a later change is not mixed in
    assert resolve_config(s) is s and resolve_config(s).holding_days == 3
    assert resolve_config(dict(s)) == s  # a plain copy resolves to the same settings


def test_replace_validates_and_rederives_paths_and_models(tmp_path):
    s = resolve_config({"llm_provider": "openai"})
    assert s.quick_think_llm == "gpt-4o-mini"
    o = s.replace(llm_provider="ollama")
    assert (o.llm_provider, o.quick_think_llm, o.deep_think_llm) == ("ollama", "llama3.1", "llama3.1")
    assert s.llm_provider == "openai"  # the original is untouched
    pinned = resolve_config({"llm_provider": "openai", "quick_think_llm": "my-model"}).replace(llm_provider="ollama")
    assert pinned.quick_think_llm == "my-model" and pinned.deep_think_llm == "llama3.1"
    moved = s.replace(home=str(tmp_path / "h"))
    assert moved.results_dir == str(tmp_path / "h" / "results")
    kept = resolve_config({"results_dir": str(tmp_path / "r")}).replace(home=str(tmp_path / "h2"))
    assert kept.results_dir == str(tmp_path / "r") and kept.memory_dir == str(tmp_path / "h2" / "memory")
    with pytest.raises(ConfigError, match="holding_days"):
        s.replace(holding_days=-1)


@pytest.mark.parametrize(
    "partial, needle",
    [({"max_debate_rounds": 0}, "max_debate_rounds"), ({"max_risk_discuss_rounds": "many"}, "max_risk_discuss_rounds"),
     ({"holding_days": 0}, "holding_days"), ({"holding_days": True}, "holding_days"),
     ({"max_concurrent_llm_calls": 0}, "max_concurrent_llm_calls"), ({"llm_timeout": -1}, "llm_timeout"),
     ({"data_vendor": "nasdaq"}, "data_vendor"), ({"selected_analysts": ["tarot"]}, "tarot"),
     ({"selected_analysts": []}, "at least one analyst"), ({"analyst_execution": "swarm"}, "analyst_execution"),
     ({"checkpoint_enabled": "perhaps"}, "checkpoint_enabled"), ({"benchmark_ticker": "BAD TICKER"}, "benchmark_ticker"),
     ({"bm25_b": 2}, "bm25_b"), ({"memory_log_max_entries": 0}, "memory_log_max_entries"),
     ({"backend_url": "localhost:11434"}, "backend_url"), ({"output_language": ""}, "output_language")],
)
def test_every_key_is_validated_once_naming_the_key(partial, needle):
    with pytest.raises(ConfigError, match=needle):
        resolve_config(partial)


def test_unknown_provider_is_an_llm_config_error_listing_the_providers():
    from tradingagents.errors import LLMConfigError, exit_code_for

    with pytest.raises(LLMConfigError, match="'nope'.*ollama") as info:
        resolve_config({"llm_provider": "nope"})
    assert exit_code_for(info.value) == 2 and not info.value.resumable
    assert resolve_config({"llm_provider": "LM-Studio"}).llm_provider == "lmstudio"


def test_data_vendor_env_accepts_yahoo_and_names_the_variable_when_refused(monkeypatch):
    monkeypatch.setenv("TRADINGAGENTS_DATA_VENDOR", "yahoo")
    assert resolve_config().data_vendor == "yfinance"
    monkeypatch.setenv("TRADINGAGENTS_DATA_VENDOR", "nasdaq")
    with pytest.raises(ConfigError) as info:
        resolve_config()
    message = str(info.value)
    assert "TRADINGAGENTS_DATA_VENDOR" in message and "'nasdaq'" in message
    assert all(v in message for v in ("demo", "yfinance", "csv"))
    # an explicit value beats the bad variable: the variable is not checked for what it does not set
    assert resolve_config({"data_vendor": "demo"}).data_vendor == "demo"


def test_preset_models_apply_unless_named(monkeypatch):
    assert resolve_config({"llm_provider": "ollama"}).quick_think_llm == "llama3.1"
    assert resolve_config({"llm_provider": "ollama", "quick_think_llm": ""}).quick_think_llm == "llama3.1"
    assert resolve_config({"llm_provider": "vllm"}).quick_think_llm is None  # read from the server
    monkeypatch.setenv("TRADINGAGENTS_QUICK_THINK_LLM", "qwen2.5")
    assert resolve_config({"llm_provider": "ollama"}).quick_think_llm == "qwen2.5"


@pytest.mark.parametrize(
    "ticker,bench",
    [("RELIANCE.NS", "^NSEI"), ("500325.BO", "^BSESN"), ("7203.T", "^N225"), ("0700.HK", "^HSI"),
     ("VOD.L", "^FTSE"), ("RY.TO", "^GSPTSE"), ("BHP.AX", "^AXJO"), ("600519.SS", "000001.SS"),
     ("000001.SZ", "399001.SZ"), ("AAPL", "SPY"), ("brk-b", "SPY")],
)
def test_benchmark_by_suffix(ticker, bench):
    assert benchmark_for(ticker) == bench


def test_benchmark_ticker_overrides():
    assert benchmark_for("7203.T", {"benchmark_ticker": "qqq"}) == "QQQ"


def test_public_config_drops_secrets():
    cfg = resolve_config({"api_key": "sk-secret", "openai_api_key": "x"})
    pub = public_config(cfg)
    assert "api_key" not in pub and "openai_api_key" not in pub
    assert pub["llm_provider"] == "offline"


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize("raw,clean", [("aapl", "AAPL"), (" BRK-B ", "BRK-B"), ("^GSPC", "^GSPC"),
                                       ("eurusd=x", "EURUSD=X"), ("7203.T", "7203.T"), ("A_B+C", "A_B+C")])
def test_valid_tickers(raw, clean):
    assert validate_ticker(raw) == clean


@pytest.mark.parametrize("bad", ["", "   ", "..", ".", "../etc", "a/b", "A B", "X" * 33, "AAPL\x00", "ÄPPL", "$$", None, 12])
def test_invalid_tickers(bad):
    with pytest.raises(InvalidTickerError) as err:
        validate_ticker(bad)
    assert isinstance(err.value, ValueError) and isinstance(err.value, ValidationError)
    assert "letters, digits" in str(err.value)


def test_dates():
    assert validate_date("2024-05-10") == "2024-05-10"
    assert validate_date(dt.date(2024, 5, 10)) == "2024-05-10"
    for bad in ("2024-02-30", "10/05/2024", "2024-5-1", "", "2024-05-10T00:00", None):
        with pytest.raises(InvalidDateError):
            validate_date(bad)
    tomorrow = (dt.date.today() + dt.timedelta(days=1)).isoformat()
    with pytest.raises(InvalidDateError, match="future"):
        validate_date(tomorrow)
    assert validate_date(tomorrow, allow_future=True) == tomorrow


def test_safe_path_component_never_escapes():
    assert safe_path_component("brk-b") == "BRK-B"
    assert safe_path_component(".X") == "%2EX" != safe_path_component("_.X") == "_.X"  # one-to-one
    for bad in ("..", "../x", "/abs", "a\\b"):
        with pytest.raises(InvalidTickerError):
            safe_path_component(bad)


# ---------------------------------------------------------------- rating


def test_rating_scale():
    assert RATINGS_5_TIER == ("Buy", "Overweight", "Hold", "Underweight", "Sell")


@pytest.mark.parametrize(
    "text,expected",
    [
        ("We like it; buy the dip.\n\n**Rating**: Underweight", "Underweight"),
        ("**Rating:** Overweight", "Overweight"),
        ("Rating - Sell", "Sell"),
        ("Final rating: **Strong Buy**", "Buy"),
        ("FINAL TRANSACTION PROPOSAL: **HOLD**", "Hold"),
        ("I would sell here.", "Sell"),
        ("**Rating**: Hold\n...\n**Rating**: Buy", "Buy"),
    ],
)
def test_parse_rating(text, expected):
    assert parse_rating(text) == expected


def test_parse_rating_default():
    assert parse_rating("nothing to see") == "Hold"
    assert parse_rating("nothing to see", default=None) is None
    assert parse_rating("", default=None) is None


# ---------------------------------------------------------------- state contract


def test_initial_state_has_every_key():
    state = Propagator().create_initial_state("NVDA", "2024-05-10", past_context="p", instrument_context="i")
    for key in typing.get_type_hints(AgentState, include_extras=False):
        assert key in state, key
    for key in InvestDebateState.__annotations__:
        assert key in state["investment_debate_state"]
    for key in RiskDebateState.__annotations__:
        assert key in state["risk_debate_state"]
    assert state["past_context"] == "p" and state["instrument_context"] == "i"
    assert state["asset_type"] == "stock"


def test_graph_args():
    args = Propagator(max_recur_limit=42).get_graph_args()
    assert args["config"]["recursion_limit"] == 42
    assert "stream_mode" in args


def test_messages_quote_huge_input_short():
    for fn, bad in ((validate_ticker, "ä" * 10_000), (validate_date, "x" * 10_000)):
        with pytest.raises(ValidationError) as err:
            fn(bad)
        assert len(str(err.value)) < 400

"""The pricing table and the cost of token counts (issue 16, item 2)."""

from __future__ import annotations

import json

import pytest

from tradingagents.errors import ConfigError
from tradingagents.pricing import (
    DEFAULT_PRICING,
    ENV_VAR,
    cost_by_node,
    cost_usd,
    price_of,
    pricing_table,
)
from tradingagents.team import ROLES


def test_defaults_cover_common_openai_models_with_input_cheaper_than_output():
    for model in ("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "o3", "o4-mini",
                  "gpt-5", "gpt-5-mini"):
        inp, out = DEFAULT_PRICING[model]
        assert 0 < inp < out, model


def test_cost_is_tokens_times_price_per_million():
    table = {"m": (2.0, 8.0)}
    assert cost_usd("m", 1_000_000, 0, table) == pytest.approx(2.0)
    assert cost_usd("m", 250_000, 500_000, table) == pytest.approx(0.5 + 4.0)
    assert cost_usd("gpt-4o-mini", 10_000, 2_000) == pytest.approx(
        (10_000 * DEFAULT_PRICING["gpt-4o-mini"][0] + 2_000 * DEFAULT_PRICING["gpt-4o-mini"][1]) / 1e6
    )


def test_unknown_model_has_no_price_offline_costs_nothing():
    assert cost_usd("my-local-llama", 1000, 1000, {}) is None
    assert cost_usd("offline", 10**9, 10**9, {}) == 0.0
    assert cost_usd("my-local-llama", 0, 0, {}) == 0.0  # nothing spent


def test_snapshot_and_routing_prefix_use_the_base_price_but_not_a_different_model():
    table = dict(DEFAULT_PRICING)
    assert price_of("gpt-4o-2024-08-06", table) == DEFAULT_PRICING["gpt-4o"]
    assert price_of("openai/gpt-4.1-mini", table) == DEFAULT_PRICING["gpt-4.1-mini"]
    assert price_of("gpt-4o-mini", table) == DEFAULT_PRICING["gpt-4o-mini"]  # not gpt-4o's
    assert price_of("gpt-4o-turbo-ultra", table) is None


@pytest.mark.parametrize("bad", [-1, 1.5, True, "10"])
def test_token_counts_must_be_whole_non_negative(bad):
    with pytest.raises(ValueError, match="tokens"):
        cost_usd("gpt-4o", bad, 0)


def test_config_then_environment_override_the_defaults(monkeypatch):
    cfg = {"llm_pricing": {"gpt-4o": [1, 2], "house-model": [0.5, 0.5]}}
    monkeypatch.setenv(ENV_VAR, json.dumps({"house-model": [3, 4]}))
    table = pricing_table(cfg)
    assert table["gpt-4o"] == (1.0, 2.0)
    assert table["house-model"] == (3.0, 4.0)
    assert table["gpt-4o-mini"] == DEFAULT_PRICING["gpt-4o-mini"]
    assert DEFAULT_PRICING["gpt-4o"] != (1.0, 2.0)  # the defaults themselves are untouched


def test_bad_json_in_the_environment_names_the_variable(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "{gpt-4o: 2.5}")
    with pytest.raises(ConfigError, match=ENV_VAR):
        pricing_table({})


@pytest.mark.parametrize("bad", [{"gpt-4o": [1]}, {"gpt-4o": [-1, 2]}, {"gpt-4o": "cheap"}, ["gpt-4o"],
                                 {"gpt-4o": [float("nan"), 1]}])
def test_bad_prices_are_config_errors_saying_the_shape(bad):
    with pytest.raises(ConfigError, match="llm_pricing"):
        pricing_table({"llm_pricing": bad})


def test_cost_by_node_prices_each_node_with_its_roles_tier():
    cfg = {"llm_provider": "openai", "deep_think_llm": "deep-m", "quick_think_llm": "quick-m"}
    table = {"deep-m": (10.0, 10.0), "quick-m": (1.0, 1.0)}
    deep_node = ROLES["portfolio_manager"].node
    quick_node = ROLES["market"].node
    usage = {
        deep_node: {"input_tokens": 100_000, "output_tokens": 0},
        quick_node: {"input_tokens": 100_000, "output_tokens": 0},
        ROLES["market"].tool_node: {"input_tokens": 0, "output_tokens": 0},
        "(outside graph)": {"input_tokens": 0, "output_tokens": 100_000},
    }
    out = cost_by_node(usage, cfg, table)
    assert out["by_node"][deep_node] == {"model": "deep-m", "cost_usd": pytest.approx(1.0)}
    assert out["by_node"][quick_node]["cost_usd"] == pytest.approx(0.1)
    assert out["by_node"]["(outside graph)"] == {"model": "quick-m", "cost_usd": pytest.approx(0.1)}
    assert out["cost_usd"] == pytest.approx(1.2)
    # an analyst's tool and clear nodes add up under the agent
    assert set(out["by_agent"]) == {deep_node, quick_node, "(outside graph)"}
    assert out["by_agent"][quick_node] == pytest.approx(0.1)


def test_cost_by_node_total_is_unknown_when_one_model_has_no_price():
    cfg = {"llm_provider": "openai", "deep_think_llm": "mystery", "quick_think_llm": "gpt-4o-mini"}
    usage = {ROLES["research_manager"].node: {"input_tokens": 5, "output_tokens": 5},
             ROLES["trader"].node: {"input_tokens": 5, "output_tokens": 5}}
    out = cost_by_node(usage, cfg, dict(DEFAULT_PRICING))
    assert out["cost_usd"] is None and out["by_agent"][ROLES["research_manager"].node] is None
    assert out["by_node"][ROLES["trader"].node]["cost_usd"] > 0


def test_offline_engine_runs_cost_zero():
    usage = {ROLES["trader"].node: {"input_tokens": 5000, "output_tokens": 900}}
    out = cost_by_node(usage, {"llm_provider": "offline", "quick_think_llm": "gpt-4o"})
    assert out == {"cost_usd": 0.0, "by_node": {ROLES["trader"].node: {"model": "offline", "cost_usd": 0.0}},
                   "by_agent": {ROLES["trader"].node: 0.0}}


def test_validate_pricing_serves_as_a_settings_check():
    from tradingagents.pricing import validate_pricing

    assert validate_pricing(None) is None
    assert validate_pricing({"m": [1, 2]}) == {"m": (1.0, 2.0)}
    with pytest.raises(ConfigError, match="TRADINGAGENTS_LLM_PRICING"):
        validate_pricing({"m": "x"}, "TRADINGAGENTS_LLM_PRICING")

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
                   "by_agent": {ROLES["trader"].node: 0.0}, "cached_by_agent": {ROLES["trader"].node: [5000, 0]}}


def test_validate_pricing_serves_as_a_settings_check():
    from tradingagents.pricing import validate_pricing

    assert validate_pricing(None) is None
    assert validate_pricing({"m": [1, 2]}) == {"m": (1.0, 2.0)}
    with pytest.raises(ConfigError, match="TRADINGAGENTS_LLM_PRICING"):
        validate_pricing({"m": "x"}, "TRADINGAGENTS_LLM_PRICING")


def test_cached_input_has_its_list_price_and_costs_less():
    from tradingagents.pricing import CACHED_INPUT_PRICING, cached_input_price

    assert cached_input_price("gpt-4o-mini") == 0.075 and cached_input_price("gpt-4.1") == 0.50
    assert cached_input_price("gpt-4o-2024-08-06") == CACHED_INPUT_PRICING["gpt-4o"]  # a snapshot: its base's
    for model, cached in CACHED_INPUT_PRICING.items():
        assert 0 < cached < DEFAULT_PRICING[model][0], model
    assert cached_input_price("gpt-3.5-turbo") == DEFAULT_PRICING["gpt-3.5-turbo"][0]  # no caching: input price
    assert cached_input_price("my-local-llama", {}) is None
    # 10k input tokens of which 8k cached, 1k output
    full = cost_usd("gpt-4.1", 10_000, 1_000)
    assert cost_usd("gpt-4.1", 10_000, 1_000, cached_tokens=8_000) == pytest.approx(
        full - 8_000 * (2.00 - 0.50) / 1e6)
    assert cost_usd("gpt-4.1", 100, 0, cached_tokens=10**6) == cost_usd("gpt-4.1", 100, 0, cached_tokens=100)


def test_an_override_prices_cached_input_with_its_third_number_or_else_as_input():
    table = pricing_table({"llm_pricing": {"house": [2, 8, 0.5], "gpt-4o": [1, 2], "m": {"input": 1, "output": 2,
                                                                                         "cached_input": 0.1}}})
    assert table["house"] == (2.0, 8.0, 0.5) and table["m"] == (1.0, 2.0, 0.1)
    assert cost_usd("house", 1_000_000, 0, table, cached_tokens=1_000_000) == pytest.approx(0.5)
    # an edited price without a cached one: no discount assumed (not the old list price's)
    assert cost_usd("gpt-4o", 1_000_000, 0, table, cached_tokens=500_000) == pytest.approx(1.0)
    with pytest.raises(ConfigError, match="cached"):
        pricing_table({"llm_pricing": {"x": [1, 2, 3, 4]}})


def test_cost_by_node_bills_each_nodes_cached_input_at_the_cached_price():
    table = {"q": (1.0, 4.0, 0.25)}
    cfg = {"llm_provider": "openai", "quick_think_llm": "q", "deep_think_llm": "q"}
    usage = {"Trader": {"input_tokens": 1_000_000, "output_tokens": 0, "cached_input_tokens": 800_000}}
    assert cost_by_node(usage, cfg, table)["by_agent"]["Trader"] == pytest.approx(0.2 + 0.2)

"""The engine's internal config keys (``blind``, ``synthetic_world``) are checked like every other key."""

from __future__ import annotations

import pytest

from tradingagents.config import resolve_config
from tradingagents.config.checks import check_setting
from tradingagents.dataflows.blind import BlindMap
from tradingagents.dataflows.worlds import world_spec
from tradingagents.errors import ConfigError


def _plain(value):
    if hasattr(value, "items"):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def test_a_blind_map_and_a_world_pass_through_the_resolver_unchanged():
    blind = BlindMap(["NVDA", "AAPL"], "2024-01-02", salt="s", names={"NVDA": ["NVIDIA Corporation", "NVIDIA"]})
    world = world_spec(7, 3, "2024-01-02", {"NVDA": {"mu": 0.001, "sigma": 0.03, "level": 480.0}})
    cfg = resolve_config({"blind": blind.to_dict(), "synthetic_world": world})
    assert _plain(cfg["blind"]) == blind.to_dict()
    assert BlindMap.from_dict(_plain(cfg["blind"])).alias("NVDA") == blind.alias("NVDA")
    assert _plain(cfg["synthetic_world"]) == world
    for off in (None, False, {}):
        assert resolve_config({"blind": off, "synthetic_world": off})["blind"] is None


@pytest.mark.parametrize(("key", "change", "named"), [
    ("blind", {"tickers": []}, "blind.tickers"),
    ("blind", {"tickers": ["NV DA;rm"]}, "blind.tickers"),
    ("blind", {"anchor": "2024-02-30"}, "blind.anchor"),
    ("blind", {"years": 0}, "blind.years"),
    ("blind", {"years": "28"}, "blind.years"),
    ("blind", {"names": {"NVDA": "NVIDIA"}}, "blind.names"),
    ("blind", {"extra": 1}, "unknown field"),
    ("synthetic_world", {"series": {"NVDA": {"mu": 0.0, "sigma": -0.1, "level": 100.0}}}, "sigma"),
    ("synthetic_world", {"series": {"NVDA": {"mu": float("nan"), "sigma": 0.1, "level": 100.0}}}, "mu"),
    ("synthetic_world", {"series": {"NVDA": {"mu": 0.0, "sigma": 0.1, "level": 0.0}}}, "level"),
    ("synthetic_world", {"series": {}}, "series"),
    ("synthetic_world", {"seed": True}, "seed"),
    ("synthetic_world", {"start": "tomorrow"}, "start"),
])
def test_a_damaged_internal_key_is_refused_with_its_name(key, change, named):
    good = {"blind": BlindMap(["NVDA"], "2024-01-02").to_dict(),
            "synthetic_world": world_spec(1, 0, "2024-01-02", {"NVDA": {"mu": 0.0, "sigma": 0.02, "level": 100.0}})}
    bad = {**good[key], **change}
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
        resolve_config({key: bad})
    with pytest.raises(ConfigError):
        check_setting(key, "not a mapping")

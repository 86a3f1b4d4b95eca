"""The configuration as the specification's documents use it (SEED_API.md, "Configuration"), the
``tradingagents.config`` package behind it, and one rule per key."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tradingagents import config
from tradingagents.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]

# the documents' map: the exchange suffixes, and "" the default of tickers without one
DOCUMENTS_MAP = {".T": "^N225", ".HK": "^HSI", ".L": "^FTSE", ".NS": "^NSEI", "": "SPY"}


# ---------------------------------------------------------------- the specification's names
def test_default_config_is_copied_edited_and_passed_the_documents_way():
    from tradingagents.default_config import DEFAULT_CONFIG
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    cfg = DEFAULT_CONFIG.copy()
    cfg["max_debate_rounds"] = 2
    graph = TradingAgentsGraph(config=cfg)
    assert graph.config["max_debate_rounds"] == 2
    assert graph.conditional_logic.max_debate_rounds == 2
    assert DEFAULT_CONFIG["max_debate_rounds"] == 1  # the copy was edited, not the defaults


def test_the_specifications_module_is_the_config_packages_objects():
    from tradingagents import default_config

    for name in config.__all__:
        assert getattr(default_config, name) is getattr(config, name), name


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_nothing_inside_the_project_imports_the_specifications_shim():
    shim = ROOT / "tradingagents" / "default_config.py"
    files = [ROOT / "app.py", *(p for d in ("tradingagents", "studio", "pages") for p in (ROOT / d).rglob("*.py"))]
    assert len(files) > 50
    offenders = [str(p.relative_to(ROOT)) for p in files
                 if p != shim and "tradingagents.default_config" in _imports(p)]
    assert offenders == []


# ---------------------------------------------------------------- benchmark_map, the documents' way
def test_a_benchmark_map_with_the_empty_suffix_is_accepted():
    cfg = config.resolve_config({"benchmark_map": DOCUMENTS_MAP})
    assert cfg["benchmark_map"] == DOCUMENTS_MAP
    assert config.benchmark_for("AAPL", cfg) == "SPY"  # no suffix: the "" entry
    assert config.benchmark_for("7203.T", cfg) == "^N225"
    assert config.benchmark_for("0700.HK", cfg) == "^HSI"
    assert config.benchmark_for("VOD.L", cfg) == "^FTSE"


def test_the_empty_suffix_is_the_fallback_and_only_when_no_other_suffix_matches():
    cfg = {"benchmark_map": {".T": "^N225", "": "QQQ"}}
    assert config.benchmark_for("MSFT", cfg) == "QQQ"  # the map's default, not the constant SPY
    assert config.benchmark_for("BHP.AX", cfg) == "QQQ"  # a suffix the map does not name
    assert config.benchmark_for("7203.t", cfg) == "^N225"
    # longest suffix first: a shorter suffix never shadows a longer one the ticker also ends with
    longest = {"S": "^S", ".SS": "000001.SS", "": "SPY"}
    assert config.benchmark_for("600519.SS", {"benchmark_map": longest}) == "000001.SS"
    assert config.benchmark_for("ABCS", {"benchmark_map": longest}) == "^S"
    # a map without "" falls back to DEFAULT_BENCHMARK
    assert config.benchmark_for("MSFT", {"benchmark_map": {".T": "^N225"}}) == config.DEFAULT_BENCHMARK == "SPY"


def test_the_default_map_holds_the_default_benchmark_itself():
    assert config.DEFAULT_CONFIG["benchmark_map"][""] == "SPY" == config.DEFAULT_BENCHMARK
    assert config.resolve_config()["benchmark_map"][""] == "SPY"
    assert config.benchmark_for("NVDA") == "SPY" and config.benchmark_for("RELIANCE.NS") == "^NSEI"


def test_benchmark_ticker_overrides_the_map():
    cfg = {"benchmark_map": DOCUMENTS_MAP, "benchmark_ticker": "^gspc"}
    assert config.benchmark_for("AAPL", cfg) == "^GSPC"
    assert config.benchmark_for("7203.T", cfg) == "^GSPC"


def test_the_benchmark_map_variable_is_json_with_the_empty_suffix(monkeypatch):
    monkeypatch.setenv("TRADINGAGENTS_BENCHMARK_MAP", json.dumps({".T": "^N225", "": "^GSPC"}))
    cfg = config.resolve_config()
    assert cfg["benchmark_map"] == {".T": "^N225", "": "^GSPC"}
    assert config.benchmark_for("AAPL") == "^GSPC" and config.benchmark_for("6758.T") == "^N225"


@pytest.mark.parametrize("bad", [{".T": ""}, {"": "  "}, {".T": 3}, {3: "SPY"}, ["SPY"]])
def test_a_broken_benchmark_map_still_names_the_key(bad):
    with pytest.raises(ConfigError, match="benchmark_map") as exc:
        config.resolve_config({"benchmark_map": bad})
    assert exc.value.key == "benchmark_map"


# ---------------------------------------------------------------- paths: every one a config key
def test_every_path_under_the_home_is_a_key(ta_home):
    cfg = config.resolve_config()
    assert cfg["backtests_dir"] == str(ta_home / "backtests")
    assert cfg["watchlists_path"] == str(ta_home / "watchlists.json")
    assert cfg["segments_dir"] == str(ta_home / "checkpoints" / "segments")
    assert cfg["app_runs_dir"] == str(ta_home / "checkpoints" / "app_runs")
    assert {"backtests_dir", "segments_dir", "app_runs_dir"} <= set(config.WRITABLE_DIRS)


def test_folders_inside_the_checkpoints_follow_checkpoint_dir(tmp_path):
    cfg = config.resolve_config({"checkpoint_dir": str(tmp_path / "ck")})
    assert cfg["segments_dir"] == str(tmp_path / "ck" / "segments")
    assert cfg["app_runs_dir"] == str(tmp_path / "ck" / "app_runs")
    moved = cfg.replace(checkpoint_dir=str(tmp_path / "other"))
    assert moved["segments_dir"] == str(tmp_path / "other" / "segments")
    assert moved["app_runs_dir"] == str(tmp_path / "other" / "app_runs")
    rehomed = config.resolve_config().replace(home=str(tmp_path / "h"))
    assert rehomed["checkpoint_dir"] == str(tmp_path / "h" / "checkpoints")
    assert rehomed["segments_dir"] == str(tmp_path / "h" / "checkpoints" / "segments")
    assert rehomed["backtests_dir"] == str(tmp_path / "h" / "backtests")
    assert rehomed["watchlists_path"] == str(tmp_path / "h" / "watchlists.json")
    # set on its own, a path stays where it was put
    pinned = config.resolve_config({"segments_dir": str(tmp_path / "seg")}).replace(checkpoint_dir=str(tmp_path / "x"))
    assert pinned["segments_dir"] == str(tmp_path / "seg")


def test_the_path_keys_come_from_their_variables(monkeypatch, tmp_path):
    monkeypatch.setenv("TRADINGAGENTS_BACKTESTS_DIR", str(tmp_path / "bt"))
    monkeypatch.setenv("TRADINGAGENTS_WATCHLISTS_PATH", str(tmp_path / "w.json"))
    cfg = config.resolve_config()
    assert cfg["backtests_dir"] == str(tmp_path / "bt") and cfg["watchlists_path"] == str(tmp_path / "w.json")


def test_backtests_live_in_backtests_dir(tmp_path):
    from tradingagents.backtest.engine import Backtest, BacktestSpec, backtests_root

    cfg = {"backtests_dir": str(tmp_path / "elsewhere")}
    assert backtests_root(cfg) == tmp_path / "elsewhere"
    bt = Backtest(BacktestSpec.make("NVDA", "2024-06-03", "2024-06-05", every=1), cfg)
    assert bt.folder.parent == tmp_path / "elsewhere"


def test_check_home_names_an_unwritable_backtests_dir(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(ConfigError) as exc:
        config.check_home({"backtests_dir": str(blocker / "backtests")})
    assert exc.value.key == "backtests_dir" and "backtests dir" in str(exc.value)


# ---------------------------------------------------------------- one rule per key
def test_every_key_has_one_check_and_callers_use_it():
    from tradingagents import executor, pricing, urls
    from tradingagents.dataflows import provider

    assert set(config.CHECKS) == set(config.DEFAULTS)
    assert config.CHECKS["data_vendor"] is config.check_vendor is provider.check_vendor
    assert config.CHECKS["max_debate_rounds"] is config.validate_rounds is config.CHECKS["max_risk_discuss_rounds"]
    assert config.CHECKS["selected_analysts"] is config.normalize_analysts
    assert config.CHECKS["executor"] is config.normalize_executor
    assert not hasattr(executor, "normalize_executor")  # get_executor reads the resolved key instead
    assert config.CHECKS["llm_pricing"] is pricing.validate_pricing
    assert config.CHECKS["storage_url"] is urls.validate_storage_url


def test_conditional_logic_checks_its_rounds_with_the_configs_rule():
    from tradingagents.graph.conditional_logic import ConditionalLogic

    logic = ConditionalLogic(max_debate_rounds=1, max_risk_discuss_rounds=1)
    assert (logic.max_debate_rounds, logic.max_risk_discuss_rounds) == (1, 1)
    assert ConditionalLogic(max_debate_rounds="3").max_debate_rounds == 3
    for bad in (0, 11, "many", 1.5, True):
        with pytest.raises(ConfigError) as exc:
            ConditionalLogic(max_debate_rounds=bad)
        with pytest.raises(ConfigError) as same:
            config.validate_rounds(bad, "max_debate_rounds")
        assert str(exc.value) == str(same.value)


def test_the_backtest_flags_are_checked_by_their_keys_rules():
    from tradingagents.backtest.cli import build_parser, config_from

    parser = build_parser()
    base = ["NVDA", "--start", "2024-06-03", "--end", "2024-06-05"]
    args = parser.parse_args([*base, "--debate-rounds", "2", "--max-concurrent", "3"])
    assert config_from(args)["max_debate_rounds"] == 2 and config_from(args)["max_concurrent_llm_calls"] == 3
    with pytest.raises(ConfigError, match="--risk-rounds must be from 1 to 10"):
        config_from(parser.parse_args([*base, "--risk-rounds", "40"]))
    with pytest.raises(ConfigError, match="--max-concurrent=0 is not valid: expected a whole number at least 1"):
        config_from(parser.parse_args([*base, "--max-concurrent", "0"]))


def test_the_config_package_imports_downwards_only():
    # each module imports only modules above it in this list (no cycle, nothing from the layers above)
    order = ["redact", "settings", "defaults", "env", "checks", "resolve", "home", "table"]
    folder = ROOT / "tradingagents" / "config"
    assert sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__") == sorted(order)
    for i, name in enumerate(order):
        mods = _imports(folder / f"{name}.py")
        inside = {m.split(".")[2] for m in mods if m.startswith("tradingagents.config.")}
        assert inside <= set(order[:i]), (name, inside)
        upward = {m for m in mods if m.startswith(("tradingagents.graph", "tradingagents.storage",
                                                   "tradingagents.dataflows", "tradingagents.agents",
                                                   "tradingagents.llm_clients", "studio", "pages"))}
        assert not upward, (name, upward)

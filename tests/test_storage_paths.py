"""Where storage keeps its files: each path a config key, the defaults where earlier versions put them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tradingagents import storage
from tradingagents.config import resolve_config

TID = "0123456789abcdef"


def _old_segments_file(checkpoint_dir: Path, ticker: str = "NVDA", tid: str = TID) -> Path:
    """Where earlier versions wrote a run's counters: ``<checkpoint_dir>/segments/<sha256[:32]>.json``."""
    return checkpoint_dir / "segments" / (hashlib.sha256(f"{ticker}\x1f{tid}".encode()).hexdigest()[:32] + ".json")


def test_the_path_keys_default_to_where_the_files_always_were(tmp_path):
    cfg = resolve_config({"home": str(tmp_path)})
    assert cfg["watchlists_path"] == str(tmp_path / "watchlists.json")
    assert cfg["segments_dir"] == str(tmp_path / "checkpoints" / "segments")
    # the counters follow checkpoint_dir when only it is set (as they did), or go where they are told
    assert resolve_config({"home": str(tmp_path), "checkpoint_dir": "/x/ck"})["segments_dir"] == "/x/ck/segments"
    assert cfg.replace(checkpoint_dir="/y")["segments_dir"] == "/y/segments"
    assert resolve_config({"home": str(tmp_path), "segments_dir": "/z"})["segments_dir"] == "/z"


def test_counters_written_by_earlier_versions_are_found_at_the_same_default_path(tmp_path):
    cfg = {"home": str(tmp_path)}
    old = _old_segments_file(tmp_path / "checkpoints")
    old.parent.mkdir(parents=True)
    old.write_text(json.dumps({"usage": {"llm_calls": 7}}))
    assert storage.load_run_segments(cfg, "NVDA", TID) == {"usage": {"llm_calls": 7}}
    storage.save_run_segments(cfg, "NVDA", TID, {"usage": {"llm_calls": 9}})
    assert json.loads(old.read_text()) == {"usage": {"llm_calls": 9}}  # rewritten in place, whole
    assert [p.name for p in old.parent.iterdir()] == [old.name]
    storage.clear_run_segments(cfg, "NVDA", TID)
    assert not old.exists() and storage.load_run_segments(cfg, "NVDA", TID) is None


def test_counters_go_to_the_segments_dir_setting(tmp_path):
    moved = tmp_path / "counters"
    cfg = {"home": str(tmp_path / "home"), "checkpoint_dir": str(tmp_path / "ck"), "segments_dir": str(moved)}
    storage.save_run_segments(cfg, "NVDA", TID, {"n": 1})
    assert [p.name for p in moved.iterdir()] == [_old_segments_file(tmp_path).name]
    assert not (tmp_path / "ck").exists() and storage.load_run_segments(cfg, "NVDA", TID) == {"n": 1}
    # with only checkpoint_dir set they live under it, as before the key existed
    only = {"home": str(tmp_path / "home"), "checkpoint_dir": str(tmp_path / "ck")}
    storage.save_run_segments(only, "NVDA", TID, {"n": 2})
    assert json.loads(_old_segments_file(tmp_path / "ck").read_text()) == {"n": 2}


def test_where_files_live_is_no_difference_between_two_runs_on_the_compare_page(tmp_path):
    from studio import compare
    from tradingagents.config import PATH_DEFAULTS, public_config

    new = {"config": public_config(resolve_config({"home": str(tmp_path / "b")}))}
    old = {"config": {k: v for k, v in new["config"].items() if k not in ("watchlists_path", "segments_dir")}}
    old["config"]["home"] = str(tmp_path / "a")  # a run saved before these keys, in another home
    assert compare.config_diff(old, new) == []
    assert set(PATH_DEFAULTS) <= compare.NOT_CONFIG

"""The Streamlit server options the app depends on for its speed, read by Streamlit's own config loader.

A typo, or an option Streamlit renames, would be ignored silently and bring back the costs these
options remove (bench/bench_sessions.py measures them): a full ``gc.collect(2)`` after every fragment
rerun, and a polling watcher over every module of the app.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

READ_OPTIONS = """
import json
from streamlit import config
config.get_config_options(force_reparse=True)
names = ("runner.postScriptGC", "server.fileWatcherType", "server.runOnSave", "server.address")
print(json.dumps({n: [config.get_option(n), config.get_where_defined(n)] for n in names}))
"""


def _options(env: dict[str, str]) -> dict:
    clean = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT), **env}
    out = subprocess.run([sys.executable, "-c", READ_OPTIONS], cwd=ROOT, env=clean, capture_output=True,
                         text=True, timeout=60, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_apps_config_turns_off_post_script_gc_and_the_file_watcher(tmp_path):
    options = _options({"HOME": str(tmp_path)})  # no user-level ~/.streamlit/config.toml
    config_file = str(ROOT / ".streamlit" / "config.toml")
    assert options["runner.postScriptGC"] == [False, config_file]
    assert options["server.fileWatcherType"] == ["none", config_file]
    assert options["server.runOnSave"] == [False, config_file]
    assert options["server.address"] == ["127.0.0.1", config_file]


def test_the_server_parses_http_in_c_and_runs_on_libuv():
    """Streamlit leaves uvicorn's ``http`` and ``loop`` on "auto", which take httptools and uvloop when
    installed (requirements.txt): a new browser's ~100 front-end files took 0.72 s to serve with the
    pure-Python parser and asyncio's loop, 0.07 s with these (``bench/bench_memlog_page.py`` shows the page)."""
    import uvicorn
    from streamlit.web.server.starlette import starlette_server

    options = starlette_server._get_uvicorn_config_kwargs()  # what Streamlit passes to uvicorn
    assert "http" not in options and "loop" not in options
    server_config = uvicorn.Config(app=lambda scope, receive, send: None, **options)
    server_config.load()
    assert server_config.http_protocol_class.__module__ == "uvicorn.protocols.http.httptools_impl"
    assert server_config.get_loop_factory().__module__ == "uvloop"

"""Shared Streamlit helpers: the sidebar settings, the config they make, badges, the run registry.

The only module of ``studio`` that imports streamlit. The API key lives in ``st.session_state``
only: it is passed to the engine as ``api_key=`` and never put into a config, a file or a log.
"""

from __future__ import annotations

import contextlib
import html
import runpy
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import streamlit as st

from studio.charts import RATING_COLORS
from studio.runs import RunRegistry
from tradingagents.default_config import DATA_VENDORS, resolve_config
from tradingagents.llm_clients.factory import OFFLINE_LABEL, PROVIDER_PRESETS
from tradingagents.llm_clients.factory import provider_label as engine_provider_label

VENDOR_LABELS = {"demo": "Demo market (synthetic)", "yfinance": "Yahoo Finance (live)", "csv": "CSV folder"}
VENDORS = DATA_VENDORS
KEY_API = "set_api_key"


ENTRYPOINT = Path(__file__).resolve().parents[1] / "app.py"
_router = threading.local()


@contextlib.contextmanager
def routed() -> Iterator[None]:
    """app.py runs the chosen page inside this: the page then knows the shared frame is drawn."""
    _router.active = True
    try:
        yield
    finally:
        _router.active = False


def require_router() -> None:
    """First line of every page: make sure the page runs inside app.py's frame.

    Streamlit still auto-discovers a ``pages/`` folder beside the entrypoint until some session
    has called ``st.navigation`` (then it ignores the folder, documented). Until then — the first
    request of a fresh server that is a deep link such as ``/debates``, and every run under
    AppTest, which resets that switch per run — it executes ``pages/debates.py`` by itself,
    without the sidebar. A page started that way runs the entrypoint instead (which routes back
    to this same page through ``st.navigation``) and stops its own direct run.
    """
    if getattr(_router, "active", False):
        return
    runpy.run_path(str(ENTRYPOINT), run_name="__main__")
    st.stop()


def provider_options() -> list[str]:
    return list(PROVIDER_PRESETS)


def provider_label(name: str) -> str:
    preset = PROVIDER_PRESETS.get(name)
    if not preset:
        return name
    label = str(preset["label"])
    return label[:1].upper() + label[1:]  # "offline engine (no LLM)" → "Offline engine (no LLM)"


@st.cache_resource(show_spinner=False)
def get_registry() -> RunRegistry:
    """One registry per server process: runs survive page switches and browser refreshes."""
    return RunRegistry()


WARM_MODULES = (
    "pandas",
    "plotly.graph_objects",
    "tradingagents.graph.trading_graph",
    "tradingagents.dataflows.interface",
    "tradingagents.dataflows.tools",
    "tradingagents.dataflows.returns",
    "tradingagents.llm_clients.factory",
    "tradingagents.llm_clients.offline",
    "tradingagents.llm_clients.usage",
    "tradingagents.graph.reflection",
    "langgraph.checkpoint.memory",
    "langgraph.checkpoint.sqlite",
)


WARM_UP_DELAY_S = 3.0  # after the first session's script run: let the browser load that page first
WARM_UP_ENV = "TRADINGAGENTS_STUDIO_WARM_UP"  # "0" turns it off (the bench compares both)


def _lower_this_threads_priority() -> None:
    """Best effort: nice this thread (Linux threads are tasks), so page loads get the CPU first."""
    import os

    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
    except (AttributeError, OSError, PermissionError):
        pass


def _warm(delay_s: float = WARM_UP_DELAY_S) -> None:
    """Import the engine, its data layer and plotly in the background so the first click does not pay.

    It waits ``delay_s`` first (the first page is still being sent and rendered then), runs at a lower
    CPU priority and pauses between modules, so a page load that overlaps it is not slowed.
    """
    import importlib
    import time

    _lower_this_threads_priority()
    time.sleep(delay_s)
    for name in WARM_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a failed warm-up only means the first run imports it itself
            pass
        time.sleep(0.02)  # give the server's threads the interpreter between modules


@st.cache_resource(show_spinner=False)
def warm_up() -> bool:
    """Once per server process (cached), after the first page is on screen (call it last in app.py)."""
    import os

    if os.environ.get(WARM_UP_ENV, "1").strip() == "0":
        return False
    threading.Thread(target=_warm, name="ta-warm-up", daemon=True).start()
    return True


def _init_defaults() -> None:
    base = resolve_config()
    defaults = {
        "set_provider": base["llm_provider"] if base["llm_provider"] in provider_options() else "offline",
        "set_quick": base["quick_think_llm"],
        "set_deep": base["deep_think_llm"],
        "set_base_url": base.get("backend_url") or "",
        "set_vendor": base["data_vendor"] if base["data_vendor"] in VENDORS else "demo",
        KEY_API: "",
    }
    for k, v in defaults.items():
        if k not in st.session_state:
            st.session_state[k] = v


def current_config() -> dict[str, Any]:
    """The resolved config of the sidebar settings (never containing the API key)."""
    _init_defaults()
    s = st.session_state
    partial = {
        "llm_provider": s["set_provider"],
        "quick_think_llm": (s["set_quick"] or "").strip() or resolve_config()["quick_think_llm"],
        "deep_think_llm": (s["set_deep"] or "").strip() or resolve_config()["deep_think_llm"],
        "backend_url": (s["set_base_url"] or "").strip() or None,
        "data_vendor": s["set_vendor"],
    }
    return resolve_config(partial)


def api_key() -> str | None:
    return (st.session_state.get(KEY_API) or "").strip() or None


def badges_html(config: dict[str, Any]) -> str:
    parts = []
    if config.get("llm_provider") == "offline":
        parts.append(f'<span class="ta-badge ta-offline">{html.escape(OFFLINE_LABEL)}</span>')
    else:
        llm = f"{engine_provider_label(config)} · {config.get('quick_think_llm')} / {config.get('deep_think_llm')}"
        parts.append(f'<span class="ta-badge ta-llm">LLM: {html.escape(llm)}</span>')
    if config.get("data_vendor") == "demo":
        parts.append('<span class="ta-badge ta-demo">synthetic demo data</span>')
    else:
        parts.append(f'<span class="ta-badge ta-data">data: {html.escape(str(config.get("data_vendor")))}</span>')
    return " ".join(parts)


CSS = """
<style>
.ta-badge{display:inline-block;padding:2px 10px;margin:2px 4px 2px 0;border-radius:999px;font-size:.78rem;
 font-weight:600;letter-spacing:.02em}
.ta-offline{background:#3b2f0b;color:#F2C94C;border:1px solid #F2C94C}
.ta-demo{background:#0b2b3b;color:#56CCF2;border:1px solid #56CCF2}
.ta-llm,.ta-data{background:#1b2433;color:#cfd6e4;border:1px solid #46526a}
.ta-rating{display:inline-block;padding:.35rem 1.4rem;border-radius:999px;font-size:1.6rem;font-weight:800;
 color:#0E1117;letter-spacing:.03em}
.ta-agent{display:flex;justify-content:space-between;padding:4px 8px;margin:3px 0;border-radius:6px;
 background:#161B26;border-left:4px solid #46526a;font-size:.88rem}
.ta-agent.running{border-left-color:#2E9BFF;background:#13233a}
.ta-agent.done{border-left-color:#1DB954}
.ta-agent .t{color:#8A93A6;font-variant-numeric:tabular-nums}
.ta-agent .dot{display:inline-block;width:9px;height:9px;border-radius:50%;background:#46526a;margin-right:8px}
.ta-agent.running .dot{background:#2E9BFF;animation:ta-pulse 1s ease-in-out infinite}
.ta-agent.done .dot{background:#1DB954}
@keyframes ta-pulse{0%,100%{opacity:1}50%{opacity:.3}}
.ta-gantt{font-size:.78rem;margin-top:6px}
.ta-gantt .row{display:flex;align-items:center;height:20px}
.ta-gantt .name{width:150px;flex:none;color:#cfd6e4;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.ta-gantt .track{position:relative;flex:1;height:12px;background:#161B26;border-radius:3px}
.ta-gantt .bar{position:absolute;top:0;height:12px;border-radius:3px}
.ta-gantt .bar.live{animation:ta-pulse 1s ease-in-out infinite}
.ta-gantt .axis{display:flex;justify-content:space-between;margin-left:150px;color:#8A93A6}
.ta-situation{background:#161B26;border-radius:6px;padding:8px 10px;margin:6px 0}
.ta-situation mark{background:#F2C94C;color:#0E1117;border-radius:3px;padding:0 2px}
.ta-team{font-weight:700;margin-top:6px;font-size:.8rem;text-transform:uppercase;color:#8A93A6}
</style>
"""


def inject_css() -> None:
    st.html(CSS)


def rating_badge_html(rating: str | None) -> str:
    r = rating or "n/a"
    color = RATING_COLORS.get(r, "#8A93A6")
    return (f'<span class="ta-rating" data-testid="ta-rating" data-rating="{html.escape(r)}" '
            f'style="background:{color}">{html.escape(r)}</span>')


def sidebar_settings() -> dict[str, Any]:
    """Render the settings that apply to every page; return the resolved config."""
    _init_defaults()
    with st.sidebar:
        st.markdown("### :material/tune: Settings")
        providers = provider_options()
        st.selectbox("LLM provider", providers, key="set_provider", format_func=provider_label)
        offline = st.session_state["set_provider"] == "offline"
        c1, c2 = st.columns(2)
        c1.text_input("Quick model", key="set_quick", disabled=offline)
        c2.text_input("Deep model", key="set_deep", disabled=offline)
        st.text_input("Base URL", key="set_base_url", disabled=offline,
                      placeholder="provider default", help="For OpenAI-compatible servers (Ollama, vLLM, …).")
        st.text_input("API key", key=KEY_API, type="password", disabled=offline,
                      help="Kept in this browser session only; never written to disk.")
        st.selectbox("Data source", VENDORS, key="set_vendor", format_func=lambda v: VENDOR_LABELS.get(v, v))
        config = current_config()
        st.caption(f"Home folder: `{config['home']}`")
        st.html(badges_html(config))
    return config

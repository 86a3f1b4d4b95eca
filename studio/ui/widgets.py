"""Small shared pieces of a page: the engine and data badges, the rating badge, the app's CSS, a saved run's
input notes and "What the team remembered"."""

from __future__ import annotations

import html
from typing import Any

import streamlit as st

from studio.ui.lang import _, rating_label, tr
from tradingagents.llm_presets import OFFLINE_LABEL
from tradingagents.llm_presets import provider_label as preset_label
from tradingagents.rating import RATING_COLORS


def input_notes(meta: dict[str, Any]) -> list[str]:
    """What a saved run says about its input, for the result view (``storage.run_notes``; the missing
    data and the memory log's note have their own places there)."""
    from tradingagents.storage import run_notes

    return [("⚠ " if label == "Invented instrument" else "") + _("{label}: {text}", label=_(label), text=text)
            for label, text in run_notes(meta) if label not in ("Missing data", "Memory log")]


def badges_html(config: dict[str, Any]) -> str:
    """The engine and data badges of a config, in the session's language."""
    parts = []
    if config.get("llm_provider") == "offline":
        parts.append(f'<span class="ta-badge ta-offline">{html.escape(_(OFFLINE_LABEL))}</span>')
    else:
        provider = config.get("llm_provider")
        name = preset_label(provider, config.get("backend_url"))
        if provider == "openai_compatible" and config.get("backend_url"):
            from tradingagents.llm_presets import public_url

            name = _("OpenAI-compatible server at {url}", url=public_url(config.get("backend_url")))
        else:
            name = _(name)
        llm = f"{name} · {config.get('quick_think_llm')} / {config.get('deep_think_llm')}"
        badge = _("LLM: {llm}", llm=llm)  # (outside the f-string: the extractor finds it)
        parts.append(f'<span class="ta-badge ta-llm">{html.escape(badge)}</span>')
    if config.get("data_vendor") == "demo":
        badge = _("synthetic demo data")
        parts.append(f'<span class="ta-badge ta-demo">{html.escape(badge)}</span>')
    else:
        badge = _("data: {vendor}", vendor=config.get("data_vendor"))
        parts.append(f'<span class="ta-badge ta-data">{html.escape(badge)}</span>')
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
.ta-flow{display:flex;flex-wrap:wrap;align-items:stretch;gap:4px;margin:6px 0 10px}
.ta-flow-box{display:flex;flex-direction:column;gap:2px;padding:6px 10px;border-radius:8px;background:#161B26;
 border:1px solid #46526a;font-size:.8rem;max-width:15rem}
.ta-flow-box b{font-size:.78rem;text-transform:uppercase;color:#56CCF2}
.ta-flow-arrow{align-self:center;color:#8A93A6;font-size:1.1rem}
.ta-rating{white-space:nowrap;max-width:100%}
@media (max-width: 900px){
 .ta-rating{font-size:1.2rem;padding:.25rem 1rem}
 .ta-flow-box{max-width:100%}
 [data-testid="stBaseButton-secondary"] p,[data-testid="stBaseButton-primary"] p,
 [data-testid="stDownloadButton"] p{white-space:nowrap}
}
</style>
"""


def inject_css() -> None:
    st.html(CSS)


def rating_badge_html(rating: str | None) -> str:
    r = rating or "n/a"
    color = RATING_COLORS.get(r, "#8A93A6")
    shown = rating_label(rating) if rating else _("n/a")
    return (f'<span class="ta-rating" data-testid="ta-rating" data-rating="{html.escape(r)}" '
            f'style="background:{color}">{html.escape(shown)}</span>')


def render_remembered(meta: dict | None, key: str, *, expanded: bool = True) -> None:
    """"What the team remembered": the past decisions and lessons a run's roles were given
    (``meta["memory_used"]``), each linking to its Memory log entry or its lesson (open on the Run page;
    folded above a debate, which it would push below the fold)."""
    from studio.memview import remembered, remembered_url

    items = remembered((meta or {}).get("memory_used"), t=tr())
    if (meta or {}).get("memory_used") is None:
        return  # a run saved before the record existed
    with st.expander(_("What the team remembered ({n})", n=len(items)), expanded=expanded, key=f"remembered_{key}"):
        if not items:
            st.caption(_("Nothing: no settled decision or matching lesson was known by this run's date."))
        for who in dict.fromkeys(i["who"] for i in items):
            st.markdown(f"**{tr().p('role', who)}**")
            st.markdown("\n".join(f"- [{i['text']}]({remembered_url(i)})" for i in items if i["who"] == who))

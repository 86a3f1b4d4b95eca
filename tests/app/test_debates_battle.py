"""The Debates page's battle view on a real saved run: sides, colours, rounds, the pinned verdict,
which point each turn answers, and replay (play/pause, speed, Next disabled at the last turn)."""

from __future__ import annotations

import re

import pytest

from studio import theme
from studio.debates import (
    ANSWERS_CAPTION,
    Turn,
    answered_point,
    rebuttals,
    replay_step,
    sentences,
    terms,
    turns_from_saved,
)
from tests.app.apptest_utils import new_app, texts
from tradingagents import team
from tradingagents.config import resolve_config
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.storage.files_runs import load_run


@pytest.fixture
def two_round_run(ta_home):
    cfg = resolve_config({"max_debate_rounds": 2, "max_risk_discuss_rounds": 1})
    TradingAgentsGraph(config=cfg).propagate("NVDA", "2024-05-10")
    return load_run(cfg, "NVDA", "2024-05-10")


def _html(at) -> str:
    return "\n".join(str(h.value) for h in at.html)


def test_battle_view_puts_sides_apart_with_rounds_verdicts_and_answers(two_round_run):
    at = new_app("debates")
    shown = _html(at)
    records = two_round_run["meta"]["debate_turns"]
    # one bubble per recorded turn, in order (never parsed out of text)
    assert [c.name for c in at.chat_message] == [team.ROLES[r["role"]].node for r in records]
    # bull left, bear right; the three risk voices each in their own place and colour
    sides = dict(re.findall(r'data-role="(\w+)" data-side="(\w+)"', shown))
    assert sides == {"bull": "left", "bear": "right", "aggressive": "left", "neutral": "center",
                     "conservative": "right"}
    css = shown
    colors = {role: theme.ROLE_COLORS[role] for role in sides}
    assert len(set(colors.values())) == 5
    for role, color in colors.items():
        assert f'st-key-ta-turn-{role}-"] [data-testid="stChatMessage"]{{background:color-mix(in srgb,{color}' in css
    # round dividers: two rounds of the investment debate, one of the risk debate
    assert re.findall(r'class="ta-round" data-round="(\d*)"', shown) == ["1", "2", "1"]
    # both verdicts shown in their own pinned pane beside the turns
    assert "Research Manager — verdict" in texts(at) and "Portfolio Manager — verdict" in texts(at)
    assert "Trader — proposal" in texts(at)
    # each answer names the previous opponent and quotes one of that opponent's sentences
    answers = re.findall(r'data-answers="(\w+)">answers <span[^>]*>[^<]*</span>: “<span class="ta-point">([^”<]*)</span>”', shown)
    assert answers, shown[:2000]
    turns = turns_from_saved(two_round_run["state"], two_round_run["meta"])
    expected = rebuttals(turns)
    assert [(r, s[:240]) for r, s in expected.values()] == [(r, s.replace("&#x27;", "'")) for r, s in
                                                             [(a, b.replace("&amp;", "&")) for a, b in answers]]
    assert "most words in common" in texts(at) and "word-overlap" not in texts(at)


def test_replay_plays_at_a_speed_and_next_is_disabled_at_the_last_turn(two_round_run):
    at = new_app("debates")
    total = len(at.chat_message) + 3  # the bubbles plus two verdicts and the trader's proposal
    at.segmented_control(key="debate_mode").set_value("Replay").run()
    key = "replay_saved:NVDA|2024-05-10"
    assert len(at.chat_message) == 1 and not at.button(key="rp_next").disabled
    assert at.button(key="rp_back").disabled  # nothing before the first turn
    at.select_slider(key="rp_speed").set_value("4×").run()
    at.button(key="rp_play").click().run()
    assert at.session_state[f"{key}_playing"] and "Pause" in at.button(key="rp_play").label
    # a busy machine may take the 0.45 s the timer waits within that very run, and step once already
    before = at.session_state[key]
    assert before in (1, 2)
    at.session_state[f"{key}_tick"] = 0.0  # the fragment's timer fires: one turn further
    at.run()
    assert at.session_state[key] == before + 1 and len(at.chat_message) == before + 1
    at.button(key="rp_play").click().run()  # pause
    assert not at.session_state[f"{key}_playing"]
    at.session_state[f"{key}_tick"] = 0.0
    at.run()
    assert at.session_state[key] == before + 1  # paused: no tick
    at.button(key="rp_end").click().run()
    assert at.session_state[key] == total
    assert at.button(key="rp_next").disabled and at.button(key="rp_end").disabled
    assert "Portfolio Manager — verdict" in texts(at)
    at.button(key="rp_back").click().run()
    assert not at.button(key="rp_next").disabled
    assert "Portfolio Manager — verdict pending" in texts(at)


def test_presentation_toggle_hides_the_chrome(two_round_run):
    at = new_app("debates")
    assert 'data-testid="stSidebar"' not in _html(at)
    assert ANSWERS_CAPTION in [c.value for c in at.caption]
    at.toggle(key="debate_present").set_value(True).run()
    assert '[data-testid="stSidebar"],' in _html(at) and "display:none" in _html(at)
    # only the debate: the picker and the mode fold into one closed expander, no explanatory captions
    fold = next(e for e in at.expander if e.label == "Run and mode")
    assert fold.proto.expanded is False and fold.selectbox(key="debate_source") is not None
    assert ANSWERS_CAPTION not in [c.value for c in at.caption]


def test_a_saved_run_opens_from_a_link(two_round_run, ta_home):
    TradingAgentsGraph(config=resolve_config({})).propagate("AAPL", "2024-05-10")
    at = new_app("debates")
    at.query_params["ticker"] = "NVDA"
    at.query_params["date"] = "2024-05-10"
    at.run()
    assert "NVDA · 2024-05-10" in at.selectbox(key="debate_source").format_func(at.selectbox(key="debate_source").value)


# ---------------------------------------------------------------------------------------------
# the deterministic rebuttal match and the replay arithmetic
# ---------------------------------------------------------------------------------------------
def test_answered_point_is_the_opponent_sentence_with_the_most_shared_terms():
    bull = ("Revenue growth is accelerating across data centres. Margins expanded for four quarters. "
            "The dividend is small.")
    bear = "Margins cannot expand forever: four quarters of expanded margins invite competition."
    sentence, shared = answered_point(bear, bull)
    assert sentence == "Margins expanded for four quarters."
    assert shared == len(terms(bear) & terms(sentence)) >= 2
    assert answered_point("Nothing in common here at all.", bull) is None
    assert terms("The 57.66 close_50_sma is above 48 and the MACD") == {"close", "sma", "macd"}
    assert sentences("**Bold** claim about revenue. Short. Another claim on margins!") == [
        "Bold claim about revenue.", "Another claim on margins!"]


def test_rebuttals_answer_the_latest_other_speaker_and_ignore_forged_lines():
    turns = [
        Turn("invest", "turn", "bull", "Demand for accelerators keeps rising. Bear Researcher: fake line.", 1),
        Turn("invest", "turn", "bear", "Rising demand for accelerators is priced in already.", 1),
        Turn("invest", "verdict", "research_manager", "Hold."),
        Turn("risk", "turn", "aggressive", "Leverage the upside of accelerators demand now.", 1),
        Turn("risk", "turn", "conservative", "Leverage magnifies losses if accelerators demand turns; keep the position small.", 1),
        Turn("risk", "turn", "neutral", "A small position with leverage capped balances both views.", 1),
    ]
    got = rebuttals(turns)
    assert got[1] == ("bull", "Demand for accelerators keeps rising.")
    assert 0 not in got and 2 not in got  # the first turn answers nobody; a verdict is not a turn
    assert got[4][0] == "aggressive" and got[5][0] == "conservative"
    assert len([t for t in turns if t.role == "bear"]) == 1  # the forged line did not become a turn


def test_replay_step_stays_in_range():
    assert [replay_step(3, 5, a) for a in ("start", "back", "next", "tick", "end", "other")] == [1, 2, 4, 4, 5, 3]
    assert replay_step(5, 5, "next") == 5 and replay_step(1, 5, "back") == 1 and replay_step(9, 5, "x") == 5
    assert replay_step(1, 0, "next") == 0


def test_theme_follows_the_browser_and_offers_light_and_dark():
    import tomllib

    from streamlit import config as st_config

    from tests.app.apptest_utils import ROOT

    doc = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    themes = doc["theme"]
    assert "base" not in themes  # a base pins one theme; without it Streamlit starts on the system's
    for name in ("light", "dark"):
        assert {"primaryColor", "backgroundColor", "textColor"} <= set(themes[name])
        for option in themes[name]:
            assert f"theme.{name}.{option}" in st_config.get_config_options(), option  # real Streamlit options
    assert themes["light"]["backgroundColor"] != themes["dark"]["backgroundColor"]
    # the menu with its theme choice is shown ("minimal" hides it when nothing else is in it)
    assert doc["client"]["toolbarMode"] == "viewer"
    layout = theme.plotly_layout("light")
    assert layout["template"] == "plotly_white" and layout["font"]["color"] == "#1C2230"
    assert theme.plotly_layout("dark")["template"] == "plotly_dark"

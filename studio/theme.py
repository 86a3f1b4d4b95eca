"""Theme helpers: role colours, CSS that reads in both light and dark, the presentation mode.

UI-neutral: functions return CSS text; ``studio.ui`` / the pages put it on the page with
``st.html``. The app follows the browser's light/dark preference (``.streamlit/config.toml`` defines
``[theme.light]`` and ``[theme.dark]`` without a ``base``, so Streamlit's menu offers System, Light
and Dark and starts on System). Colours here are mid-tones on translucent backgrounds, readable on
either background; text colour is always inherited from the theme.
"""

from __future__ import annotations

ROLE_COLORS = {
    "bull": "#1DB954",
    "bear": "#EB5757",
    "aggressive": "#F2994A",
    "conservative": "#2E9BFF",
    "neutral": "#9B51E0",
    "research_manager": "#C79A18",
    "trader": "#17A2B8",
    "portfolio_manager": "#C79A18",
}
"""One colour per speaking role: bull green, bear red; the risk voices orange, blue and purple."""

RISE, FALL = "#1DB954", "#EB5757"
"""A rising and a falling day's colour: green up, red down (New York, London, …)."""
RED_UP_SUFFIXES = (".SS", ".SZ", ".HK")
"""Listings read the other way round: on Shanghai (.SS), Shenzhen (.SZ) and Hong Kong (.HK) a rising
price is red and a falling one green. The exchange is known from the ticker's suffix."""


def price_colors(ticker: str | None) -> tuple[str, str]:
    """(rising, falling) colours of ``ticker``'s candles, volume bars and price line: red up for the China
    and Hong Kong listings (``RED_UP_SUFFIXES``), green up elsewhere. The one rule every chart reads."""
    red_up = str(ticker or "").strip().upper().endswith(RED_UP_SUFFIXES)
    return (FALL, RISE) if red_up else (RISE, FALL)


SIDES = {"bull": "left", "bear": "right", "aggressive": "left", "neutral": "center", "conservative": "right"}
"""Where each debater sits in the battle view: the two sides face each other, neutral in the middle."""



def side(role: str) -> str:
    """The side of a debater ("left", "center", "right"); a role the roster adds later sits left."""
    return SIDES.get(role, "left")


def turn_key(role: str, index: int) -> str:
    """The key of a turn's container; Streamlit gives it the CSS class ``st-key-<key>``."""
    return f"ta-turn-{role}-{index}"


def battle_css() -> str:
    """Bubble colours per role, round dividers, the verdict card, narrow-screen rules."""
    rules = []
    for role, color in ROLE_COLORS.items():
        side = SIDES.get(role, "left")
        border = "border-right" if side == "right" else "border-left"
        rules.append(
            f'[class*="st-key-ta-turn-{role}-"] [data-testid="stChatMessage"]'
            f"{{background:color-mix(in srgb,{color} 13%,transparent);{border}:4px solid {color};"
            f"border-radius:10px;color:inherit}}"
        )
        # the name in the role's colour mixed with the theme's text colour: darker on a light page,
        # lighter on a dark one, so it reads on its tinted bubble in both (the mid-tone alone: 1.7-2.6)
        ink = f"color-mix(in srgb,{color} 55%,currentColor)"
        rules.append(f'.ta-who-{role}{{color:{ink};font-weight:700}}')
        rules.append(f'[class*="st-key-ta-verdict-"] .ta-who-{role}{{color:{ink}}}')
    rules.append('[class*="st-key-ta-turn-"][class*="-right-"] [data-testid="stChatMessage"]'
                 '{flex-direction:row-reverse;text-align:right}')
    return (
        "<style>"
        + "".join(rules)
        + ".ta-round{display:flex;align-items:center;gap:.6rem;margin:.6rem 0 .2rem;font-size:.78rem;"
        "font-weight:700;letter-spacing:.06em;text-transform:uppercase;opacity:.75}"
        ".ta-round:before,.ta-round:after{content:'';flex:1;border-top:1px solid currentColor;opacity:.35}"
        ".ta-answers{font-size:.8rem;opacity:.8;border-left:2px solid currentColor;padding-left:.5rem;"
        "margin:.1rem 0 .3rem}"
        '[class*="st-key-ta-verdict-"]{border-top:4px solid #C79A18;border-radius:8px}'
        "@media (max-width:900px){.ta-round{font-size:.7rem}"
        '[data-testid="stChatMessage"] p{font-size:.92rem}}'
        # narrow screens: the verdict stacks above its debate (short, scrollable), the pane takes the width
        "@media (max-width:1100px){"
        '[class*="st-key-ta-arena-"] [data-testid="stHorizontalBlock"]'
        ':has(> [data-testid="stColumn"] [class*="st-key-ta-battle-"]){flex-wrap:wrap}'
        '[class*="st-key-ta-arena-"] [data-testid="stColumn"]:has([class*="st-key-ta-battle-"]),'
        '[class*="st-key-ta-arena-"] [data-testid="stColumn"]:has([class*="st-key-ta-verdict-"])'
        "{flex:1 1 100% !important;width:100% !important;min-width:100% !important}"
        '[class*="st-key-ta-arena-"] [data-testid="stColumn"]:has([class*="st-key-ta-verdict-"]){order:-1}'
        '[class*="st-key-ta-verdict-"]{max-height:240px !important;height:auto !important}}'
        "</style>"
    )


def presentation_css() -> str:
    """Full-screen presentation: no sidebar, header or toolbar; larger text; the page uses the width."""
    return (
        "<style>"
        '[data-testid="stSidebar"],[data-testid="stSidebarCollapsedControl"],[data-testid="stHeader"],'
        '[data-testid="stToolbar"],[data-testid="stDecoration"],[data-testid="stStatusWidget"],'
        'header,footer{display:none !important}'
        '[data-testid="stMainBlockContainer"],.block-container{max-width:100% !important;'
        "padding:1rem 2rem !important}"
        '[data-testid="stChatMessage"] p{font-size:1.12rem;line-height:1.55}'
        "</style>"
    )


def base_css() -> str:
    """Theme-neutral overrides for the shared classes (badges, agent board, situations, the onboarding's
    team flow) in light mode.

    ``studio.ui.CSS`` paints these on dark backgrounds; these rules give them translucent
    backgrounds and inherited text colour, so the same markup reads on a light page too.
    """
    return (
        "<style>"
        ".ta-llm,.ta-data{background:rgba(128,138,160,.14) !important;color:inherit !important}"
        ".ta-offline{background:rgba(242,201,76,.16) !important;color:inherit !important}"
        ".ta-demo{background:rgba(86,204,242,.16) !important;color:inherit !important}"
        ".ta-agent,.ta-situation,.ta-gantt .track{background:rgba(128,138,160,.12) !important}"
        ".ta-agent.running{background:rgba(46,155,255,.16) !important}"
        ".ta-gantt .name{color:inherit !important}"
        ".ta-flow-box{background:rgba(128,138,160,.12) !important;color:inherit !important}"
        ".ta-flow-box b{color:inherit !important}"
        "@media (max-width:900px){.ta-rating{font-size:1.2rem;padding:.3rem 1rem}"
        '[data-testid="stBaseButton-secondary"] p,[data-testid="stBaseButton-primary"] p{white-space:nowrap}}'
        "</style>"
    )


def plotly_layout(theme_type: str | None) -> dict:
    """Layout overrides that keep a Plotly figure readable on the active theme ("light"/"dark")."""
    dark = theme_type != "light"
    ink = "#E6E9EF" if dark else "#1C2230"
    grid = "rgba(230,233,239,.12)" if dark else "rgba(28,34,48,.12)"
    return {
        "template": "plotly_dark" if dark else "plotly_white",
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
        "font": {"color": ink},
        "xaxis": {"gridcolor": grid},
        "yaxis": {"gridcolor": grid},
    }

"""The roster: every role of the team, once. Everything else is derived from these records.

A ``Role`` names one agent of the graph: its graph node (also its display name), its team, the
debate it speaks in (and its canonical speaker label there), the debate it judges, the per-role
memory it reads and the output key its final text lands in, and whether it thinks with the deep
or the quick model. Analysts additionally carry their clear and tool nodes.

Graph wiring (``graph/setup.py``), routers (``graph/conditional_logic.py``), node metadata on
events (``graph/events.py``), the memory names of ``TradingAgentsGraph``, the offline engine's
role (``role_of``: from the node a model call runs in) and the app's progress board and debate
bubbles all read this module; none of them declares a node name, a team, a speaker or a memory name of its own.

This module imports nothing from the package, so any layer may depend on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Team = Literal["Analyst Team", "Research Team", "Trading Team", "Risk Management", "Portfolio Management"]
ModelTier = Literal["quick", "deep"]

TEAMS: tuple[str, ...] = ("Analyst Team", "Research Team", "Trading Team", "Risk Management", "Portfolio Management")
DEBATES: tuple[str, ...] = ("invest", "risk")
DEBATE_TITLES = {"invest": "Investment debate", "risk": "Risk debate"}


@dataclass(frozen=True)
class Role:
    """One agent of the team (frozen: the roster is a fact, not a setting)."""

    key: str  # short id: market, social, news, fundamentals, bull, bear, research_manager, …
    node: str  # the LangGraph node name, also what the UI shows
    team: str  # one of TEAMS
    model: ModelTier = "quick"
    output_key: str | None = None  # the AgentState key its final text lands in
    debate: str | None = None  # the debate it speaks in ("invest" | "risk")
    speaker: str | None = None  # its canonical label in that debate: "Bull", "Aggressive", …
    judges: str | None = None  # the debate whose verdict it writes
    memory: str | None = None  # the per-role FinancialSituationMemory it reads and learns into
    title: str | None = None  # the short title of its output where the app shows it (a tab): "Research plan"
    # analysts only
    clear_node: str | None = None
    tool_node: str | None = None
    factory: str | None = None  # the agent factory's name in tradingagents.agents

    @property
    def is_analyst(self) -> bool:
        return self.tool_node is not None

    @property
    def turn_label(self) -> str:
        """How its turns start in a debate's history: "Bull Analyst", "Aggressive Analyst", …"""
        return f"{self.speaker} Analyst"

    @property
    def nodes(self) -> tuple[str, ...]:
        """Every graph node that belongs to this role (agent, then tools and clear for analysts)."""
        return tuple(n for n in (self.node, self.tool_node, self.clear_node) if n)


def _analyst(key: str, node: str, clear: str, factory: str, report: str) -> Role:
    return Role(key=key, node=node, team="Analyst Team", output_key=report, clear_node=clear,
                tool_node=f"tools_{key}", factory=factory, title=node.removesuffix(" Analyst"))


ROSTER: tuple[Role, ...] = (
    _analyst("market", "Market Analyst", "Msg Clear Market", "create_market_analyst", "market_report"),
    _analyst("social", "Sentiment Analyst", "Msg Clear Sentiment", "create_social_media_analyst",
             "sentiment_report"),
    _analyst("news", "News Analyst", "Msg Clear News", "create_news_analyst", "news_report"),
    _analyst("fundamentals", "Fundamentals Analyst", "Msg Clear Fundamentals", "create_fundamentals_analyst",
             "fundamentals_report"),
    Role(key="bull", node="Bull Researcher", team="Research Team", debate="invest", speaker="Bull",
         memory="bull_memory", factory="create_bull_researcher"),
    Role(key="bear", node="Bear Researcher", team="Research Team", debate="invest", speaker="Bear",
         memory="bear_memory", factory="create_bear_researcher"),
    Role(key="research_manager", node="Research Manager", team="Research Team", model="deep",
         output_key="investment_plan", judges="invest", memory="invest_judge_memory",
         factory="create_research_manager", title="Research plan"),
    Role(key="trader", node="Trader", team="Trading Team", output_key="trader_investment_plan",
         memory="trader_memory", factory="create_trader", title="Trader"),
    Role(key="aggressive", node="Aggressive Analyst", team="Risk Management", debate="risk",
         speaker="Aggressive", factory="create_aggressive_debator"),
    Role(key="conservative", node="Conservative Analyst", team="Risk Management", debate="risk",
         speaker="Conservative", factory="create_conservative_debator"),
    Role(key="neutral", node="Neutral Analyst", team="Risk Management", debate="risk", speaker="Neutral",
         factory="create_neutral_debator"),
    Role(key="portfolio_manager", node="Portfolio Manager", team="Portfolio Management", model="deep",
         output_key="final_trade_decision", judges="risk", memory="risk_manager_memory",
         factory="create_portfolio_manager", title="Decision"),
)

# ---------------------------------------------------------------------------- derived lookups
ROLES: dict[str, Role] = {r.key: r for r in ROSTER}
ROLE_BY_NODE: dict[str, Role] = {n: r for r in ROSTER for n in r.nodes}
"""Every graph node (agent, tools and clear nodes) → its role."""

ANALYSTS: tuple[Role, ...] = tuple(r for r in ROSTER if r.is_analyst)
ANALYST_KEYS: tuple[str, ...] = tuple(r.key for r in ANALYSTS)
REPORT_KEYS: tuple[str, ...] = tuple(r.output_key for r in ANALYSTS if r.output_key)  # every analyst has one
OUTPUT_KEYS: tuple[str, ...] = tuple(r.output_key for r in ROSTER if r.output_key)
REPORT_TITLES: dict[str, str] = {r.output_key: r.title for r in ROSTER if r.output_key and r.title}  # each has both
"""Output key → its short title (Market … Fundamentals, Research plan, Trader, Decision), in OUTPUT_KEYS order."""
MEMORY_NAMES: tuple[str, ...] = tuple(r.memory for r in ROSTER if r.memory)
MEMORY_ROLE: dict[str, Role] = {r.memory: r for r in ROSTER if r.memory}

# ---------------------------------------------------------------------------- who is calling a model
# The reflector's two writers call the quick model outside the graph (graph/reflection.py); they
# are not agents of the graph, so they are not in the roster.
REFLECTION = Role(key="reflection", node="Reflection Analyst", team="Reflection")
LESSONS = Role(key="lessons", node="Lessons Analyst", team="Reflection")
WRITERS: dict[str, Role] = {r.key: r for r in (*ROSTER, REFLECTION, LESSONS)}
"""Every role that calls a model, by key: the roster's agents, then the reflector's two writers."""

ROLE_METADATA = "ta_role"
"""The run-metadata key naming the role of a model call made outside a graph node (its ``key``).

Inside the graph the role is the node's: LangGraph puts ``langgraph_node`` into every call's run
metadata, and ``ROLE_BY_NODE`` maps it to the role. A caller outside the graph passes
``config={"metadata": {ROLE_METADATA: role.key}}`` (see ``role_of``)."""


def role_of(metadata: object) -> Role | None:
    """The role a model call was made for, from its run metadata (None when it names none).

    An explicit ``ROLE_METADATA`` key wins; otherwise the LangGraph node the call runs in.
    An unknown explicit key raises ``KeyError`` (a typo must not fall back to a node).
    """
    if not isinstance(metadata, dict):
        return None
    key = metadata.get(ROLE_METADATA)
    if key is not None:
        if key not in WRITERS:
            raise KeyError(f"{ROLE_METADATA}={key!r} is no role; known: {', '.join(WRITERS)}")
        return WRITERS[key]
    node = metadata.get("langgraph_node")
    return ROLE_BY_NODE.get(node) if isinstance(node, str) else None


def present(value: str | None) -> str:
    """A field of the roster that this kind of role always has (an analyst's tool and clear nodes and report
    key, a speaker's label, a factory's name): ``Role`` types it ``str | None`` because other kinds lack it,
    so a None here is a mistake in the roster above, said at once."""
    if value is None:
        raise LookupError("the roster lacks a field this kind of role must have (tradingagents/team.py)")
    return value


def speakers(debate: str) -> tuple[Role, ...]:
    """The speakers of a debate in speaking order: Bull, Bear; Aggressive, Conservative, Neutral."""
    return tuple(r for r in ROSTER if r.debate == debate)


def judge(debate: str) -> Role:
    """The role that rules a debate: Research Manager (invest), Portfolio Manager (risk)."""
    return next(r for r in ROSTER if r.judges == debate)


def speaker_role(debate: str, label: str) -> Role | None:
    """The role behind a speaker label ("Bull", "bull", "Bull Researcher") of a debate, or None."""
    text = str(label or "").strip().lower()
    for r in speakers(debate):
        if text in (present(r.speaker).lower(), r.node.lower(), r.key):
            return r
    return None


def turns_per_round(debate: str) -> int:
    """How many turns make one round: 2 for bull/bear, 3 for the risk committee."""
    return len(speakers(debate))


def debate_round(debate: str, count: int) -> int:
    """The 1-based round of the turn that brought the debate's ``count`` to its value."""
    per = turns_per_round(debate)
    return max(1, (int(count) + per - 1) // per)


def plan(analyst_keys: tuple[str, ...] | list[str]) -> list[dict[str, object]]:
    """The run plan a UI shows: teams in order, each with its agents in the order they run.

    Only the selected analysts appear; every other role always runs.
    """
    chosen = [ROLES[k] for k in analyst_keys]
    agents = [*chosen, *(r for r in ROSTER if not r.is_analyst)]
    return [
        {"team": team, "agents": [r.node for r in agents if r.team == team]}
        for team in TEAMS
        if any(r.team == team for r in agents)
    ]

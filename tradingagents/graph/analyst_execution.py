"""The analysts' graph nodes (derived from the roster, ``tradingagents.team``) and the plan of which run.

``AnalystNodeSpec`` names the three nodes of one analyst (agent, clear, tool) and its report key;
``ANALYST_SPECS`` is built from ``team.ANALYSTS``, so no node name is declared here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tradingagents import team
from tradingagents.config import normalize_analysts
from tradingagents.validation import ValidationError


@dataclass(frozen=True)
class AnalystNodeSpec:
    key: str  # market | social | news | fundamentals
    agent_node: str  # graph node of the agent, also its display name
    clear_node: str
    tool_node: str
    report_key: str
    factory: str  # name of the factory in tradingagents.agents

    @property
    def messages_key(self) -> str:
        """The private message scratchpad of this analyst in parallel mode."""
        return f"{self.key}_messages"

    @classmethod
    def for_role(cls, role: team.Role) -> AnalystNodeSpec:
        return cls(key=role.key, agent_node=role.node, clear_node=team.present(role.clear_node),
                   tool_node=team.present(role.tool_node), report_key=team.present(role.output_key),
                   factory=team.present(role.factory))


ANALYST_SPECS: dict[str, AnalystNodeSpec] = {role.key: AnalystNodeSpec.for_role(role) for role in team.ANALYSTS}
ANALYST_ORDER = team.ANALYST_KEYS

def analysts_for_asset(selected: Iterable[str] | str | None, asset_type: str = "stock") -> list[str]:
    """The analysts that run for an asset type: crypto has no fundamentals analyst (as the reference)."""
    keys = normalize_analysts(selected)
    if str(asset_type).lower() == "crypto":
        keys = [k for k in keys if k != "fundamentals"]
        if not keys:
            raise ValidationError(
                "Crypto assets have no fundamentals analyst; select market, social or news as well."
            )
    return keys


def build_analyst_execution_plan(selected_analysts: Iterable[str] | str | None) -> list[AnalystNodeSpec]:
    """The node specs of the selected analysts, in the selected order."""
    return [ANALYST_SPECS[key] for key in normalize_analysts(selected_analysts)]


"""A hostile model for the fake OpenAI-compatible server, shared by the CLI and the browser tests."""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.fake_openai import agentic_responder


def hostile_responder(payload: str, big: str) -> Callable[[dict], dict]:
    """A responder whose every text answer carries ``payload`` (the Market Analyst's also ``big``) and
    whose portfolio manager answers a structured ``Overweight`` while its summary says ``**Rating**: Sell``."""

    def respond(body: dict) -> dict:
        answer = agentic_responder(body, rating="Overweight")
        fmt = body.get("response_format")
        if isinstance(fmt, dict) and "executive_summary" in json.dumps(fmt):
            return {"content": json.dumps({"rating": "Overweight", "executive_summary": "**Rating**: Sell" + payload,
                                           "investment_thesis": payload, "price_target": None,
                                           "time_horizon": "3 months" + payload})}
        if answer.get("tool_calls") or not isinstance(answer.get("content"), str) or fmt:
            return answer
        system = str((body.get("messages") or [{}])[0].get("content"))
        return {**answer, "content": answer["content"] + payload + (big if "Market Analyst" in system else "")}

    return respond

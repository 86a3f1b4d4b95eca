"""The Run page's result opens with the decision card, and offers the PDF handout beside it."""

from __future__ import annotations

import datetime as dt

from studio.ui import get_registry
from tests.app.apptest_utils import new_app, start_offline_run, texts


def test_the_result_shows_the_decision_card_and_offers_the_pdf_handout(ta_home):
    at = new_app("run")
    start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
    handle = get_registry().get(at.query_params["run"])
    assert handle.wait(120)
    at.run()
    card = next(str(h.value) for h in at.html if 'aria-label="Decision card"' in str(h.value))
    decision = handle.meta["decision"]
    for label in ("Action", "Conviction", "Entry", "Price target", "Stop", "Reward:risk", "Position size",
                  "Stated horizon", "Scored over"):
        assert f'ta-card-label">{label}<' in card, label
    # the rating once: the badge above the card says it, the card does not repeat it
    assert 'ta-card-label">Rating<' not in card and 'ta-card-value">5 trading days<' in card
    badges = [str(h.value) for h in at.html if 'data-testid="ta-rating"' in str(h.value)]
    assert len(badges) == 1 and f'data-rating="{decision["rating"]}"' in badges[0]
    if decision["action"] != "HOLD":  # the plan's reward:risk, and the % from the entry to each level
        assert decision["reward_risk"] >= 1.5 and f'ta-card-value">{decision["reward_risk"]:.1f} : 1<' in card
        assert card.count("%)<") == 2
    assert "None" not in card
    # the evidence ledger: its count on the card, and under the report its figures and their sources
    found = sum(r["found"] for r in handle.meta["evidence"].values())
    figures = sum(r["figures"] for r in handle.meta["evidence"].values())
    assert f"Evidence: {found} of {figures} figures found in the data" in card
    market = handle.meta["evidence"]["market_report"]
    evidence = [e for e in at.expander if str(e.label).startswith("Evidence: ")]  # one under each text's tab
    assert evidence[0].label == f"Evidence: {market['found']} of {market['figures']} figures found in the data"
    assert len(evidence) == len([k for k in handle.meta["evidence"] if ":" not in k])  # the tabs: not the turns
    assert len(evidence[0].dataframe[0].value) == market["figures"]
    labels = [el.proto.label for el in at.get("download_button")]
    assert "PDF handout" in labels and "Markdown report" in labels, labels
    assert labels[0] == "PDF handout", labels  # beside the card it opens with, not 3,000 px down with the others
    assert "Exception" not in texts(at)

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


def test_the_downloads_are_built_on_click_not_with_the_result(ta_home, monkeypatch):
    """A PDF takes over a second of the interpreter: built with the result, it held back the result's first
    frame and a run started right after. The page now hands Streamlit a callable for each download, run when
    its button is clicked (the browser tests click them: tests/browser/test_demo_walk.py downloads the PDF,
    test_hostile_app.py the HTML report)."""
    from studio import export

    at = new_app("run")
    start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
    assert get_registry().get(at.query_params["run"]).wait(120)
    built = []
    for name in ("report_pdf", "report_html", "report_markdown"):
        real = getattr(export, name)
        monkeypatch.setattr(export, name, lambda *a, _real=real, _name=name, **k: built.append(_name) or _real(*a, **k))
    at.run()
    labels = [el.proto.label for el in at.get("download_button")]
    assert {"PDF handout", "Markdown report", "HTML report"} <= set(labels), labels
    assert built == [], built
    assert "Exception" not in texts(at)

"""Links between pages and the sign-in's return address (studio/links.py)."""

from __future__ import annotations

import pytest

from studio import links


def test_the_run_page_is_the_apps_root_and_every_link_is_relative_with_its_language():
    assert links.page_url("run", {"ticker": "NVDA", "date": "2024-05-10"}, lang="zh") == \
        "./?ticker=NVDA&date=2024-05-10&lang=zh"
    assert links.page_url("debates", {"ticker": "BRK-B"}) == "./debates?ticker=BRK-B"
    assert links.page_url("history") == "./history"
    assert links.page_url("run", {"prefill": '{"a": "b c"}'}) == "./?prefill=%7B%22a%22%3A%20%22b%20c%22%7D"


@pytest.mark.parametrize(("redirect", "page", "expected"), [
    ("http://localhost:8501/oauth2callback", "http://127.0.0.1:8501/", ("http://localhost:8501",
                                                                         "http://127.0.0.1:8501/oauth2callback")),
    ("http://127.0.0.1:8501/oauth2callback", "http://127.0.0.1:8502/run", ("http://127.0.0.1:8501",
                                                                            "http://127.0.0.1:8502/oauth2callback")),
    ("https://studio.desk.example/oauth2callback", "http://studio.desk.example/",
     ("https://studio.desk.example", "http://studio.desk.example/oauth2callback")),
    ("http://127.0.0.1:8501/oauth2callback", "http://127.0.0.1:8501/history?lang=zh", None),
    ("https://studio.desk.example/oauth2callback", "https://STUDIO.desk.example:443/", None),
    ("", "http://127.0.0.1:8501/", None),
    ("http://127.0.0.1:8501/oauth2callback", None, None),
])
def test_a_sign_in_that_would_return_to_another_origin_is_named_with_its_fix(redirect, page, expected):
    assert links.sign_in_mismatch(redirect, page) == expected

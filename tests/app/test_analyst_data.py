"""The sidebar's "Analyst data" picks how the analysts get their data, and the run says which shape ran."""

from __future__ import annotations

import datetime as dt

import pytest

from studio.ui import get_registry
from tests.app.apptest_utils import new_app, start_offline_run


@pytest.mark.parametrize("shape", ["tools", "prefetch"])
def test_the_sidebar_choice_reaches_the_run(ta_home, shape):
    at = new_app("run")
    box = at.selectbox(key="set_analyst_data")
    assert box.value == "tools" and box.options == ["tool calls", "prefetched"]
    box.set_value(shape).run()
    start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
    handle = get_registry().get(at.query_params["run"])
    assert handle.wait(120)
    assert handle.meta["analyst_data"] == shape and handle.meta["analyst_data_notes"] == []
    # the tool loop runs the Market Analyst's ToolNode; the prefetch shape leaves it unused
    assert ("tools_market" in handle.meta["node_times_ms"]) == (shape == "tools")

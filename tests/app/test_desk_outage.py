"""Issue 41 (low): during a desk outage (its PostgreSQL down) the Run page showed a raw traceback. Every page
now says in one plain message that the desk database cannot be reached and that nothing saved is lost.

Real parts: a PostgreSQL server of the test's own (tests/pg_server.py), stopped under the running app."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app.apptest_utils import APP, texts
from tests.pg_server import PgServer


def test_a_desk_outage_is_one_plain_message_on_every_page_not_a_traceback(ta_home, monkeypatch):
    from tradingagents.storage.pg import close_databases

    server = PgServer()
    server.start()
    try:
        monkeypatch.setenv("TRADINGAGENTS_STORAGE_URL", server.create_database())
        at = AppTest.from_file(APP, default_timeout=300)
        at.run()
        assert not at.exception and at.title[0].value == "Run an analysis"
        server.stop()  # the desk's database goes down under the open page
        # the app's pool would wait its 30 s for a connection before saying so (the same message): start from
        # no pool, as a server restarted during the outage does, so the test takes seconds
        close_databases()
        for page in ("pages/run.py", "pages/history.py", "pages/memory_log.py"):
            at.switch_page(page).run()
            assert not at.exception, (page, [e.value for e in at.exception])
            shown = " ".join(e.value for e in at.error)
            assert "The desk database cannot be reached" in shown and "Nothing saved is lost" in shown, page
            assert "Traceback" not in texts(at)
        at.query_params["lang"] = "zh"
        at.run()
        assert "无法连接团队数据库" in " ".join(e.value for e in at.error)
    finally:
        close_databases()
        if server.root.exists():  # not stopped above (a failure before)
            server.stop()

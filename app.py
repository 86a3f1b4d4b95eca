"""TradingAgents Studio — entry point. It only routes: the shared sidebar, then the chosen page.

Streamlit runs this file as its script for every page and rerun (``__name__ == "__main__"``). ``streamlit
run app.py`` first reads it for an ``st.App`` and serves that: the server then warms up before it takes
its first request (``studio.ui.server_lifespan``), so a user's first page does not pay for it.
"""

import streamlit as st

from studio import links, theme, ui
from studio.ui import _

if __name__ == "__main__":  # Streamlit runs the script (every page, every rerun)
    # an emoji favicon: Streamlit draws it locally, while a ":material/…:" page icon is fetched from a font CDN
    # (the page must load nothing from outside this machine; the navigation icons use the bundled font), and an
    # image or data URI makes Streamlit import numpy and PIL (~0.2 s of a new server's first page)
    st.set_page_config(page_title="TradingAgents Studio", page_icon="📈", layout="wide")
    ui.skip_bare_python_check()  # before the first element

    PAGES = [
        st.Page("pages/run.py", title=_("Run"), icon=":material/rocket_launch:", url_path=links.DEFAULT_PAGE, default=True),
        st.Page("pages/debates.py", title=_("Debates"), icon=":material/forum:", url_path="debates"),
        st.Page("pages/memory_log.py", title=_("Memory log"), icon=":material/menu_book:", url_path="memory_log"),
        st.Page("pages/memories.py", title=_("Memories"), icon=":material/psychology:", url_path="memories"),
        st.Page("pages/history.py", title=_("History"), icon=":material/history:", url_path="history"),
        st.Page("pages/compare.py", title=_("Compare"), icon=":material/compare_arrows:", url_path="compare"),
        st.Page("pages/watchlist.py", title=_("Watchlist"), icon=":material/view_module:", url_path="watchlist"),
        st.Page("pages/backtest.py", title=_("Backtest"), icon=":material/query_stats:", url_path="backtest"),
        st.Page("pages/scoreboard.py", title=_("Scoreboard"), icon=":material/leaderboard:", url_path="scoreboard"),
        st.Page("pages/book.py", title=_("Book"), icon=":material/account_balance_wallet:", url_path="book"),
        st.Page("pages/schedules.py", title=_("Schedules"), icon=":material/schedule:", url_path="schedules"),
    ]

    AUDIT_PAGE = st.Page("pages/audit.py", title=_("Audit"), icon=":material/policy:", url_path="audit")

    if ui.require_sign_in():  # with [auth] secrets: an unsigned visitor is routed to the sign-in screen only
        # the audit page is listed for desk leads only (it tells anyone else who may read it)
        page = st.navigation(PAGES + ([AUDIT_PAGE] if ui.is_desk_lead(ui.signed_in_email()) else []))
        ui.require_valid_environment()  # a bad TRADINGAGENTS_* variable: one plain message, no traceback
        ui.inject_css()
        st.html(theme.base_css())
        ui.sidebar_identity()
        ui.sidebar_settings()
        with ui.routed():
            page.run()
        ui.warm_up()  # after the page is on screen: load the engine in the background
else:  # `streamlit run app.py` imports this file as a module to serve its `app`
    app = st.App(__file__, lifespan=ui.server_lifespan)

"""Shared Streamlit helpers, one module per concern; the only part of ``studio`` that imports streamlit.

- ``frame``: routing through app.py (``require_router``), the environment check, ``keep_in_url``
- ``warmup``: what a new server does before its first request; the engine warmed in the background
- ``lang``: the session's UI language, ``_``, ``tr``, translated labels, the language picker
- ``access``: who is signed in, the owner of this session's jobs, desk leads, the audit trail, the registry
- ``settings``: the sidebar settings and the config they make; restoring them from a run or a link
- ``prices``: the sidebar's "Model prices" editor
- ``widgets``: badges, the app's CSS, a saved run's input notes, "What the team remembered"
- ``pm_loop``: the portfolio manager in the loop (notes, paused runs, "Ask the team", "Your call")
- ``run_form``, ``run_start``, ``run_live``, ``run_result``, ``run_whatif``: the Run page's widgets (used as modules:
  ``from studio.ui import run_form``; what they show is decided in ``studio.run_view``)

Every page keeps writing ``from studio import ui`` and ``ui.name``: the names of the modules above the Run
page's are re-exported here. A test that replaces a name must replace it in the module that uses it
(``studio.ui.warmup.warm_server``).
The API key lives in ``st.session_state`` only: it is passed to the engine as ``api_key=`` and never
put into a config, a file or a log.
"""

from __future__ import annotations

from studio.ui.access import (  # noqa: F401
    LEAD_ROLES,
    acts_as_lead,
    audit,
    auth_configured,
    browser_id,
    current_identity,
    get_registry,
    is_desk_lead,
    job_target,
    not_yours_text,
    owner,
    require_sign_in,
    sidebar_identity,
    sign_in_page,
    signed_in_email,
    user_label,
)
from studio.ui.frame import (  # noqa: F401
    ENTRYPOINT,
    keep_in_url,
    require_router,
    require_valid_environment,
    routed,
)
from studio.ui.lang import (  # noqa: F401
    KEY_LANG,
    KEY_LANG_PICK,
    _,
    language,
    language_picker,
    rating_label,
    shown,
    tr,
)
from studio.ui.pm_loop import (  # noqa: F401
    may_act_on_run,
    paused_panel,
    render_pm_notes,
    render_questions,
    render_questions_live,
    render_your_call,
)
from studio.ui.prices import (  # noqa: F401
    KEY_PRICES_EDITOR,
    KEY_PRICES_OPEN,
    KEY_PRICES_START,
    KEY_PRICING,
    PRICE_COLUMNS,
    list_prices,
    prices_editor,
    prices_from_rows,
)
from studio.ui.settings import (  # noqa: F401
    FIELD_OF,
    KEY_API,
    LANGUAGE_NAMES,
    LANGUAGES,
    LINK_SETTINGS,
    OFFLINE_LANGUAGES,
    PREFILL_MAX_CHARS,
    VENDORS,
    api_key,
    config_error_text,
    current_config,
    mark_settings_of_run,
    parse_prefill,
    provider_label,
    provider_options,
    queue_settings,
    read_prefill,
    sidebar_settings,
    sidebar_values,
)
from studio.ui.warmup import (  # noqa: F401
    WARM_MODULES,
    WARM_SERVER_TIMEOUT_S,
    WARM_UP_DELAY_S,
    WARM_UP_ENV,
    memory_log,
    server_lifespan,
    skip_bare_python_check,
    warm_server,
    warm_up,
)
from studio.ui.widgets import (  # noqa: F401
    CSS,
    badges_html,
    inject_css,
    input_notes,
    rating_badge_html,
    render_remembered,
)
from tradingagents.config import resolve_config  # noqa: F401 - the pages' and tests' ``ui.resolve_config``
from tradingagents.vendors import vendor_label  # noqa: F401 - one home, re-exported as before


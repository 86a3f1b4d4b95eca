"""The saved runs (``results/<TICKER>/<date>/state.json`` and ``report.md``), under their old name.

They live in ``tradingagents.storage.files_runs``: persistence belongs to the storage layer, which
the graph uses and which never imports the graph. This name is that same module object.
"""

import sys

from tradingagents.storage import files_runs as _impl

sys.modules[__name__] = _impl

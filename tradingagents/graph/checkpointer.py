"""The per-ticker SQLite checkpoints, under the name the design documents give them.

``thread_id``, ``get_checkpointer``, ``checkpoint_step``, ``clear_checkpoint`` (and the rest) live
in ``tradingagents.storage.sqlite_checkpoint``: persistence belongs to the storage layer, which the
graph uses and which never imports the graph. This name is that same module object, so every
documented import (and anything that patches it) keeps working.
"""

import sys

from tradingagents.storage import sqlite_checkpoint as _impl

sys.modules[__name__] = _impl

"""The per-ticker SQLite checkpoints, under the name the specification gives them.

They live in ``tradingagents.storage.sqlite_checkpoint`` (persistence belongs to the storage layer,
which the graph uses and which never imports the graph); the project imports that module. This name
re-exports the specification's calls (``thread_id``, ``get_checkpointer``, ``checkpoint_step``,
``clear_checkpoint``) and the store's other public names for code written against the documents.
"""

from tradingagents.storage.sqlite_checkpoint import (
    CheckpointError,
    TickerCheckpointer,
    checkpoint_path,
    checkpoint_step,
    clear_all_checkpoints,
    clear_checkpoint,
    get_checkpointer,
    has_checkpoint,
    list_checkpoints,
    run_signature,
    thread_id,
)

__all__ = [
    "CheckpointError",
    "TickerCheckpointer",
    "checkpoint_path",
    "checkpoint_step",
    "clear_all_checkpoints",
    "clear_checkpoint",
    "get_checkpointer",
    "has_checkpoint",
    "list_checkpoints",
    "run_signature",
    "thread_id",
]

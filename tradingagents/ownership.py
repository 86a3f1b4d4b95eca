"""Who may do what on a shared desk: one table, read by the job registry (``studio/jobs.py``) and the
storage (watchlists, role memories), never decided by a page.

| action | the owner | a desk lead | anyone signed in |
|---|---|---|---|
| watch a job, read runs, log, lessons | yes | yes | yes |
| stop, resume a job | yes | yes | no |
| continue a backtest (start the same one again) | yes | yes | no |
| resume a run interrupted by a restart | yes | yes | no |
| run a watchlist | yes | yes | yes |
| save over, delete a watchlist | yes | yes | no |
| add, retire, restore, clear role memories | (none) | yes | no |
| read the audit trail | (none) | yes | no |

A thing nobody owns (started by the command line, or saved before owners were kept) is anyone's to
stop, resume or save over; a new watchlist name is anyone's to take. Without sign-in (one machine, no
identities) every person is their own desk lead: ``allowed(..., lead=True)``.

This module imports nothing of the package.
"""

from __future__ import annotations

OWNER, LEAD, ANYONE = "owner", "desk lead", "anyone signed in"

RULES: dict[str, tuple[str, ...]] = {
    "watch_job": (OWNER, LEAD, ANYONE),
    "stop_job": (OWNER, LEAD),
    "resume_job": (OWNER, LEAD),
    "continue_backtest": (OWNER, LEAD),
    "adopt_run": (OWNER, LEAD),
    "run_watchlist": (OWNER, LEAD, ANYONE),
    "save_watchlist": (OWNER, LEAD),
    "delete_watchlist": (OWNER, LEAD),
    "edit_memory": (LEAD,),
    "read_audit": (LEAD,),
}
"""action → who may: the table of the module docstring."""


def allowed(action: str, *, who: str | None, owner: str | None = None, lead: bool = False) -> bool:
    """Whether ``who`` (an owner id; None: nobody known) may do ``action`` to a thing of ``owner``."""
    may = RULES[action]
    if ANYONE in may:
        return True
    if lead and LEAD in may:
        return True
    if OWNER in may:
        if owner is None:
            return True  # nobody's: anyone's
        return who is not None and who == owner
    return False

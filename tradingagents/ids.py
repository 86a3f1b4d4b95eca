"""Deterministic ids: the same parts give the same id on every machine and in every process.

``stable_id`` is sha256 over the parts joined by the unit separator (never Python's randomised
``hash()``). Ids made from it are persisted (message ids in checkpoints and saved states), so the
recipe never changes; ``length`` cuts the hex digest (64 characters by default).
"""

from __future__ import annotations

import hashlib


def stable_id(*parts: str, length: int = 64) -> str:
    """The first ``length`` hex characters of sha256 over ``parts`` joined by ``"\\x1f"``."""
    if not 1 <= length <= 64:
        raise ValueError(f"length must be 1 to 64 hex characters, not {length!r}")
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:length]

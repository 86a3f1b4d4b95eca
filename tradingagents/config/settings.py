"""The frozen settings: ``Settings`` (a read-only mapping with attribute access) and its containers.

Lists come back as ``FrozenList`` and dicts as ``FrozenDict`` (equal to, and JSON-encoded like, the
plain ones), so nothing downstream can change a setting under another component's feet.

``Settings.replace`` validates again through the resolver, which sits above this module: the
resolver registers itself (``Settings._resolver``) when ``tradingagents.config.resolve`` is imported,
which importing any module of the package does, so this module never imports upwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

from tradingagents.config.redact import public_config

_READ_ONLY = "Settings are read-only: use settings.replace(key=value) or resolve_config({...}) for new ones."


class FrozenList(list):
    """A list that refuses changes (equal to, and JSON-encoded like, a plain list)."""

    def _refuse(self, *args: Any, **kwargs: Any):
        raise TypeError(_READ_ONLY)

    append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse

    def __reduce__(self):
        return (FrozenList, (list(self),))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo: dict) -> FrozenList:
        return self


class FrozenDict(dict):
    """A dict that refuses changes (equal to, and JSON-encoded like, a plain dict)."""

    def _refuse(self, *args: Any, **kwargs: Any):
        raise TypeError(_READ_ONLY)

    __setitem__ = __delitem__ = __ior__ = update = setdefault = pop = popitem = clear = _refuse

    def __reduce__(self):
        return (FrozenDict, (dict(self),))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo: dict) -> FrozenDict:
        return self


def freeze(value: Any) -> Any:
    """``value`` with every mapping a ``FrozenDict`` and every list, tuple or set a ``FrozenList``."""
    if isinstance(value, (FrozenList, FrozenDict, Settings)):
        return value
    if isinstance(value, Mapping):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple, set, frozenset)) and not isinstance(value, str):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return FrozenList(freeze(v) for v in items)
    return value


def thaw(value: Any) -> Any:
    """A deep, plain, mutable copy of a (frozen) value."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list):
        return [thaw(v) for v in value]
    return value


class Settings(Mapping[str, Any]):
    """Resolved, validated configuration: a read-only mapping with attribute access.

    ``settings["data_vendor"]`` and ``settings.data_vendor`` read the same value; assignment of any
    kind raises ``TypeError``. ``dict(settings)`` is JSON-able; ``settings.to_dict()`` is a deep
    plain copy. ``replace(**changes)`` returns a new, validated ``Settings`` (paths and models that
    were derived from ``home``, ``checkpoint_dir`` and ``llm_provider`` are derived again from the
    new values).
    """

    __slots__ = ("_data", "_derived")

    _resolver: ClassVar[Callable[[Mapping[str, Any]], Settings] | None] = None
    """Validates and derives a full key mapping without reading the environment (set by ``resolve``)."""

    def __init__(self, data: Mapping[str, Any], derived: frozenset[str] = frozenset()) -> None:
        object.__setattr__(self, "_data", {k: freeze(v) for k, v in data.items()})
        object.__setattr__(self, "_derived", frozenset(derived))

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __getattr__(self, name: str) -> Any:
        try:
            return self._data[name]
        except KeyError:
            raise AttributeError(f"no setting named {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(_READ_ONLY)

    def __delattr__(self, name: str) -> None:
        raise TypeError(_READ_ONLY)

    def __setitem__(self, key: str, value: Any) -> None:
        raise TypeError(_READ_ONLY)

    def __delitem__(self, key: str) -> None:
        raise TypeError(_READ_ONLY)

    def __repr__(self) -> str:
        return f"Settings({public_config(self)!r})"

    def __reduce__(self):
        return (Settings, (self.to_dict(), self._derived))

    def __copy__(self) -> Settings:
        return self

    def __deepcopy__(self, memo: dict) -> Settings:
        return self

    def to_dict(self) -> dict[str, Any]:
        """A deep, plain, mutable copy (lists and dicts), e.g. to edit and resolve again."""
        return {k: thaw(v) for k, v in self._data.items()}

    def replace(self, **changes: Any) -> Settings:
        """New settings with ``changes`` applied and validated (the environment is not read again)."""
        base = {k: v for k, v in self._data.items() if k not in self._derived or k in changes}
        base.update(changes)
        resolver = type(self)._resolver
        assert resolver is not None, "tradingagents.config.resolve registers the resolver on import"
        return resolver(base)

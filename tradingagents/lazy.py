"""A package's names imported on first use (PEP 562): ``__getattr__ = lazy_getattr(__name__, homes)``.

``homes`` maps each public name to the module of the package that defines it. Importing the package
then imports none of them; the first use of a name imports its module and keeps the name in the
package's namespace (later uses are plain attribute reads).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The module-level ``__getattr__`` of ``package`` (call it in the package's ``__init__``)."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        namespace[name] = value
        return value

    return __getattr__

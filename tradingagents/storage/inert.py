"""Model text made inert for every report: the one sanitiser of report Markdown (the saved report.md included).

Model text can contain anything, so every string of a run's state and meta goes through
``sanitize_tree`` before a report is rendered from it (``files_runs.render_report_markdown``, which
writes ``report.md`` and which every export of the app renders from):

- text is made valid UTF-8 (a lone surrogate becomes U+FFFD); control characters, C1 controls and
  bidi overrides/isolates (U+202A-U+202E, U+2066-U+2069) are removed;
- only ``http``, ``https`` and ``mailto`` links survive: ``[x](javascript:alert(1))`` becomes ``x``,
  an image its alt text, a reference definition with another scheme (``[x]: javascript:…``, also
  inside a quote or a list item) plain text, an autolink with another scheme its text;
- no reference definition survives but one whose safe target is on its own line: a line (inside
  quotes and list items too) that starts a link label which closes with ``]:`` or does not close on
  that line has its ``[`` escaped. Renderers differ in what else they take for a definition
  (Python-Markdown a target on the next line, CommonMark a label across lines), and a definition in
  one part of a report serves a use in another once the parts are joined, so no definition is left
  for any of them to find (``tests/test_inert_renderers.py`` renders with markdown-it and
  Python-Markdown);
- every ``<`` becomes the entity ``&lt;``, which every Markdown renderer shows as the character and
  none reads as a tag whatever stands before it (a backslash escape would not: ``\\<img onerror>``
  escaped as ``\\\\<img …>`` is an escaped backslash followed by a live tag).

Sanitising sanitised text changes nothing (the functions are idempotent).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

SAFE_SCHEMES = ("http", "https", "mailto")

_SURROGATES = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean_text(text: Any) -> str:
    """``text`` as valid UTF-8 without control or bidi-override characters (surrogates become U+FFFD)."""
    return _CONTROL.sub("", _SURROGATES.sub("\ufffd", str(text or "")))


def clean_tree(value: Any) -> Any:
    """``clean_text`` applied to every string of a nested mapping/list (keys included)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, Mapping):
        return {str(k): clean_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_tree(v) for v in value]
    return value


def safe_url(url: Any) -> str | None:
    """``url`` if its scheme is http, https or mailto (with a host for http/https), else None."""
    raw = html.unescape(str(url or "")).strip()
    squeezed = re.sub(r"[\s\x00-\x1f\x7f]+", "", raw)  # "java\nscript:" is still javascript:
    try:
        parts = urlsplit(squeezed)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in SAFE_SCHEMES:
        return None
    if scheme in ("http", "https") and not parts.netloc:
        return None
    return squeezed


_IMAGE = re.compile(r"!\[([^\]\n]*)\]\([^)\n]*\)")
_LINK_TARGET = re.compile(r"\]\(\s*<?([^)\s>]*)")
# a reference definition, also one inside block quotes ("> > [x]: …") or a list item ("- [x]: …")
_REF_DEF = re.compile(r"^((?:[ ]{0,3}(?:>|[-*+]|\d+[.)])[ \t]?)*)[ ]{0,3}\[([^\]\n]+)\]:[ \t]*<?(\S+?)>?(?:[ \t]+.*)?$",
                      re.MULTILINE)
# a line's container prefix (quotes, list markers, indentation), then an unescaped "[" that may open a label
_LABEL_START = re.compile(r"^((?:[ \t]*(?:>|[-*+]|\d{1,9}[.)]))*[ \t]*)\[(.*)$", re.MULTILINE)
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>]*)>")
_SIMPLE_LINK = re.compile(r"\[([^\[\]\n]*)\]\(\s*<?([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+\"[^\"\n]*\")?\s*\)")


def sanitize_links(text: str) -> str:
    """Markdown whose every link points only at http, https or mailto, and that has no image."""

    def simple(m: re.Match) -> str:
        good = safe_url(m.group(2))
        return f"[{m.group(1)}]({good})" if good else m.group(1)

    def target(m: re.Match) -> str:
        return m.group(0) if safe_url(m.group(1)) else "]\\(" + m.group(0)[2:]

    def ref(m: re.Match) -> str:
        good = safe_url(m.group(3))
        return f"{m.group(1)}[{m.group(2)}]: {good}" if good else f"{m.group(1)}\\[{m.group(2)}\\]"

    def auto(m: re.Match) -> str:
        good = safe_url(m.group(1))
        return f"[{good}]({good})" if good else m.group(1)

    text = _IMAGE.sub(lambda m: m.group(1), text)
    text = _SIMPLE_LINK.sub(simple, text)
    text = _LINK_TARGET.sub(target, text)
    text = _REF_DEF.sub(ref, text)
    text = _AUTOLINK.sub(auto, text)
    return _LABEL_START.sub(_no_definition, text)


def _label_end(rest: str) -> int:
    """Where the first unescaped ``]`` of ``rest`` is (-1: none on this line)."""
    i = 0
    while i < len(rest):
        if rest[i] == "\\":
            i += 2
            continue
        if rest[i] == "]":
            return i
        i += 1
    return -1


def _no_definition(m: re.Match) -> str:
    """The line with its label's ``[`` escaped unless it cannot start a reference definition, or starts
    one whose target is safe and on the same line (``[x]: https://…``, as ``sanitize_links`` wrote it)."""
    prefix, rest = m.group(1), m.group(2)
    end = _label_end(rest)
    if end >= 0 and not rest.startswith(":", end + 1):
        return m.group(0)  # "[x](…)", "[x] text": no definition
    if end >= 0:
        target = rest[end + 2:].split(None, 1)
        if target and safe_url(target[0]):
            return m.group(0)
    return f"{prefix}\\[{rest}"


def sanitize_markdown(text: Any) -> str:
    """``clean_text`` and ``sanitize_links``, then every ``<`` as ``&lt;``: no renderer makes a tag of it."""
    return sanitize_links(clean_text(text)).replace("<", "&lt;")


def sanitize_tree(value: Any) -> Any:
    """``sanitize_markdown`` applied to every string of a nested mapping/list (keys are cleaned only)."""
    if isinstance(value, str):
        return sanitize_markdown(value)
    if isinstance(value, Mapping):
        return {clean_text(k): sanitize_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [sanitize_tree(v) for v in value]
    return value


class SanitizedView(Mapping):
    """``sanitize_tree(mapping)`` read lazily: each value is sanitised when it is first read (then kept),
    a nested mapping as another view, so a reader of a few keys (the report reads a dozen of a run's
    state and meta) does not sanitise the rest (the debates' histories twice over, every debate turn,
    the config). What it reads is what ``sanitize_tree`` gives: the same keys (cleaned; of raw keys that
    clean to one key, the last wins, as in the dict ``sanitize_tree`` builds) and the same values."""

    __slots__ = ("_raw", "_keys", "_done")

    def __init__(self, mapping: Mapping[Any, Any]) -> None:
        self._raw = mapping
        self._keys = {clean_text(k): k for k in mapping}
        self._done: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        try:
            return self._done[key]
        except KeyError:
            pass
        value = self._raw[self._keys[key]]
        value = SanitizedView(value) if isinstance(value, Mapping) else sanitize_tree(value)
        self._done[key] = value
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self):
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


__all__ = ["SAFE_SCHEMES", "SanitizedView", "clean_text", "clean_tree", "safe_url", "sanitize_links",
           "sanitize_markdown", "sanitize_tree"]

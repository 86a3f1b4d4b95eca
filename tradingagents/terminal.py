"""What reaches a terminal: ``terminal_safe(text)`` strips what a terminal would act on rather than show.

A model's answer, a server's error text, a CSV cell or a ticker's news can carry bytes a terminal
obeys: CSI sequences (colours, cursor moves, a screen clear), OSC strings (the window title, a
hyperlink, a clipboard write), DCS/SOS/PM/APC strings, other ESC sequences, C1 controls (the
8-bit CSI 0x9b among them), C0 controls other than newline and tab (a carriage return rewrites a
line, BEL rings) and the bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069, plus
the marks U+200E, U+200F, U+061C), which make a line read differently from what it holds.

``SafeStream`` wraps ``sys.stdout`` / ``sys.stderr`` so every ``write`` is made safe: the command
line (``tradingagents.cli.main``, ``tradingagents.backtest.cli.main``) installs it once with
``safe_stdio()``, so no print path can forget it. A program's own carriage return (a progress bar
redrawn in place) goes through ``SafeStream.unfiltered``.

This module imports only the standard library (the ground floor).
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

__all__ = ["BIDI_CONTROLS", "SafeStream", "reader_gone", "safe_stdio", "terminal_safe", "unfiltered"]

# the bidirectional embeddings/overrides (LRE RLE PDF LRO RLO), isolates (LRI RLI FSI PDI) and marks
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"

_TERMINAL_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI … final byte
    r"|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC … BEL or ST (or unterminated)
    r"|\x1b[PX^_][^\x1b\x9c]*(?:\x1b\\|\x9c)?"  # DCS / SOS / PM / APC strings
    r"|\x1b[ -/]*[0-~]?"  # any other escape (and a lone ESC)
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
    r"|\x9d[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # 8-bit OSC
    r"|[\x00-\x08\x0b-\x1f\x7f\x80-\x9f"  # C0 (but \t \n) and C1 controls
    + BIDI_CONTROLS + r"]"
)


def terminal_safe(text: object) -> str:
    """``text`` (``str()`` of it) with every terminal control sequence and bidi control removed;
    newline and tab are kept, and so is every printable character of any script."""
    return _TERMINAL_CONTROL.sub("", str(text))


class SafeStream:
    """A text stream whose ``write`` passes ``terminal_safe`` text to the stream it wraps; everything
    else (``flush``, ``isatty``, ``fileno``, ``encoding``, …) is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self.unfiltered = stream

    def write(self, text: str) -> int:
        self.unfiltered.write(terminal_safe(text))
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.unfiltered, name)


def unfiltered(stream: Any) -> Any:
    """The stream under a ``SafeStream`` (for the program's own control bytes), else ``stream``."""
    return getattr(stream, "unfiltered", stream) if isinstance(stream, SafeStream) else stream


@contextlib.contextmanager
def safe_stdio() -> Iterator[None]:
    """Within the block, ``sys.stdout`` and ``sys.stderr`` are ``SafeStream``s (restored after)."""
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, SafeStream):
        sys.stdout = SafeStream(sys.stdout)
    if not isinstance(sys.stderr, SafeStream):
        sys.stderr = SafeStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def reader_gone() -> int:
    """stdout's reader closed the pipe (``log | head``): nothing more can be shown and the reader chose
    to stop, so the command ends with 0 and no traceback; stdout is pointed at /dev/null so the
    interpreter's final flush cannot raise again."""
    import os

    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 0

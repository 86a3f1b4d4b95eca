"""The BM25 tokeniser: lower-cased ``\\b\\w+\\b`` words; CJK runs become unigrams plus bigrams.

Chinese, Japanese kana and Korean Hangul are written without spaces, so a run of such characters
becomes its characters and their adjacent pairs: two Chinese situations then share tokens.
"""

from __future__ import annotations

import re

__all__ = ["bm25_tokenize"]

_WORD_RE = re.compile(r"\b\w+\b")
# Han (incl. extensions A, B+ and compatibility), Hiragana, Katakana, Hangul syllables and jamo.
_CJK_CLASS = (
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af\U00020000-\U0003134f"
)
_CJK_RE = re.compile(f"[{_CJK_CLASS}]")
_SPLIT_RE = re.compile(f"([{_CJK_CLASS}]+)")


def bm25_tokenize(text: str) -> list[str]:
    """Lower-cased ``\\b\\w+\\b`` tokens; CJK runs become character unigrams then bigrams."""
    if not isinstance(text, str):
        raise TypeError(f"Text to tokenise must be a string, not {type(text).__name__}.")
    words = _WORD_RE.findall(text.lower())
    if not _CJK_RE.search(text):
        return words
    out: list[str] = []
    for word in words:
        if not _CJK_RE.search(word):
            out.append(word)
            continue
        for part in _SPLIT_RE.split(word):
            if not part:
                continue
            if _CJK_RE.match(part):
                out.extend(part)
                out.extend(part[i : i + 2] for i in range(len(part) - 1))
            else:
                out.append(part)
    return out


"""Find English on a page drawn in Chinese (``?lang=zh``): the words a reader would see that are not
tickers, numbers, units or product names.

``english_words(page)`` reads the text the browser renders for people: the main area and the sidebar
(``innerText``: what is visible, not scripts or styles), plus the placeholders, titles, ARIA labels
and ``alt`` texts of what is on screen. It returns the words of three or more Latin letters that are
not in ``ALLOWED`` and are not tickers (upper case, with digits or dots: NVDA, BRK.B, 600519.SS).
A test asserts the list is empty, so a label that missed the catalogue fails it by name.
"""

from __future__ import annotations

import re

ALLOWED = frozenset(
    w.lower()
    for w in (
        # the product and what it runs on, as they are spelt everywhere
        "TradingAgents", "Studio", "Streamlit", "OpenAI", "Ollama", "vLLM", "LM", "OpenRouter", "DeepSeek",
        "Yahoo", "Finance", "yfinance", "PostgreSQL", "SQLite", "LangGraph", "Ray", "Chromium", "Plotly",
        # formats, units and standard abbreviations a Chinese reader sees in English too
        "CSV", "PDF", "HTML", "Markdown", "JSON", "API", "URL", "USD", "UTC", "OIDC", "ETF", "EPS", "ATR",
        "MACD", "RSI", "SMA", "EMA", "VWAP", "Sharpe", "Sortino", "Bollinger", "BM25", "LLM", "CAGR",
        "localhost", "http", "https", "www", "com",
        # the language picker names each language in itself
        "English",
        # the model ids people type (the provider's own names)
        "gpt", "mini", "nano", "turbo", "llama", "qwen", "claude", "sonnet", "haiku", "opus", "chat",
        "offline",  # the offline engine's model id ("offline-quick"), not a label
        "quick", "deep",
    )
)

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]")
_TICKERISH = re.compile(r"^[A-Z0-9^][A-Z0-9.^=-]*$")

VISIBLE_TEXT_JS = r"""() => {
  const roots = [document.querySelector('section.stMain, [data-testid="stMain"], .main'),
                 document.querySelector('[data-testid="stSidebar"]')].filter(Boolean);
  const out = [];
  for (const root of roots) {
    out.push(root.innerText || "");
    for (const el of root.querySelectorAll('[placeholder],[title],[aria-label],img[alt]')) {
      const r = el.getBoundingClientRect();
      if (!r.width || !r.height) continue;
      for (const a of ['placeholder', 'title', 'aria-label', 'alt']) {
        const v = el.getAttribute(a); if (v) out.push(v);
      }
    }
  }
  out.push(document.title || "");
  return out.join("\n");
}"""


def english_in(text: str, allowed: frozenset[str] = ALLOWED) -> list[str]:
    """The English words of ``text`` outside ``allowed`` (case-insensitive) and outside ticker-like
    tokens; each once, in order of first appearance. Code spans are not exempt: a reader sees them."""
    seen: dict[str, None] = {}
    for token in re.split(r"\s+", text):
        if _TICKERISH.match(token.strip("()[]{},;:!?\"'·…|/")):
            continue
        for word in _WORD.findall(token):
            if len(word) < 3 or word.lower() in allowed or _TICKERISH.match(word):
                continue
            seen.setdefault(word, None)
    return list(seen)


def english_words(page, allowed: frozenset[str] = ALLOWED) -> list[str]:
    """The English words on ``page`` (a Playwright page) a Chinese reader would meet."""
    return english_in(page.evaluate(VISIBLE_TEXT_JS), allowed)

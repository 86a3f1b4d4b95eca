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
        "alpha", "bps",  # 超额收益(alpha) keeps the market's word beside the Chinese one; bps, basis points
        "localhost", "http", "https", "www", "com",
        # the language picker names each language in itself
        "English",
        # the model ids people type (the provider's own names)
        "gpt", "mini", "nano", "turbo", "llama", "qwen", "claude", "sonnet", "haiku", "opus", "chat",
        "offline",  # the offline engine's model id ("offline-quick"), not a label
        "quick", "deep",
        # Plotly draws its own tool bar over a chart ("Download plot as a png", "Zoom", "Autoscale")
        "Plotly",
    )
)

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]")
_TICKERISH = re.compile(r"^[A-Z0-9^][A-Z0-9.^=-]*$")

CHROME_JS = r"""() => {
  // What no page can translate, left out of the scan (restored by RESTORE_JS): Streamlit's own ARIA labels and
  // tooltips (a heading anchor's "Link to heading", a select's "Open", "Help for …", the date field's "year, …",
  // "Choose date", the number field's steppers, the tables' and charts' tool bars), Material icons drawn from
  // their ligature names ("trending_up": a glyph, not text), and quoted source material (a post or headline
  // as the data source wrote it, in a blockquote of the agents' reports).
  const hide = (sel) => document.querySelectorAll(sel).forEach((e) => {
    if (e.dataset.taScan) return; e.dataset.taScan = 'hidden:' + (e.style.display || ''); e.style.display = 'none'; });
  const unlabel = (sel) => document.querySelectorAll(sel).forEach((e) => {
    for (const a of ['aria-label', 'title']) if (e.hasAttribute(a)) {
      e.dataset['taScan' + a.replace('-', '')] = e.getAttribute(a); e.removeAttribute(a); } });
  hide('[data-testid="stIconMaterial"]'); hide('[data-testid="stExpanderIcon"]'); hide('span[role="img"][translate="no"]');
  hide('[class*="st-key-ta-engine-"] blockquote'); hide('[class*="st-key-ta-said-"] blockquote');
  // a select's "Open" toggle is labelled by Streamlit as it (re)draws: by its label too, not only by its place
  for (const sel of ['[data-testid="stChatMessageContent"]', '[data-testid="stSelectbox"] button', '[aria-label="Open"]',
      '[data-testid="stMultiSelect"] button', '[data-testid="stMultiSelect"] [role="button"]',
      '[data-testid="stTooltipHoverTarget"]', '[aria-label^="Help for "]',
      '[data-testid="stDateInputField"] [aria-label]', '[data-testid="stDateInputCalendarButton"]',
      '[data-testid="stNumberInputStepDown"]', '[data-testid="stNumberInputStepUp"]',
      '[data-testid="stElementToolbar"] [aria-label]', '[data-testid="stElementToolbar"] [title]',
      '[data-testid="stHeaderActionElements"] [aria-label]', '[data-testid="stSidebarCollapseButton"] [aria-label]',
      '[data-testid="stSidebarCollapseButton"] button', '[data-testid="stExpandSidebarButton"]',
      '[data-testid="stNavSectionHeader"] [aria-label]', '.modebar [data-title]', '.modebar-btn',
      '[data-testid="stProgress"] [role="progressbar"]', '[data-testid="stSidebarNav"] [aria-label]',
      'nav[data-testid="stSidebarNav"]', '[data-testid="stMainMenuButton"]', 'section[data-testid="stSidebar"]'])
    unlabel(sel);
  return true;
}"""
RESTORE_JS = r"""() => { document.querySelectorAll('[data-ta-scan]').forEach((e) => {
    const v = e.dataset.taScan; if (v.startsWith('hidden:')) e.style.display = v.slice(7); delete e.dataset.taScan; });
  document.querySelectorAll('[data-ta-scanarialabel]').forEach((e) => {
    e.setAttribute('aria-label', e.dataset.taScanarialabel); delete e.dataset.taScanarialabel; });
  document.querySelectorAll('[data-ta-scantitle]').forEach((e) => {
    e.setAttribute('title', e.dataset.taScantitle); delete e.dataset.taScantitle; }); }"""

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
    """The English words on ``page`` (a Playwright page) a Chinese reader would meet: what it shows,
    without what no page can translate (``CHROME_JS``; the page is left as it was)."""
    page.evaluate(CHROME_JS)
    try:
        return english_in(page.evaluate(VISIBLE_TEXT_JS), allowed)
    finally:
        page.evaluate(RESTORE_JS)

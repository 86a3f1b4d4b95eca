"""The catalogues are complete: every message the code marks has its Chinese text, with the same
``{fields}``; no page shows a literal that is not marked; the language rules.

The messages are found the way a translator's tool finds them: Babel's Python extractor over the
whole project with ``i18n.KEYWORDS``. A new ``_("…")`` without a Chinese entry fails here by name,
and so does a ``st.caption("…")`` that was never wrapped.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from tradingagents import i18n
from tradingagents.config import resolve_config
from tradingagents.errors import ConfigError
from tradingagents.rating import RATINGS_5_TIER

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("app.py", "pages", "studio", "tradingagents")
FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)[^{}]*\}")


def _extracted() -> dict[tuple[str | None, object], list[str]]:
    """(context, msgid or (singular, plural)) → where it is used, over every source of the product."""
    found: dict[tuple[str | None, object], list[str]] = {}
    for source in SOURCES:
        path = ROOT / source
        if path.is_file():
            with path.open("rb") as fh:
                from babel.messages.extract import extract

                items = [(path.name, lineno, msg, comments, ctx)
                         for lineno, msg, comments, ctx in extract("python", fh, keywords=dict(i18n.KEYWORDS))]
        else:
            items = list(extract_from_dir(str(path), method_map=[("**.py", "python")],
                                          keywords=dict(i18n.KEYWORDS)))
            items = [(f"{source}/{f}", lineno, msg, comments, ctx) for f, lineno, msg, comments, ctx in items]
        for filename, lineno, msg, _comments, ctx in items:
            if isinstance(msg, tuple):
                msg = tuple(m for m in msg if m)
                if len(msg) == 1:
                    msg = msg[0]
            if not msg:
                continue
            found.setdefault((ctx, msg), []).append(f"{filename}:{lineno}")
    return found


EXTRACTED = _extracted()


def _zh_entries() -> dict[tuple[str | None, object], list[tuple[str, object]]]:
    out: dict[tuple[str | None, object], list[tuple[str, object]]] = {}
    for path in sorted((i18n.LOCALES_DIR / "zh" / "LC_MESSAGES").glob("*.po")):
        with path.open("rb") as fh:
            cat = read_po(fh, locale="zh")
        for m in cat:
            if m.id:
                key = (m.context, tuple(m.id) if m.pluralizable else m.id)
                out.setdefault(key, []).append((path.name, m.string))
    return out


ZH = _zh_entries()


def test_the_extractor_finds_the_marked_messages():
    # the rating scale's labels and the roster are marked in the core catalogue's callers: at least
    # the pages' own messages are found, so an extractor that found nothing cannot pass the next test
    assert len(EXTRACTED) > 20, sorted(EXTRACTED)[:5]


def test_every_marked_message_has_its_chinese_text():
    missing = [f"{msg!r} (context {ctx!r}) at {', '.join(where[:3])}"
               for (ctx, msg), where in sorted(EXTRACTED.items(), key=str)
               if not any(text for _f, text in ZH.get((ctx, msg), []))]
    assert not missing, f"{len(missing)} messages lack a Chinese text in tradingagents/locales/zh:\n" + "\n".join(
        missing[:60])


def test_translations_keep_the_fields_of_their_message():
    bad = []
    for (_ctx, msg), entries in ZH.items():
        ids = msg if isinstance(msg, tuple) else (msg,)
        want = set(FIELD.findall(" ".join(ids)))
        for filename, text in entries:
            for form in (text if isinstance(text, (tuple, list)) else (text,)):
                if form and set(FIELD.findall(form)) != want:
                    bad.append(f"{filename}: {msg!r} → {form!r}")
    assert not bad, "\n".join(bad[:40])


def test_one_message_has_one_translation_across_the_catalogue_files():
    clash = [f"{key!r}: " + ", ".join(f"{f}={t!r}" for f, t in entries)
             for key, entries in ZH.items() if len({str(t) for _f, t in entries if t}) > 1]
    assert not clash, "\n".join(clash[:40])


def test_ratings_are_shown_translated_and_kept_canonical():
    assert [i18n.rating_label(r, "zh") for r in RATINGS_5_TIER] == ["买入", "增持", "持有", "减持", "卖出"]
    assert [i18n.rating_label(r, "en") for r in RATINGS_5_TIER] == list(RATINGS_5_TIER)
    assert i18n.rating_label("—", "zh") == "—"


def test_language_names_and_fallbacks():
    for text in ("zh", "zh-CN", "zh_Hans", "zh-Hans-CN", "Chinese", "中文", "简体中文"):
        assert i18n.normalize_language(text) == "zh", text
    for text in ("en", "en-US", "English", "en_GB"):
        assert i18n.normalize_language(text) == "en", text
    assert i18n.normalize_language("fr-FR") is None
    assert i18n.normalize_language("") is None and i18n.normalize_language(None) is None
    assert i18n.language_of_output("Chinese") == "zh" and i18n.language_of_output("German") == "en"


def test_fields_are_filled_after_translating_and_plurals():
    t = i18n.translator("zh")
    assert t("{a} and {b}", a=1, b=2) == "1 and 2"  # no entry: the English text, filled
    en = i18n.translator("en")
    assert en.n("{n} run", "{n} runs", 1) == "1 run" and en.n("{n} run", "{n} runs", 3) == "3 runs"


def test_ui_language_is_a_checked_config_key(monkeypatch, tmp_path):
    monkeypatch.setenv("TRADINGAGENTS_HOME", str(tmp_path))
    assert resolve_config()["ui_language"] is None
    monkeypatch.setenv("TRADINGAGENTS_UI_LANGUAGE", "zh-CN")
    assert resolve_config()["ui_language"] == "zh"
    monkeypatch.setenv("TRADINGAGENTS_UI_LANGUAGE", "klingon")
    with pytest.raises(ConfigError, match="TRADINGAGENTS_UI_LANGUAGE"):
        resolve_config()


# --------------------------------------------------------------------------- unmarked literals
UI_CALLS = frozenset({
    "title", "header", "subheader", "caption", "info", "warning", "error", "success", "toast", "button",
    "download_button", "link_button", "page_link", "text_input", "text_area", "number_input", "selectbox",
    "multiselect", "radio", "checkbox", "toggle", "date_input", "time_input", "slider", "select_slider",
    "expander", "popover", "metric", "form_submit_button", "spinner", "status", "markdown", "write",
    "segmented_control", "pills", "file_uploader", "tabs", "Page", "dialog", "chat_input", "update",
    "TextColumn", "LinkColumn", "NumberColumn", "ProgressColumn", "CheckboxColumn", "DatetimeColumn",
    "DateColumn", "LineChartColumn", "BarChartColumn", "Column", "SelectboxColumn", "ListColumn",
    "ImageColumn", "set_page_config",
})
TEXT_KWARGS = frozenset({"label", "help", "placeholder", "title", "display_text", "page_title", "caption"})
UI_FILES = ["app.py", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "studio" / "ui").glob("*.py")),
            *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))]
_PRODUCT = re.compile(r"TradingAgents Studio|TradingAgents|:material/[a-z_]+:|<[^>]*>|&[a-z]+;|\{[^{}]*\}|https?://\S+")
_WORDISH = re.compile(r"[A-Za-z]{2,}")


def _english(node: ast.AST) -> str | None:
    """The English text of a literal argument (a str or an f-string's literal parts), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        text = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    elif isinstance(node, (ast.List, ast.Tuple)):
        parts = [_english(e) for e in node.elts]
        return " ".join(p for p in parts if p) or None
    else:
        return None
    text = _PRODUCT.sub(" ", text)
    return text if _WORDISH.search(text) else None


def _unmarked(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        if name not in UI_CALLS:
            continue
        if name in ("markdown", "write", "html") and any(
                k.arg == "unsafe_allow_html" for k in node.keywords) and node.args and isinstance(
                node.args[0], ast.Constant) and "<" in str(node.args[0].value) and "</" not in str(node.args[0].value):
            continue  # a style block, not text
        args = ([] if name in ("Page", "page_link") else node.args[:1]) + [k.value for k in node.keywords if k.arg in TEXT_KWARGS]
        for arg in args:
            text = _english(arg)
            if text:
                out.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}({text.strip()[:60]!r})")
    return out


def test_no_page_shows_an_unmarked_literal():
    found = [line for f in UI_FILES for line in _unmarked(ROOT / f)]
    assert not found, (f"{len(found)} user-facing literals are not marked for the catalogue (wrap them in "
                       "_(…) and add their Chinese text):\n" + "\n".join(found[:80]))


def test_the_engines_own_labels_are_the_ones_shown_translated():
    from tests.test_blind_prices import DATE, TICKER
    from tradingagents.dataflows import demo
    from tradingagents.dataflows.blind import BlindMap, BlindProvider
    from tradingagents.llm_presets import OFFLINE_LABEL
    from tradingagents.vendors import PRODUCT_LABELS, product_label

    class Base:
        vendor, supports_social, label = "demo", False, demo.LABEL

    blind = BlindProvider(Base(), BlindMap([TICKER], DATE))
    assert {OFFLINE_LABEL, demo.LABEL, blind.label} == PRODUCT_LABELS
    zh = i18n.translator("zh")
    assert all(product_label(label, zh) != label for label in PRODUCT_LABELS)
    assert product_label("gpt-4o-mini", zh) == "gpt-4o-mini"

"""The product's languages: one message catalogue per language, read with Babel.

Every user-facing string of the app, the CLI and the exports is written in English in the code,
wrapped so that it can be found and translated::

    from tradingagents.i18n import N_, translator
    t = translator("zh")
    t("No saved run yet.")                       # → "还没有保存的运行。"
    t("{n} of {total} saved runs", n=3, total=9)  # the English text is the message id; {names} are
                                                  # filled after translating, so a catalogue may reorder them
    t.n("{n} run", "{n} runs", n)                # plural forms (Chinese has one)
    t.p("rating", "Buy")                         # with a context, where one English word means two things

``N_("…")`` only marks a constant for the catalogue (a module-level label); translate it where it is
shown with ``t(label)``. The catalogues are ``tradingagents/locales/<lang>/LC_MESSAGES/*.po`` (one
folder per language; a file per part of the product, merged on load), read once per process with
Babel's PO reader, so there is no compiled ``.mo`` to keep in step. English needs no catalogue: a
message id is its own English text. ``tests/test_i18n_catalogue.py`` extracts every marked string
from the code (Babel's extractor, ``KEYWORDS``) and fails on any one the Chinese catalogue lacks,
and on user-facing literals in the pages that are not marked at all.

Ratings keep their five canonical English names in files and logs (the specification's format);
``rating_label`` shows one in the chosen language. Which language a process or a browser session
uses is decided by its caller (the app: ``?lang=``, the sidebar, ``TRADINGAGENTS_UI_LANGUAGE``, the
browser's language; the CLI: the config's ``ui_language``) and passed in: nothing here is global
mutable state except the read-only catalogue cache.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

LOCALES_DIR = Path(__file__).resolve().parent / "locales"

LANGUAGES: Mapping[str, str] = MappingProxyType({"en": "English", "zh": "简体中文"})
"""The UI languages (code → its own name, as the language picker shows it)."""

DEFAULT_LANGUAGE = "en"

OUTPUT_LANGUAGE: Mapping[str, str] = MappingProxyType({"en": "English", "zh": "Chinese"})
"""The config's ``output_language`` (what the models are told to write in) for each UI language."""

KEYWORDS: Mapping[str, Any] = MappingProxyType({
    "_": None,        # studio.ui._ (the page's language)
    "t": None,        # a Translator
    "N_": None,       # a marked constant
    "ngettext": (1, 2),
    "n": (1, 2),      # Translator.n
    "p": ((1, "c"), 2),  # Translator.p (context, message)
    "pgettext": ((1, "c"), 2),
})
"""Babel extraction keywords: the functions whose literal arguments are message ids."""

_ALIASES = {
    "en": "en", "english": "en", "en_us": "en", "en_gb": "en",
    "zh": "zh", "zh_cn": "zh", "zh_hans": "zh", "zh_sg": "zh", "zh_hans_cn": "zh", "chinese": "zh",
    "中文": "zh", "简体中文": "zh", "汉语": "zh", "simplified chinese": "zh",
}


def normalize_language(value: Any) -> str | None:
    """A language code of ``LANGUAGES`` for ``value`` ("zh", "zh-CN", "zh_Hans", "Chinese", "中文",
    "en-US", "English" …), or None when it names none of them (the caller decides the fallback)."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().lower().replace("-", "_")
    if text in _ALIASES:
        return _ALIASES[text]
    base = text.split("_", 1)[0].split(".", 1)[0]
    return base if base in LANGUAGES else None


def language_of_output(output_language: Any) -> str:
    """The language code an ``output_language`` setting asks for ("Chinese" → "zh"); English for
    every language the product has no catalogue of."""
    return normalize_language(output_language) or DEFAULT_LANGUAGE


N_ = str
"""Marks a constant for the catalogue without translating it (``N_("Run")``); translate where shown."""

_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?:![rsa])?(?::[^{}]*)?\}")


@functools.cache
def catalogue(lang: str) -> Mapping[Any, Any]:
    """The language's messages: ``msgid`` (or ``(context, msgid)``) → translation; plural ids map
    ``(singular, plural)`` → the tuple of forms. Read once per process from every ``*.po`` of
    ``locales/<lang>/LC_MESSAGES/``; empty for English and for a language without a folder."""
    folder = LOCALES_DIR / lang / "LC_MESSAGES"
    if lang == DEFAULT_LANGUAGE or not folder.is_dir():
        return MappingProxyType({})
    from babel.messages.pofile import read_po  # Babel: the PO grammar (escapes, plurals, contexts)

    out: dict[Any, Any] = {}
    for path in sorted(folder.glob("*.po")):
        with path.open("rb") as fh:
            cat = read_po(fh, locale=lang)
        for message in cat:
            if not message.id or message.fuzzy:
                continue
            if message.pluralizable:
                forms = tuple(s for s in message.string if s) if isinstance(message.string, (tuple, list)) else ()
                if forms:
                    out[tuple(message.id)] = forms
                continue
            if message.string:
                out[(message.context, message.id) if message.context else message.id] = message.string
    return MappingProxyType(out)


def _fill(text: str, fields: Mapping[str, Any]) -> str:
    if not fields:
        return text
    try:
        return text.format(**fields)
    except (KeyError, IndexError, ValueError):  # a catalogue entry with a field the caller lacks
        return _FIELD.sub(lambda m: str(fields.get(m.group(1), m.group(0))), text)


class Translator:
    """The strings of one language: ``t(msgid, **fields)``, ``t.n(singular, plural, n, **fields)``,
    ``t.p(context, msgid, **fields)``. Cheap to make; the catalogue behind it is shared."""

    __slots__ = ("lang", "_messages")

    def __init__(self, lang: str | None) -> None:
        self.lang = normalize_language(lang) or DEFAULT_LANGUAGE
        self._messages = catalogue(self.lang)

    def __call__(self, msgid: str, /, **fields: Any) -> str:
        return _fill(self._messages.get(msgid, msgid), fields)

    def p(self, context: str, msgid: str, /, **fields: Any) -> str:
        return _fill(self._messages.get((context, msgid), msgid), fields)

    def n(self, singular: str, plural: str, n: int, /, **fields: Any) -> str:
        forms = self._messages.get((singular, plural))
        if forms:
            text = forms[0] if len(forms) == 1 else forms[0 if n == 1 else min(1, len(forms) - 1)]
        else:
            text = singular if n == 1 else plural
        return _fill(text, {"n": n, **fields})

    def has(self, msgid: str, context: str | None = None) -> bool:
        """Whether the catalogue translates ``msgid`` (English: always)."""
        return self.lang == DEFAULT_LANGUAGE or ((context, msgid) if context else msgid) in self._messages

    def __repr__(self) -> str:
        return f"Translator({self.lang!r})"


@functools.lru_cache(maxsize=8)
def translator(lang: str | None) -> Translator:
    """The ``Translator`` of ``lang`` (a code or a name; English when it names no language we have)."""
    return Translator(lang)


def rating_label(rating: Any, lang: str | None) -> str:
    """A rating shown in ``lang`` (买入, 增持, 持有, 减持, 卖出); the canonical English name stays in
    files and logs. Anything that is not a rating is returned as it is."""
    text = "" if rating is None else str(rating)
    return translator(lang).p("rating", text) if text else text


def pgettext(context: str, message: str) -> str:
    """Marks ``message`` with its ``context`` for the catalogue without translating it (like ``N_``)."""
    return message


SECTOR_NAMES = (
    pgettext("sector", "Technology"), pgettext("sector", "Healthcare"), pgettext("sector", "Financial Services"),
    pgettext("sector", "Consumer Cyclical"), pgettext("sector", "Consumer Defensive"),
    pgettext("sector", "Industrials"), pgettext("sector", "Energy"), pgettext("sector", "Communication Services"),
    pgettext("sector", "Utilities"), pgettext("sector", "Basic Materials"), pgettext("sector", "Real Estate"),
    pgettext("sector", "ETF"), pgettext("sector", "Index"),
    pgettext("sector", "Aerospace & Defense"), pgettext("sector", "Apparel Retail"),
    pgettext("sector", "Asset Management"), pgettext("sector", "Auto Manufacturers"),
    pgettext("sector", "Banks—Diversified"), pgettext("sector", "Banks—Regional"),
    pgettext("sector", "Beverages—Non-Alcoholic"), pgettext("sector", "Beverages—Wineries & Distilleries"),
    pgettext("sector", "Biotechnology"), pgettext("sector", "Capital Markets"), pgettext("sector", "Chemicals"),
    pgettext("sector", "Commodities Focused"), pgettext("sector", "Communication Equipment"),
    pgettext("sector", "Communications"), pgettext("sector", "Confectioners"), pgettext("sector", "Conglomerates"),
    pgettext("sector", "Consumer Electronics"), pgettext("sector", "Credit Services"),
    pgettext("sector", "Diagnostics & Research"), pgettext("sector", "Discount Stores"),
    pgettext("sector", "Diversified Emerging Mkts"), pgettext("sector", "Drug Manufacturers"),
    pgettext("sector", "Drug Manufacturers—General"), pgettext("sector", "Drug Manufacturers—Specialty & Generic"),
    pgettext("sector", "Electrical Equipment & Parts"), pgettext("sector", "Electronic Gaming & Multimedia"),
    pgettext("sector", "Engineering & Construction"), pgettext("sector", "Entertainment"),
    pgettext("sector", "Equity Energy"), pgettext("sector", "Farm & Heavy Construction Machinery"),
    pgettext("sector", "Financial"), pgettext("sector", "Financial Data & Stock Exchanges"),
    pgettext("sector", "Footwear & Accessories"), pgettext("sector", "Foreign Large Blend"),
    pgettext("sector", "Furnishings, Fixtures & Appliances"), pgettext("sector", "Health"),
    pgettext("sector", "Healthcare Plans"), pgettext("sector", "High Yield Bond"),
    pgettext("sector", "Home Improvement Retail"), pgettext("sector", "Household & Personal Products"),
    pgettext("sector", "Household Products"), pgettext("sector", "Information Technology Services"),
    pgettext("sector", "Insurance—Diversified"), pgettext("sector", "Insurance—Life"),
    pgettext("sector", "Integrated Freight & Logistics"), pgettext("sector", "Intermediate Core Bond"),
    pgettext("sector", "Internet Content & Information"), pgettext("sector", "Internet Retail"),
    pgettext("sector", "Large Blend"), pgettext("sector", "Large Growth"), pgettext("sector", "Large Value"),
    pgettext("sector", "Long Government"), pgettext("sector", "Market index"), pgettext("sector", "Medical Devices"),
    pgettext("sector", "Medical Instruments & Supplies"), pgettext("sector", "Mid-Cap Growth"),
    pgettext("sector", "Natural Resources"), pgettext("sector", "Oil & Gas E&P"),
    pgettext("sector", "Oil & Gas Integrated"), pgettext("sector", "Oil & Gas Refining & Marketing"),
    pgettext("sector", "Other Industrial Metals & Mining"), pgettext("sector", "Packaged Foods"),
    pgettext("sector", "REIT—Retail"), pgettext("sector", "REIT—Specialty"), pgettext("sector", "Railroads"),
    pgettext("sector", "Restaurants"), pgettext("sector", "Scientific & Technical Instruments"),
    pgettext("sector", "Semiconductor Equipment & Materials"), pgettext("sector", "Semiconductors"),
    pgettext("sector", "Small Blend"), pgettext("sector", "Software—Application"),
    pgettext("sector", "Software—Infrastructure"), pgettext("sector", "Specialty Business Services"),
    pgettext("sector", "Specialty Chemicals"), pgettext("sector", "Specialty Industrial Machinery"),
    pgettext("sector", "Specialty Machinery"), pgettext("sector", "Staffing & Employment Services"),
    pgettext("sector", "Steel"), pgettext("sector", "Telecom Services"), pgettext("sector", "Tobacco"),
    pgettext("sector", "Travel Services"), pgettext("sector", "Utilities—Regulated Electric"),
    pgettext("sector", "Utilities—Renewable"),
)
"""The sector and industry names the product shows (the demo market's table and Yahoo's taxonomy), marked
for the catalogue under the context "sector"; ``sector_label`` shows one in a language."""


EXCHANGE_NAMES = (
    pgettext("exchange", "Shanghai"), pgettext("exchange", "Shanghai Stock Exchange"),
    pgettext("exchange", "Shenzhen"), pgettext("exchange", "Shenzhen Stock Exchange"),
    pgettext("exchange", "London Stock Exchange"), pgettext("exchange", "Tokyo Stock Exchange"),
    pgettext("exchange", "Toronto"), pgettext("exchange", "Toronto Stock Exchange"),
    pgettext("exchange", "Osaka"), pgettext("exchange", "Paris"), pgettext("exchange", "Russell"),
    pgettext("exchange", "FTSE Index"),
)
"""The exchange names written out in words (abbreviations such as NASDAQ, NYSE, HKEX stay as they are in every
language), marked under the context "exchange"; ``exchange_label`` shows one in a language."""


def _named(context: str, name: Any, lang: str | None) -> str:
    """``name`` in ``lang`` under the catalogue's ``context``; a name the catalogue does not know is returned as it is."""
    text = "" if name is None else str(name)
    return translator(lang).p(context, text) if text else text


def exchange_label(name: Any, lang: str | None) -> str:
    """An exchange's name in ``lang`` (Shanghai Stock Exchange → 上海证券交易所); an unknown one as it is."""
    return _named("exchange", name, lang)


def sector_label(name: Any, lang: str | None) -> str:
    """A sector or industry name in ``lang`` (Technology → 科技, Semiconductors → 半导体); a name the
    catalogue does not know (a data source's own) is returned as it is, like every name in English."""
    return _named("sector", name, lang)


__all__ = [
    "DEFAULT_LANGUAGE", "KEYWORDS", "LANGUAGES", "LOCALES_DIR", "N_", "OUTPUT_LANGUAGE", "EXCHANGE_NAMES", "SECTOR_NAMES", "Translator",
    "catalogue", "exchange_label", "language_of_output", "normalize_language", "pgettext", "rating_label", "sector_label", "translator",
]

"""What the full-text indexes read of a text: scripts written without spaces between words, cut
into overlapping pairs of characters.

A word-splitting tokenizer (SQLite's unicode61, PostgreSQL's parser) takes a run of letters as
one token. Chinese and Japanese put no space between words, Thai, Lao, Khmer and Myanmar none
between the words of a phrase, and Korean joins particles to the word before them (도예를 is
도예 "ceramics" + 를), so "我上个月开始学陶艺" was one token and a search for 陶艺 matched nothing.
The standard answer without a dictionary per language (Lucene's CJK analyzer with its unigrams,
Elasticsearch's ``cjk_bigram``) is to index each run of such characters as its overlapping pairs
and its single characters (我 我上 上 上个 个 … 学陶 陶 陶艺 艺: ``index_form``) and to read a
query as its pairs (``query_form``: 学陶艺 → 学陶 陶艺), a query run of one character as that
character: any word of two or more characters is found wherever it stands, and a word of one
(猫, 书 — common in Chinese and Japanese) too, where a pair alone would miss it.

Combining marks inside such a run (Thai vowel and tone marks, Khmer and Myanmar vowel signs) are
left out before pairing, as unicode61 leaves out the diacritics of Latin letters: the tokenizer
would otherwise split the run at each mark. Everything else — Latin, Cyrillic, Greek, Arabic,
Hebrew, Devanagari, digits, punctuation — passes through unchanged, so English text is indexed
exactly as before.

``index_form`` is applied to every text a full-text index holds (message bodies and their
context, memories, tools: each backend stores it beside the text, ``stored_index_form``) and
``query_form``, through ``convmem.retrieval.lexical.words``, to every query and vocabulary, so
each query word is a token of the index. ``query_form`` is idempotent up to spacing: a text
already in that form splits into the same words again (its runs are pairs or single
characters).
"""

from __future__ import annotations

import functools
import operator
import re
import unicodedata

# Scripts written without spaces between words (or, Hangul, with particles joined to the word):
# Thai, Lao, Myanmar, Hangul Jamo, Khmer, CJK marks of iteration (々〆〇), Hiragana, Katakana,
# Hangul compatibility Jamo, Katakana extension, CJK extension A, CJK unified ideographs, Hangul
# syllables, CJK compatibility ideographs, half-width Katakana and the supplementary ideographs.
_RUN = re.compile(
    "["
    "\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff"
    "\u3005-\u3007\u3040-\u309f\u30a0-\u30fa\u30fc-\u30ff\u3130-\u318f\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0002fa1f"
    "]+"
)


def _letters_only() -> dict[int, str | None]:
    """``str.translate`` table for the blocks above: combining marks dropped (see above),
    punctuation and symbols (Thai ๏ ๚ ๛, Khmer ។, the Katakana middle dot) a space, as any other
    punctuation separates words. The ideograph and Hangul syllable ranges hold letters only."""
    table: dict[int, str | None] = {}
    blocks = [(0x0E00, 0x0EFF), (0x1000, 0x11FF), (0x1780, 0x17FF), (0x3005, 0x3007),
              (0x3040, 0x30FF), (0x3130, 0x318F), (0x31F0, 0x31FF), (0xFF66, 0xFF9F)]  # fmt: skip
    for first, last in blocks:
        for code in range(first, last + 1):
            category = unicodedata.category(chr(code))
            if category[0] == "M":
                table[code] = None
            elif category[0] not in "LN":
                table[code] = " "
    return table


_LETTERS = _letters_only()


def _cut(match: re.Match[str], *, characters: bool) -> str:
    """A run as its overlapping pairs (and, with ``characters``, its single characters); a run
    of one character as itself."""
    pieces = []
    for part in match.group(0).translate(_LETTERS).split():
        if len(part) == 1:
            pieces.append(part)
            continue
        pairs = " ".join(map(operator.add, part, part[1:]))
        pieces.append(" ".join(part) + " " + pairs if characters else pairs)
    return " " + " ".join(pieces) + " " if pieces else " "


_INDEXED = functools.partial(_cut, characters=True)
_QUERIED = functools.partial(_cut, characters=False)


def index_form(text: str) -> str:
    """``text`` as the full-text indexes hold it: runs of those scripts as their pairs and
    their characters (see the module docstring); ``text`` itself when it holds none of them."""
    return _RUN.sub(_INDEXED, text) if _RUN.search(text) else text


def query_form(text: str) -> str:
    """``text`` as a query reads it: runs as their pairs, a run of one character as itself."""
    return _RUN.sub(_QUERIED, text) if _RUN.search(text) else text


def needs_index_form(text: str) -> bool:
    """Whether ``index_form`` (and ``query_form``) change ``text``."""
    return _RUN.search(text) is not None


def stored_index_form(text: str) -> str | None:
    """What a backend stores beside ``text`` for its full-text index: the index form, or None
    when it is the text itself (most text: English costs no space). The index reads
    ``coalesce(<form>, <text>)``."""
    form = index_form(text)
    return None if form is text else form

"""Data blocks of the request (recalled memories, retrieved turns): one escaped entry per line
between tags under a header, as many of the best items as fit a token cap, listed in a stable
order so the same items always give the same bytes."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from convmem.tokens import TokenCounter, message_tokens

T = TypeVar("T")


# Joiners stay: emoji sequences and several scripts need them, and they reorder nothing.
_KEPT_FORMAT = frozenset("\u200c\u200d")
# A name shown bare: what tool and function names are made of in every provider's schema.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")  # every format character is outside ASCII


def _escaped_if_invisible(match: re.Match[str]) -> str:
    ch = match.group()
    if unicodedata.category(ch) == "Cf" and ch not in _KEPT_FORMAT:
        return json.dumps(ch)[1:-1]
    return ch


def _escape_invisible(literal: str) -> str:
    """Format characters (bidirectional overrides and isolates, zero-width spaces, tag
    characters) as JSON escapes: visible, and unable to reorder or hide what a line shows."""
    return literal if literal.isascii() else _NON_ASCII.sub(_escaped_if_invisible, literal)


def quote_data(text: str) -> str:
    """A JSON string literal with angle brackets and invisible format characters escaped: one
    line, quoted, unable to close the block, start a new line that looks like a role, open a tag
    of its own, or reorder how the line reads."""
    literal = json.dumps(" ".join(text.split()), ensure_ascii=False)
    return _escape_invisible(literal.replace("<", "\\u003c").replace(">", "\\u003e"))


def quote_name(name: str) -> str:
    """A caller's name for a thing (a tool's): bare when made only of the characters such names
    use, else quoted like any other data (:func:`quote_data`)."""
    return name if _PLAIN_NAME.fullmatch(name) else quote_data(name)


def fit_block(
    ranked: Sequence[T],
    *,
    header: str,
    tags: tuple[str, str],
    entry: Callable[[T], str],
    order: Callable[[T], Any],
    id_of: Callable[[T], str],
    counter: TokenCounter,
    max_tokens: int,
    limit: int | None = None,
) -> tuple[str | None, list[str]]:
    """The block for the best of ``ranked`` (at most ``limit``) that fit ``max_tokens`` as a
    system message, entries sorted by ``order``. Returns (text, ids in that order), or
    (None, []) when nothing fits."""
    opening, closing = tags

    def render(items: Sequence[T]) -> tuple[str, list[T]]:
        ordered = sorted(items, key=order)
        return "\n".join([header, opening, *(entry(i) for i in ordered), closing]), ordered

    used = message_tokens(counter, "system", render([])[0])
    chosen: list[T] = []
    for item in ranked:
        if limit is not None and len(chosen) >= limit:
            break
        cost = counter.count(entry(item)) + 1  # the line and its newline
        if used + cost <= max_tokens:
            chosen.append(item)
            used += cost
    # the sum of parts can differ from the whole by a token here and there: check the whole
    text, ordered = render(chosen)
    while chosen and message_tokens(counter, "system", text) > max_tokens:
        chosen.pop()
        text, ordered = render(chosen)
    if not chosen:
        return None, []
    return text, [id_of(i) for i in ordered]

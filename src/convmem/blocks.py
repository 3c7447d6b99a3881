"""Data blocks of the request (recalled memories, retrieved turns): one escaped entry per line
between tags under a header, as many of the best items as fit a token cap, listed in a stable
order so the same items always give the same bytes."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from convmem.tokens import TokenCounter, message_tokens

T = TypeVar("T")


# Format characters (Unicode category Cf, as of Unicode 15.1): bidirectional overrides and
# isolates, zero-width spaces, tag characters… — all but the two joiners, which emoji sequences
# and several scripts need and which reorder nothing. Listed rather than looked up per character
# (tests/test_tool_provenance_rules.py checks the list against this Python's Unicode data), and
# searched in two parts: a class of astral ranges makes the regex engine slow on every character,
# so those are searched only in text that has an astral character at all.
_FORMAT_BMP = re.compile(
    r"[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b\u200e-\u200f"
    r"\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]"
)
_FORMAT_ASTRAL = re.compile(
    r"[\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    r"\U000e0001\U000e0020-\U000e007f]"
)


def is_invisible(ch: str) -> bool:
    """Whether ``ch`` is one of the format characters quoted data shows escaped."""
    return bool(_FORMAT_BMP.fullmatch(ch) or _FORMAT_ASTRAL.fullmatch(ch))


def _has_astral(text: str) -> bool:
    # UTF-16 takes two units for an astral character, one for any other
    return len(text.encode("utf-16-le", "surrogatepass")) > 2 * len(text)


# A name shown bare: what tool and function names are made of in every provider's schema.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


def _json_escape(match: re.Match[str]) -> str:
    return json.dumps(match.group())[1:-1]


def _escape_invisible(literal: str) -> str:
    """Format characters as JSON escapes: visible, unable to reorder or hide what a line shows."""
    if literal.isascii():
        return literal
    literal = _FORMAT_BMP.sub(_json_escape, literal)
    return _FORMAT_ASTRAL.sub(_json_escape, literal) if _has_astral(literal) else literal


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

"""Data blocks of the request (recalled memories, retrieved turns): one escaped entry per line
between tags under a header, as many of the best items as fit a token cap, listed in a stable
order so the same items always give the same bytes."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from convmem.tokens import TokenCounter, message_tokens

T = TypeVar("T")


def quote_data(text: str) -> str:
    """A JSON string literal with angle brackets escaped: one line, quoted, unable to close the
    block, start a new line that looks like a role, or open a tag of its own."""
    literal = json.dumps(" ".join(text.split()), ensure_ascii=False)
    return literal.replace("<", "\\u003c").replace(">", "\\u003e")


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

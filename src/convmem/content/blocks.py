"""The one renderer of untrusted text in a prompt (DESIGN.md principles 11 and 13).

Whatever a caller, a user or a model could have set — message text, speaker names and other
metadata, memory and entity text, summary notes and their source ids, tool names and results,
file names and captions, the pins a user key made — reaches a request's system content only
through this module: a labelled block (:class:`DataBlock`) whose entries are lines of pieces,
where a plain ``str`` is convmem's own wording and :class:`Data`, :class:`Name` and :class:`Ref`
wrap the caller's. Each wrapped value is escaped here and nowhere else, so no value can start a
line, pose as a role, close its block, open a tag of its own or reorder how a line reads. A test
(tests/test_render_paths.py) fails when another module calls the escape itself or spells a tag.

Blocks list as many of the best items as fit a token cap, in a stable order, so the same items
always give the same bytes (the request's prefix stays cacheable).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from convmem.content.tokens import TokenCounter, message_tokens

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


# convmem's own wording in a line: one line, no tag, nothing invisible. Checked on every line
# rendered, so a value passed as wording instead of wrapped fails loudly rather than escaping.
_NOT_WORDING = re.compile(r"[<>\x00-\x1f\x7f-\x9f\u2028\u2029]")


@dataclass(frozen=True)
class Data:
    """A caller's text, shown as one quoted, escaped literal (:func:`quote_data`)."""

    text: str


@dataclass(frozen=True)
class Name:
    """A caller's name for a thing (a speaker, a tool, an entity, a category): bare when it is
    a plain identifier, else quoted like data (:func:`quote_name`)."""

    text: str


@dataclass(frozen=True)
class Ref:
    """An id a caller or a model could have written (a summary note's source): escaped like
    data, shown without the quotes."""

    text: str


Piece = str | Data | Name | Ref


def _wording(text: str) -> str:
    if _NOT_WORDING.search(text) or (not text.isascii() and any(map(is_invisible, text))):
        raise ValueError("a rendered line's own wording must be one plain line: wrap the value")
    return text


def _piece(piece: Piece) -> str:
    if isinstance(piece, str):
        return _wording(piece)
    if isinstance(piece, Data):
        return quote_data(piece.text)
    if isinstance(piece, Name):
        return quote_name(piece.text)
    return quote_data(piece.text)[1:-1]


def line(*pieces: Piece) -> str:
    """One line of a block (or of any text shown beside data): the pieces in order, each
    caller's value escaped."""
    return "".join(map(_piece, pieces))


Line = Sequence[Piece]
_TAG = re.compile(r"[a-z][a-z_]{0,63}")
_BLOCKS: dict[str, DataBlock] = {}


@dataclass(frozen=True)
class DataBlock:
    """A kind of labelled block: ``header`` says what the entries are and that they are data,
    not instructions; ``tag`` names the tags the entries sit between. Every kind is known here
    (:func:`block_kinds`), so a check can tell a rendered block from anything else."""

    header: str
    tag: str

    def __post_init__(self) -> None:
        _wording(self.header)
        if not _TAG.fullmatch(self.tag):
            raise ValueError("a block's tag is lower-case letters and underscores")
        if _BLOCKS.setdefault(self.header, self) != self:
            raise ValueError("another kind of block has this header")

    @property
    def opening(self) -> str:
        return f"<{self.tag}>"

    @property
    def closing(self) -> str:
        return f"</{self.tag}>"

    def render(self, lines: Iterable[Line]) -> str:
        """The block: header, opening tag, one rendered line per entry, closing tag."""
        return self._wrap(line(*pieces) for pieces in lines)

    def _wrap(self, rendered: Iterable[str]) -> str:
        return "\n".join([self.header, self.opening, *rendered, self.closing])


def block_kinds() -> list[DataBlock]:
    """Every kind of block defined so far (by the modules imported)."""
    return list(_BLOCKS.values())


def fit_block(
    ranked: Sequence[T],
    *,
    block: DataBlock,
    entry: Callable[[T], Line],
    order: Callable[[T], Any],
    id_of: Callable[[T], str],
    counter: TokenCounter,
    max_tokens: int,
    limit: int | None = None,
) -> tuple[str | None, list[str]]:
    """The ``block`` for the best of ``ranked`` (at most ``limit``) that fit ``max_tokens`` as
    a system message, entries sorted by ``order``. Returns (text, ids in that order), or
    (None, []) when nothing fits."""
    rendered: dict[int, str] = {}

    def entry_line(item: T) -> str:
        key = id(item)
        if key not in rendered:
            rendered[key] = line(*entry(item))
        return rendered[key]

    def render(items: Sequence[T]) -> tuple[str, list[T]]:
        ordered = sorted(items, key=order)
        return block._wrap(entry_line(i) for i in ordered), ordered

    used = message_tokens(counter, "system", render([])[0])
    chosen: list[T] = []
    for item in ranked:
        if limit is not None and len(chosen) >= limit:
            break
        cost = counter.count(entry_line(item)) + 1  # the line and its newline
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

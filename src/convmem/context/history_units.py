"""History in units, the pieces the window keeps or drops whole: a user or system message alone,
an assistant message alone, or an assistant message with tool calls together with all its
results. Fitting a unit stubs its tool results (largest first) and its media (all but the newest
image the user sent) before the unit is given up.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from convmem.content.parts import sends_parts, stubbed_cost
from convmem.content.parts_render import stub_media
from convmem.content.tokens import TokenCounter, message_tokens
from convmem.context.formats import HistoryItem
from convmem.model.messages import Message


@dataclass(frozen=True)
class ChainEntry:
    """A message on the branch with its stored costs."""

    message: Message
    tokens: int  # in the request's tokenizer, framing included
    estimate_before: int  # estimate tokens of all its ancestors: a stable position on the branch
    media_tokens: int = 0  # the share of ``tokens`` its media (sent as such) costs


@dataclass
class Unit:
    entries: list[ChainEntry]  # oldest first

    @property
    def tokens(self) -> int:
        return sum(entry.tokens for entry in self.entries)

    @property
    def complete(self) -> bool:
        head = self.entries[0].message
        if not head.tool_calls:
            return True
        answered = {entry.message.tool_call_id for entry in self.entries[1:]}
        return all(call.id in answered for call in head.tool_calls)


def units(branch: Iterable[ChainEntry]) -> Iterator[Unit]:
    """Group the branch, newest first, into units (a tool call travels with its results)."""
    pending_results: list[ChainEntry] = []
    for entry in branch:
        if entry.message.role == "tool":
            pending_results.append(entry)
            continue
        if pending_results:
            # The store only accepts a tool result directly under its call or a sibling result.
            yield Unit([entry, *reversed(pending_results)])
            pending_results = []
        else:
            yield Unit([entry])
    if pending_results:  # results whose call lies beyond the root cannot happen; be safe anyway
        yield Unit(list(reversed(pending_results)))


def stub_text(message: Message, tokens: int) -> str:
    return f"[tool result omitted to fit the context window: {tokens} tokens, id {message.id}]"


def media_choices(
    entry: ChainEntry, counter: TokenCounter
) -> tuple[HistoryItem, HistoryItem | None]:
    """A message as sent whole, and with its media replaced by stubs naming it (None when it
    has no media sent as such, or the stubs would save nothing)."""
    message = entry.message
    parts = message.parts if sends_parts(message.role, message.parts) else ()
    whole = HistoryItem(message, message.content, entry.tokens, parts=parts,
                        media_tokens=entry.media_tokens)  # fmt: skip
    if not entry.media_tokens or not parts:
        return whole, None
    cost = entry.tokens - entry.media_tokens + stubbed_cost(counter, parts, message.id)
    if cost >= entry.tokens:
        return whole, None
    stubs = stub_media(parts, message.id)
    return whole, HistoryItem(message, message.content, cost, parts=stubs, whole=whole)


def restore_media(kept: list[list[HistoryItem]], spare: int) -> None:
    """Send whole the media of kept messages that ``spare`` tokens allow, newest first."""
    for items in kept:
        for index, item in enumerate(items):
            whole = item.whole
            if whole is not None and whole.tokens - item.tokens <= spare:
                spare -= whole.tokens - item.tokens
                items[index] = whole


def has_media(unit: Unit) -> bool:
    return len(unit.entries) == 1 and unit.entries[0].media_tokens > 0


def fit_unit(
    unit: Unit, room: int, stub_above: int, counter: TokenCounter, protected: str | None = None
) -> list[HistoryItem] | None:
    """The unit's items, with tool results stubbed as needed to fit ``room``; None if it can't."""
    if len(unit.entries) == 1 and unit.entries[0].message.role != "tool":
        entry = unit.entries[0]  # the common case: one message, no tool result to stub
        whole, without_media = media_choices(entry, counter)
        # media is stubbed unless it is the newest the user sent and fits: the window is chosen
        # as if it were, so old images never cost whole turns; ``restore_media`` then sends
        # what the room left allows, newest first
        if without_media is not None and (entry.message.id != protected or whole.tokens > room):
            return [without_media] if without_media.tokens <= room else None
        return [whole] if whole.tokens <= room else None
    contents = {e.message.id: e.message.content for e in unit.entries}
    costs = {e.message.id: e.tokens for e in unit.entries}
    stubbed: set[str] = set()

    def stub(entry: ChainEntry) -> None:
        text = stub_text(entry.message, entry.tokens)
        message = entry.message
        cost = message_tokens(counter, message.role, text, (), message.tool_call_id)
        if cost < costs[message.id]:
            contents[message.id], costs[message.id] = text, cost
            stubbed.add(message.id)

    results = [e for e in unit.entries if e.message.role == "tool"]
    for entry in results:
        if entry.tokens > stub_above:
            stub(entry)
    for entry in sorted(results, key=lambda e: e.tokens, reverse=True):
        if sum(costs.values()) <= room:
            break
        if entry.message.id not in stubbed:
            stub(entry)
    if sum(costs.values()) > room:
        return None
    return [
        HistoryItem(e.message, contents[e.message.id], costs[e.message.id], e.message.id in stubbed)
        for e in unit.entries
    ]

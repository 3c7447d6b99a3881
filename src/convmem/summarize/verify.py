"""Checking a model's snapshot against the messages it cites.

Every number, identifier and code span in a note must occur verbatim in the messages the note
cites. A note that cites the wrong message is repaired (the message that does hold the literal is
cited instead); a note whose literals occur nowhere, or that cites nothing it may cite, is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from convmem.model.messages import Message
from convmem.model.snapshot import CATEGORIES, Snapshot, SnapshotItem
from convmem.summarize.text import literals


@dataclass(frozen=True)
class Verification:
    snapshot: Snapshot
    repaired: int
    dropped: int


def citable_texts(previous: Snapshot | None, turns: Sequence[Message]) -> dict[str, str]:
    """What each citable id says: a turn's content, or for a message summarised earlier, the
    (already checked) notes of the previous snapshot that cite it."""
    corpus: dict[str, list[str]] = {}
    if previous is not None:
        for _, item in previous.items():
            for source in item.sources:
                corpus.setdefault(source, []).append(item.text)
    for message in turns:
        calls = " ".join(f"{c.name} {c.arguments}" for c in message.tool_calls)
        corpus.setdefault(message.id, []).append(f"{message.content} {calls}")
    return {key: "\n".join(texts) for key, texts in corpus.items()}


def _check(item: SnapshotItem, corpus: dict[str, str]) -> tuple[SnapshotItem | None, bool]:
    sources = [source for source in item.sources if source in corpus]
    repaired = len(sources) != len(item.sources)
    for literal in literals(item.text):
        if any(literal in corpus[source] for source in sources):
            continue
        holder = next((key for key, text in corpus.items() if literal in text), None)
        if holder is None:
            return None, False
        sources.append(holder)
        repaired = True
    if not sources:
        return None, False
    return SnapshotItem(item.text, tuple(dict.fromkeys(sources)), item.subject), repaired


def verify_snapshot(
    snapshot: Snapshot, previous: Snapshot | None, turns: Sequence[Message]
) -> Verification:
    corpus = citable_texts(previous, turns)
    repaired = dropped = 0
    result = snapshot
    for name in CATEGORIES:
        kept: list[SnapshotItem] = []
        for item in snapshot.category(name):
            checked, fixed = _check(item, corpus)
            if checked is None:
                dropped += 1
                continue
            repaired += int(fixed)
            kept.append(checked)
        result = result.with_category(name, tuple(kept))
    return Verification(result, repaired, dropped)

"""Never-store content stays out of summary notes (DESIGN.md principles 9 and 13).

A summary is kept (stored, rendered into every later request), so a note the never-store gate
refuses (``convmem.memory.gate``) is replaced by a placeholder naming the kind of thing withheld:
a note whose own text is refused, one that cites a turn the policy refuses (a paraphrase of
"my password is …" is that password, whatever its words), and one carrying a secret-looking
value of a refused turn of the segment it was written from. Its source ids (and their tool
provenance) stay, so a person can still find the message it came from. A note citing a message
summarised earlier is judged by what the previous summary made of that message: a message only
withheld notes cite is a refused one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from convmem.memory.gate import decide, withheld_note, withheld_reason
from convmem.model.messages import Message
from convmem.model.snapshot import CATEGORIES, Snapshot, SnapshotItem

__all__ = ["withheld_note", "withhold_never_store"]


def _refused_before(previous: Snapshot | None) -> dict[str, str]:
    """Message ids of earlier segments that only withheld notes cite, with the reason."""
    if previous is None:
        return {}
    refused: dict[str, str] = {}
    kept: set[str] = set()
    for _, item in previous.items():
        reason = withheld_reason(item.text)
        for source in item.sources:
            if reason is None:
                kept.add(source)
            else:
                refused.setdefault(source, reason)
    return {source: reason for source, reason in refused.items() if source not in kept}


def _withhold(
    item: SnapshotItem,
    turns: Mapping[str, Message],
    segment: Sequence[Message],
    refused_before: Mapping[str, str],
) -> SnapshotItem:
    if withheld_reason(item.text) is not None:
        return item
    cited = [turns[s] for s in item.sources if s in turns]
    decision = decide({"note": item.text}, sources=cited, read=segment)
    reason = None if decision.allowed else str(decision.reason)
    if reason is None:
        reason = next((refused_before[s] for s in item.sources if s in refused_before), None)
    if reason is not None:
        return replace(item, text=withheld_note(reason), subject=None)
    if item.subject is not None and not decide({"subject": item.subject}).allowed:
        return replace(item, subject=None)
    return item


def withhold_never_store(
    snapshot: Snapshot, segment: Sequence[Message] = (), previous: Snapshot | None = None
) -> Snapshot:
    """The snapshot with every note the gate refuses replaced by a placeholder; ``segment``: the
    turns it was written from, ``previous``: the snapshot it was rolled from."""
    turns = {m.id: m for m in segment}
    refused_before = _refused_before(previous)
    result = snapshot
    for name in CATEGORIES:
        items = snapshot.category(name)
        checked = tuple(_withhold(item, turns, segment, refused_before) for item in items)
        if checked != items:
            result = result.with_category(name, checked)
    return result

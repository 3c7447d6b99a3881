"""Never-store content stays out of summary notes (DESIGN.md principle 9).

A summary is kept (stored, rendered into every later request), so a note that would carry a
secret or a sensitive disclosure is replaced by a placeholder naming the kind of thing withheld;
its source ids (and their tool provenance) stay, so a person can still find the message it came
from.
"""

from __future__ import annotations

from dataclasses import replace

from convmem.memory.policy import check_text
from convmem.model.snapshot import CATEGORIES, Snapshot, SnapshotItem


def withheld_note(reason: str) -> str:
    return f"(withheld: never-store {reason})"


def _withhold(item: SnapshotItem) -> SnapshotItem:
    decision = check_text(item.text)
    if not decision.allowed:
        return replace(item, text=withheld_note(str(decision.reason)), subject=None)
    if item.subject is not None and not check_text(item.subject).allowed:
        return replace(item, subject=None)
    return item


def withhold_never_store(snapshot: Snapshot) -> Snapshot:
    """The snapshot with every note the never-store policy refuses replaced by a placeholder."""
    result = snapshot
    for name in CATEGORIES:
        items = snapshot.category(name)
        checked = tuple(_withhold(item) for item in items)
        if checked != items:
            result = result.with_category(name, checked)
    return result

"""A change to a memory, seen before it is made and undone as a whole after.

Before: which current memories confirming a suggestion or editing a memory would replace, by
the rule the write itself applies (``memories.supersedes``) — so a page asks the engine instead
of guessing, and shows both texts first. After: one call puts back the state before the change
that made a memory current — every memory it replaced confirmed again (an edit that replaced two
memories gives back both), a confirmed suggestion a suggestion again, a saved or edited text
deleted. The audit says what was undone, never what it said.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from convmem.domain.audit import audit
from convmem.errors import InvalidInput
from convmem.memory.slots import subject_slot
from convmem.model.memory import MemoryRecord
from convmem.model.principal import Principal
from convmem.model.tree import check_identifier
from convmem.store.base import MemoryUpdate, ReadTxn, WriteTxn

# Sources that speak for the user: a newer one supersedes. Others (imports, admins) that disagree
# with a record from another source are flagged for the user instead.
USER_VOICE = ("user_explicit", "confirmed_inference")
# how a memory became current, by the audit action that records it
_SAVED, _CONFIRMED = "memory.saved", "memory.confirmed"
# what a confirmed suggestion is again after its confirmation is undone, when the audit of an
# older version did not record its source
_SUGGESTION_SOURCE = "inference"


@dataclass(frozen=True)
class UndoneChange:
    """What an undo did: ``memory`` is the changed memory as it now is (a suggestion again) or
    None when it was deleted; ``restored`` are the memories confirmed again."""

    memory: MemoryRecord | None
    restored: tuple[MemoryRecord, ...] = field(default_factory=tuple)


def _now() -> datetime:
    return datetime.now(UTC)


def supersedes(source_kind: str, older: MemoryRecord) -> bool:
    """Whether a record from ``source_kind`` on ``older``'s subject replaces it (else the two are
    flagged as a conflict): the user's own voice always does, another source only its own."""
    return source_kind in USER_VOICE or source_kind == older.source_kind


def would_replace(
    tx: ReadTxn, who: Principal, memory_id: str, text: str | None = None
) -> list[MemoryRecord]:
    """The current memories other than ``memory_id`` that a change to it would supersede:
    confirming it (``text`` None; it must be a suggestion) or giving it ``text`` (an edit)."""
    check_identifier(memory_id, "memory id")  # NUL/surrogates: same error on every backend
    memory = tx.get_memory(who.tenant, who.user, memory_id)
    if memory.status not in ("confirmed", "proposed"):
        raise InvalidInput(f"memory {memory_id!r} is {memory.status}; only current ones change")
    if text is None and memory.status != "proposed":
        raise InvalidInput(f"memory {memory_id!r} is {memory.status}, not proposed")
    source_kind = "confirmed_inference" if text is None else "user_explicit"
    if text is not None and text.rstrip().endswith("?") and subject_slot(text) is None:
        return []  # a question states no value: the edit supersedes nothing but itself
    current = tx.list_memories(
        who.tenant, who.user, statuses=("confirmed",), scopes=(memory.scope,),
        subject_key=memory.subject_key, unexpired_at=_now(),
    )  # fmt: skip
    return [m for m in current if m.id != memory_id and supersedes(source_kind, m)]


def undo_change(tx: WriteTxn, who: Principal, memory_id: str) -> UndoneChange:
    """Put back the state before the change that made ``memory_id`` current (see the module)."""
    check_identifier(memory_id, "memory id")  # NUL/surrogates: same error on every backend
    memory = tx.get_memory(who.tenant, who.user, memory_id)  # NotFound: not theirs
    if memory.status != "confirmed":
        raise InvalidInput(f"memory {memory_id!r} is {memory.status}: no change to undo")
    events = sorted(tx.list_audit(who.tenant, who.user), key=lambda e: e.at)
    undone = [n for n, e in enumerate(events)
              if e.object_id == memory_id and e.action == "memory.unconfirmed"]  # fmt: skip
    events = events[undone[-1] + 1 :] if undone else events  # the change since the last undo
    made = [n for n, e in enumerate(events)
            if e.object_id == memory_id and e.action in (_SAVED, _CONFIRMED)]  # fmt: skip
    if not made:
        raise InvalidInput(f"memory {memory_id!r} has no change to undo")
    last = made[-1]
    if any(e.object_id == memory_id and e.action == "memory.restored" for e in events[last:]):
        # it is current again because a later change was undone: that undo is the latest change
        raise InvalidInput(f"memory {memory_id!r} was restored; its change was undone already")
    replaced_ids = [
        e.object_id for e in events
        if (e.action == "memory.superseded" and e.details.get("by") == memory_id)
        or (e.action == "memory.merged" and e.details.get("into") == memory_id)
        or (e.action == "memory.updated" and e.details.get("to") == memory_id)
    ]  # fmt: skip
    superseded = {m.id: m for m in tx.list_memories(who.tenant, who.user, statuses=("superseded",))}
    restored = [superseded[i] for i in dict.fromkeys(replaced_ids) if i in superseded]
    for older in restored:
        tx.set_memory_fields(
            who.tenant, older.id, MemoryUpdate(status="confirmed", updated_at=_now())
        )
        audit(tx, who, "memory.restored", "memory", older.id, undone_for=memory_id)
    for flagged in tx.list_memories(who.tenant, who.user, statuses=("confirmed", "proposed")):
        if flagged.conflicts_with_id == memory_id:  # a conflict with what goes goes too
            tx.set_memory_fields(
                who.tenant, flagged.id, MemoryUpdate(conflicts_with_id=None, updated_at=_now())
            )
    if events[last].action == _CONFIRMED:
        was = str(events[last].details.get("was") or _SUGGESTION_SOURCE)
        # a suggestion that disagreed with a memory disagrees with it again (shown as such)
        disagreed = events[last].details.get("disagreed_with")
        tx.set_memory_fields(
            who.tenant, memory_id,
            MemoryUpdate(status="proposed", source_kind=was, supersedes_id=None,
                         conflicts_with_id=disagreed, updated_at=_now()),
        )  # fmt: skip
        audit(tx, who, "memory.unconfirmed", "memory", memory_id)
        after: MemoryRecord | None = tx.get_memory(who.tenant, who.user, memory_id)
    else:
        tx.delete_memories(who.tenant, who.user, [memory_id])
        audit(tx, who, "memory.deleted", "memory", memory_id, undone=True)
        after = None
    back = tuple(tx.get_memory(who.tenant, who.user, m.id) for m in restored)
    return UndoneChange(after, back)

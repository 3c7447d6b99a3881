"""What a user's message asks of long-term memory, carried out in the message's own write
transaction: "remember …" saves, "forget …" deletes what it names (or asks when it names
several, or a slot holding another value), and a plain statement is at most a suggestion."""

from __future__ import annotations

from convmem.domain.memories import Principal, delete_with_history, memory_gate, save_memory
from convmem.errors import NotFound
from convmem.memory.confidence import statement_confidence
from convmem.memory.forget_match import Match, forget_match
from convmem.memory.intent import Intent
from convmem.model.memory import MemoryNotice
from convmem.store.base import WriteTxn


def forget_matching(tx: WriteTxn, who: Principal, request: str) -> MemoryNotice:
    """Delete the current and proposed memories a "forget …" request names
    (``convmem.memory.forget_match``); the notice names them. Nothing is deleted, and the notice
    (``ambiguous``) lists the memories so the user can choose, when the request names memories
    on more than one subject, or a slot holding another value than it says; a request naming
    nothing kept is answered (``no_match``) too."""
    candidates = tx.list_memories(who.tenant, who.user, statuses=("confirmed", "proposed"))
    verdicts = [(m, forget_match(request, m.subject_key, m.text)) for m in candidates]
    doomed = [m for m, verdict in verdicts if verdict is Match.YES]
    if not doomed:
        asked = tuple(m for m, verdict in verdicts if verdict is Match.ASK)
        if asked:
            return MemoryNotice("ambiguous", request, "different_value", None,
                                tuple(m.id for m in asked), records=asked)  # fmt: skip
        return MemoryNotice("forgotten", request, "no_match")
    if len({m.subject_key for m in doomed}) > 1:
        choices = tuple(m.id for m in doomed)
        return MemoryNotice("ambiguous", request, "several_matches", None, choices,
                            records=tuple(doomed))  # fmt: skip
    ids = delete_with_history(tx, who, [m.id for m in doomed], action="memory.forgotten")
    return MemoryNotice("forgotten", request, None, None, tuple(ids), records=tuple(doomed))


def act_on_intent(
    tx: WriteTxn, who: Principal, intent: Intent, message_id: str, *, temporary: bool
) -> tuple[MemoryNotice, ...]:
    """Carry out what a user message asks of memory, in the message's own transaction."""
    closed = "temporary_conversation" if temporary else memory_gate(tx, who)
    if closed is not None:
        # only an explicit request deserves an answer; statements are silently not proposed
        return (MemoryNotice("blocked", intent.text, closed),) if intent.kind == "remember" else ()
    if intent.refusal is not None:
        # asked, but not keepable as said ("remember that she …" with nobody named): say why
        return (MemoryNotice("blocked", intent.text, intent.refusal),)
    if intent.kind == "forget":
        return (forget_matching(tx, who, intent.text),)
    # a plain statement never changes what the user kept, however clearly it moves a slot ("I
    # moved to Faro"): it is suggested (with the kept one named), and the request the user sends
    # meanwhile shows the kept one as possibly outdated (``memory.current_turn``)
    explicit = intent.kind == "remember"
    if not explicit and _proposed_in_conversation(tx, who, intent.subject_key, message_id):
        return ()  # one suggestion per subject per conversation
    notice = save_memory(
        tx, who, intent.text,
        source_kind="user_explicit" if explicit else "inference",
        status="confirmed" if explicit else "proposed",
        category=intent.category, subject=intent.subject_key if intent.slot else None,
        source_message_id=message_id, basis="statement",
        confidence=statement_confidence(slot=intent.slot),
    )  # fmt: skip
    if notice.status == "blocked" and not explicit:
        return ()
    return (notice,)


def _proposed_in_conversation(
    tx: WriteTxn, who: Principal, subject_key: str, message_id: str
) -> bool:
    """Whether a memory on this subject already came from the message's conversation."""
    conversation_id = tx.get_message(who.tenant, who.user, message_id).conversation_id
    for record in tx.list_memories(who.tenant, who.user, subject_key=subject_key):
        source = record.source_message_id
        if source is None or source == message_id:
            continue
        try:
            if tx.get_message(who.tenant, who.user, source).conversation_id == conversation_id:
                return True
        except NotFound:  # its message is gone (retention, an edit's deleted branch)
            continue
    return False

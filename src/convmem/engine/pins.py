"""Pinned instructions: text every request of a user (or of one conversation) carries."""

from __future__ import annotations

from datetime import UTC, datetime

from convmem.engine.handles import Database
from convmem.errors import InvalidInput, NeverStoreViolation
from convmem.ids import new_id
from convmem.memory.gate import admit
from convmem.model.admitted import Admitted
from convmem.model.principal import Principal
from convmem.model.tree import check_text
from convmem.store.base import PinnedInstruction
from convmem.store.conversations import PinOrigin
from convmem.store.retry import conflicts_retried


@conflicts_retried
def pin_instruction(
    memory: Database,
    who: Principal,
    conversation_id: str | None,
    text: str,
    origin: PinOrigin = "application",
) -> PinnedInstruction:
    """Pin ``text`` after the pins already there: user-wide when ``conversation_id`` is None.
    ``origin``: the application's pins are instructions; the user's own (a user key's) are
    sent as their quoted requests (``convmem.context.assemble.render_pinned``)."""
    check_text(text, max_bytes=memory.config.max_content_bytes, what="instruction")
    if not text.strip():
        raise InvalidInput("a pinned instruction needs text")
    with memory.store.write() as tx:
        if conversation_id is not None:
            tx.get_conversation(who.tenant, who.user, conversation_id)
        existing = tx.pinned(who.tenant, who.user, conversation_id)
        position = 1 + max(
            (p.position for p in existing if p.conversation_id == conversation_id), default=0
        )
        pin = PinnedInstruction(
            new_id("pin"), text, conversation_id, position, datetime.now(UTC), origin
        )
        # a pin rides in every request: the never-store gate judges it like a memory's text
        admitted = admit(pin)
        if not isinstance(admitted, Admitted):
            raise NeverStoreViolation(str(admitted.reason), admitted.detail)
        tx.insert_pinned(who.tenant, who.user, admitted)
    return pin

"""A new message as the tree stores it, checked the same way whether it arrives one at a time
(``Conversation.append``) or in bulk (``convmem.importers.bulk``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from convmem.model.messages import Message, NewMessage
from convmem.model.tree import check_metadata, check_new_message, normalise_created_at


def checked_message(
    given: NewMessage, max_bytes: int, *, added: Mapping[str, Any] | None = None
) -> NewMessage:
    """``given`` as the tree stores it: its metadata checked (``added``, convmem's own keys, goes
    on after the check), its time normalised, the whole message checked against the tree's
    rules. InvalidMessage (or InvalidInput) otherwise."""
    new = replace(
        given,
        metadata={**check_metadata(given.metadata), **(added or {})},
        created_at=normalise_created_at(given.created_at),
    )
    check_new_message(new, max_bytes=max_bytes)
    return new


def tool_run(parent: Message | None, lookup: Callable[[str], Message | None]) -> list[Message]:
    """What ``check_tool_result`` checks a new tool result against: the parent, then up through
    tool results to the assistant that made the calls (``lookup`` finds a message by id)."""
    run: list[Message] = []
    current = parent
    while current is not None:
        run.append(current)
        if current.role != "tool" or current.parent_id is None:
            break
        current = lookup(current.parent_id)
    return run

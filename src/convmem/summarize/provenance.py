"""Which of a snapshot's sources are tool results, and from which tool, when.

A tool result message names only the call it answers (``tool_call_id``); the tool's name is on
the assistant message that made the call, directly above the run of results (the append path
refuses a result that answers no open call there). So the path is read oldest first, carrying
the calls of the last assistant message; ``open_calls`` are the calls in force just before the
first message read, for a run of turns that starts inside a run of results.

Provenance is attached from these facts alone, after the summarizer ran: whatever a summarizer
(a model in particular) wrote about tools is replaced, so a note cannot claim a tool it did not
come from, nor a person's words pass as a system's answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC

from convmem.model.messages import Message, ToolCall
from convmem.model.snapshot import CATEGORIES, Snapshot, ToolSource


def calls_answered(
    turns: Sequence[Message], open_calls: Mapping[str, ToolCall] | None = None
) -> dict[str, ToolCall | None]:
    """For each tool result among ``turns`` (oldest first), the call it answers (None when the
    call is not on the path given)."""
    calls: Mapping[str, ToolCall] = open_calls or {}
    answered: dict[str, ToolCall | None] = {}
    for message in turns:
        if message.role == "assistant":
            calls = {call.id: call for call in message.tool_calls}
        elif message.role == "tool":
            answered[message.id] = calls.get(message.tool_call_id or "")
        else:
            calls = {}
    return answered


def tool_sources(
    turns: Sequence[Message], open_calls: Mapping[str, ToolCall] | None = None
) -> dict[str, ToolSource]:
    """A :class:`ToolSource` for every tool result among ``turns``, by message id."""
    by_id = {message.id: message for message in turns}
    return {
        message_id: ToolSource(
            message_id,
            call.name if call is not None else None,
            by_id[message_id].created_at.astimezone(UTC),
        )
        for message_id, call in calls_answered(turns, open_calls).items()
    }


def known_sources(previous: Snapshot | None) -> dict[str, ToolSource]:
    """The tool provenance an earlier snapshot recorded, for notes that cite its sources."""
    if previous is None:
        return {}
    return {tool.message_id: tool for _, item in previous.items() for tool in item.tools}


def attach_tool_provenance(snapshot: Snapshot, known: Mapping[str, ToolSource]) -> Snapshot:
    """The snapshot with each note's ``tools`` set to exactly its sources found in ``known``."""
    result = snapshot
    for name in CATEGORIES:
        items = snapshot.category(name)
        attached = tuple(
            replace(item, tools=tuple(known[s] for s in item.sources if s in known))
            for item in items
        )
        if attached != items:
            result = result.with_category(name, attached)
    return result

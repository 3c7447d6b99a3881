"""The rolling chain's rules, as pure functions.

The summary through message X is f(nearest ancestor summary, the turns after it up to X). Long
runs are cut into segments of at most ``max_segment`` messages, each summary built on the one
before, so a summary's own segment — what a use re-checks — stays short however long the history.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from convmem.content.tokens import ESTIMATE, get_counter, message_tokens
from convmem.errors import InvalidInput
from convmem.ids import new_id
from convmem.model.messages import Message, ToolCall
from convmem.model.summary import SummaryRecord
from convmem.summarize.base import Summarizer
from convmem.summarize.provenance import attach_tool_provenance, known_sources, tool_sources
from convmem.summarize.render import render_snapshot
from convmem.summarize.withhold import withhold_never_store

ROOT_HASH = ""


def covered_hash(base_hash: str, segment_ids: Sequence[str]) -> str:
    """Chains the previous summary's hash with the ids of the segment after it, oldest first;
    equal hashes mean the same covered messages from the root on."""
    digest = hashlib.sha256(base_hash.encode())
    for message_id in segment_ids:
        digest.update(b"\0" + message_id.encode())
    return digest.hexdigest()


def segment_is_intact(record: SummaryRecord, path_newest_first: Sequence[str]) -> bool:
    """Whether the ``segment_length`` messages ending at the record's through-message, as the
    store now holds them, are the ones the record was built from."""
    segment = list(path_newest_first[: record.segment_length])
    if len(segment) != record.segment_length or not segment:
        return False
    if segment[0] != record.through_message_id:
        return False
    return covered_hash(record.base_hash, list(reversed(segment))) == record.covered_hash


@dataclass(frozen=True)
class ChainStart:
    """Where a new run of summaries starts: after ``previous`` (None: from the root)."""

    previous: SummaryRecord | None

    @property
    def base_hash(self) -> str:
        return self.previous.covered_hash if self.previous else ROOT_HASH


def build_chain(
    start: ChainStart,
    turns: Sequence[Message],
    summarizer: Summarizer,
    *,
    conversation_id: str,
    max_segment: int = 256,
    open_calls: Mapping[str, ToolCall] | None = None,
) -> list[SummaryRecord]:
    """Summaries through successive messages of ``turns`` (oldest first, the messages right after
    ``start``), one per segment of at most ``max_segment``; the last is through ``turns[-1]``.
    ``open_calls``: the calls of the assistant message above ``turns`` when they start with its
    tool results (see :mod:`convmem.summarize.provenance`)."""
    if max_segment < 1:
        raise InvalidInput("max_segment must be at least 1")
    if not turns:
        return []
    estimate = get_counter(ESTIMATE)
    results = tool_sources(turns, open_calls)
    records: list[SummaryRecord] = []
    previous = start.previous
    for begin in range(0, len(turns), max_segment):
        segment = turns[begin : begin + max_segment]
        result = summarizer.summarize(previous.snapshot if previous else None, segment)
        known = {**known_sources(previous.snapshot if previous else None), **results}
        snapshot = withhold_never_store(
            attach_tool_provenance(result.snapshot, known),
            segment,
            previous.snapshot if previous else None,
        )
        rendered = render_snapshot(snapshot)
        base = previous.covered_hash if previous else ROOT_HASH
        record = SummaryRecord(
            id=new_id("sum"),
            conversation_id=conversation_id,
            through_message_id=segment[-1].id,
            through_depth=segment[-1].depth,
            covered_hash=covered_hash(base, [m.id for m in segment]),
            base_hash=base,
            segment_length=len(segment),
            previous_id=previous.id if previous else None,
            summarizer=summarizer.name,
            prompt_version=summarizer.prompt_version,
            snapshot=snapshot,
            rendered=rendered,
            tokens=message_tokens(estimate, "system", rendered) if rendered else 0,
            cost=result.cost,
            fallback_reason=result.fallback_reason,
            created_at=datetime.now(UTC),
        )
        records.append(record)
        previous = record
    return records

"""The engine's summary flow: find the summary a request needs, check it, build it or queue it.

Called by ``Conversation.assemble`` inside its read transaction, with the through-message the
window left behind. The lookup is by key — the through-message — and otherwise walks back from it
only as far as the nearest ancestor summary, so its cost follows the distance since the last
summary, not the history. Writes (new summaries, a job) happen after the read, in one short
write transaction.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from convmem.content.tokens import ESTIMATE
from convmem.ids import new_id
from convmem.memory.gate import admit
from convmem.model.admitted import Admitted
from convmem.model.messages import Message, ToolCall
from convmem.model.summary import Job, SummaryRecord
from convmem.store.base import ReadTxn, Store, WriteTxn
from convmem.store.conversations import BranchRow
from convmem.store.retry import conflicts_retried
from convmem.summarize.base import Summarizer
from convmem.summarize.rolling import ChainStart, build_chain, segment_is_intact

log = logging.getLogger(__name__)

# ancestor candidates read per lookup; a miss among them only costs a longer rebuild
_CANDIDATES = 32
_VALIDATED_CACHE = 10_000


def admitted_chain(
    tx: ReadTxn, tenant: str, user: str, records: Sequence[SummaryRecord]
) -> list[Admitted[SummaryRecord]]:
    """The records of a chain the never-store gate admits, up to the first it refuses (the
    later ones roll from it). ``build_chain`` withheld every note it could judge; the gate
    judges every note again against the turns it cites as the store holds them."""
    admitted: list[Admitted[SummaryRecord]] = []
    for record in records:
        verdict = admit(record, reader=tx, tenant=tenant, user=user)
        if not isinstance(verdict, Admitted):
            break
        admitted.append(verdict)
    return admitted


def job_kind(summarizer: Summarizer) -> str:
    """Jobs are typed by the summarizer that must run them: a worker claims only its own."""
    return f"summary/{summarizer.name}@{summarizer.prompt_version}"


def job_key(summarizer: Summarizer, through_id: str) -> str:
    return f"{job_kind(summarizer)}/{through_id}"


@dataclass
class Lookup:
    """What the request uses, and what is to be written after the read."""

    use: SummaryRecord | None = None
    source: str | None = None  # stored | built | ancestor
    to_store: list[Admitted[SummaryRecord]] = field(default_factory=list)
    to_enqueue: Job | None = None
    requeue_job: str | None = None
    invalid: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Walk:
    """The path from a through-message back to its nearest ancestor summary."""

    ancestor: SummaryRecord | None
    turns: list[Message]  # oldest first, after the ancestor's through-message
    complete: bool  # False when the walk gave up at its limit
    # when ``turns`` start with tool results: the calls of the assistant message above them
    open_calls: Mapping[str, ToolCall] = field(default_factory=dict)


def _calls_above(rows: Iterator[BranchRow]) -> dict[str, ToolCall]:
    """The calls in force below the next of ``rows`` (newest first): its own, or through the
    tool results there (parallel calls answer in a chain) those of the assistant message that
    made them. Read only when a run of turns starts with a tool result."""
    for row in rows:
        if row.message.role == "assistant":
            return {call.id: call for call in row.message.tool_calls}
        if row.message.role != "tool":
            break
    return {}


class SummaryFlow:
    """Per ``Memory``: its summarizer and a cache of summaries already checked."""

    def __init__(
        self,
        summarizer: Summarizer,
        *,
        max_inline: int,
        segment: int,
        job_attempts: int,
    ) -> None:
        self.summarizer = summarizer
        self.max_inline = max_inline
        self.segment = segment
        self.job_attempts = job_attempts
        self._validated: set[str] = set()
        self._lock = threading.Lock()

    # --- checking -------------------------------------------------------------------------------

    def is_valid(self, tx: ReadTxn, tenant: str, record: SummaryRecord) -> bool:
        """The messages the summary's own segment covers are still exactly those it was built
        from (earlier segments were checked when their own summaries were)."""
        with self._lock:
            if record.id in self._validated:
                return True
        path = tx.path_ids(tenant, record.through_message_id, record.segment_length)
        if not segment_is_intact(record, path):
            log.warning("summary %s no longer matches the messages it covers", record.id)
            return False
        with self._lock:
            if len(self._validated) >= _VALIDATED_CACHE:
                self._validated.clear()
            self._validated.add(record.id)
        return True

    # --- walking --------------------------------------------------------------------------------

    def walk(
        self,
        tx: ReadTxn,
        tenant: str,
        conversation_id: str,
        through: str,
        limit: int | None,
        invalid: list[str],
    ) -> Walk:
        """From ``through`` towards the root until a (valid) summary of this summarizer."""
        name, version = self.summarizer.name, self.summarizer.prompt_version
        candidates: dict[str, SummaryRecord] | None = None
        turns: list[Message] = []
        rows = tx.branch(tenant, through, ESTIMATE)
        ancestor: SummaryRecord | None = None
        for row in rows:
            message = row.message
            if candidates is None:
                above = tx.summaries_above(
                    tenant,
                    conversation_id,
                    name,
                    version,
                    below_depth=message.depth,
                    limit=_CANDIDATES,
                )
                candidates = {record.through_message_id: record for record in above}
            elif message.id in candidates:
                record = candidates[message.id]
                if self.is_valid(tx, tenant, record):
                    ancestor = record
                    break
                invalid.append(record.id)
            if limit is not None and len(turns) >= limit:
                return Walk(None, [], False)
            turns.append(message)
        turns.reverse()
        open_calls: Mapping[str, ToolCall] = {}
        if ancestor is not None and turns and turns[0].role == "tool":
            open_calls = _calls_above(itertools.chain([row], rows))
        return Walk(ancestor, turns, True, open_calls)

    # --- the request's lookup -------------------------------------------------------------------

    def find(
        self, tx: ReadTxn, tenant: str, user: str, conversation_id: str, through: str
    ) -> Lookup:
        """The summary through ``through`` for this request, or the best stand-in."""
        summarizer = self.summarizer
        lookup = Lookup()
        stored = tx.summary_through(tenant, through, summarizer.name, summarizer.prompt_version)
        if stored is not None:
            if self.is_valid(tx, tenant, stored):
                lookup.use, lookup.source = stored, "stored"
                return lookup
            lookup.invalid.append(stored.id)
        existing = tx.find_job(tenant, job_key(summarizer, through))
        queued = existing is not None and existing.status != "done"
        if summarizer.inline and not queued:
            walk = self.walk(tx, tenant, conversation_id, through, self.max_inline, lookup.invalid)
            if walk.complete:
                built = build_chain(
                    ChainStart(walk.ancestor),
                    walk.turns,
                    summarizer,
                    conversation_id=conversation_id,
                    max_segment=self.segment,
                    open_calls=walk.open_calls,
                )
                lookup.to_store = admitted_chain(tx, tenant, user, built)
                if len(lookup.to_store) == len(built):
                    lookup.use, lookup.source = built[-1], "built"
                    return lookup
                lookup.to_store = []  # the gate refused one: the worker's rebuild is queued
        elif not summarizer.inline:
            walk = self.walk(tx, tenant, conversation_id, through, self.max_inline, lookup.invalid)
            if walk.ancestor is not None:
                lookup.use, lookup.source = walk.ancestor, "ancestor"
        # a model summarizer, or too long a run to read inline (already queued: not read again
        # on every request): the worker builds it
        if existing is None:
            lookup.to_enqueue = self.new_job(tenant, user, conversation_id, through)
        elif existing.status == "done":  # built once, since invalidated: build again
            lookup.requeue_job = existing.id
        return lookup

    def new_job(self, tenant: str, user: str, conversation_id: str, through: str) -> Job:
        now = datetime.now(UTC)
        return Job(
            id=new_id("job"),
            tenant_id=tenant,
            kind=job_kind(self.summarizer),
            key=job_key(self.summarizer, through),
            conversation_id=conversation_id,
            payload={"user_id": user, "through_message_id": through},
            status="pending",
            attempts=0,
            max_attempts=self.job_attempts,
            lease_owner=None,
            lease_expires_at=None,
            run_after=time.time(),
            last_error=None,
            created_at=now,
            updated_at=now,
        )

    @conflicts_retried
    def commit(self, store: Store, tenant: str, user: str, lookup: Lookup) -> Lookup:
        """Write what the lookup built or queued; returns it with ``use`` as stored."""
        if not (lookup.to_store or lookup.to_enqueue or lookup.invalid or lookup.requeue_job):
            return lookup
        with store.write() as tx:
            self._write(tx, tenant, user, lookup)
            if lookup.to_store and lookup.use is not None:
                # a concurrent request may have stored the same key first: use that one
                final = lookup.use
                stored = tx.summary_through(
                    tenant, final.through_message_id, final.summarizer, final.prompt_version
                )
                if stored is not None:
                    lookup.use = stored
        return lookup

    def _write(self, tx: WriteTxn, tenant: str, user: str, lookup: Lookup) -> None:
        for summary_id in lookup.invalid:
            tx.delete_summary(tenant, summary_id)
        for record in lookup.to_store:
            tx.insert_summary(tenant, user, record)
        if lookup.to_enqueue is not None:
            tx.enqueue_job(lookup.to_enqueue)
        if lookup.requeue_job is not None:
            tx.retry_job(lookup.requeue_job, time.time())

"""How the behaviour suite writes and reads: one ``Driver`` per surface.

``EngineDriver`` goes through convmem's public Python surface (``Memory`` → ``Scope`` →
``Conversation``); ``convmem.eval.behaviour.http`` has the same operations over the HTTP API. A
principal is a ``(tenant, user)`` pair; a read another principal may not make answers ``None``
(the surface's not-found), so the runner can tell "refused" from "returned".
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from convmem.engine import Memory, Scope
from convmem.errors import NotFound
from convmem.model.messages import Message, ToolCall
from convmem.model.profile import ModelProfile
from convmem.model.purpose import DEFAULT_PURPOSE
from convmem.model.snapshot import Snapshot
from convmem.summarize.base import Summarizer, SummaryResult

Who = tuple[str, str]  # (tenant, user)
Item = tuple[str, str]  # (id, text) of a returned record


@dataclass(frozen=True)
class Assembled:
    """A request as a provider would receive it, with its report as a plain dict (and the tool
    definitions it offers, None for none)."""

    messages: list[dict[str, Any]]
    system: list[dict[str, Any]] | None
    report: dict[str, Any]
    tools: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class Note:
    """A summary note: its text and the message ids it cites."""

    text: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class SummaryView:
    id: str
    notes: tuple[Note, ...]
    summarizer: str = ""  # the summarizer that made it ("extractive", "llm:<model>")
    fallback: bool = False  # the model failed and the extractive result stands in


@dataclass(frozen=True)
class Produced:
    """One run of the summarizer: the snapshot it was given, the turns it read, and what it
    produced before its own checks dropped or mended notes (faithfulness is measured on this:
    a model inventing notes that the checks then drop must still score low)."""

    previous: Snapshot | None
    turns: tuple[Message, ...]
    snapshot: Snapshot
    summarizer: str
    fallback: bool


@dataclass
class SummaryRecorder:
    """A summarizer that is ``inner`` and keeps what each of its runs produced (``take``)."""

    inner: Summarizer
    runs: list[Produced] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def prompt_version(self) -> str:
        return self.inner.prompt_version

    @property
    def inline(self) -> bool:
        return self.inner.inline

    def summarize(self, previous: Snapshot | None, turns: Sequence[Message]) -> SummaryResult:
        result = self.inner.summarize(previous, turns)
        produced = result.produced if result.produced is not None else result.snapshot
        self.runs.append(Produced(previous, tuple(turns), produced, self.inner.name,
                                  result.fallback_reason is not None))  # fmt: skip
        return result

    def take(self) -> list[Produced]:
        """The runs recorded since the last call."""
        taken, self.runs = self.runs, []
        return taken


@contextmanager
def recording(memory: Memory) -> Iterator[SummaryRecorder]:
    """``memory``'s summarizer recorded while the block runs (requests and the worker's jobs on
    this ``Memory`` alike), then put back."""
    flow = memory.summaries
    recorder = SummaryRecorder(flow.summarizer)
    flow.summarizer = recorder
    try:
        yield recorder
    finally:
        flow.summarizer = recorder.inner


class Driver(Protocol):
    """The operations the cases use. Writes return the ids they created; reads of records the
    principal may not see return ``None``."""

    name: str

    def remember(
        self, who: Who, text: str, *, proposed: bool, scope: str, subject: str | None,
        expires_at: datetime | None, purpose: str = DEFAULT_PURPOSE,
        source_message_id: str | None = None,
    ) -> str | None: ...  # fmt: skip
    def confirm(self, who: Who, memory_id: str) -> None: ...
    def reject(self, who: Who, memory_id: str) -> None: ...
    def restore(self, who: Who, memory_id: str) -> None: ...
    def update_memory(self, who: Who, memory_id: str, text: str) -> str | None: ...
    def delete_memory(self, who: Who, memory_id: str) -> None: ...
    def set_memory_enabled(self, who: Who, enabled: bool) -> None: ...
    def create_conversation(self, who: Who, *, project: str | None, temporary: bool) -> str: ...
    def append(
        self, who: Who, conv: str, role: str, text: str, *,
        tool_calls: Sequence[ToolCall] = (), tool_call_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> tuple[str, list[str]]: ...  # fmt: skip
    def edit(self, who: Who, conv: str, message_id: str, text: str) -> str: ...
    def delete_message(self, who: Who, conv: str, message_id: str) -> None: ...
    def delete_conversation(self, who: Who, conv: str) -> None: ...
    def delete_all(self, who: Who) -> None: ...
    def expire_conversations(self, tenant: str) -> None: ...
    def settle(self) -> int:
        """Build the summaries the requests queued (a model summarizer works off the request
        path, in the worker); how many jobs ran. The extractive summarizer queues none."""
        ...

    def assemble(
        self, who: Who, conv: str, query: str | None, *, window: int, format: str,
        purposes: Sequence[str] | None = None,
    ) -> Assembled | None: ...  # fmt: skip
    def memory_search(
        self, who: Who, query: str, purposes: Sequence[str] | None = None
    ) -> list[Item]: ...
    def memory_list(self, who: Who) -> list[Item]: ...
    def memory_get(self, who: Who, memory_id: str) -> Item | None: ...
    def message_get(self, who: Who, message_id: str) -> Item | None: ...
    def conversation_search(self, who: Who, conv: str, query: str) -> list[Item] | None: ...
    def conversation_messages(self, who: Who, conv: str) -> list[Item] | None: ...
    def conversation_list(self, who: Who) -> list[Item]: ...
    def export(self, who: Who) -> str: ...
    def summaries(self, who: Who, conv: str) -> list[SummaryView] | None: ...
    def last_assembly(self, who: Who, conv: str) -> Item | None:
        """What the memory page shows of the conversation's last request: its report (ids and
        counts), as (conversation id, the report as JSON); ``("", "")`` when none was kept."""
        ...

    def memory_vectors(self, who: Who) -> list[Item] | None:
        """A probe beneath the serving paths: the memory id of every vector row the principal
        holds (whether or not the memory still exists), as (id, ""); None when the database
        writes no vectors (no embedder), so there is nothing to probe."""
        ...


def profile(window: int) -> ModelProfile:
    """The model the cases assemble for: ``window`` tokens, an eighth kept for the answer."""
    return ModelProfile(context_window=window, max_output=window // 8, tokenizer="o200k_base")


class EngineDriver:
    """The public Python surface of one open database."""

    name = "engine"

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def _scope(self, who: Who) -> Scope:
        return self.memory.scope(tenant=who[0], user=who[1])

    # --- writes -----------------------------------------------------------------------------

    def remember(
        self, who: Who, text: str, *, proposed: bool, scope: str, subject: str | None,
        expires_at: datetime | None, purpose: str = DEFAULT_PURPOSE,
        source_message_id: str | None = None,
    ) -> str | None:  # fmt: skip
        save = self._scope(who).propose if proposed else self._scope(who).remember
        notice = save(
            text, scope=scope, subject=subject, expires_at=expires_at, purpose=purpose,
            source_message_id=source_message_id,
        )  # fmt: skip
        return notice.memory.id if notice.memory is not None else None

    def confirm(self, who: Who, memory_id: str) -> None:
        self._scope(who).memories.confirm(memory_id)

    def reject(self, who: Who, memory_id: str) -> None:
        self._scope(who).memories.reject(memory_id)

    def restore(self, who: Who, memory_id: str) -> None:
        self._scope(who).memories.restore(memory_id)

    def update_memory(self, who: Who, memory_id: str, text: str) -> str | None:
        notice = self._scope(who).memories.update(memory_id, text)
        return notice.memory.id if notice.memory is not None else None

    def delete_memory(self, who: Who, memory_id: str) -> None:
        self._scope(who).memories.delete(memory_id)

    def set_memory_enabled(self, who: Who, enabled: bool) -> None:
        self._scope(who).set_memory_enabled(enabled)

    def create_conversation(self, who: Who, *, project: str | None, temporary: bool) -> str:
        metadata = {"project": project} if project else None
        return self._scope(who).create_conversation(temporary=temporary, metadata=metadata).id

    def append(
        self, who: Who, conv: str, role: str, text: str, *,
        tool_calls: Sequence[ToolCall] = (), tool_call_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> tuple[str, list[str]]:  # fmt: skip
        message = self._scope(who).conversation(conv).append(
            role,  # type: ignore[arg-type]  # the case file's role; the surface checks it
            text, tool_calls=list(tool_calls) or None, tool_call_id=tool_call_id,
            metadata=metadata,
        )  # fmt: skip
        saved = [n.memory.id for n in message.notices if n.memory is not None]
        return message.id, saved

    def edit(self, who: Who, conv: str, message_id: str, text: str) -> str:
        return self._scope(who).conversation(conv).edit(message_id, text).id

    def delete_message(self, who: Who, conv: str, message_id: str) -> None:
        self._scope(who).conversation(conv).delete_message(message_id)

    def delete_conversation(self, who: Who, conv: str) -> None:
        self._scope(who).conversation(conv).delete()

    def delete_all(self, who: Who) -> None:
        self._scope(who).delete_all()

    def settle(self) -> int:
        """Run the queued jobs here, as ``convmem worker`` would (with a model summarizer
        only: the extractive one builds summaries inline). Other tenants' ready jobs run too —
        they are the worker's work all the same."""
        if self.memory.config.summarizer is None:
            return 0
        from convmem.ops.worker import Worker

        worker, ran = Worker(self.memory, lease_seconds=60), 0
        while worker.run_once() is not None:
            ran += 1
        return ran

    def expire_conversations(self, tenant: str) -> None:
        """The retention path: a one-day period, applied as if two days had passed."""
        self.memory.set_tenant_policy(tenant, retention_days=1)
        self.memory.apply_retention(now=datetime.now(UTC) + timedelta(days=2))

    # --- reads (the serving paths) ---------------------------------------------------------

    def assemble(
        self, who: Who, conv: str, query: str | None, *, window: int, format: str,
        purposes: Sequence[str] | None = None,
    ) -> Assembled | None:  # fmt: skip
        """The request, kept as the conversation's last (as the service keeps what it
        assembles, for the memory page)."""
        try:
            handle = self._scope(who).conversation(conv)
        except NotFound:
            return None
        ctx = handle.assemble(
            query, model=profile(window), format=format,  # type: ignore[arg-type]
            purposes=purposes,
        )  # fmt: skip
        handle.record_assembly(ctx)
        return Assembled(ctx.messages, ctx.system, ctx.report.to_dict(), ctx.tools)

    def memory_search(
        self, who: Who, query: str, purposes: Sequence[str] | None = None
    ) -> list[Item]:
        hits = self._scope(who).search_memories(query, 10, purposes=purposes)
        return [(h.memory.id, h.memory.text) for h in hits]

    def memory_list(self, who: Who) -> list[Item]:
        return [(m.id, m.text) for m in self._scope(who).memories.list()]

    def memory_get(self, who: Who, memory_id: str) -> Item | None:
        try:
            record = self._scope(who).memories.get(memory_id)
        except NotFound:
            return None
        return record.id, f"{record.status}: {record.text}"

    def message_get(self, who: Who, message_id: str) -> Item | None:
        try:
            message = self._scope(who).message(message_id)
        except NotFound:
            return None
        return message.id, message.content if isinstance(message.content, str) else ""

    def conversation_search(self, who: Who, conv: str, query: str) -> list[Item] | None:
        try:
            hits = self._scope(who).conversation(conv).search(query, k=20)
        except NotFound:
            return None
        return [(h.message.id, str(h.message.content)) for h in hits]

    def conversation_messages(self, who: Who, conv: str) -> list[Item] | None:
        try:
            messages = self._scope(who).conversation(conv).messages()
        except NotFound:
            return None
        return [(m.id, str(m.content)) for m in messages]

    def conversation_list(self, who: Who) -> list[Item]:
        return [(c.id, c.title or "") for c in self._scope(who).conversations(limit=500)]

    def export(self, who: Who) -> str:
        return json.dumps(self._scope(who).export(), default=str, ensure_ascii=False)

    def last_assembly(self, who: Who, conv: str) -> Item | None:
        try:
            record = self._scope(who).conversation(conv).last_assembly()
        except NotFound:
            return None
        return ("", "") if record is None else (conv, json.dumps(record.report))

    def memory_vectors(self, who: Who) -> list[Item] | None:
        if self.memory.write_embedder is None:
            return None
        scope = self._scope(who)  # the ids checked, as every read checks them
        with self.memory.store.read() as tx:
            return [(memory_id, "") for memory_id in tx.memory_vector_ids(scope.tenant, scope.user)]

    def recording_summaries(self) -> AbstractContextManager[SummaryRecorder]:
        """What this database's summarizer produces while the block runs (``recording``)."""
        return recording(self.memory)

    def summaries(self, who: Who, conv: str) -> list[SummaryView] | None:
        try:
            records = self._scope(who).conversation(conv).summaries()
        except NotFound:
            return None
        return [
            SummaryView(
                r.id,
                tuple(Note(item.text, item.sources) for _, item in r.snapshot.items()),
                r.summarizer,
                r.fallback_reason is not None,
            )
            for r in records
        ]

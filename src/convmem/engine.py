"""The facade: ``Memory`` (a database), ``Scope`` (one tenant's user), ``Conversation`` (a handle).

Interfaces call only this. It applies the tree's rules and token counting around the store's
transactions; the algorithms it calls are pure.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, Unpack

from convmem.assemble import (
    AssembledContext,
    AssemblyOptions,
    ChainEntry,
    FixedParts,
    HistoryPlan,
    SummaryUse,
    finish_request,
    plan_history,
)
from convmem.config import Config
from convmem.errors import BudgetExceeded, InvalidInput, InvalidMessage, NotFound
from convmem.formats import Format
from convmem.ids import new_id
from convmem.indexing import after_delete, backfill, prepare_turn, reindex, write_turn
from convmem.keys import ApiKeys
from convmem.memories import (
    Memories,
    MemoryFields,
    Principal,
    audit,
    forget_matching,
    memory_gate,
    recall_candidates,
    save_memory,
)
from convmem.memory.intent import Intent, detect_intent
from convmem.memory.recall import RELEVANT_MEMORY_HEADER, render_memory_block
from convmem.model.conversation import ConversationRecord
from convmem.model.keys import AssemblyRecord
from convmem.model.memory import AuditEvent, MemoryHit, MemoryNotice, MemoryRecord
from convmem.model.messages import Message, NewMessage, Role, ToolCall
from convmem.model.profile import ModelProfile
from convmem.model.search import MessageHit
from convmem.model.summary import Job, SummaryRecord
from convmem.retention import apply_retention, delete_conversation
from convmem.retrieval.caches import VectorCache
from convmem.retrieval.recall import render_retrieved_block
from convmem.retrieval.vector import Embedder, RequestEmbedder, normalise
from convmem.search import (
    SearchOptions,
    Window,
    rank_conversation,
    search_conversation,
    search_memories,
)
from convmem.store.base import (
    BranchRow,
    MemoryVector,
    MessageRow,
    PinnedInstruction,
    ReadTxn,
    Store,
    WriteTxn,
)
from convmem.store.registry import open_store
from convmem.summaries import Lookup, SummaryFlow
from convmem.summarize.base import Summarizer
from convmem.summarize.extractive import ExtractiveSummarizer
from convmem.summarize.llm import LLMSummarizer
from convmem.summarize.render import render_snapshot
from convmem.tokens import ESTIMATE, TokenCounter, get_counter, message_tokens
from convmem.tree import (
    check_identifier,
    check_metadata,
    check_new_message,
    check_text,
    check_tool_result,
    normalise_created_at,
)

_ACTIVE_LEAF = object()  # "append under the active leaf"


class Memory:
    """One convmem database. Open it with ``convmem.open``."""

    def __init__(
        self,
        store: Store,
        config: Config | None = None,
        summarizer: Summarizer | None = None,
        *,
        embedder: Embedder | None = None,
    ) -> None:
        """``summarizer`` overrides the one ``config`` names (the extension point); ``embedder``
        adds vectors to search (none: full text only)."""
        self.store = store
        self.config = config or Config()
        if summarizer is None:
            llm = self.config.summarizer
            summarizer = ExtractiveSummarizer() if llm is None else LLMSummarizer(llm)
        self.summaries = SummaryFlow(
            summarizer,
            max_inline=self.config.max_inline_summary_messages,
            segment=self.config.summary_segment_messages,
            job_attempts=self.config.summary_job_attempts,
        )
        self.embedder = embedder
        self.vector_cache = VectorCache()
        self._write_counters: list[TokenCounter] = [get_counter(ESTIMATE)]
        for name in self.config.tokenizers:
            counter = get_counter(name)
            if counter.name != ESTIMATE:
                self._write_counters.append(counter)
        if store.reindex_needed:
            self.reindex()

    @property
    def _write_embedder(self) -> Embedder | None:
        return self.embedder if self.config.embed_on_write else None

    def reindex(self, *, batch_size: int = 500) -> int:
        """Index every message the search index lacks (a database from before the index, or one
        whose index was dropped: it is derived and rebuildable). Returns how many."""
        return reindex(
            self.store, self._write_embedder, self.vector_cache, self.config.session_gap,
            batch_size=batch_size,
        )  # fmt: skip

    def backfill_embeddings(
        self, *, batch_size: int = 256, max_batches: int | None = None
    ) -> dict[str, int]:
        """Embed, in batches, every indexed turn, vocabulary word and memory that has no vector
        from this database's embedder (rows written with ``embed_on_write`` off, or rows of an
        older model); with ``max_batches``, at most that many batches of each. Returns how many
        of each were embedded."""
        if self.embedder is None:
            return {"messages": 0, "terms": 0, "memories": 0}
        return backfill(
            self.store, self.embedder, self.vector_cache, batch_size=batch_size,
            max_batches=max_batches,
        )  # fmt: skip

    def embed_memories(self, tenant: str, user: str, records: Iterable[MemoryRecord]) -> None:
        """Store vectors for new memory records (after their write: a model call never holds the
        write lock). A record deleted meanwhile gets none."""
        embedder = self._write_embedder
        todo = [r for r in records if r.status in ("confirmed", "proposed")]
        if embedder is None or not todo:
            return
        vectors = normalise(embedder.embed([r.text for r in todo]))
        with self.store.write() as tx:
            rows = [MemoryVector(r.id, v) for r, v in zip(todo, vectors, strict=True)]
            tx.set_memory_vectors(tenant, user, embedder.name, rows)

    def scope(self, tenant: str, user: str, *, actor: str | None = None) -> Scope:
        """Act as one authenticated principal. Every call through the scope sees only its data.

        ``actor`` names who acts, for the audit (default ``user:<user>``; a service passes its
        key's identity)."""
        tenant = check_identifier(tenant, "tenant")
        user = check_identifier(user, "user")
        return Scope(self, tenant, user, actor or f"user:{user}")

    def set_tenant_policy(
        self, tenant: str, *, memory_disabled: bool = False, retention_days: int | None = None
    ) -> None:
        """An administrator's switches: long-term memory off for every user of the tenant, and
        a retention period — conversations nothing was written to for ``retention_days`` are
        deleted by ``apply_retention`` (the worker runs it)."""
        check_identifier(tenant, "tenant")
        if retention_days is not None and retention_days < 1:
            raise InvalidInput("retention_days must be positive")
        with self.store.write() as tx:
            tx.set_tenant_policy(
                tenant,
                memory_disabled=memory_disabled,
                retention_days=retention_days,
                at=datetime.now(UTC),
            )

    def apply_retention(self, now: datetime | None = None) -> dict[str, int]:
        """Delete, for every tenant with a retention period, the conversations nothing was
        written to for that long (see ``convmem.retention``). Returns the count per tenant;
        ``convmem worker`` runs this hourly."""
        return apply_retention(self.store, now)

    @property
    def keys(self) -> ApiKeys:
        """The API keys of this database: create, authenticate, list, revoke."""
        return ApiKeys(self)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def summarizer(self) -> Summarizer:
        return self.summaries.summarizer

    def jobs(self, status: str | None = None, *, limit: int = 100) -> list[Job]:
        """Background jobs of every tenant, newest first (an operator's view: ids, no content)."""
        with self.store.read() as tx:
            return tx.list_jobs(status, limit)

    def retry_job(self, job_id: str) -> None:
        """Put a failed (or finished) job back in the queue with fresh attempts."""
        import time

        with self.store.write() as tx:
            tx.retry_job(job_id, time.time())

    def count_message(self, message: NewMessage) -> tuple[dict[str, int], int]:
        """Per-tokenizer costs of a message and its estimate, computed once at write."""
        counts = {
            counter.name: message_tokens(
                counter, message.role, message.content, message.tool_calls, message.tool_call_id
            )
            for counter in self._write_counters
        }
        return counts, counts[ESTIMATE]


class Scope:
    """A tenant's user: the principal every call acts for."""

    def __init__(self, memory: Memory, tenant: str, user: str, actor: str | None = None) -> None:
        self.memory = memory
        self.tenant = tenant
        self.user = user
        self.actor = actor or f"user:{user}"

    @property
    def principal(self) -> Principal:
        return Principal(self.tenant, self.user, self.actor)

    # --- long-term memory -----------------------------------------------------------------------

    @property
    def memories(self) -> Memories:
        """The principal's memories: list, get, confirm, reject, update, delete, resolve."""
        return Memories(self)

    def remember(self, text: str, **fields: Unpack[MemoryFields]) -> MemoryNotice:
        """Save a statement the user asked to keep. Returns a notice: saved, or blocked with a
        reason code (never-store policy, memory off); with ``strict=True`` a block raises
        ``NeverStoreViolation``. A newer statement on the same subject supersedes the older.
        Optional fields: category, subject, scope ("user" or "project:<id>"), expires_at,
        source_message_id."""
        with self.memory.store.write() as tx:
            notice = save_memory(
                tx, self.principal, text, source_kind="user_explicit", status="confirmed", **fields
            )
        self._embed_notices([notice])
        return notice

    def propose(self, text: str, **fields: Unpack[MemoryFields]) -> MemoryNotice:
        """Record an inference as a proposal: never recalled until the user confirms it."""
        with self.memory.store.write() as tx:
            notice = save_memory(
                tx, self.principal, text, source_kind="inference", status="proposed", **fields
            )
        self._embed_notices([notice])
        return notice

    def _embed_notices(self, notices: Iterable[MemoryNotice]) -> None:
        records = [n.memory for n in notices if n.memory is not None]
        self.memory.embed_memories(self.tenant, self.user, records)

    def search_memories(
        self, query: str, k: int = 5, *, scope: str | None = None
    ) -> list[MemoryHit]:
        """Current memories ranked for ``query`` (lexical and, with an embedder, vector rank
        fused), each with its score and the retrievers that found it; none when memory is off."""
        scopes = ("user",) if scope is None else ("user", scope)
        with self.memory.store.read() as tx:
            if memory_gate(tx, self.principal) is not None:
                return []
            return search_memories(
                tx, self.principal, query, k, scopes=scopes, now=datetime.now(UTC),
                embedder=self.memory.embedder,
            )  # fmt: skip

    def memory_enabled(self) -> bool:
        with self.memory.store.read() as tx:
            return memory_gate(tx, self.principal) is None

    def set_memory_enabled(self, enabled: bool) -> None:
        """The user's switch: off means nothing is read from or written to long-term memory."""
        with self.memory.store.write() as tx:
            tx.set_memory_enabled(self.tenant, self.user, bool(enabled), datetime.now(UTC))
            audit_event(tx, self.principal, "settings.memory_enabled", enabled=bool(enabled))

    def audit(self) -> list[AuditEvent]:
        """What happened to this user's data, by whom, when. Never the content."""
        with self.memory.store.read() as tx:
            return tx.list_audit(self.tenant, self.user)

    def export(self) -> dict[str, Any]:
        """All of the user's data as JSON-ready values: conversations, messages, memories,
        summaries, settings and the audit."""
        with self.memory.store.read() as tx:
            tables = tx.export_user(self.tenant, self.user)
            enabled = memory_gate(tx, self.principal) is None
        tables.setdefault("user_settings", [])
        return {
            "format": "convmem-export/1",
            "tenant": self.tenant,
            "user": self.user,
            "exported_at": datetime.now(UTC).isoformat(),
            "memory_enabled": enabled,
            "data": tables,
        }

    def delete_all(self) -> dict[str, int]:
        """Delete every conversation, message, memory, summary and setting of this user. The
        audit keeps that it happened, by whom and when."""
        with self.memory.store.write() as tx:
            counts = tx.delete_user(self.tenant, self.user)
            audit_event(tx, self.principal, "user.deleted_all", rows=sum(counts.values()))
        return counts

    # --- conversations --------------------------------------------------------------------------

    def create_conversation(
        self,
        title: str | None = None,
        *,
        temporary: bool = False,
        metadata: Mapping[str, Any] | None = None,
    ) -> Conversation:
        if title is not None:
            check_text(title, max_bytes=1000, what="title")
        record = ConversationRecord(
            id=new_id("conv"),
            tenant_id=self.tenant,
            user_id=self.user,
            title=title,
            temporary=bool(temporary),
            active_leaf_id=None,
            metadata=check_metadata(metadata),
            created_at=datetime.now(UTC),
        )
        with self.memory.store.write() as tx:
            tx.insert_conversation(self.tenant, record)
        return Conversation(self, record.id)

    def conversation(self, conversation_id: str) -> Conversation:
        """Reopen a conversation; ``NotFound`` unless it belongs to this principal."""
        check_identifier(conversation_id, "conversation id")
        with self.memory.store.read() as tx:
            tx.get_conversation(self.tenant, self.user, conversation_id)
        return Conversation(self, conversation_id)

    def conversations(self, *, limit: int = 50, offset: int = 0) -> list[ConversationRecord]:
        if limit < 1 or offset < 0:
            raise InvalidInput("limit must be positive and offset not negative")
        with self.memory.store.read() as tx:
            return tx.list_conversations(self.tenant, self.user, limit=limit, offset=offset)

    def pin(self, text: str) -> PinnedInstruction:
        """Pin an instruction for every conversation of this user."""
        return _pin(self, None, text)

    def pinned(self) -> list[PinnedInstruction]:
        with self.memory.store.read() as tx:
            return tx.pinned(self.tenant, self.user, None)

    def unpin(self, pin_id: str) -> None:
        with self.memory.store.write() as tx:
            tx.delete_pinned(self.tenant, self.user, pin_id)

    def message(self, message_id: str) -> Message:
        """Any message of this principal's conversations by id (e.g. a memory's source)."""
        check_identifier(message_id, "message id")
        with self.memory.store.read() as tx:
            return tx.get_message(self.tenant, self.user, message_id)


def audit_event(tx: WriteTxn, who: Principal, action: str, **details: Any) -> None:
    audit(tx, who, action, "user", who.user, **details)


def _pin(scope: Scope, conversation_id: str | None, text: str) -> PinnedInstruction:
    check_text(text, max_bytes=scope.memory.config.max_content_bytes, what="instruction")
    if not text.strip():
        raise InvalidInput("a pinned instruction needs text")
    with scope.memory.store.write() as tx:
        if conversation_id is not None:
            tx.get_conversation(scope.tenant, scope.user, conversation_id)
        existing = tx.pinned(scope.tenant, scope.user, conversation_id)
        position = 1 + max(
            (p.position for p in existing if p.conversation_id == conversation_id), default=0
        )
        pin = PinnedInstruction(new_id("pin"), text, conversation_id, position, datetime.now(UTC))
        tx.insert_pinned(scope.tenant, scope.user, pin)
    return pin


class Conversation:
    """A handle on one conversation of one principal. Cheap; holds only ids."""

    def __init__(self, scope: Scope, conversation_id: str) -> None:
        self.scope = scope
        self.id = conversation_id

    def __repr__(self) -> str:
        return f"Conversation(id={self.id!r})"

    @property
    def _store(self) -> Store:
        return self.scope.memory.store

    @property
    def _tenant(self) -> str:
        return self.scope.tenant

    def record(self) -> ConversationRecord:
        with self._store.read() as tx:
            return tx.get_conversation(self._tenant, self.scope.user, self.id)

    # --- writing --------------------------------------------------------------------------------

    def append(
        self,
        role: Role,
        content: str,
        *,
        tool_calls: Sequence[ToolCall] | None = None,
        tool_call_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        created_at: datetime | None = None,
        parent_id: str | None = None,
    ) -> Message:
        """Add a message under ``parent_id`` (default: the active leaf) and make it the leaf."""
        new = self._new_message(role, content, tool_calls, tool_call_id, metadata, created_at)
        parent: object = _ACTIVE_LEAF if parent_id is None else parent_id
        return self._write_message(new, parent, revision_of=None, revision_kind=None)

    def edit(
        self, message_id: str, content: str, *, metadata: Mapping[str, Any] | None = None
    ) -> Message:
        """A new version of a user, system or assistant message, as its sibling; the leaf moves."""
        original = self.message(message_id)
        if original.role == "tool" or original.tool_calls:
            raise InvalidMessage("tool calls and tool results cannot be edited")
        merged = dict(original.metadata) if metadata is None else metadata
        new = self._new_message(original.role, content, None, None, merged, None)
        return self._write_message(new, original.parent_id, original.id, "edit")

    def regenerate(
        self,
        reply_id: str,
        content: str | None = None,
        *,
        tool_calls: Sequence[ToolCall] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Message:
        """Start a new version of an assistant reply.

        With ``content`` (or tool calls) the new reply is stored as a sibling and becomes the leaf.
        Without, the active leaf moves back to the message the reply answered, which is returned:
        assemble with no new user message, then ``append("assistant", …)`` the model's new reply.
        """
        original = self.message(reply_id)
        if original.role != "assistant":
            raise InvalidMessage("only assistant replies can be regenerated")
        if content is None and not tool_calls:
            if original.parent_id is None:
                raise InvalidMessage("a reply at the root answers nothing to regenerate from")
            self.switch_branch(original.parent_id)
            return self.message(original.parent_id)
        new = self._new_message("assistant", content or "", tool_calls, None, metadata, None)
        return self._write_message(new, original.parent_id, original.id, "regenerate")

    def switch_branch(self, leaf_id: str) -> None:
        """Make ``leaf_id`` (any message of this conversation) the active leaf."""
        with self._store.write() as tx:
            self._own_message(tx, leaf_id)
            tx.set_active_leaf(self._tenant, self.id, leaf_id)

    def delete_message(self, message_id: str) -> list[str]:
        """Delete a message and its whole subtree, for real. Returns the deleted ids."""
        with self._store.write() as tx:
            record = tx.get_conversation(self._tenant, self.scope.user, self.id)
            message = self._own_message(tx, message_id)
            doomed = tx.subtree_ids(self._tenant, message_id)
            tx.delete_messages(self._tenant, doomed)  # and what was derived (the Protocol says)
            after_delete(tx, self._tenant, self.id, message.parent_id, self._session_gap)
            if record.active_leaf_id in set(doomed):
                tx.set_active_leaf(self._tenant, self.id, message.parent_id)
        return doomed

    @property
    def _session_gap(self) -> timedelta:
        return self.scope.memory.config.session_gap

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        options: SearchOptions | None = None,
    ) -> list[MessageHit]:
        """The conversation's turns (every branch) ranked for ``query``: lexical, expansion and,
        with an embedder, vector rankings fused. ``since``/``until`` keep turns created in that
        range. Tool results are not searched."""
        memory = self.scope.memory
        with self._store.read() as tx:
            tx.get_conversation(self._tenant, self.scope.user, self.id)
            return search_conversation(
                tx, self.scope.principal, self.id, query, k, embedder=memory.embedder,
                cache=memory.vector_cache, options=options or memory.config.search,
                window=Window(since=_aware(since), until=_aware(until)),
            )  # fmt: skip

    def delete(self) -> None:
        """Delete the conversation with every message, for real."""
        with self._store.write() as tx:
            tx.get_conversation(self._tenant, self.scope.user, self.id)
            delete_conversation(tx, self.scope.principal, self.id)

    def pin(self, text: str) -> PinnedInstruction:
        """Pin an instruction for this conversation."""
        return _pin(self.scope, self.id, text)

    def _new_message(
        self,
        role: Role,
        content: str,
        tool_calls: Sequence[ToolCall] | None,
        tool_call_id: str | None,
        metadata: Mapping[str, Any] | None,
        created_at: datetime | None,
    ) -> NewMessage:
        new = NewMessage(
            role=role,
            content=content,
            tool_calls=tuple(tool_calls or ()),
            tool_call_id=tool_call_id,
            metadata=check_metadata(metadata),
            created_at=normalise_created_at(created_at),
        )
        check_new_message(new, max_bytes=self.scope.memory.config.max_content_bytes)
        return new

    def _write_message(
        self,
        new: NewMessage,
        parent: object,
        revision_of: str | None,
        revision_kind: str | None,
    ) -> Message:
        tokens, estimate = self.scope.memory.count_message(new)  # outside the write lock
        intent = detect_intent(new.content) if new.role == "user" else None
        notices: tuple[MemoryNotice, ...] = ()
        tenant, user = self._tenant, self.scope.user
        assert new.created_at is not None
        message_id = new_id("msg")
        memory = self.scope.memory
        unplaced = Message(
            message_id, self.id, None, 0, new.role, new.content, new.tool_calls,
            new.tool_call_id, new.metadata, new.created_at,
        )  # fmt: skip
        # the model runs outside the write lock too
        prepared = prepare_turn(unplaced, memory._write_embedder, memory.vector_cache)
        with self._store.write() as tx:
            record = tx.get_conversation(tenant, user, self.id)
            parent_id = record.active_leaf_id if parent is _ACTIVE_LEAF else parent
            assert parent_id is None or isinstance(parent_id, str)
            parent_row = self._parent_row(tx, parent_id)
            if new.role == "tool":  # only a tool result needs the run of results above it
                check_tool_result(new, self._tool_run(tx, parent_row))
            depth = 0 if parent_row is None else parent_row.message.depth + 1
            before = (
                0 if parent_row is None else parent_row.estimate_before + parent_row.estimate_tokens
            )
            stored = replace(unplaced, parent_id=parent_id, depth=depth)
            row = MessageRow(stored, revision_of, revision_kind, tokens, estimate, before)
            tx.insert_message(tenant, user, row)
            if prepared is not None:
                write_turn(tx, tenant, user, stored, prepared, memory.config.session_gap)
            tx.set_active_leaf(tenant, self.id, stored.id)
            if intent is not None:
                notices = self._act_on_intent(tx, intent, stored.id, record.temporary)
        self.scope._embed_notices(notices)
        return replace(stored, notices=notices)

    def _act_on_intent(
        self, tx: WriteTxn, intent: Intent, message_id: str, temporary: bool
    ) -> tuple[MemoryNotice, ...]:
        """Carry out what a user message asks of memory, in the message's own transaction."""
        who = self.scope.principal
        closed = "temporary_conversation" if temporary else memory_gate(tx, who)
        if closed is not None:
            # only an explicit request deserves an answer; statements are silently not proposed
            return (
                (MemoryNotice("blocked", intent.text, closed),) if intent.kind == "remember" else ()
            )
        if intent.kind == "forget":
            forgotten = forget_matching(tx, who, intent.text)
            return (forgotten,) if forgotten else ()
        explicit = intent.kind == "remember"
        notice = save_memory(
            tx, who, intent.text,
            source_kind="user_explicit" if explicit else "inference",
            status="confirmed" if explicit else "proposed",
            category=intent.category, subject=intent.subject_key, source_message_id=message_id,
        )  # fmt: skip
        if notice.status == "blocked" and not explicit:
            return ()
        return (notice,)

    def _parent_row(self, tx: ReadTxn, parent_id: str | None) -> BranchRow | None:
        if parent_id is None:
            return None
        row = tx.get_branch_row(self._tenant, self.scope.user, parent_id)
        self._check_own(row.message)
        return row

    def _own_message(self, tx: ReadTxn, message_id: str) -> Message:
        """The principal's message in this conversation; NotFound for any other."""
        message = tx.get_message(self._tenant, self.scope.user, message_id)
        self._check_own(message)
        return message

    def _check_own(self, message: Message) -> None:
        if message.conversation_id != self.id:
            raise NotFound("message", message.id)

    def _tool_run(self, tx: ReadTxn, parent: BranchRow | None) -> list[Message]:
        """The parent, then up through tool results to the assistant that made the calls."""
        run: list[Message] = []
        current = parent.message if parent else None
        while current is not None:
            run.append(current)
            if current.role != "tool" or current.parent_id is None:
                break
            current = tx.get_message(self._tenant, self.scope.user, current.parent_id)
        return run

    # --- reading --------------------------------------------------------------------------------

    def message(self, message_id: str) -> Message:
        check_identifier(message_id, "message id")
        with self._store.read() as tx:
            return self._own_message(tx, message_id)

    def siblings(self, message_id: str) -> list[Message]:
        """The versions of a message (itself included), oldest first."""
        message = self.message(message_id)
        with self._store.read() as tx:
            return tx.children(self._tenant, self.id, message.parent_id)

    def branch(self, leaf_id: str | None = None) -> list[Message]:
        """The messages from the root to ``leaf_id`` (default: the active leaf)."""
        with self._store.read() as tx:
            leaf = self._record_and_leaf(tx, leaf_id)[1]
            if leaf is None:
                return []
            rows = [row.message for row in tx.branch(self._tenant, leaf, ESTIMATE)]
        return list(reversed(rows))

    def messages(self) -> list[Message]:
        """Every message of the tree, parents before children."""
        with self._store.read() as tx:
            tx.get_conversation(self._tenant, self.scope.user, self.id)
            return tx.conversation_messages(self._tenant, self.id)

    def _record_and_leaf(
        self, tx: ReadTxn, leaf_id: str | None
    ) -> tuple[ConversationRecord, str | None]:
        """The conversation (NotFound for another principal) and the leaf to walk from."""
        record = tx.get_conversation(self._tenant, self.scope.user, self.id)
        if leaf_id is None:
            return record, record.active_leaf_id
        self._own_message(tx, leaf_id)
        return record, leaf_id

    # --- assembly -------------------------------------------------------------------------------

    def assemble(
        self,
        user_message: str | None = None,
        *,
        model: ModelProfile | None = None,
        format: Format = "openai",
        system: str | None = None,
        leaf_id: str | None = None,
        options: AssemblyOptions | None = None,
    ) -> AssembledContext:
        """Build the next request from stored state.

        ``user_message`` is the new turn, not yet stored; leave it out when the turn being answered
        is already the branch's leaf (a stored user message, or tool results to continue from).

        No message is written. When turns were evicted, the summary through the newest evicted
        message fills the summary slot: found by key, or built inline by the extractive
        summarizer and stored, or — for a model summarizer — queued for the worker while the
        newest ready ancestor summary stands in.
        """
        profile = model or self.scope.memory.config.default_model
        counter = get_counter(profile.tokenizer)
        if user_message is not None:
            check_text(user_message, max_bytes=self.scope.memory.config.max_content_bytes)
            if not user_message.strip():
                raise InvalidMessage("the user message needs content")
        options = options or AssemblyOptions()
        if system is None:  # the argument wins; the options' prompt is the default
            system = options.system_prompt
        if system is not None:
            check_text(system, max_bytes=self.scope.memory.config.max_content_bytes, what="system")
        lookup: Lookup | None = None
        with self._store.read() as tx:
            record, leaf = self._record_and_leaf(tx, leaf_id)
            if leaf is None and user_message is None:
                raise InvalidInput("the conversation is empty: pass the user message to answer")
            pins = [pin.text for pin in tx.pinned(self._tenant, self.scope.user, self.id)]
            query = user_message
            if query is None and leaf is not None:
                query = tx.get_message(self._tenant, self.scope.user, leaf).content
            memory = self.scope.memory
            embedder = RequestEmbedder(memory.embedder) if memory.embedder else None
            recalled = self._recall(tx, record, query, profile, counter, options, embedder)
            fixed = replace(recalled, system_prompt=system, pinned=pins)
            branch = _Replay(self._chain(tx, leaf, counter) if leaf is not None else iter(()))

            def plan(parts: FixedParts) -> HistoryPlan:
                return plan_history(
                    branch.replay(), current=user_message, fixed=parts, profile=profile,
                    counter=counter, format=format, options=options,
                )  # fmt: skip

            try:
                chosen = plan(fixed)
            except BudgetExceeded:
                if not fixed.relevant_memories:
                    raise
                # the late memories are a bonus: without room for them the request goes without
                fixed = replace(fixed, relevant_memories=None, relevant_memory_ids=())
                chosen = plan(fixed)
            reserve = min(
                int(profile.input_budget * options.retrieved_share), options.retrieved_max_tokens
            )
            if chosen.evicted_count and reserve and options.retrieved_k:
                # History was evicted: hold the retrieved section's room, see which turns that
                # leaves out of the window, and bring back the ones that matter to this message.
                held = replace(fixed, retrieved_reserve=reserve)
                try:
                    probe: HistoryPlan | None = plan(held)
                except BudgetExceeded:  # no room to hold: the request stays as it was
                    probe = None
                if probe is not None:
                    chosen = probe
                    included = [item.message.id for item in probe.history]
                    text, ids = self._retrieve(
                        tx, query or "", leaf, included, branch, counter, reserve,
                        options.retrieved_k, embedder,
                    )  # fmt: skip
                    if text is not None:
                        chosen = plan(replace(held, retrieved=text, retrieved_ids=ids))
            if chosen.summary_through_id is not None and options.summary_threshold is not None:
                flow = self.scope.memory.summaries
                lookup = flow.find(
                    tx, self._tenant, self.scope.user, self.id, chosen.summary_through_id
                )
        if lookup is not None:
            lookup = self.scope.memory.summaries.commit(
                self._store, self._tenant, self.scope.user, lookup
            )
        return finish_request(chosen, _summary_use(chosen, lookup))

    def _retrieve(
        self,
        tx: ReadTxn,
        query: str,
        leaf: str | None,
        included_ids: list[str],
        branch: _Replay,
        counter: TokenCounter,
        cap: int,
        k: int,
        embedder: Embedder | None,
    ) -> tuple[str | None, list[str]]:
        """The retrieved section: the best-ranked turns of this branch older than the window."""
        if leaf is None or not query.strip():
            return None, []
        depths = {entry.message.id: entry.message.depth for entry in branch.seen}
        if included_ids:
            start, window_depth = included_ids[0], depths[included_ids[0]]
        else:
            start, window_depth = leaf, depths.get(leaf, 0) + 1
        memory = self.scope.memory
        fused = rank_conversation(
            tx, self.scope.principal, self.id, query, embedder=embedder,
            cache=memory.vector_cache, options=memory.config.search,
            window=Window(max_depth=window_depth),
        )[: 4 * k]  # fmt: skip
        found = tx.get_messages(self._tenant, self.scope.user, [f.key for f in fused])
        candidates = [found[f.key] for f in fused]
        if not candidates:
            return None, []
        lowest = min(m.depth for m in candidates)
        on_branch = tx.on_branch(self._tenant, start, [m.id for m in candidates], lowest)
        ranked = [m for m in candidates if m.id in on_branch]
        return render_retrieved_block(ranked, counter, cap, k)

    # --- summaries ------------------------------------------------------------------------------

    def summaries(self) -> list[SummaryRecord]:
        """Every stored summary of this conversation (all branches), shallowest first."""
        with self._store.read() as tx:
            tx.get_conversation(self._tenant, self.scope.user, self.id)
            return tx.conversation_summaries(self._tenant, self.id)

    def summary(self, leaf_id: str | None = None) -> SummaryRecord | None:
        """The deepest stored summary valid for the branch ending at ``leaf_id`` (default: the
        active leaf): its through-message is on that branch. This summarizer's first on a tie."""
        on_branch = {m.id: m.depth for m in self.branch(leaf_id)}
        flow = self.scope.memory.summaries
        name = flow.summarizer.name
        with self._store.read() as tx:
            candidates = [
                record
                for record in tx.conversation_summaries(self._tenant, self.id)
                if record.through_message_id in on_branch
            ]
            candidates.sort(key=lambda r: (r.through_depth, r.summarizer == name), reverse=True)
            for record in candidates:
                if flow.is_valid(tx, self._tenant, record):
                    return record
        return None

    def _recall(
        self,
        tx: ReadTxn,
        record: ConversationRecord,
        query: str | None,
        profile: ModelProfile,
        counter: TokenCounter,
        options: AssemblyOptions,
        embedder: Embedder | None,
    ) -> FixedParts:
        """The long-term memory of this request (the block, and the late memories for a large
        set), or nothing: a temporary conversation, a user or tenant with memory off, or recall
        switched off read no memory at all."""
        who = self.scope.principal
        if record.temporary or options.memory_k == 0 or memory_gate(tx, who) is not None:
            return FixedParts()
        scopes = ["user"]
        project = record.metadata.get("project")
        if isinstance(project, str) and project:
            scopes.append(f"project:{project}")
        block, ranked = recall_candidates(
            tx, who, query or "", k=options.memory_k, scopes=scopes, embedder=embedder
        )
        cap = int(profile.input_budget * options.memory_share)
        text, ids = render_memory_block(block, counter, cap)
        shown = set(ids)
        extra = [m for m in ranked if m.id not in shown][: options.memory_relevant_k]
        late, late_ids = render_memory_block(extra, counter, cap // 2, RELEVANT_MEMORY_HEADER)
        return FixedParts(
            memories=text, memory_ids=ids, relevant_memories=late, relevant_memory_ids=late_ids
        )

    def pinned(self) -> list[PinnedInstruction]:
        """The instructions every request of this conversation carries: user-wide, then its own."""
        with self._store.read() as tx:
            tx.get_conversation(self._tenant, self.scope.user, self.id)
            return tx.pinned(self._tenant, self.scope.user, self.id)

    def record_assembly(self, context: AssembledContext, leaf_id: str | None = None) -> None:
        """Keep ``context``'s report as this conversation's last assembled request (token counts
        and ids only), for inspection. Assembly itself writes nothing; a service calls this."""
        with self._store.write() as tx:
            record = tx.get_conversation(self._tenant, self.scope.user, self.id)
            kept = AssemblyRecord(
                conversation_id=self.id,
                leaf_id=leaf_id or record.active_leaf_id,
                at=datetime.now(UTC),
                report=context.report.to_dict(),
            )
            tx.put_last_assembly(self._tenant, self.scope.user, kept)

    def last_assembly(self) -> AssemblyRecord | None:
        """The report kept by ``record_assembly``, or None."""
        with self._store.read() as tx:
            tx.get_conversation(self._tenant, self.scope.user, self.id)
            return tx.last_assembly(self._tenant, self.scope.user, self.id)

    def _chain(self, tx: ReadTxn, leaf: str, counter: TokenCounter) -> Iterator[ChainEntry]:
        for row in tx.branch(self._tenant, leaf, counter.name):
            tokens = row.tokens
            if tokens is None:  # a tokenizer not counted at write: count now
                m = row.message
                tokens = message_tokens(counter, m.role, m.content, m.tool_calls, m.tool_call_id)
            yield ChainEntry(row.message, tokens, row.estimate_before)


def _summary_use(plan: HistoryPlan, lookup: Lookup | None) -> SummaryUse | None:
    if lookup is None or lookup.use is None or lookup.source is None:
        return None
    record = lookup.use
    text = render_snapshot(record.snapshot, plan.counter, plan.summary_room)
    if not text:
        return None
    return SummaryUse(text, record.id, record.through_message_id, lookup.source)


class _Replay:
    """A branch iterator that can be walked again: each page is read from the store once, however
    many times assembly passes over the branch."""

    def __init__(self, source: Iterator[ChainEntry]) -> None:
        self._source = source
        self.seen: list[ChainEntry] = []

    def replay(self) -> Iterator[ChainEntry]:
        yield from list(self.seen)
        index = len(self.seen)
        while True:
            if index < len(self.seen):
                yield self.seen[index]
            else:
                entry = next(self._source, None)
                if entry is None:
                    return
                self.seen.append(entry)
                yield entry
            index += 1


def _aware(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return normalise_created_at(value)


def default_path() -> str:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return os.path.join(base, "convmem", "convmem.db")


def open(
    target: str | os.PathLike[str] | None = None,
    *,
    config: Config | None = None,
    embedder: Embedder | None = None,
) -> Memory:
    """Open a convmem database: a file path, ``sqlite:///path``, a URL of another registered
    backend (``convmem.store.register``), or nothing for the default file.

    With an ``embedder`` (e.g. ``convmem.SentenceTransformerEmbedder()``), search and recall rank
    by meaning as well as by words; without one they are lexical."""
    if target is None:
        target = os.environ.get("CONVMEM_DB") or default_path()
    return Memory(open_store(os.fspath(target)), config, embedder=embedder)

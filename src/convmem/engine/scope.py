"""The scope handle: one tenant's user, the principal every call through it acts for.

Long-term memory (remember, propose, search, the on/off switch), the user's data rights (audit,
export, delete all), user-wide pins, and the conversations it opens.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, Unpack

from convmem.domain.idempotency import Keyed, keep, kept_notices, notices_result, replayed
from convmem.domain.memories import (
    Memories,
    MemoryFields,
    audit,
    memory_gate,
    memory_policy,
    save_memory,
)
from convmem.domain.search import search_memories
from convmem.engine.conversation import Conversation
from convmem.engine.entities import Entities
from convmem.engine.handles import Database
from convmem.engine.parts import guarded_reranker, without_failed_embedder
from convmem.engine.pins import pin_instruction
from convmem.errors import NeverStoreViolation
from convmem.ids import new_id
from convmem.model.conversation import ConversationRecord
from convmem.model.memory import AuditEvent, MemoryHit, MemoryNotice, SourceKind
from convmem.model.messages import Message
from convmem.model.principal import Principal
from convmem.model.purpose import Allowed, narrow
from convmem.model.search import Ranked
from convmem.model.tree import check_count, check_identifier, check_metadata, check_text
from convmem.store.base import KeptWrite, PinnedInstruction, WriteTxn
from convmem.store.conversations import PinOrigin
from convmem.store.retry import conflicts_retried, write_retried


class Scope:
    """A tenant's user: the principal every call acts for. ``purposes`` is the ceiling on the
    memory purposes its calls may use (None: every purpose); a call may narrow it."""

    def __init__(
        self, memory: Database, tenant: str, user: str, actor: str | None = None,
        purposes: Allowed = None,
    ) -> None:  # fmt: skip
        self.memory = memory
        self.tenant = tenant
        self.user = user
        self.actor = actor or f"user:{user}"
        self.purposes = purposes

    @property
    def principal(self) -> Principal:
        return Principal(self.tenant, self.user, self.actor, self.purposes)

    # --- long-term memory -----------------------------------------------------------------------

    @property
    def memories(self) -> Memories:
        """The principal's memories: list, get, confirm, reject, update, delete, resolve."""
        return Memories(self)

    @property
    def entities(self) -> Entities:
        """The people, places and things this user's conversations mention, with what was said
        about each (derived from messages): list, get, search, delete, promote a fact, rebuild."""
        return Entities(self, self.remember)

    def remember(
        self, text: str, *, idempotency_key: str | None = None, **fields: Unpack[MemoryFields]
    ) -> MemoryNotice:
        """Save a statement the user asked to keep. Returns a notice: saved, or blocked with a
        reason code (never-store policy, memory off); with ``strict=True`` a block raises
        ``NeverStoreViolation``. A newer statement on the same subject supersedes the older.
        Optional fields: category, subject, scope ("user" or "project:<id>"), purpose (one of
        ``convmem.PURPOSES``), expires_at, source_message_id. ``idempotency_key``: the same call
        again with the same key returns the first call's notice and stores nothing; the same
        key for a different call is ``IdempotencyConflict``."""
        return self._save(text, "user_explicit", "confirmed", fields, idempotency_key)

    def propose(
        self, text: str, *, idempotency_key: str | None = None, **fields: Unpack[MemoryFields]
    ) -> MemoryNotice:
        """Record an inference as a proposal: never recalled until the user confirms it
        (``idempotency_key``: as ``remember``'s)."""
        return self._save(text, "inference", "proposed", fields, idempotency_key)

    def _save(
        self, text: str, source_kind: SourceKind, status: str, fields: MemoryFields,
        idempotency_key: str | None = None,
    ) -> MemoryNotice:  # fmt: skip
        kind = "remember" if status == "confirmed" else "propose"
        key = Keyed.of(idempotency_key, kind, {"text": text, **fields})
        period = timedelta(hours=self.memory.config.idempotency_hours)
        now = datetime.now(UTC)
        tenant, user = self.tenant, self.user

        def save(tx: WriteTxn) -> tuple[MemoryNotice, bool]:
            fingerprint = None if key is None else key.fingerprint(tenant, user)
            if key is not None and fingerprint is not None:
                kept = replayed(tx, tenant, user, key.key, kind, fingerprint, now=now,
                                period=period)  # fmt: skip
                if kept is not None:
                    return kept_notices(tx, self.principal, kept)[0], True
            notice = save_memory(
                tx, self.principal, text, source_kind=source_kind, status=status, **fields
            )
            if key is not None and fingerprint is not None and notice.memory is not None:
                kept = KeptWrite(key.key, kind, fingerprint, now, memory_id=notice.memory.id,
                                 result=notices_result([notice]))  # fmt: skip
                keep(tx, tenant, user, kept, period=period)
            return notice, False

        try:
            notice, again = write_retried(self.memory.store, save)
        except NeverStoreViolation as refused:  # strict: a block raises; it is counted all the same
            self.memory.observer.memory_notices([MemoryNotice("blocked", "", refused.reason)])
            raise
        if not again:  # a replay stored nothing: nothing to count or embed
            self._embed_notices([notice])
        return notice

    def _embed_notices(self, notices: Iterable[MemoryNotice]) -> None:
        # every notice of a save, proposal, block or forget passes here, so it is counted here
        notices = list(notices)
        self.memory.observer.memory_notices(notices)
        records = [n.memory for n in notices if n.memory is not None]
        self.memory.embed_memories(self.tenant, self.user, records)

    def _observe(self, action: str, count: int = 1) -> None:
        self.memory.observer.memory_changed(action, count)

    def search_memories(
        self, query: str, k: int = 5, *, scope: str | None = None,
        purposes: Iterable[str] | None = None,
    ) -> Ranked[MemoryHit]:  # fmt: skip
        """Current memories ranked for ``query`` (lexical and, with an embedder, vector rank
        fused), each with its score and the retrievers that found it; none when memory is off.
        ``purposes``: only memories of these purposes (default: every purpose the scope may
        use; more than that is ``PurposeNotAllowed``). The list's ``unembedded`` counts the
        user's memories that had no vector yet (ranked by words only); ``degraded`` names an
        embedder that failed or ran past its time limit."""
        scopes = ("user",) if scope is None else ("user", scope)
        who = self.principal_for(purposes)
        memory = self.memory
        limits = memory.config.time_limits
        memory.settle_vectors(limits.embedder)
        serving = memory.embedder_for(self.tenant)
        with memory.store.read() as tx:
            closed, policy = memory_policy(tx, who)
            if closed is not None:
                return Ranked()
            reranker = guarded_reranker(memory.reranker, limits)
            hits, degraded = without_failed_embedder(
                serving, limits,
                lambda embedder: search_memories(
                    tx, who, query, k, scopes=scopes, now=datetime.now(UTC), embedder=embedder,
                    reranker=reranker, rerank_depth=memory.config.search.rerank_depth,
                    policy=policy,
                ),
            )  # fmt: skip
            unembedded = 0
            if serving is not None:
                unembedded = tx.unembedded_memories(self.tenant, self.user, serving.name)
        return Ranked(hits, unembedded=unembedded, degraded=degraded)

    def principal_for(self, purposes: Iterable[str] | None) -> Principal:
        """The principal of one call that declares ``purposes`` (None: the scope's own)."""
        return replace(self.principal, purposes=narrow(self.purposes, purposes))

    def memory_enabled(self) -> bool:
        with self.memory.store.read() as tx:
            return memory_gate(tx, self.principal) is None

    @conflicts_retried
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

    @conflicts_retried
    def delete_all(self) -> dict[str, int]:
        """Delete every conversation, message, memory, summary and setting of this user. The
        audit keeps that it happened, by whom and when."""
        with self.memory.store.write() as tx:
            counts = tx.delete_user(self.tenant, self.user)
            audit_event(tx, self.principal, "user.deleted_all", rows=sum(counts.values()))
        return counts

    # --- conversations --------------------------------------------------------------------------

    @conflicts_retried
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

    def conversation_unread(self, conversation_id: str) -> Conversation:
        """A handle on the conversation without reading it first: for a caller whose next call
        is one of the handle's own, each of which finds the conversation as this principal's
        or raises ``NotFound`` — so the check is not read twice (the service's hot routes)."""
        check_identifier(conversation_id, "conversation id")
        return Conversation(self, conversation_id)

    def conversations(self, *, limit: int = 50, offset: int = 0) -> list[ConversationRecord]:
        check_count(limit, "limit")
        check_count(offset, "offset", minimum=0)
        with self.memory.store.read() as tx:
            return tx.list_conversations(self.tenant, self.user, limit=limit, offset=offset)

    def pin(self, text: str, *, origin: PinOrigin = "application") -> PinnedInstruction:
        """Pin an instruction for every conversation of this user. ``origin="user"`` when the
        end user wrote it (their standing request, sent as quoted data, never as system text)."""
        return pin_instruction(self.memory, self.principal, None, text, origin)

    def pinned(self) -> list[PinnedInstruction]:
        with self.memory.store.read() as tx:
            return tx.pinned(self.tenant, self.user, None)

    @conflicts_retried
    def unpin(self, pin_id: str) -> None:
        check_identifier(pin_id, "pin id")
        with self.memory.store.write() as tx:
            tx.delete_pinned(self.tenant, self.user, pin_id)

    def message(self, message_id: str) -> Message:
        """Any message of this principal's conversations by id (e.g. a memory's source)."""
        check_identifier(message_id, "message id")
        with self.memory.store.read() as tx:
            return tx.get_message(self.tenant, self.user, message_id)


def audit_event(tx: WriteTxn, who: Principal, action: str, **details: Any) -> None:
    audit(tx, who, action, "user", who.user, **details)

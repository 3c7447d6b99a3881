"""Long-term user memory: explicit, consented, scoped, superseded with an audit (DESIGN 8-12).

``save_memory`` and ``forget_matching`` run inside a write transaction so a memory born from a
message is written atomically with it. Everything passes the never-store policy first; a blocked
write returns a blocked notice (or raises ``NeverStoreViolation`` with ``strict``) and writes
nothing.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Protocol, TypedDict

from convmem.domain.audit import audit as audit  # re-exported: its home before audit.py
from convmem.domain.memory_changes import (
    USER_VOICE,
    UndoneChange,
    supersedes,
    undo_change,
    would_replace,
)
from convmem.errors import InvalidInput, NeverStoreViolation
from convmem.ids import new_id
from convmem.memory.confidence import APPLICATION_DEFAULT, check_confidence
from convmem.memory.duplicates import near_duplicates
from convmem.memory.gate import admit, decide
from convmem.memory.policy import PolicyDecision
from convmem.memory.slots import classify, replaces, slot_value, subject_slot
from convmem.model.admitted import Admitted
from convmem.model.memory import (
    BASES,
    CATEGORIES,
    STATUSES,
    Category,
    MemoryHit,
    MemoryNotice,
    MemoryRecord,
    SourceKind,
)
from convmem.model.messages import Message
from convmem.model.policy import NOT_SENSITIVE, TenantPolicy, sensitive_categories
from convmem.model.principal import Principal as Principal  # re-exported: its home before model/
from convmem.model.purpose import DEFAULT_PURPOSE, check_purpose
from convmem.model.tree import aware_utc, check_identifier, check_text
from convmem.store.base import MemoryUpdate, ReadTxn, Store, WriteTxn
from convmem.store.retry import conflicts_retried, write_retried

MAX_MEMORY_CHARS = 1000


class MemoryFields(TypedDict, total=False):
    """Optional fields of a memory write."""

    category: str | None
    subject: str | None
    scope: str
    purpose: str  # one of convmem.PURPOSES (default personalization)
    expires_at: datetime | None
    source_message_id: str | None
    strict: bool
    confidence: float | None  # a proposal's, from 0 to 1 (default: convmem's own estimate)


def _now() -> datetime:
    return datetime.now(UTC)


def memory_gate(tx: ReadTxn, who: Principal) -> str | None:
    """Why memory is closed for this principal, or None when it is open."""
    return memory_policy(tx, who)[0]


def memory_policy(tx: ReadTxn, who: Principal) -> tuple[str | None, TenantPolicy]:
    """``memory_gate``'s answer and the tenant's policy it read (recall needs the policy too:
    which special categories it may read; one read for both)."""
    policy = tx.tenant_policy(who.tenant)
    if policy.memory_disabled:
        return "memory_disabled_for_tenant", policy
    if not tx.memory_enabled(who.tenant, who.user):
        return "memory_off", policy
    return None, policy


def _normalise(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".!")


def check_scope_name(scope: str) -> str:
    if scope == "user":
        return scope
    if isinstance(scope, str) and scope.startswith("project:") and len(scope) > len("project:"):
        return check_identifier(scope, "scope")
    raise InvalidInput("scope must be 'user' or 'project:<id>'")


def _admitted(
    tx: ReadTxn, who: Principal, record: MemoryRecord, known: Sequence[Message],
    cites: Sequence[str], read: Sequence[Message],
) -> Admitted[MemoryRecord] | PolicyDecision:  # fmt: skip
    """The gate's verdict on a memory (``convmem.memory.gate``): its provenance, the text and
    every other stored value (subject, scope, purpose), and the turns it cites — its source
    message, with every caller string of its parts, and ``cites`` (its evidence): a memory drawn
    from a turn the policy refuses is refused like that turn."""
    return admit(record, reader=tx, tenant=who.tenant, user=who.user, cites=cites, known=known,
                 read=read)  # fmt: skip


def _check_label(value: object, name: str) -> None:
    """A subject: short storable text (it is indexed and compared on every save)."""
    if value is None:
        return
    if not isinstance(value, str) or len(value) > MAX_MEMORY_CHARS:
        raise InvalidInput(f"a memory's {name} is text of at most {MAX_MEMORY_CHARS} characters")
    check_text(value, max_bytes=4 * MAX_MEMORY_CHARS, what=f"a memory's {name}")


def save_memory(
    tx: WriteTxn,
    who: Principal,
    text: str,
    *,
    source_kind: SourceKind,
    status: str,
    category: str | None = None,
    subject: str | None = None,
    scope: str = "user",
    expires_at: datetime | None = None,
    source_message_id: str | None = None,
    purpose: str = DEFAULT_PURPOSE,
    strict: bool = False,
    created_at: datetime | None = None,
    updated_at: datetime | None = None,
    cites: Sequence[str] = (),
    read: Sequence[Message] = (),
    edit: bool = False,
    confidence: float | None = None,
    basis: str | None = None,
) -> MemoryNotice:
    """Gate, police, then write one memory with supersession or conflict flags and an audit.
    ``created_at``/``updated_at`` keep an imported record's own times (default: now; an
    update time before the creation time is taken as the creation time). ``cites``: the other
    turns it is drawn from (its evidence); ``read``: the turns a model was shown to propose it
    (``convmem.memory.gate``). A confirmed statement of the user's that differs from a current
    one on its slot without being clearly newer (``slots.replaces``) waits as a proposal naming
    both (reason ``conflict``), unless it is an ``edit`` of that memory. A proposal carries its
    ``confidence`` and ``basis`` (why it was proposed, one of ``BASES``); a memory the user said
    carries neither (nor does a conflict waiting for the user, which no cap holds back). A
    proposal beyond the tenant's ``max_pending_proposals`` replaces the weakest pending one or
    is not made (``_make_room``)."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("a memory needs text")
    given = check_text(text, max_bytes=4 * MAX_MEMORY_CHARS, what="memory")
    text = " ".join(given.split())
    _check_label(subject, "subject")
    if len(text) > MAX_MEMORY_CHARS:
        raise InvalidInput(f"a memory is a short statement: at most {MAX_MEMORY_CHARS} characters")
    if category is not None and category not in CATEGORIES:
        raise InvalidInput(f"category must be one of {', '.join(CATEGORIES)}")
    check_scope_name(scope)
    check_purpose(purpose, scope)
    if expires_at is not None:
        expires_at = aware_utc(expires_at, "expires_at")
    if status == "proposed":
        confidence = APPLICATION_DEFAULT if confidence is None else check_confidence(confidence)
        if basis not in BASES:
            basis = "application"
    else:
        confidence = basis = None
    if created_at is not None:
        created_at = aware_utc(created_at, "created_at")
    if updated_at is not None:
        updated_at = aware_utc(updated_at, "updated_at")

    source: tuple[Message, ...] = ()
    if source_message_id is not None:
        check_identifier(source_message_id, "source message id")
        source = (tx.get_message(who.tenant, who.user, source_message_id),)  # NotFound: not theirs
    guessed_category, guessed_subject = classify(text)
    final_category: Category = category or guessed_category  # type: ignore[assignment]
    subject_key = (subject or guessed_subject).strip().lower() or _normalise(text)
    now = _now()
    record = MemoryRecord(
        id=new_id("mem"), tenant_id=who.tenant, user_id=who.user, scope=scope,
        category=final_category, subject_key=subject_key, text=text, source_kind=source_kind,
        source_message_id=source_message_id, status=status,  # type: ignore[arg-type]
        supersedes_id=None, conflicts_with_id=None, sensitivity=NOT_SENSITIVE, purpose=purpose,
        created_at=created_at or now, expires_at=expires_at,
        updated_at=max(updated_at or created_at or now, created_at or now),
        confidence=confidence, basis=basis,
    )  # fmt: skip
    verdict = _admitted(tx, who, record, source, cites, read)
    decision = verdict if isinstance(verdict, PolicyDecision) else None
    # the special categories the gate let through (its mark on the record) hold for the
    # caller's own spellings below too; nothing else does
    waive: frozenset[str] = frozenset()
    if isinstance(verdict, Admitted):
        record = verdict.value
        waive = frozenset(sensitive_categories(record.sensitivity))
    if decision is None and given != text:
        # the text as given as well: the stored one has its lines joined, which undoes the
        # structure a disclosure may be read through (a markdown table, a quoted line)
        decision = decide({"text": given}, waive=waive)
        decision = None if decision.allowed else decision
    if decision is None and subject is not None:
        # the caller's own spelling as well: the stored key is its lower case, which a rule
        # that reads capitals ("MS") would judge differently
        decision = decide({"subject": subject}, waive=waive)
    reason = None if decision is None or decision.allowed else str(decision.reason)
    reason = memory_gate(tx, who) or reason
    if reason is not None:
        if strict:
            raise NeverStoreViolation(reason, decision.detail if decision is not None and
                                      not decision.allowed else "")  # fmt: skip
        return MemoryNotice("blocked", text, reason)

    same_subject = tx.list_memories(
        who.tenant, who.user, statuses=("confirmed", "proposed"), scopes=(scope,),
        subject_key=subject_key, unexpired_at=now,
    )  # fmt: skip
    for existing in same_subject:
        if _normalise(existing.text) == _normalise(text) and (
            existing.status == "confirmed" or status == "proposed"
        ):
            return MemoryNotice("saved" if existing.status == "confirmed" else "proposed",
                                existing.text, None, existing)  # fmt: skip

    if status == "proposed" and not _make_room(tx, who, record):
        if strict:
            raise NeverStoreViolation(PROPOSAL_CAP, "the user's pending proposals are at the "
                                      "tenant's cap and each is at least as confident")  # fmt: skip
        return MemoryNotice("blocked", text, PROPOSAL_CAP)
    superseded: list[MemoryRecord] = []
    disputed: list[MemoryRecord] = []
    if status == "confirmed":
        rivals = [m for m in same_subject if m.current] if _may_supersede(text, subject) else []
        if source_kind in USER_VOICE and not edit:
            disputed = [m for m in rivals if m.source_kind in USER_VOICE
                        and not replaces(text, m.text, subject_key)]  # fmt: skip
        if disputed:  # asked, not replaced: the older stays current until the user confirms
            status, rivals = "proposed", []
            record = replace(record, status="proposed", conflicts_with_id=disputed[0].id)
    elif status == "proposed" and _may_supersede(text, subject):
        disputed = [m for m in same_subject if m.current and _differs(text, m, subject_key)]
        if disputed:
            record = replace(record, conflicts_with_id=disputed[0].id)
    if status == "confirmed":
        record, superseded = _resolve_against(tx, who, record, rivals)
        if source_kind in USER_VOICE:
            # The user has now said it: pending guesses on the subject are settled. They go for
            # good, so deleting this record later leaves no copy of a guess behind.
            settled = [m.id for m in same_subject if m.status == "proposed"]
            tx.delete_memories(who.tenant, who.user, settled)
            for pending_id in settled:
                audit(tx, who, "memory.proposal_settled", "memory", pending_id, by=record.id)
    admitted = _admitted(tx, who, record, source, cites, read)
    if not isinstance(admitted, Admitted):  # the same value but its links: the same verdict
        raise NeverStoreViolation(str(admitted.reason), admitted.detail)
    tx.insert_memory(who.tenant, admitted)
    audit(tx, who, f"memory.{'saved' if status == 'confirmed' else 'proposed'}", "memory",
          record.id, category=record.category, source_kind=source_kind, scope=scope)  # fmt: skip
    return MemoryNotice("saved" if status == "confirmed" else "proposed", text,
                        "conflict" if disputed else None, record, superseded=tuple(superseded),
                        records=tuple(disputed))  # fmt: skip


def _differs(text: str, older: MemoryRecord, subject: str) -> bool:
    """Whether a statement gives a slot another value than a kept memory does."""
    new, old = slot_value(text, (subject,)), slot_value(older.text, (subject,))
    return new is not None and old is not None and not new.agrees_with(old)


# the reason a proposal was not made: the user's queue is full of ones at least as confident
PROPOSAL_CAP = "proposal_cap"


def _make_room(tx: WriteTxn, who: Principal, record: MemoryRecord) -> bool:
    """Whether a new proposal may wait beside the user's others under the tenant's
    ``max_pending_proposals``: at the cap, the pending proposal of lowest confidence (the
    least recently changed of those) goes when the new one is at least as confident (audited
    ``memory.proposal_dropped``); otherwise the new one is not made (False)."""
    cap = tx.tenant_policy(who.tenant).max_pending_proposals
    if cap is None:
        return True
    pending = tx.list_memories(who.tenant, who.user, statuses=("proposed",))
    excess = len(pending) - cap + 1
    if excess <= 0:
        return True
    weakest = sorted(pending, key=lambda m: (m.confidence or 0.0, m.updated_at, m.id))[:excess]
    if (record.confidence or 0.0) < (weakest[-1].confidence or 0.0):
        return False
    delete_with_history(tx, who, [m.id for m in weakest], action="memory.proposal_dropped",
                        reason="cap", by=record.id)  # fmt: skip
    return True


def _may_supersede(text: str, subject: str | None) -> bool:
    """Whether a statement may replace older ones on its subject: it states a value for a named
    slot ("I prefer window seats"), or the caller named the subject; a question never does."""
    if text.rstrip().endswith("?"):
        return False
    return subject is not None or subject_slot(text) is not None


def _resolve_against(
    tx: WriteTxn, who: Principal, record: MemoryRecord, current: Sequence[MemoryRecord]
) -> tuple[MemoryRecord, list[MemoryRecord]]:
    """Supersede older records on the subject, or flag a conflict between different sources.
    Returns the record and the ones it superseded."""
    superseded: list[MemoryRecord] = []
    for older in current:
        if older.id == record.id:
            continue
        if supersedes(record.source_kind, older):
            tx.set_memory_fields(
                who.tenant, older.id, MemoryUpdate(status="superseded", updated_at=_now())
            )
            audit(tx, who, "memory.superseded", "memory", older.id, by=record.id)
            record = replace(record, supersedes_id=older.id)
            superseded.append(older)
        else:
            tx.set_memory_fields(
                who.tenant, older.id, MemoryUpdate(conflicts_with_id=record.id, updated_at=_now())
            )
            audit(tx, who, "memory.conflict", "memory", record.id, with_id=older.id)
            record = replace(record, conflicts_with_id=older.id)
    return record, superseded


def _merge_near_duplicates(tx: WriteTxn, who: Principal, record: MemoryRecord) -> MemoryRecord:
    """On a confirmation: the other current memories of the scope that say the same thing
    (``near_duplicates``) are merged into ``record``. Proposals go, their evidence and source
    turns moving to it (audited ``memory.merged``); a confirmed one is superseded by it when
    ``record`` supersedes nothing yet (so deleting it deletes the copy too), else it stays."""
    others = [
        m for m in tx.list_memories(who.tenant, who.user, statuses=("confirmed", "proposed"),
                                    scopes=(record.scope,), unexpired_at=_now())
        if m.id != record.id and near_duplicates(m.text, record.text)
    ]  # fmt: skip
    proposals = [m for m in others if m.status == "proposed"]
    if proposals:
        cited = tx.memory_evidence(who.tenant, who.user, [m.id for m in proposals])
        moved = [i for m in proposals for i in (m.source_message_id, *cited.get(m.id, ())) if i]
        tx.add_memory_evidence(who.tenant, who.user, record.id, moved)
        delete_with_history(tx, who, [m.id for m in proposals], action="memory.merged",
                            into=record.id)  # fmt: skip
    for older in (m for m in others if m.status == "confirmed"):
        if record.supersedes_id is not None:
            break
        tx.set_memory_fields(
            who.tenant, older.id, MemoryUpdate(status="superseded", updated_at=_now())
        )
        audit(tx, who, "memory.merged", "memory", older.id, into=record.id)
        record = replace(record, supersedes_id=older.id)
    return record


def delete_with_history(
    tx: WriteTxn,
    who: Principal,
    memory_ids: Sequence[str],
    *,
    action: str = "memory.deleted",
    **why: Any,
) -> list[str]:
    """Hard-delete records and the superseded versions behind them (derived from the same
    statement). The audit keeps that each was deleted, by whom and when (and ``why``) — not
    what it said."""
    every = {m.id: m for m in tx.list_memories(who.tenant, who.user)}
    doomed: list[str] = []
    for memory_id in memory_ids:
        current: str | None = memory_id
        while current is not None and current in every and current not in doomed:
            doomed.append(current)
            current = every[current].supersedes_id
    tx.delete_memories(who.tenant, who.user, doomed)
    for memory_id in doomed:
        audit(tx, who, action, "memory", memory_id, **why)
    return doomed


def reject_proposal(tx: WriteTxn, tenant: str, memory_id: str) -> None:
    """A declined proposal keeps its id, status and audit trail but not what it said: the user
    refused to have it kept, so its text, subject and vectors go (the status says why)."""
    tx.set_memory_fields(
        tenant, memory_id, MemoryUpdate(status="rejected", erase_content=True, updated_at=_now())
    )


# the changes to existing memories an observer is told of (metrics label values)
MEMORY_ACTIONS = ("confirmed", "rejected", "corrected", "deleted", "restored", "resolved")


class _HasStore(Protocol):
    @property
    def store(self) -> Store: ...


class MemoryOwner(Protocol):
    """What ``Memories`` uses of the scope it belongs to (``convmem.engine.Scope``), named here so
    the memory code does not import the engine that calls it."""

    @property
    def memory(self) -> _HasStore: ...

    @property
    def principal(self) -> Principal: ...

    def _embed_notices(self, notices: Iterable[MemoryNotice]) -> None: ...

    def _observe(self, action: str, count: int = 1) -> None:
        """Report a change to existing memories (an action of ``MEMORY_ACTIONS``) for metrics."""

    def search_memories(
        self, query: str, k: int = 5, *, scope: str | None = None,
        purposes: Iterable[str] | None = None,
    ) -> builtins.list[MemoryHit]: ...  # fmt: skip


class Memories:
    """The principal's long-term memories: list, get, confirm, reject, update, delete."""

    def __init__(self, scope: MemoryOwner) -> None:
        self._scope = scope

    @property
    def _who(self) -> Principal:
        return self._scope.principal

    def list(
        self,
        *,
        status: str | Sequence[str] | None = ("confirmed", "proposed"),
        category: str | None = None,
        scope: str | None = None,
        include_expired: bool = False,
    ) -> builtins.list[MemoryRecord]:
        """The principal's memories, oldest first. ``status=None`` lists every status."""
        statuses = (status,) if isinstance(status, str) else status
        if statuses is not None and not set(statuses) <= set(STATUSES):
            raise InvalidInput(f"status must be among {', '.join(STATUSES)}")
        with self._scope.memory.store.read() as tx:
            return tx.list_memories(
                self._who.tenant, self._who.user, statuses=statuses, category=category,
                scopes=(check_scope_name(scope),) if scope else None,
                unexpired_at=None if include_expired else _now(),
            )  # fmt: skip

    def get(self, memory_id: str) -> MemoryRecord:
        check_identifier(memory_id, "memory id")  # NUL/surrogates: same error on every backend
        with self._scope.memory.store.read() as tx:
            return tx.get_memory(self._who.tenant, self._who.user, memory_id)

    def evidence(self, memory_id: str) -> builtins.list[str]:
        """The ids of the turns a memory was drawn from (a consolidated proposal's evidence, and
        what merged into it), oldest first; its ``source_message_id`` is among them."""
        record = self.get(memory_id)
        with self._scope.memory.store.read() as tx:
            cited = tx.memory_evidence(self._who.tenant, self._who.user, [memory_id])
        found = [record.source_message_id] if record.source_message_id else []
        return list(dict.fromkeys([*found, *cited.get(memory_id, [])]))

    @conflicts_retried
    def confirm(self, memory_id: str) -> MemoryRecord:
        """The user accepts a proposal: it becomes a confirmed inference and may be recalled;
        it supersedes older records on its subject, since the user has now said so."""
        who = self._who
        check_identifier(memory_id, "memory id")  # NUL/surrogates: same error on every backend
        with self._scope.memory.store.write() as tx:
            proposal = tx.get_memory(who.tenant, who.user, memory_id)
            if proposal.status != "proposed":
                raise InvalidInput(f"memory {memory_id!r} is {proposal.status}, not proposed")
            closed = memory_gate(tx, who)
            if closed is not None:
                raise NeverStoreViolation(closed)
            # Checked again: the proposal may predate a rule that now refuses it, and confirming
            # is the moment it becomes a memory that is recalled.
            cited = tx.memory_evidence(who.tenant, who.user, [memory_id]).get(memory_id, [])
            verdict = _admitted(tx, who, proposal, (), cited, ())
            if not isinstance(verdict, Admitted):
                raise NeverStoreViolation(str(verdict.reason), verdict.detail)
            # the user's own statement stays theirs; a guess becomes a confirmed inference
            kind: SourceKind = (
                "user_explicit"
                if proposal.source_kind == "user_explicit"
                else "confirmed_inference"
            )
            record = replace(proposal, status="confirmed", source_kind=kind,
                             conflicts_with_id=None)  # fmt: skip
            current = tx.list_memories(
                who.tenant, who.user, statuses=("confirmed",), scopes=(proposal.scope,),
                subject_key=proposal.subject_key, unexpired_at=_now(),
            )  # fmt: skip
            # a proposal that disagreed with a kept memory replaces it once confirmed
            current += [m for m in tx.list_memories(who.tenant, who.user, statuses=("confirmed",))
                        if m.id == proposal.conflicts_with_id and m not in current]  # fmt: skip
            record, _ = _resolve_against(tx, who, record, current)
            record = _merge_near_duplicates(tx, who, record)
            tx.set_memory_fields(
                who.tenant,
                memory_id,
                MemoryUpdate(
                    status="confirmed",
                    source_kind=kind,
                    supersedes_id=record.supersedes_id,
                    conflicts_with_id=record.conflicts_with_id,
                    updated_at=_now(),
                ),
            )
            audit(tx, who, "memory.confirmed", "memory", memory_id, was=proposal.source_kind,
                  disagreed_with=proposal.conflicts_with_id)  # fmt: skip
            confirmed = tx.get_memory(who.tenant, who.user, memory_id)
        self._scope._observe("confirmed")
        return confirmed

    @conflicts_retried
    def reject(self, memory_id: str) -> None:
        """The user declines a proposal: it is never recalled."""
        check_identifier(memory_id, "memory id")  # NUL/surrogates: same error on every backend
        with self._scope.memory.store.write() as tx:
            proposal = tx.get_memory(self._who.tenant, self._who.user, memory_id)
            if proposal.status != "proposed":
                raise InvalidInput(f"memory {memory_id!r} is {proposal.status}, not proposed")
            reject_proposal(tx, self._who.tenant, memory_id)
            audit(tx, self._who, "memory.rejected", "memory", memory_id)
        self._scope._observe("rejected")

    def update(self, memory_id: str, text: str) -> MemoryNotice:
        """New text for a memory: a new record supersedes the old one, which stays in the
        history as superseded (the old text never enters the new record)."""
        check_identifier(memory_id, "memory id")  # NUL/surrogates: same error on every backend

        def unit(tx: WriteTxn) -> MemoryNotice:
            old = tx.get_memory(self._who.tenant, self._who.user, memory_id)
            if old.status not in ("confirmed", "proposed"):
                raise InvalidInput(
                    f"memory {memory_id!r} is {old.status}; only current ones change"
                )
            notice = save_memory(
                tx, self._who, text, source_kind="user_explicit", status="confirmed",
                category=old.category, subject=old.subject_key, scope=old.scope,
                expires_at=old.expires_at, purpose=old.purpose, edit=True,
            )  # fmt: skip
            if notice.memory is not None and notice.memory.id != old.id:
                if old.status == "proposed":
                    reject_proposal(tx, self._who.tenant, old.id)
                audit(tx, self._who, "memory.updated", "memory", old.id, to=notice.memory.id)
            return notice

        notice = write_retried(self._scope.memory.store, unit)
        self._scope._embed_notices([notice])
        if notice.memory is not None:
            self._scope._observe("corrected")
        return notice

    @conflicts_retried
    def delete(self, memory_id: str) -> builtins.list[str]:
        """Hard-delete a memory and its superseded versions. Returns the deleted ids."""
        check_identifier(memory_id, "memory id")  # NUL/surrogates: same error on every backend
        with self._scope.memory.store.write() as tx:
            tx.get_memory(self._who.tenant, self._who.user, memory_id)
            deleted = delete_with_history(tx, self._who, [memory_id])
        self._scope._observe("deleted", len(deleted))
        return deleted

    @conflicts_retried
    def resolve(self, keep_id: str) -> MemoryRecord:
        """Settle a flagged conflict: keep this record, supersede the one it conflicts with."""
        check_identifier(keep_id, "memory id")  # NUL/surrogates: same error on every backend
        with self._scope.memory.store.write() as tx:
            keep = tx.get_memory(self._who.tenant, self._who.user, keep_id)
            other_id = keep.conflicts_with_id
            others = [m for m in tx.list_memories(self._who.tenant, self._who.user)
                      if m.id == other_id or m.conflicts_with_id == keep_id]  # fmt: skip
            if not others:
                raise InvalidInput(f"memory {keep_id!r} is not in conflict")
            for other in others:
                tx.set_memory_fields(
                    self._who.tenant,
                    other.id,
                    MemoryUpdate(status="superseded", conflicts_with_id=None, updated_at=_now()),
                )
            tx.set_memory_fields(
                self._who.tenant, keep_id, MemoryUpdate(conflicts_with_id=None, updated_at=_now())
            )
            audit(tx, self._who, "memory.resolved", "memory", keep_id,
                  superseded=[o.id for o in others])  # fmt: skip
            kept = tx.get_memory(self._who.tenant, self._who.user, keep_id)
        self._scope._observe("resolved")
        return kept

    @conflicts_retried
    def restore(self, memory_id: str) -> MemoryRecord:
        """Undo the change that superseded this memory (``undo`` of its current replacement):
        it is current again, with everything else that change replaced, and the memory that
        replaced them goes (a confirmed suggestion becomes a suggestion again). Only a memory
        whose replacement is still current can be restored."""
        who = self._who
        check_identifier(memory_id, "memory id")  # NUL/surrogates: same error on every backend
        with self._scope.memory.store.write() as tx:
            old = tx.get_memory(who.tenant, who.user, memory_id)
            if old.status != "superseded":
                raise InvalidInput(f"memory {memory_id!r} is {old.status}, not superseded")
            current = {m.id for m in tx.list_memories(who.tenant, who.user,
                                                      statuses=("confirmed",))}  # fmt: skip
            # who replaced it: the record that superseded it, it merged into, or its edit
            link = {"memory.superseded": "by", "memory.merged": "into", "memory.updated": "to"}
            replacements = [str(e.details.get(link[e.action]))
                            for e in tx.list_audit(who.tenant, who.user)
                            if e.object_id == memory_id and e.action in link]  # fmt: skip
            newer = [i for i in replacements if i in current]
            if not newer:
                raise InvalidInput(f"memory {memory_id!r} has no current replacement to undo")
            undo_change(tx, who, newer[-1])
            restored = tx.get_memory(who.tenant, who.user, memory_id)
        self._scope._observe("restored")
        return restored

    def would_replace(self, memory_id: str, text: str | None = None) -> builtins.list[MemoryRecord]:
        """The current memories other than ``memory_id`` that confirming it (a suggestion;
        ``text`` None) or editing it to ``text`` would replace — ask before the change, and
        show both texts."""
        with self._scope.memory.store.read() as tx:
            return would_replace(tx, self._who, memory_id, text)

    @conflicts_retried
    def undo(self, memory_id: str) -> UndoneChange:
        """Undo the change that made ``memory_id`` current — a save, an edit (its new record)
        or a confirmation: every memory it replaced is current again, a confirmed suggestion is
        a suggestion again, a saved or edited text is deleted."""
        with self._scope.memory.store.write() as tx:
            undone = undo_change(tx, self._who, memory_id)
        self._scope._observe("restored")
        return undone

    def search(
        self, query: str, k: int = 5, *, purposes: Iterable[str] | None = None
    ) -> builtins.list[MemoryHit]:
        return self._scope.search_memories(query, k=k, purposes=purposes)

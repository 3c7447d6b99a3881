"""Conversations, their message trees and pinned instructions: the canonical record.

Rules every backend honours (the contract suite checks them):

- **Scope.** Every method takes the tenant; lookups by id take the user too and raise
  ``NotFound`` for another principal's ids exactly as for ids that do not exist.
- **Appends serialise per conversation.** ``write()`` transactions that append to one
  conversation run one after another: an append reads the active leaf (and the parent's stored
  costs, the next pin position), inserts, then moves the leaf, and no other append to that
  conversation may interleave. A backend may lock just the conversation's row (``SELECT … FOR
  UPDATE``) — appends to other conversations need not wait; SQLite takes its single writer lock.
- **Write order.** Siblings, children and "the newest child" are in the order they were written,
  which is not the order of their ids or timestamps (a caller may set ``created_at``).
- **Deletes remove what was derived.** ``delete_messages`` and ``delete_conversation`` remove,
  in the same transaction, every row derived from the deleted messages — their token counts,
  search-index rows (full-text entries, vectors), summaries whose through-message is among them,
  and pending, running or failed jobs about them; ``delete_conversation`` also removes the
  conversation's vocabulary, search bookkeeping, pins and last assembly. A backend may do this with
  triggers or with statements, but it must do it: the engine relies on nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

from convmem.errors import NotFound
from convmem.model.admitted import Admitted
from convmem.model.conversation import ConversationRecord
from convmem.model.keys import AssemblyRecord
from convmem.model.messages import Message


@dataclass(frozen=True)
class BranchRow:
    """A message on a branch with its stored costs (``tokens`` is None if not counted)."""

    message: Message
    tokens: int | None
    estimate_tokens: int
    estimate_before: int
    # what media (images, files, audio a request sends as such) adds to ``tokens``
    media_tokens: int = 0


# Who pinned it: the application (an app or admin key, or the library's caller) pins
# instructions; a user key pins the end user's own standing request, which is sent as quoted data.
PinOrigin = Literal["application", "user"]


def pin_origin(stored: str) -> PinOrigin:
    """A stored origin as the type; anything unknown reads as the user's (quoted, the safe way)."""
    return "application" if stored == "application" else "user"


@dataclass(frozen=True)
class PinnedInstruction:
    id: str
    text: str
    conversation_id: str | None
    position: int
    created_at: datetime
    origin: PinOrigin = "application"


@dataclass(frozen=True)
class MessageRow:
    """Everything the store needs to insert one message: the message and its stored extras."""

    message: Message
    revision_of: str | None
    revision_kind: str | None
    tokens: Mapping[str, int]
    estimate_tokens: int
    estimate_before: int
    # per tokenizer, the media's share of ``tokens``; and the inline bytes the caller asked
    # to keep, by sha256 (stored with the message, deleted with it)
    media_tokens: Mapping[str, int] = field(default_factory=dict)
    blobs: Mapping[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class MessageCost:
    """A message's costs as counted once at write: per tokenizer (framing included), the
    conservative estimate, and per tokenizer the media's share."""

    tokens: Mapping[str, int]
    estimate: int
    media: Mapping[str, int]

    def row(
        self,
        message: Message,
        revision_of: str | None,
        revision_kind: str | None,
        estimate_before: int,
        blobs: Mapping[str, bytes],
    ) -> MessageRow:
        return MessageRow(
            message, revision_of, revision_kind, self.tokens, self.estimate, estimate_before,
            self.media, blobs,
        )  # fmt: skip


@dataclass(frozen=True)
class ConversationRef:
    """A conversation named with its owner (what retention needs to delete and audit it)."""

    user_id: str
    conversation_id: str


@dataclass(frozen=True)
class RequestState:
    """What a request on a branch reads before anything else (``request_state``): the
    conversation, the leaf it answers, the pins it carries, the last request kept for it, and
    the branch from the leaf (newest first, paged lazily; empty without a leaf)."""

    conversation: ConversationRecord
    leaf_id: str | None
    pins: list[PinnedInstruction]
    last_assembly: AssemblyRecord | None
    branch: Iterator[BranchRow]
    # how a session tier in front of the store answered (``convmem.store.session``): "hit",
    # "miss", "bypass" or "unavailable" (then ``session_problem`` says why); None: no tier
    session: str | None = None
    session_problem: str | None = None


@dataclass(frozen=True)
class AppendState:
    """What an append reads before it writes (``append_state``): the conversation, and the row
    the new message goes under (None: it starts a tree)."""

    conversation: ConversationRecord
    parent: BranchRow | None


class ConversationReads(Protocol):
    def append_state(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        parent_id: str | None,
        *,
        under_active_leaf: bool = False,
    ) -> AppendState:
        """The conversation (``NotFound`` for another principal's; in a write, locked as
        ``get_conversation`` locks it) and the parent of a new message: ``parent_id`` (None: a
        root), or with ``under_active_leaf`` the conversation's active leaf (read after the
        lock). ``NotFound`` for a parent that is not a message of this conversation. One unit of
        work (PostgreSQL: one round trip)."""
        ...

    def read_recall_ahead(self, tenant: str, user: str, conversation_id: str) -> None:
        """Queue what a request's recall reads first (the tenant's memory policy, the user's
        memory switch, the conversation's speakers), so a backend with round trips sends them
        with its next read (``request_state`` queues them itself; a request whose state came from
        elsewhere, the session tier, calls this). Nothing on a backend without round trips."""
        ...

    def request_state(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        leaf_id: str | None,
        tokenizer: str,
        reach: int = 0,
    ) -> RequestState:
        """The state a request on the branch ending at ``leaf_id`` (default: the active leaf)
        starts from, as one unit of work: a backend with round trips reads the conversation,
        the pins, the last assembly and the branch's first page together (PostgreSQL: one
        round trip). ``NotFound`` for another principal's conversation, and for a ``leaf_id``
        that is not a message of this conversation. ``tokenizer``: as ``branch``; ``reach``:
        about how many estimated tokens back from the leaf the caller will read (a window's
        budget), so a backend can size the branch's first page to it (bounded all the same)."""
        ...

    def get_conversation(
        self, tenant: str, user: str, conversation_id: str
    ) -> ConversationRecord: ...

    def list_conversations(
        self, tenant: str, user: str, *, limit: int, offset: int
    ) -> list[ConversationRecord]:
        """The user's conversations, newest first (ids sort by creation time)."""
        ...

    def get_message(self, tenant: str, user: str, message_id: str) -> Message: ...

    def get_messages(
        self, tenant: str, user: str, message_ids: Sequence[str]
    ) -> dict[str, Message]:
        """The principal's messages among ``message_ids``, by id, in one read (unknown ids and
        other principals' are left out)."""
        ...

    def message_blobs(self, tenant: str, message_ids: Sequence[str]) -> dict[str, bytes]:
        """The kept media bytes of these messages, by sha256 (none for messages without)."""
        ...

    def get_branch_row(self, tenant: str, user: str, message_id: str) -> BranchRow:
        """The message with its estimate costs (``tokens`` None: no tokenizer asked for)."""
        ...

    def children(self, tenant: str, conversation_id: str, parent_id: str | None) -> list[Message]:
        """The children of ``parent_id`` (None: the roots), in write order."""
        ...

    def conversation_messages(self, tenant: str, conversation_id: str) -> list[Message]:
        """Every message of the conversation, by depth, each depth in write order."""
        ...

    def child_counts(
        self, tenant: str, conversation_id: str, parent_ids: Sequence[str | None]
    ) -> dict[str | None, int]:
        """How many children each of ``parent_ids`` has (None: the roots), in one query; a
        parent with none is left out. What a page of a branch needs to show its forks."""
        ...

    def branch(self, tenant: str, leaf_id: str, tokenizer: str) -> Iterator[BranchRow]:
        """The path from ``leaf_id`` to the root, newest first, fetched lazily in pages (a
        caller that stops early must not pay for the rest), with ``tokenizer``'s counts."""
        ...

    def path_ids(self, tenant: str, message_id: str, count: int) -> list[str]:
        """Ids of ``message_id`` and up to ``count - 1`` of its ancestors, newest first."""
        ...

    def on_branch(
        self, tenant: str, start_id: str, candidate_ids: Sequence[str], min_depth: int
    ) -> set[str]:
        """The candidates that are ``start_id`` or one of its ancestors down to ``min_depth``."""
        ...

    def branch_messages(
        self, tenant: str, user: str, start_id: str, candidate_ids: Sequence[str]
    ) -> dict[str, Message]:
        """The principal's messages among ``candidate_ids`` that are ``start_id`` or one of its
        ancestors, by id: ``get_messages`` and ``on_branch`` as one unit of work (what recall
        reads of its ranked turns; PostgreSQL: one round trip)."""
        ...

    def pinned(
        self, tenant: str, user: str, conversation_id: str | None
    ) -> list[PinnedInstruction]:
        """User-wide pins, then (with a conversation) that conversation's pins, in order."""
        ...

    def conversations_written_before(
        self, tenant: str, conversation_cutoff: str, message_cutoff: str, limit: int
    ) -> list[ConversationRef]:
        """A tenant's conversations created before ``conversation_cutoff`` with no message at or
        after ``message_cutoff``, oldest first (ids are ULIDs: they sort by the time they were
        made)."""
        ...


class ConversationWrites(Protocol):
    def insert_conversation(self, tenant: str, record: ConversationRecord) -> None: ...

    def insert_messages(self, tenant: str, user: str, rows: Sequence[MessageRow]) -> None:
        """Insert the messages with their token counts (media shares included) and kept media
        bytes, parents before their children; their places in write order are now, in the
        order given."""
        ...

    def set_active_leaf(self, tenant: str, conversation_id: str, leaf_id: str | None) -> None: ...

    def subtree_ids(self, tenant: str, message_id: str) -> list[str]:
        """``message_id`` and every descendant, parents before their children."""
        ...

    def delete_messages(self, tenant: str, message_ids: Sequence[str]) -> None:
        """Delete the messages with everything derived from them (``convmem.store.lineage``):
        token counts, kept media bytes, search-index rows (full text and vectors), summaries
        through any of them, every job about them (finished ones too: a job names its message
        and user), entity facts and names they sourced, and the proposals drawn from them (with
        their vectors and index entries); memories the user confirmed stay, unlinked from them.
        Vocabulary words only these messages used are the caller's to retire
        (``retain_terms``)."""
        ...

    def delete_conversation(self, tenant: str, conversation_id: str) -> None:
        """Delete the conversation and everything of it: its messages (as ``delete_messages``
        does), vocabulary, search bookkeeping, summaries, jobs, pins and its last assembly."""
        ...

    def insert_pinned(self, tenant: str, user: str, admitted: Admitted[PinnedInstruction]) -> None:
        """Store a pinned instruction the never-store gate admitted."""
        ...

    def delete_pinned(self, tenant: str, user: str, pin_id: str) -> None:
        """``NotFound`` when the principal has no such pin."""
        ...


class _PlainReads(ConversationReads, Protocol):
    def last_assembly(
        self, tenant: str, user: str, conversation_id: str
    ) -> AssemblyRecord | None: ...


def plain_append_state(
    tx: ConversationReads,
    tenant: str,
    user: str,
    conversation_id: str,
    parent_id: str | None,
    *,
    under_active_leaf: bool = False,
) -> AppendState:
    """``append_state`` read by its parts, one after another."""
    record = tx.get_conversation(tenant, user, conversation_id)
    parent_id = record.active_leaf_id if under_active_leaf else parent_id
    if parent_id is None:
        return AppendState(record, None)
    parent = tx.get_branch_row(tenant, user, parent_id)
    if parent.message.conversation_id != conversation_id:
        raise NotFound("message", parent_id)
    return AppendState(record, parent)


def plain_branch_messages(
    tx: ConversationReads, tenant: str, user: str, start_id: str, candidate_ids: Sequence[str]
) -> dict[str, Message]:
    """``branch_messages`` read by its parts, one after another."""
    found = tx.get_messages(tenant, user, candidate_ids)
    if not found:
        return {}
    lowest = min(message.depth for message in found.values())
    on = tx.on_branch(tenant, start_id, list(found), lowest)
    return {key: message for key, message in found.items() if key in on}


def plain_request_state(
    tx: _PlainReads,
    tenant: str,
    user: str,
    conversation_id: str,
    leaf_id: str | None,
    tokenizer: str,
    reach: int = 0,
) -> RequestState:
    """``request_state`` read by its parts, one after another (a backend without round trips
    to save, SQLite, answers with this; ``reach`` is only a hint)."""
    del reach
    record = tx.get_conversation(tenant, user, conversation_id)
    if leaf_id is not None:
        leaf = tx.get_branch_row(tenant, user, leaf_id).message
        if leaf.conversation_id != conversation_id:
            raise NotFound("message", leaf_id)
    leaf_id = leaf_id or record.active_leaf_id
    return RequestState(
        conversation=record,
        leaf_id=leaf_id,
        pins=tx.pinned(tenant, user, conversation_id),
        last_assembly=tx.last_assembly(tenant, user, conversation_id),
        branch=iter(()) if leaf_id is None else tx.branch(tenant, leaf_id, tokenizer),
    )

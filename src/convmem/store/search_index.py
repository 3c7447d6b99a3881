"""The search index: what is derived from messages and memories to find them again.

Per indexed message one row (``IndexEntry``: speaker-prefixed text, neighbour context, optionally
a vector from one embedder); per conversation a vocabulary (its words and speaker names); per
tenant the words' vectors; per memory its vectors. All of it is derived and rebuildable: the
engine writes it beside the canonical rows, ``unindexed_messages`` and the ``missing_*`` reads
let it rebuild or backfill what is missing.

Vectors cross this boundary as float32 numpy rows (unit length); how a backend stores them
(SQLite: float16 blobs; PostgreSQL: pgvector) is its own affair.

Rows leave the index with what they were derived from (see ``ConversationWrites`` and
``MemoryWrites``): a deleted message's row and vector, a deleted conversation's vocabulary, a
deleted memory's vectors. A word's vector stays while some conversation of the tenant uses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]
"""One unit-length float32 row."""


@dataclass(frozen=True)
class IndexEntry:
    """A message's row in the search index; derived from the message, rebuildable."""

    message_id: str
    conversation_id: str
    depth: int
    created_at: datetime
    speaker: str
    session: str | None
    body: str
    ctx: str
    embedder: str | None = None
    vector: Vector | None = None


@dataclass(frozen=True)
class IndexedRow:
    """What neighbour context needs to know of an indexed message."""

    message_id: str
    speaker: str
    session: str | None
    created_at: datetime
    body: str
    depth: int
    parent_id: str | None


@dataclass(frozen=True)
class IndexedBody:
    speaker: str
    body: str


@dataclass(frozen=True)
class UnindexedMessage:
    """A message that may lack its index row. ``cursor`` is an opaque write-order position:
    pass the last one back to ``unindexed_messages`` to go on after it."""

    cursor: str
    tenant_id: str
    user_id: str
    message_id: str


@dataclass(frozen=True)
class MissingMessageVector:
    tenant_id: str
    message_id: str
    speaker: str
    body: str


@dataclass(frozen=True)
class EmbeddedTurn:
    """An indexed turn that has a vector from an embedder, with its place in the index (a
    refresh reads on from ``cursor``)."""

    tenant_id: str
    message_id: str
    speaker: str
    body: str
    cursor: int


@dataclass(frozen=True)
class MissingTermVector:
    tenant_id: str
    term: str


@dataclass(frozen=True)
class MissingMemoryVector:
    tenant_id: str
    user_id: str
    memory_id: str
    text: str


@dataclass(frozen=True)
class MessageVector:
    message_id: str
    vector: Vector


@dataclass(frozen=True)
class TermVector:
    term: str
    vector: Vector


@dataclass(frozen=True)
class MemoryVector:
    memory_id: str
    vector: Vector


class IndexReads(Protocol):
    def indexed_rows(self, tenant: str, message_ids: Sequence[str]) -> dict[str, IndexedRow]:
        """The index rows of those of ``message_ids`` that have one, by id."""
        ...

    def latest_indexed_child(self, tenant: str, conversation_id: str, parent_id: str) -> str | None:
        """The last-written child of ``parent_id`` that has an index row."""
        ...

    def indexed_bodies(self, tenant: str, conversation_id: str) -> list[IndexedBody]:
        """(speaker, body) of every indexed turn of the conversation, in no particular order."""
        ...

    def unindexed_messages(self, after: str | None, limit: int) -> list[UnindexedMessage]:
        """Messages written after cursor ``after`` (None: from the first) that may lack an index
        row, in write order, at most ``limit``. A cheap pre-filter: the caller still skips what
        ``convmem.retrieval.index.indexable`` refuses."""
        ...

    def conversation_speakers(self, tenant: str, conversation_id: str) -> list[str]:
        """The speaker names of the conversation's vocabulary, sorted."""
        ...

    def stored_term_vectors(
        self, tenant: str, embedder: str, words: Sequence[str]
    ) -> dict[str, Vector]:
        """Vectors the tenant already holds for ``words`` (some conversation of it uses them)."""
        ...

    def missing_message_vectors(self, embedder: str, limit: int) -> list[MissingMessageVector]:
        """Indexed turns (any tenant) without a vector from ``embedder``."""
        ...

    def embedded_message_vectors(self, embedder: str, after: int, limit: int) -> list[EmbeddedTurn]:
        """Indexed turns (any tenant) that have a vector from ``embedder``, in index order past
        the ``cursor`` ``after`` (0: from the start): what a refresh embeds again."""
        ...

    def missing_term_vectors(self, embedder: str, limit: int) -> list[MissingTermVector]:
        """Vocabulary words in use (any tenant) without a vector from ``embedder``."""
        ...

    def missing_memory_vectors(self, embedder: str, limit: int) -> list[MissingMemoryVector]:
        """Memories (any tenant) without a vector from ``embedder``, rejected ones left out
        (their text is erased)."""
        ...

    def unembedded_turns(self, tenant: str, conversation_id: str, embedder: str) -> int:
        """How many of the conversation's indexed turns have no vector from ``embedder`` yet
        (a search ranks them by words only, and says so)."""
        ...

    def unembedded_memories(self, tenant: str, user: str, embedder: str) -> int:
        """How many of the user's confirmed memories have no vector from ``embedder`` yet."""
        ...

    def conversations_to_index(self, limit: int) -> list[tuple[str, str]]:
        """(tenant, conversation) of at most ``limit`` conversations that grew long enough for
        an approximate vector index and whose older turns are not all in it yet
        (``index_conversation_step`` adds them). A backend without such an index: none."""
        ...

    def memory_vector_ids(self, tenant: str, user: str) -> list[str]:
        """The memory ids of every vector row the user holds, sorted, whether or not the memory
        still exists: what a deletion must leave nothing of (the behaviour suite's probe)."""
        ...


class IndexWrites(Protocol):
    def index_messages(self, tenant: str, user: str, entries: Sequence[IndexEntry]) -> None:
        """Insert or replace the messages' index rows."""
        ...

    def set_index_context(self, tenant: str, message_id: str, ctx: str) -> None:
        """Replace the neighbour context of an index row (none: nothing happens)."""
        ...

    def set_message_vectors(
        self, tenant: str, embedder: str, vectors: Sequence[MessageVector]
    ) -> None:
        """Set the index rows' vectors (replacing any other embedder's)."""
        ...

    def index_conversation_step(self, tenant: str, conversation_id: str, depths: int) -> bool:
        """Add the conversation's turns at the next ``depths`` depths to the approximate vector
        index (see ``conversations_to_index``); True once every turn of it is there, and for a
        conversation that is not being added or a backend without such an index."""
        ...

    def add_terms(
        self, tenant: str, conversation_id: str, words: Sequence[str], speakers: Sequence[str]
    ) -> None:
        """Add words and speaker names to the conversation's vocabulary (a word that is also a
        speaker's name counts as a name)."""
        ...

    def retain_terms(
        self, tenant: str, conversation_id: str, words: set[str], speakers: set[str]
    ) -> None:
        """Forget the vocabulary entries not in ``words`` (words) or ``speakers`` (names); a
        word no conversation of the tenant uses any more loses its vectors."""
        ...

    def set_term_vectors(self, tenant: str, embedder: str, vectors: Sequence[TermVector]) -> None:
        """Store word vectors for words some conversation of the tenant uses (others are
        ignored); a word's vector never changes for one embedder, so the first one stays. The
        next search of every conversation using those words sees them."""
        ...

    def set_memory_vectors(
        self, tenant: str, user: str, embedder: str, vectors: Sequence[MemoryVector]
    ) -> None:
        """Set the user's memories' vectors; a memory that no longer exists gets none."""
        ...

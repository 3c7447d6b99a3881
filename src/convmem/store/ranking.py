"""Ranked candidates at the store boundary: each backend ranks where its data is.

Every method applies the principal's scope filters in the query that ranks (never after it), and
returns at most ``limit`` candidates, best first, with the backend's score (comparable only within
one result). Fusion, query analysis, widening and the neighbour lift are the shared code's
(``convmem.search``), over these rankings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from convmem.model.memory import MemoryRecord


@dataclass(frozen=True)
class MessageHitRow:
    message_id: str
    speaker: str
    score: float


@dataclass(frozen=True)
class MemoryHitRow:
    record: MemoryRecord
    score: float


@dataclass(frozen=True)
class VectorRow:
    message_id: str
    speaker: str
    depth: int
    created_at: datetime
    vector: bytes


class RankedSearch(Protocol):
    def search_messages(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        terms: Sequence[str],
        *,
        limit: int,
        max_depth: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[MessageHitRow]:
        """One conversation's indexed turns matching any of ``terms``, best first."""
        ...

    def search_memory_terms(
        self,
        tenant: str,
        user: str,
        terms: Sequence[str],
        *,
        scopes: Sequence[str],
        now: datetime,
        limit: int,
    ) -> list[MemoryHitRow]:
        """Current memories matching any of ``terms``, best first; filters in the query."""
        ...

    def memory_vectors(
        self, tenant: str, user: str, embedder: str, *, scopes: Sequence[str], now: datetime
    ) -> list[tuple[MemoryRecord, bytes]]:
        """Current memories (filtered as above) with their vectors from ``embedder``."""
        ...

    def message_vectors(
        self, tenant: str, user: str, conversation_id: str, embedder: str
    ) -> list[VectorRow]:
        """One conversation's turns with a vector from ``embedder``."""
        ...

    def search_generation(self, tenant: str, conversation_id: str) -> int | None:
        """A number that changes whenever the conversation's vectors or vocabulary change."""
        ...

    def term_vectors(
        self, tenant: str, conversation_id: str, embedder: str
    ) -> list[tuple[str, bytes]]: ...

"""What a scope or conversation handle uses of the handle that opened it.

The handles form a tree: a ``Memory`` (a database) opens ``Scope``s, a scope opens
``Conversation``s. A parent constructs its children, so a child cannot import its parent's class
without a cycle; instead each child names here, as a Protocol, the little it uses of its parent,
and the modules import one way only (database → scope → conversation → handles).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from convmem.config import Config
from convmem.content.tokens import TokenCounter
from convmem.domain.summaries import SummaryFlow
from convmem.domain.vector_fill import Pending
from convmem.engine.observer import Observer
from convmem.model.memory import MemoryNotice, MemoryRecord
from convmem.model.messages import NewMessage
from convmem.model.principal import Principal
from convmem.retrieval.caches import VectorCache
from convmem.retrieval.rerank import Reranker
from convmem.retrieval.vector import Embedder
from convmem.store.base import MessageCost, Store


class Database(Protocol):
    """What scopes and conversations use of their ``Memory``: the store, the configuration and
    the shared machinery built once per open database."""

    @property
    def store(self) -> Store: ...

    @property
    def config(self) -> Config: ...

    @property
    def summaries(self) -> SummaryFlow: ...

    @property
    def embedder(self) -> Embedder | None: ...

    @property
    def write_embedder(self) -> Embedder | None: ...

    @property
    def reranker(self) -> Reranker | None: ...

    @property
    def vector_cache(self) -> VectorCache: ...

    @property
    def observer(self) -> Observer: ...

    def count_message(
        self, message: NewMessage, counters: Sequence[TokenCounter] | None = None
    ) -> MessageCost: ...

    def count_messages(
        self, messages: Sequence[NewMessage], counters: Sequence[TokenCounter] | None = None
    ) -> list[MessageCost]: ...

    def batch_counters(self) -> list[TokenCounter]: ...

    def embed_memories(self, tenant: str, user: str, records: Iterable[MemoryRecord]) -> None: ...

    def queue_vectors(self, items: Sequence[Pending]) -> None: ...

    def embedder_for(self, tenant: str) -> Embedder | None: ...

    def settle_vectors(self, timeout: float | None) -> None: ...


class Owner(Protocol):
    """What a conversation uses of its ``Scope``: the database and the principal it acts for."""

    @property
    def memory(self) -> Database: ...

    @property
    def tenant(self) -> str: ...

    @property
    def user(self) -> str: ...

    @property
    def principal(self) -> Principal: ...

    def principal_for(self, purposes: Iterable[str] | None) -> Principal: ...

    def _embed_notices(self, notices: Iterable[MemoryNotice]) -> None: ...

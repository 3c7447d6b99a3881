"""The async API: the same surface as ``convmem.open`` with ``async def``, for asyncio servers.

    mem = convmem.aio.open("convmem.db")
    user = mem.scope(tenant="acme", user="alice")
    conv = await user.create_conversation(title="Trip")
    await conv.append("user", "I prefer aisle seats.")
    ctx = await conv.assemble("What seat do I like?")

Every call runs the synchronous engine in a bounded pool of worker threads (``max_workers``,
default 8), so the event loop never waits on the database or the tokenizer, and no more than
that many calls touch the store at once; the rest queue. Handles (``AsyncScope``,
``AsyncConversation``) are cheap and hold only ids, like their synchronous twins, which
``.sync`` returns. ``benchmarks/aio_overhead.py`` measures what the hop costs per call.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Coroutine, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

from convmem.config import Config
from convmem.domain.memories import Memories
from convmem.engine import Conversation, Memory, Scope
from convmem.engine import open as open_sync
from convmem.retrieval.rerank import Reranker
from convmem.retrieval.vector import Embedder

P = ParamSpec("P")
R = TypeVar("R")
# covariant: a method a handle inherits (Conversation's reads) runs on its twin as well
T = TypeVar("T", covariant=True)
DEFAULT_WORKERS = 8


class _Pool:
    """The worker threads a database's async calls share."""

    def __init__(self, max_workers: int) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be positive")
        self.executor = ThreadPoolExecutor(max_workers, thread_name_prefix="convmem-aio")

    async def run(self, call: Callable[[], R]) -> R:
        return await asyncio.get_running_loop().run_in_executor(self.executor, call)


class _Offloaded(Generic[T]):
    """A handle whose methods run its synchronous twin's in the pool."""

    def __init__(self, pool: _Pool, sync: T) -> None:
        self._pool, self._sync = pool, sync

    @property
    def sync(self) -> T:
        """The synchronous twin."""
        return self._sync


def _off(
    method: Callable[Concatenate[T, P], R],
) -> Callable[Concatenate[_Offloaded[T], P], Coroutine[Any, Any, R]]:
    """The async method of a handle: the synchronous method, run in the pool."""

    @functools.wraps(method)
    async def offloaded(self: _Offloaded[T], /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self._pool.run(functools.partial(method, self._sync, *args, **kwargs))

    return offloaded


class AsyncConversation(_Offloaded[Conversation]):
    """``Conversation`` with ``async def`` methods."""

    def __init__(self, pool: _Pool, conversation: Conversation) -> None:
        super().__init__(pool, conversation)
        self.id = conversation.id

    def __repr__(self) -> str:
        return f"AsyncConversation(id={self.id!r})"

    record = _off(Conversation.record)
    append = _off(Conversation.append)
    edit = _off(Conversation.edit)
    regenerate = _off(Conversation.regenerate)
    switch_branch = _off(Conversation.switch_branch)
    delete_message = _off(Conversation.delete_message)
    search = _off(Conversation.search)
    delete = _off(Conversation.delete)
    pin = _off(Conversation.pin)
    pinned = _off(Conversation.pinned)
    message = _off(Conversation.message)
    siblings = _off(Conversation.siblings)
    branch = _off(Conversation.branch)
    messages = _off(Conversation.messages)
    assemble = _off(Conversation.assemble)
    summaries = _off(Conversation.summaries)
    summary = _off(Conversation.summary)
    record_assembly = _off(Conversation.record_assembly)
    last_assembly = _off(Conversation.last_assembly)


class AsyncMemories(_Offloaded[Memories]):
    """``Memories`` (a principal's long-term memories) with ``async def`` methods."""

    list = _off(Memories.list)
    get = _off(Memories.get)
    evidence = _off(Memories.evidence)
    confirm = _off(Memories.confirm)
    reject = _off(Memories.reject)
    update = _off(Memories.update)
    delete = _off(Memories.delete)
    resolve = _off(Memories.resolve)
    search = _off(Memories.search)


class AsyncScope(_Offloaded[Scope]):
    """``Scope`` (one authenticated principal) with ``async def`` methods."""

    def __init__(self, pool: _Pool, scope: Scope) -> None:
        super().__init__(pool, scope)
        self.tenant, self.user = scope.tenant, scope.user

    @property
    def memories(self) -> AsyncMemories:
        return AsyncMemories(self._pool, self.sync.memories)

    async def create_conversation(
        self, title: str | None = None, *, temporary: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> AsyncConversation:  # fmt: skip
        made = await self._pool.run(
            lambda: self.sync.create_conversation(title, temporary=temporary, metadata=metadata)
        )
        return AsyncConversation(self._pool, made)

    async def conversation(self, conversation_id: str) -> AsyncConversation:
        """Reopen a conversation; ``NotFound`` unless it belongs to this principal."""
        found = await self._pool.run(lambda: self.sync.conversation(conversation_id))
        return AsyncConversation(self._pool, found)

    remember = _off(Scope.remember)
    propose = _off(Scope.propose)
    search_memories = _off(Scope.search_memories)
    memory_enabled = _off(Scope.memory_enabled)
    set_memory_enabled = _off(Scope.set_memory_enabled)
    audit = _off(Scope.audit)
    export = _off(Scope.export)
    delete_all = _off(Scope.delete_all)
    conversations = _off(Scope.conversations)
    pin = _off(Scope.pin)
    pinned = _off(Scope.pinned)
    unpin = _off(Scope.unpin)
    message = _off(Scope.message)


class AsyncMemory(_Offloaded[Memory]):
    """A convmem database for asyncio code. Open it with ``convmem.aio.open``."""

    def __init__(self, memory: Memory, *, max_workers: int = DEFAULT_WORKERS) -> None:
        super().__init__(_Pool(max_workers), memory)

    def scope(
        self, tenant: str, user: str, *, actor: str | None = None,
        purposes: Iterable[str] | None = None,
    ) -> AsyncScope:  # fmt: skip
        """Act as one authenticated principal (checks the ids; no I/O); ``purposes`` caps the
        memory purposes its calls may use, as ``Memory.scope``'s."""
        return AsyncScope(self._pool, self.sync.scope(tenant, user, actor=actor, purposes=purposes))

    set_tenant_policy = _off(Memory.set_tenant_policy)
    tenant_policy = _off(Memory.tenant_policy)
    apply_retention = _off(Memory.apply_retention)
    sweep_retention = _off(Memory.sweep_retention)
    reindex = _off(Memory.reindex)
    backfill_embeddings = _off(Memory.backfill_embeddings)
    wait_for_vectors = _off(Memory.wait_for_vectors)
    jobs = _off(Memory.jobs)
    retry_job = _off(Memory.retry_job)

    async def close(self) -> None:
        """Wait for the calls in flight, then close the database."""
        await asyncio.get_running_loop().run_in_executor(None, self._pool.executor.shutdown)
        self.sync.close()

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def open(
    target: str | os.PathLike[str] | None = None,
    *,
    config: Config | None = None,
    embedder: Embedder | str | None = None,
    reranker: Reranker | str | None = None,
    settings: str | os.PathLike[str] | None = None,
    max_workers: int = DEFAULT_WORKERS,
) -> AsyncMemory:
    """``convmem.open`` for asyncio: the same targets and settings, and at most ``max_workers``
    calls at once."""
    memory = open_sync(target, config=config, embedder=embedder, reranker=reranker,
                       settings=settings)  # fmt: skip
    return AsyncMemory(memory, max_workers=max_workers)

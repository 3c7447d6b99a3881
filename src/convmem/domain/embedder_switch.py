"""Changing a tenant's embedder while its searches go on (issue 33 item 5).

``begin`` names the new embedder (the *target*); ``build`` embeds, batch by batch and outside
any transaction, every indexed turn, word in use and current memory of the tenant the target
has no vector for, into staging (``convmem.store.embedder_switch``) while the old vectors keep
serving; ``finish`` moves them in and erases the old ones in one transaction (a turn written
after the last batch is left without a vector, for the target to fill: it is ranked by words
meanwhile). A search embeds its query with the tenant's active embedder
(``Memory.embedder_for``), so it ranks by the old vectors before the switch and the new ones
after, and by words for any row without one: it answers throughout.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from convmem.domain.indexing import Progress, keep_memory_vectors, keep_turn_vectors, vector_text
from convmem.errors import InvalidConfig
from convmem.retrieval.vector import Embedder, Matrix, normalise
from convmem.store.base import (
    EmbedderSwitch,
    MemoryVector,
    MessageVector,
    StagedCounts,
    Store,
    TermVector,
    WriteTxn,
)
from convmem.store.retry import write_retried


@dataclass(frozen=True)
class SwitchStatus:
    """Where a tenant's embedder stands: the one serving, the one being built (if any), and
    how far its build is."""

    tenant: str
    active: str | None
    target: str | None
    counts: StagedCounts | None

    @property
    def ready(self) -> bool:
        """Every row of the tenant has the target's vector (staged or already its own)."""
        c = self.counts
        return c is not None and c.turns_left == 0 and c.memories_left == 0 and c.words_left == 0


def begin(store: Store, tenant: str, target: Embedder, current: Embedder | None) -> None:
    """Record ``target`` as the tenant's embedder to build (``current``: the one the tenant's
    vectors come from until now, when it has no record yet)."""
    with store.read() as tx:
        record = tx.embedder_switch(tenant)
    active = record.active if record is not None and record.active else None
    if active is None and current is not None:
        active = current.name
    if active == target.name:
        raise InvalidConfig("embedder", f"{target.name!r} already serves tenant {tenant!r}")
    at = datetime.now(UTC)
    write_retried(
        store,
        lambda tx: tx.begin_embedder_switch(tenant, active, target.name, target.dimensions, at),
    )


def build(
    store: Store,
    tenant: str,
    target: Embedder,
    *,
    batch_size: int = 256,
    max_batches: int | None = None,
    progress: Progress | None = None,
) -> dict[str, int]:
    """Embed with ``target`` what the tenant lacks, into staging: turns, words, memories, each
    in batches (at most ``max_batches`` of each), until a batch comes back short: the pass has
    caught up with the writes (rows written meanwhile are the next pass's, so a steady stream
    of appends cannot keep one pass going). After the switch (``target`` active), what is
    still without a vector (written after the build's last batch) is embedded in place. Rows
    embedded per kind."""
    record = _target_of(store, tenant, target, switched=True)
    staging = record.target == target.name
    width = record.target_dimensions if staging else target.dimensions
    counts = {"messages": 0, "terms": 0, "memories": 0}

    def more(kind: str) -> bool:
        return max_batches is None or counts[kind] < max_batches * batch_size

    def embed(texts: Sequence[str]) -> Matrix:
        rows = normalise(target.embed(texts))
        if rows.shape[1] != width:
            raise InvalidConfig(
                "embedder",
                f"{target.name!r} gave {rows.shape[1]} dimensions, not the {width} its switch "
                "began with",
            )
        return rows

    def done(kind: str, n: int) -> None:
        counts[kind] += n
        if progress is not None:
            progress(kind, counts[kind])

    while more("messages"):
        with store.read() as tx:
            turns = tx.unstaged_turns(tenant, target.name, batch_size)
        if not turns:
            break
        vectors = embed([vector_text(t.speaker, t.body) for t in turns])
        staged = [MessageVector(t.message_id, v) for t, v in zip(turns, vectors, strict=True)]
        if staging:
            write_retried(store, _stage_turns, tenant, target.name, staged)
        else:
            keep_turn_vectors(store, target.name, {tenant: staged})
        done("messages", len(turns))
        if len(turns) < batch_size:
            break
    while more("terms"):
        with store.read() as tx:
            words = tx.unstaged_words(tenant, target.name, batch_size)
        if not words:
            break
        vectors = embed(words)
        terms = [TermVector(w, v) for w, v in zip(words, vectors, strict=True)]
        write_retried(store, _keep_words, tenant, target.name, terms)
        done("terms", len(words))
        if len(words) < batch_size:
            break
    while more("memories"):
        with store.read() as tx:
            memories = tx.unstaged_memories(tenant, target.name, batch_size)
        if not memories:
            break
        vectors = embed([m.text for m in memories])
        by_user: dict[str, list[MemoryVector]] = defaultdict(list)
        for memory, vector in zip(memories, vectors, strict=True):
            by_user[memory.user_id].append(MemoryVector(memory.memory_id, vector))
        if not staging:
            keep_memory_vectors(store, target.name, {(tenant, u): o for u, o in by_user.items()})
        for user, owned in sorted(by_user.items()) if staging else ():
            write_retried(store, _stage_memories, tenant, user, target.name, owned)
        done("memories", len(memories))
        if len(memories) < batch_size:
            break
    return counts


def _stage_turns(tx: WriteTxn, tenant: str, name: str, staged: list[MessageVector]) -> None:
    tx.stage_message_vectors(tenant, name, staged)


def _keep_words(tx: WriteTxn, tenant: str, name: str, terms: list[TermVector]) -> None:
    tx.set_term_vectors(tenant, name, terms)


def _stage_memories(
    tx: WriteTxn, tenant: str, user: str, name: str, owned: list[MemoryVector]
) -> None:
    tx.stage_memory_vectors(tenant, user, name, owned)


def finish(store: Store, tenant: str, target: Embedder) -> dict[str, int]:
    """Make ``target`` the tenant's embedder: its staged vectors in, every other embedder's
    vectors out, in one transaction. Rows changed per table. (The rows written since the
    build's last batch have no vector then: ``build`` again gives them the target's.)"""
    _target_of(store, tenant, target)
    at = datetime.now(UTC)
    return write_retried(store, lambda tx: tx.finish_embedder_switch(tenant, target.name, at))


def cancel(store: Store, tenant: str) -> int:
    """Drop the build under way; the active embedder stays. Staged rows dropped."""
    return write_retried(store, lambda tx: tx.cancel_embedder_switch(tenant))


def status(store: Store, tenant: str) -> SwitchStatus:
    with store.read() as tx:
        record = tx.embedder_switch(tenant)
        if record is None or record.target is None:
            return SwitchStatus(tenant, None if record is None else record.active, None, None)
        counts = tx.staged_counts(tenant, record.target)
    return SwitchStatus(tenant, record.active, record.target, counts)


def _target_of(
    store: Store, tenant: str, target: Embedder, *, switched: bool = False
) -> EmbedderSwitch:
    """The tenant's switch to ``target`` under way (or, ``switched``, done: ``target`` active
    with no other under way)."""
    with store.read() as tx:
        record = tx.embedder_switch(tenant)
    done = switched and record is not None and record.target is None
    if record is None or (
        record.target != target.name and not (done and record.active == target.name)
    ):
        raise InvalidConfig(
            "embedder", f"no switch of tenant {tenant!r} to {target.name!r} is under way"
        )
    return record

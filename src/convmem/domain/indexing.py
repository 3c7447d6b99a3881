"""Keeping the search index: a turn's index row, neighbour context and vectors as it is written,
the neighbours' context after a delete, and rebuilding or backfilling what is missing.

A turn's vector is computed from ``vector_text``: its indexed body followed by its statements
again (see there), not from the body alone.

The model runs before a write transaction opens (``prepare_turn``) or between transactions
(``backfill``), never while the write lock is held.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import NamedTuple

from convmem.entities.extract import sentences
from convmem.model.messages import Message
from convmem.retrieval.caches import VectorCache, embed_with_words
from convmem.retrieval.index import (
    IndexedTurn,
    context_text,
    indexable,
    indexed_turn,
    vocabulary,
)
from convmem.retrieval.vector import Embedder, Matrix, normalise
from convmem.store.base import (
    EmbeddedTurn,
    IndexedRow,
    IndexEntry,
    MemoryVector,
    MessageVector,
    MissingMessageVector,
    Store,
    TermVector,
    WriteTxn,
)
from convmem.store.retry import write_retried

# Called after each batch with what the batch was ("messages", "terms", "memories") and how many
# of that kind are done so far in this call; for a progress display (the CLI draws it).
Progress = Callable[[str, int], None]


def _no_progress(kind: str, done: int) -> None:
    pass


# What ends a question in the scripts the sentence splitter reads (Latin, CJK full width, Arabic)
_QUESTION_ENDS = ("?", "\uff1f", "\u061f")


def vector_text(speaker: str, body: str) -> str:
    """The text a turn's vector is computed from: its ``body`` (``"{speaker}: {text}"``), then
    the text's statements — its sentences that are not questions — once more, without the name.

    A chat turn mixes what happened ("I signed up for a pottery class yesterday.") with asides
    and questions back ("How have you been?"); averaged over its tokens, the embedding of the
    whole turn drifts towards the asides, which hold nothing a later question looks for, and —
    for a short turn — towards the model's own markers. Saying the statements twice weighs the
    turn's content. On the LoCoMo development split (MiniLM), judged per conversation, the
    cosine ranking's evidence recall@10 (before fusion and its priors) went from 0.665 to 0.701
    (conv-26) and 0.643 to 0.699 (conv-30); repeating the name with them, a key of the
    statements alone, the entity extractor's fact sentences alone, or adding the previous
    turn's text did worse. A turn of questions only keeps its body."""
    text = body[len(speaker) + 2 :] if body.startswith(f"{speaker}: ") else body
    statements = [s for s in sentences(text) if not s.endswith(_QUESTION_ENDS)]
    return f"{body}\n{' '.join(statements)}" if statements else body


@dataclass(frozen=True)
class PreparedTurn:
    """What indexing a message needs, computed before the write transaction (the model is slow;
    the write lock is not held while it runs)."""

    turn: IndexedTurn
    words: tuple[str, ...]
    embedder: str | None
    vector: Matrix | None
    word_vectors: dict[str, Matrix]


def prepare_turn(
    message: Message, embedder: Embedder | None, cache: VectorCache
) -> PreparedTurn | None:
    """The message's index row; ``message.parent_id`` and ``depth`` are not read."""
    if not indexable(message.role, message.content):
        return None
    turn = indexed_turn(message)
    words = tuple(sorted(vocabulary([message.content], exclude=turn.speaker.lower().split())))
    if embedder is None:
        return PreparedTurn(turn, words, None, None, {})
    key = vector_text(turn.speaker, turn.body)
    rows, word_vectors = embed_with_words(embedder, cache, [key], words)
    return PreparedTurn(turn, words, embedder.name, rows[0], word_vectors)


def index_entry(message: Message, prepared: PreparedTurn | IndexedTurn, ctx: str) -> IndexEntry:
    """The index row of a placed message (``parent_id`` and ``depth`` set), with its vector
    when one was prepared (a turn alone has none: an import's, which the worker embeds later);
    ``ctx`` is its text with its neighbours'."""
    if isinstance(prepared, IndexedTurn):
        turn, embedder, vector = prepared, None, None
    else:
        turn, embedder, vector = prepared.turn, prepared.embedder, prepared.vector
    return IndexEntry(
        message_id=message.id,
        conversation_id=message.conversation_id,
        depth=message.depth,
        created_at=turn.created_at,
        speaker=turn.speaker,
        session=turn.session,
        body=turn.body,
        ctx=ctx,
        embedder=embedder,
        vector=vector,
    )


def _as_turn(row: IndexedRow) -> IndexedTurn:
    return IndexedTurn(row.message_id, row.speaker, row.session, row.created_at, row.body)


def write_turn(
    tx: WriteTxn,
    tenant: str,
    user: str,
    message: Message,
    prepared: PreparedTurn,
    session_gap: timedelta,
    *,
    grandparent_id: str | None = None,
) -> None:
    """Index a message just inserted, and make it the following context of its parent.
    ``grandparent_id`` (the parent's parent, when the caller knows it) lets both neighbours be
    read at once."""
    parent_row: IndexedRow | None = None
    grandparent: IndexedRow | None = None
    if message.parent_id is not None:
        wanted = [message.parent_id] + ([grandparent_id] if grandparent_id else [])
        rows = tx.indexed_rows(tenant, wanted)
        parent_row = rows.get(message.parent_id)
        if parent_row is not None and parent_row.parent_id is not None:
            above = parent_row.parent_id
            if above not in rows and above != grandparent_id:  # (asked: it has no row)
                rows = tx.indexed_rows(tenant, [above])
            grandparent = rows.get(above)
    turn = prepared.turn
    parent = _as_turn(parent_row) if parent_row is not None else None
    ctx = context_text(turn, parent, None, session_gap)
    tx.index_messages(tenant, user, [index_entry(message, prepared, ctx)])
    if parent is not None:
        before = _as_turn(grandparent) if grandparent is not None else None
        tx.set_index_context(tenant, parent.message_id, context_text(parent, before, turn))
    tx.add_terms(tenant, message.conversation_id, prepared.words, [turn.speaker])
    if prepared.embedder is not None and prepared.word_vectors:
        vectors = sorted(prepared.word_vectors.items())
        tx.set_term_vectors(tenant, prepared.embedder, [TermVector(w, v) for w, v in vectors])


def after_delete(
    tx: WriteTxn,
    tenant: str,
    conversation_id: str,
    parent_id: str | None,
    session_gap: timedelta,
) -> None:
    """After a subtree under ``parent_id`` went: the parent's following context is its newest
    remaining child, and words and names no remaining turn has leave the vocabulary."""
    if parent_id is not None:
        rows = tx.indexed_rows(tenant, [parent_id])
        parent = rows.get(parent_id)
        if parent is not None:
            child_id = tx.latest_indexed_child(tenant, conversation_id, parent_id)
            ids = [i for i in (parent.parent_id, child_id) if i is not None]
            near = tx.indexed_rows(tenant, ids)
            before = near.get(parent.parent_id) if parent.parent_id else None
            after = near.get(child_id) if child_id else None
            tx.set_index_context(
                tenant,
                parent_id,
                context_text(
                    _as_turn(parent),
                    _as_turn(before) if before else None,
                    _as_turn(after) if after else None,
                    session_gap,
                ),
            )
    bodies = tx.indexed_bodies(tenant, conversation_id)
    speakers = {row.speaker for row in bodies}
    texts = [row.body[len(row.speaker) + 2 :] for row in bodies]
    tx.retain_terms(tenant, conversation_id, vocabulary(texts), speakers)


class Reindexed(NamedTuple):
    """What a reindex did: how many messages it indexed, and whose (tenant, user) they were."""

    messages: int
    owners: frozenset[tuple[str, str]]


def reindex(
    store: Store,
    embedder: Embedder | None,
    cache: VectorCache,
    session_gap: timedelta,
    *,
    batch_size: int = 500,
    progress: Progress | None = None,
) -> Reindexed:
    """Index every message that has no index row, oldest first (so each finds its parent)."""
    progress = progress or _no_progress
    done = 0
    owners: set[tuple[str, str]] = set()
    after: str | None = None
    while True:
        with store.read() as tx:
            pending = tx.unindexed_messages(after, batch_size)
            messages = [
                (p.tenant_id, p.user_id, tx.get_message(p.tenant_id, p.user_id, p.message_id))
                for p in pending
            ]
        if not messages:
            return Reindexed(done, frozenset(owners))
        after = pending[-1].cursor
        for tenant, user, message in messages:
            prepared = prepare_turn(message, embedder, cache)
            if prepared is None:
                continue
            write_retried(store, write_turn, tenant, user, message, prepared, session_gap)
            owners.add((tenant, user))
            done += 1
        progress("messages", done)


def backfill(
    store: Store,
    embedder: Embedder,
    cache: VectorCache,
    *,
    batch_size: int = 256,
    max_batches: int | None = None,
    progress: Progress | None = None,
    refresh: bool = False,
) -> dict[str, int]:
    """Vectors for every indexed turn, word in use and memory lacking one from ``embedder``; the
    model runs between transactions, never inside one. ``max_batches`` bounds the batches of
    each kind per call (a worker interleaving jobs takes one at a time). With ``refresh``, the
    turns that have a vector from ``embedder`` are embedded again as well (``vector_text``
    changed what a turn's vector is made of; the old ones keep serving searches until replaced,
    batch by batch)."""
    counts = {"messages": 0, "terms": 0, "memories": 0}
    progress = progress or _no_progress

    def more(kind: str, size: int) -> bool:
        return max_batches is None or counts[kind] < max_batches * size

    def embed_turns(turns: Sequence[MissingMessageVector | EmbeddedTurn]) -> None:
        vectors = normalise(embedder.embed([vector_text(t.speaker, t.body) for t in turns]))
        by_tenant: dict[str, list[MessageVector]] = defaultdict(list)
        for turn, vector in zip(turns, vectors, strict=True):
            by_tenant[turn.tenant_id].append(MessageVector(turn.message_id, vector))
        keep_turn_vectors(store, embedder.name, by_tenant)
        counts["messages"] += len(turns)
        progress("messages", counts["messages"])

    cursor = 0  # refreshed first, so the turns embedded below are not embedded twice
    while refresh and more("messages", batch_size):
        with store.read() as tx:
            embedded = tx.embedded_message_vectors(embedder.name, cursor, batch_size)
        if not embedded:
            break
        cursor = embedded[-1].cursor
        embed_turns(embedded)
    while more("messages", batch_size):
        with store.read() as tx:
            missing = tx.missing_message_vectors(embedder.name, batch_size)
        if not missing:
            break
        embed_turns(missing)
    while more("terms", batch_size * 8):
        with store.read() as tx:
            terms = tx.missing_term_vectors(embedder.name, batch_size * 8)
        if not terms:
            break
        words = sorted({row.term for row in terms})
        word_vectors = dict(zip(words, normalise(embedder.embed(words)), strict=True))
        for word, vector in word_vectors.items():
            cache.put(embedder.name, word, vector)
        by_tenant_terms: dict[str, list[TermVector]] = defaultdict(list)
        for term in terms:
            by_tenant_terms[term.tenant_id].append(TermVector(term.term, word_vectors[term.term]))
        keep_turn_vectors(store, embedder.name, {}, by_tenant_terms)
        counts["terms"] += len(terms)
        progress("terms", counts["terms"])
    while more("memories", batch_size):
        with store.read() as tx:
            memories = tx.missing_memory_vectors(embedder.name, batch_size)
        if not memories:
            break
        vectors = normalise(embedder.embed([row.text for row in memories]))
        by_owner: dict[tuple[str, str], list[MemoryVector]] = defaultdict(list)
        for row, vector in zip(memories, vectors, strict=True):
            by_owner[(row.tenant_id, row.user_id)].append(MemoryVector(row.memory_id, vector))
        keep_memory_vectors(store, embedder.name, by_owner)
        counts["memories"] += len(memories)
        progress("memories", counts["memories"])
    # turns of conversations grown long into the approximate index, where the store has one (a
    # worker's call, one batch of each kind, takes a bounded share of them too)
    steps = None if max_batches is None else INDEX_STEPS * max_batches
    index_long_conversations(store, max_steps=steps)
    return counts


# The writes of vectors: transactions of one tenant (turns and words) or one owner (memories), so
# a vector writer never holds one tenant's or user's rows while it waits for another's. On
# PostgreSQL each takes the rows its vectors derive from first (the conversations, the memories),
# as the writers that delete them do, so a delete and a vector writer wait for each other instead
# of deadlocking, and a vector never lands after its source was deleted.
#
# At most this many turn or word vectors per transaction: an append to a conversation waits for
# the vector writer holding that conversation, for as long as its transaction lasts. On
# PostgreSQL, rewriting 128 index rows with 1,536-wide vectors took 120-230 ms, and appends
# behind it waited as long (benchmarks/embedder_faults.py --dimensions 1536: 29-41 writes past
# the bound while the filler caught up); 16 rows hold a conversation a few milliseconds.
VECTORS_PER_TRANSACTION = 16


def keep_turn_vectors(
    store: Store,
    embedder: str,
    by_tenant: Mapping[str, Sequence[MessageVector]],
    terms: Mapping[str, Sequence[TermVector]] | None = None,
) -> None:
    """Store turns' vectors and words' vectors from ``embedder``: per tenant, in transactions
    of at most ``VECTORS_PER_TRANSACTION`` vectors."""
    terms = terms or {}
    size = VECTORS_PER_TRANSACTION
    for tenant in sorted(set(by_tenant) | set(terms)):
        rows = by_tenant.get(tenant, ())
        words = sorted(terms.get(tenant, ()), key=_term)
        for start in range(0, len(rows), size):
            write_retried(store, _keep_tenant_vectors, tenant, embedder,
                          rows[start : start + size], ())  # fmt: skip
        for start in range(0, len(words), size):
            write_retried(store, _keep_tenant_vectors, tenant, embedder,
                          (), words[start : start + size])  # fmt: skip


def _keep_tenant_vectors(
    wtx: WriteTxn, tenant: str, embedder: str, rows: Sequence[MessageVector],
    words: Sequence[TermVector],
) -> None:  # fmt: skip
    if rows:
        wtx.set_message_vectors(tenant, embedder, rows)
    if words:
        wtx.set_term_vectors(tenant, embedder, words)


# ``index_long_conversations``'s transactions per batch a backfill call takes, and per batch
# the filler embeds: a long conversation's 5,000 older turns take ~300 of them.
INDEX_STEPS = 16


def index_long_conversations(store: Store, *, max_steps: int | None = INDEX_STEPS) -> int:
    """Add the older turns of conversations that grew long to the store's approximate vector
    index (``IndexReads.conversations_to_index``), ``VECTORS_PER_TRANSACTION`` depths per
    transaction — each turn with a vector goes into an HNSW graph, a walk of it each, and
    appends wait for that commit as for the vectors' — at most ``max_steps`` transactions
    (None: until none is left). Returns how many ran (0: nothing to add, as always on a
    backend without such an index)."""
    steps = 0
    bound = float("inf") if max_steps is None else max_steps
    while steps < bound:
        with store.read() as tx:
            pending = tx.conversations_to_index(1)
        if not pending:
            break
        tenant, conversation_id = pending[0]
        done = False
        while not done and steps < bound:
            done = write_retried(
                store, _index_step, tenant, conversation_id, VECTORS_PER_TRANSACTION
            )
            steps += 1
    return steps


def _index_step(wtx: WriteTxn, tenant: str, conversation_id: str, depths: int) -> bool:
    return wtx.index_conversation_step(tenant, conversation_id, depths)


def keep_memory_vectors(
    store: Store, embedder: str, by_owner: Mapping[tuple[str, str], Sequence[MemoryVector]]
) -> None:
    """Store memories' vectors from ``embedder``: one transaction per owner."""
    for (tenant, user), owned in sorted(by_owner.items()):
        write_retried(store, _keep_owner_vectors, tenant, user, embedder, owned)


def _keep_owner_vectors(
    wtx: WriteTxn, tenant: str, user: str, embedder: str, owned: Sequence[MemoryVector]
) -> None:
    wtx.set_memory_vectors(tenant, user, embedder, owned)


def _term(vector: TermVector) -> str:
    return vector.term

"""Hybrid search over a conversation's turns and a user's memories, and keeping its index.

The pipeline (measured on the LoCoMo development split; see ``convmem.eval.locomo``):

1. **Query analysis.** The conversation's speaker names found in the query are set aside; the
   content terms are the remaining words less stopwords.
2. **Lexical**: the terms, OR-ed, over FTS5 (porter stemming) with bm25 weighting the turn's own
   text 1 and its neighbours' text 0.5.
3. **Expansion** (with an embedder): each term widened to at most 5 words of the conversation's
   own vocabulary at cosine ≥ 0.6, run as a second lexical query. Word vectors are stored when the
   words first appear, so a query embeds only the words the conversation never used.
4. **Vector**: cosine between the query without speaker names (a name dominates the embedding of a
   short question) and every turn of the conversation.
5. **Fusion**: reciprocal rank fusion, k = 10, then x1.2 for turns of the single speaker the query
   names, if it names exactly one.
6. **Neighbour lift** (with an embedder, whose cached vectors carry each turn's depth): each fused
   score plus 0.25 x the best fused score of the turns one step above or below it. On the LoCoMo
   development split (MiniLM), judged per conversation, evidence recall@10 went from 0.821 to
   0.839 (conv-26) and 0.860 to 0.893 (conv-30), multi-hop from 0.526 to 0.526 and 0.483 to
   0.529; weights 0.2-0.25 helped both conversations, 0.3 and more cost conv-26 multi-hop
   questions, lifting before the speaker prior or from one side only did worse, and requiring
   the neighbour to be in the same sitting changed nothing. Depth stands in for adjacency: in a
   branched conversation, turns of a sibling branch at the next depth count as neighbours too.
   Spreading the top 10 over sessions or away from neighbours (caps, MMR) cost recall overall.

Every store call carries the principal's tenant and user: filters come before ranking.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from convmem.errors import InvalidInput
from convmem.model.memory import MemoryHit, MemoryRecord
from convmem.model.messages import Message
from convmem.model.search import MessageHit
from convmem.retrieval.fusion import Fused, boost, lift_by_neighbours, rrf
from convmem.retrieval.index import (
    IndexedTurn,
    context_text,
    indexable,
    indexed_turn,
    vocabulary,
)
from convmem.retrieval.lexical import query_terms
from convmem.retrieval.vector import (
    Embedder,
    Matrix,
    cosine_order,
    from_blobs,
    nearest_words,
    normalise,
    to_blob,
)
from convmem.store.base import IndexedRow, IndexEntry, ReadTxn, Store, WriteTxn

if TYPE_CHECKING:
    from convmem.memories import Principal

RETRIEVERS = ("lexical", "expansion", "vector")


@dataclass(frozen=True)
class SearchOptions:
    """Knobs of the hybrid ranking; the defaults are the measured ones."""

    retrievers: tuple[str, ...] = RETRIEVERS
    rrf_k: float = 10.0
    speaker_boost: float = 1.2
    expansion_per_term: int = 5
    expansion_min_similarity: float = 0.6
    # how deep each ranking goes into the fusion; past ~100 a rank adds < 1/110 of a top hit
    depth: int = 200
    # Embed query terms the conversation never used, so they too can be expanded (one model call
    # with the query either way, but a longer batch).
    expand_unknown_terms: bool = True
    # share of its best neighbour's fused score added to a turn's (0 turns the lift off)
    neighbour_lift: float = 0.25

    def __post_init__(self) -> None:
        unknown = set(self.retrievers) - set(RETRIEVERS)
        if unknown or not self.retrievers:
            raise InvalidInput(f"retrievers must be among {', '.join(RETRIEVERS)}")
        if self.rrf_k <= 0 or self.depth < 1 or self.speaker_boost <= 0:
            raise InvalidInput("rrf_k, depth and speaker_boost must be positive")
        if self.neighbour_lift < 0:
            raise InvalidInput("neighbour_lift must not be negative")


class VectorCache:
    """In-process word → vector memo (per embedder), bounded. Words recur across turns and
    queries; embedding each once per process takes the model off the common path. Holds no
    content beyond single words, and only in memory."""

    def __init__(self, capacity: int = 50_000) -> None:
        self._capacity = capacity
        self._items: OrderedDict[tuple[str, str], Matrix] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, embedder: str, word: str) -> Matrix | None:
        with self._lock:
            vector = self._items.get((embedder, word))
            if vector is not None:
                self._items.move_to_end((embedder, word))
            return vector

    def put(self, embedder: str, word: str, vector: Matrix) -> None:
        with self._lock:
            self._items[(embedder, word)] = vector
            if len(self._items) > self._capacity:
                self._items.popitem(last=False)


@dataclass(frozen=True)
class ConversationVectors:
    """A conversation's turn vectors and vocabulary, as numpy arrays, at one generation."""

    generation: int
    ids: list[str]
    speakers: list[str]
    depths: npt.NDArray[np.int64]
    created: list[datetime]
    matrix: Matrix
    vocabulary: list[str]
    vocab_matrix: Matrix


class VectorsCache:
    """Per-process cache of ``ConversationVectors`` (a few conversations, LRU). Reading ~2,000
    vectors out of SQLite and converting them costs several milliseconds a query; the store's
    generation number says whether the cached copy is current, so a change — a new turn, a
    deleted one — is seen by the next search. Holds ids and vectors, no text."""

    def __init__(self, capacity: int = 16) -> None:
        self._capacity = capacity
        self._items: OrderedDict[tuple[str, str, str, str], ConversationVectors] = OrderedDict()
        self._lock = threading.Lock()

    def load(
        self, tx: ReadTxn, who: Principal, conversation_id: str, embedder: str
    ) -> ConversationVectors:
        key = (who.tenant, who.user, conversation_id, embedder)
        generation = tx.search_generation(who.tenant, conversation_id)
        with self._lock:
            cached = self._items.get(key)
            if cached is not None and generation is not None and cached.generation == generation:
                self._items.move_to_end(key)
                return cached
        rows = tx.message_vectors(who.tenant, who.user, conversation_id, embedder)
        terms = tx.term_vectors(who.tenant, conversation_id, embedder)
        speakers = {s.lower() for s in tx.conversation_speakers(who.tenant, conversation_id)}
        terms = [(t, b) for t, b in terms if t not in speakers]
        dims = len(rows[0].vector) // 2 if rows else len(terms[0][1]) // 2 if terms else 1
        loaded = ConversationVectors(
            generation=generation if generation is not None else -1,
            ids=[r.message_id for r in rows],
            speakers=[r.speaker for r in rows],
            depths=np.asarray([r.depth for r in rows], dtype=np.int64),
            created=[r.created_at for r in rows],
            matrix=from_blobs([r.vector for r in rows], dims),
            vocabulary=[t for t, _ in terms],
            vocab_matrix=from_blobs([b for _, b in terms], dims),
        )
        if generation is not None:
            with self._lock:
                self._items[key] = loaded
                self._items.move_to_end(key)
                while len(self._items) > self._capacity:
                    self._items.popitem(last=False)
        return loaded


# --- query analysis -----------------------------------------------------------------------------


@dataclass(frozen=True)
class QueryPlan:
    names: tuple[str, ...]  # speakers the query names
    terms: tuple[str, ...]  # content terms, names left out
    vector_text: str  # the query without the names


def _name_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(name)}(?:['\u2019]s)?(?!\w)", re.IGNORECASE)


def plan_query(query: str, speakers: Sequence[str]) -> QueryPlan:
    names = tuple(s for s in speakers if _name_pattern(s).search(query))
    name_words = {w for n in names for w in n.lower().split()}
    terms = query_terms(query, drop=name_words)
    if not terms:  # "Caroline?" still searches for the name
        terms = query_terms(query)
    stripped = query
    for name in names:
        stripped = _name_pattern(name).sub(" ", stripped)
    stripped = " ".join(stripped.split())
    return QueryPlan(names, tuple(terms), stripped or query)


# --- embedding helpers ----------------------------------------------------------------------------


def embed_with_words(
    embedder: Embedder,
    cache: VectorCache,
    texts: Sequence[str],
    words: Sequence[str],
    stored: Callable[[Sequence[str]], dict[str, bytes]] | None = None,
) -> tuple[Matrix, dict[str, Matrix]]:
    """Vectors for ``texts`` and ``words``. A word comes from the process cache, else from
    ``stored`` (the tenant's word vectors), else from the model — in a call of its own: batched
    with a sentence, each one-word row would be padded to the sentence's length (a query with four
    new words took 24 ms in one call, 8 + 6 ms in two)."""
    vectors: dict[str, Matrix] = {}
    missing: list[str] = []
    for word in words:
        known = cache.get(embedder.name, word)
        if known is None:
            missing.append(word)
        else:
            vectors[word] = known
    if missing and stored is not None:
        found = stored(missing)
        for word, blob in found.items():
            vector = from_blobs([blob], len(blob) // 2)[0]
            cache.put(embedder.name, word, vector)
            vectors[word] = vector
        missing = [w for w in missing if w not in found]
    if missing:
        for word, row in zip(missing, normalise(embedder.embed(missing)), strict=True):
            cache.put(embedder.name, word, row)
            vectors[word] = row
    rows = normalise(embedder.embed(texts)) if texts else np.zeros((0, 1), dtype=np.float32)
    return rows, vectors


# --- keeping the index ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PreparedTurn:
    """What indexing a message needs, computed before the write transaction (the model is slow;
    the write lock is not held while it runs)."""

    turn: IndexedTurn
    words: tuple[str, ...]
    embedder: str | None
    vector: bytes | None
    word_vectors: dict[str, bytes]


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
    rows, word_vectors = embed_with_words(embedder, cache, [turn.body], words)
    blobs = {w: to_blob(v) for w, v in word_vectors.items()}
    return PreparedTurn(turn, words, embedder.name, to_blob(rows[0]), blobs)


def _as_turn(row: IndexedRow) -> IndexedTurn:
    return IndexedTurn(row.message_id, row.speaker, row.session, row.created_at, row.body)


def write_turn(
    tx: WriteTxn,
    tenant: str,
    user: str,
    message: Message,
    prepared: PreparedTurn,
    session_gap: timedelta,
) -> None:
    """Index a message just inserted, and make it the following context of its parent."""
    parent_row: IndexedRow | None = None
    grandparent: IndexedRow | None = None
    if message.parent_id is not None:
        rows = tx.indexed_rows(tenant, [message.parent_id])
        parent_row = rows.get(message.parent_id)
        if parent_row is not None and parent_row.parent_id is not None:
            grandparent = tx.indexed_rows(tenant, [parent_row.parent_id]).get(parent_row.parent_id)
    turn = prepared.turn
    parent = _as_turn(parent_row) if parent_row is not None else None
    tx.index_message(
        tenant,
        user,
        IndexEntry(
            message_id=message.id,
            conversation_id=message.conversation_id,
            depth=message.depth,
            created_at=turn.created_at,
            speaker=turn.speaker,
            session=turn.session,
            body=turn.body,
            ctx=context_text(turn, parent, None, session_gap),
            embedder=prepared.embedder,
            vector=prepared.vector,
        ),
    )
    if parent is not None:
        before = _as_turn(grandparent) if grandparent is not None else None
        tx.set_index_context(tenant, parent.message_id, context_text(parent, before, turn))
    tx.add_terms(tenant, message.conversation_id, prepared.words, [turn.speaker])
    if prepared.embedder is not None and prepared.word_vectors:
        tx.set_term_vectors(tenant, prepared.embedder, sorted(prepared.word_vectors.items()))


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
    speakers = {speaker for speaker, _ in bodies}
    texts = [body[len(speaker) + 2 :] for speaker, body in bodies]
    tx.retain_terms(tenant, conversation_id, vocabulary(texts), speakers)


# --- searching a conversation ---------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """Which turns a search may return: older than ``max_depth`` (the assembled window's start),
    created in [since, until)."""

    max_depth: int | None = None
    since: datetime | None = None
    until: datetime | None = None


def rank_conversation(
    tx: ReadTxn,
    who: Principal,
    conversation_id: str,
    query: str,
    *,
    embedder: Embedder | None,
    cache: VectorCache,
    options: SearchOptions,
    window: Window = Window(),
    vectors: VectorsCache | None = None,
) -> list[Fused[str]]:
    """Fused ranking of a conversation's turns (message ids) for ``query``."""
    tenant, user = who.tenant, who.user
    vectors = vectors or VectorsCache(capacity=0)
    speakers = tx.conversation_speakers(tenant, conversation_id)
    plan = plan_query(query, speakers)
    use = set(options.retrievers)
    if embedder is None:
        use -= {"expansion", "vector"}
    speaker_of: dict[str, str] = {}
    depth_of: dict[str, int] = {}
    rankings: list[tuple[str, list[str]]] = []

    def lexical(terms: Sequence[str]) -> list[str]:
        rows = tx.search_messages(
            tenant, user, conversation_id, terms, limit=options.depth,
            max_depth=window.max_depth, since=window.since, until=window.until,
        )  # fmt: skip
        for row in rows:
            speaker_of[row.message_id] = row.speaker
        return [row.message_id for row in rows]

    if "lexical" in use and plan.terms:
        rankings.append(("lexical", lexical(plan.terms)))
    if embedder is not None and use & {"expansion", "vector"}:
        data = vectors.load(tx, who, conversation_id, embedder.name)
        if options.neighbour_lift > 0:
            depth_of = dict(zip(data.ids, data.depths.tolist(), strict=True))
        known = {term: i for i, term in enumerate(data.vocabulary)}
        expanding = "expansion" in use and bool(plan.terms) and bool(known)
        unknown_terms = (
            [t for t in plan.terms if t not in known]
            if expanding and options.expand_unknown_terms
            else []
        )
        _, word_vectors = embed_with_words(
            embedder, cache, [], unknown_terms,
            stored=lambda words: tx.stored_term_vectors(tenant, embedder.name, words),
        )  # fmt: skip
        expandable = [t for t in plan.terms if t in known or t in word_vectors]
        if expanding and expandable:
            term_matrix = np.stack(
                [data.vocab_matrix[known[t]] if t in known else word_vectors[t] for t in expandable]
            )
            extra = nearest_words(
                term_matrix, expandable, data.vocabulary, data.vocab_matrix,
                per_term=options.expansion_per_term,
                min_similarity=options.expansion_min_similarity,
            )  # fmt: skip
            if extra:
                rankings.append(("expansion", lexical([*plan.terms, *extra])))
        if "vector" in use and data.ids:
            query_vector = normalise(embedder.embed([plan.vector_text]))
            keep = np.ones(len(data.ids), dtype=bool)
            if window.max_depth is not None:
                keep &= data.depths < window.max_depth
            if window.since is not None or window.until is not None:
                since, until = window.since, window.until
                keep &= np.asarray(
                    [(since is None or c >= since) and (until is None or c < until)
                     for c in data.created], dtype=bool,
                )  # fmt: skip
            rows = np.flatnonzero(keep)
            order, _ = cosine_order(query_vector[0], data.matrix[rows])
            top = rows[order[: options.depth]]
            for i in top:
                speaker_of[data.ids[i]] = data.speakers[i]
            rankings.append(("vector", [data.ids[i] for i in top]))
    fused = rrf(rankings, k=options.rrf_k)
    if len(plan.names) == 1:
        named = plan.names[0]
        favoured = {key for key, speaker in speaker_of.items() if speaker == named}
        fused = boost(fused, favoured, options.speaker_boost)
    if depth_of:
        fused = lift_by_neighbours(fused, depth_of, options.neighbour_lift)
    return fused


def search_conversation(
    tx: ReadTxn,
    who: Principal,
    conversation_id: str,
    query: str,
    k: int,
    *,
    embedder: Embedder | None,
    cache: VectorCache,
    options: SearchOptions,
    window: Window = Window(),
    vectors: VectorsCache | None = None,
) -> list[MessageHit]:
    check_query(query, k)
    fused = rank_conversation(
        tx, who, conversation_id, query, embedder=embedder, cache=cache, options=options,
        window=window, vectors=vectors,
    )  # fmt: skip
    hits = []
    for item in fused[:k]:
        message = tx.get_message(who.tenant, who.user, item.key)
        hits.append(MessageHit(message, item.score, item.retrievers))
    return hits


def check_query(query: object, k: int) -> None:
    if not isinstance(query, str):
        raise InvalidInput("query must be a string")
    if not isinstance(k, int) or k < 1:
        raise InvalidInput("k must be a positive integer")


# --- searching memories ---------------------------------------------------------------------------


def search_memories(
    tx: ReadTxn,
    who: Principal,
    query: str,
    k: int,
    *,
    scopes: Sequence[str],
    now: datetime,
    embedder: Embedder | None,
    cache: VectorCache,
    rrf_k: float = 10.0,
    min_similarity: float = 0.2,
) -> list[MemoryHit]:
    """Current memories by lexical and (with an embedder) vector rank, fused. A memory unrelated
    to the query (cosine below ``min_similarity``) is not a vector hit: a short list of memories
    should not come back whole for any question."""
    check_query(query, k)
    terms = query_terms(query)
    depth = max(50, 4 * k)
    lexical = tx.search_memory_terms(
        who.tenant, who.user, terms, scopes=scopes, now=now, limit=depth
    )
    records: dict[str, MemoryRecord] = {record.id: record for record, _ in lexical}
    rankings: list[tuple[str, list[str]]] = [("lexical", [r.id for r, _ in lexical])]
    if embedder is not None and query.strip():
        rows = tx.memory_vectors(who.tenant, who.user, embedder.name, scopes=scopes, now=now)
        if rows:
            query_rows, _ = embed_with_words(embedder, cache, [query], [])
            matrix = from_blobs([blob for _, blob in rows], len(query_rows[0]))
            order, sims = cosine_order(query_rows[0], matrix)
            top = [int(i) for i in order[:depth] if sims[i] >= min_similarity]
            for i in top:
                records.setdefault(rows[i][0].id, rows[i][0])
            rankings.append(("vector", [rows[i][0].id for i in top]))
    fused = rrf(rankings, k=rrf_k)
    return [MemoryHit(records[f.key], f.score, f.retrievers) for f in fused[:k]]


# --- rebuilding and backfilling -------------------------------------------------------------------


def reindex(
    store: Store,
    embedder: Embedder | None,
    cache: VectorCache,
    session_gap: timedelta,
    *,
    batch_size: int = 500,
) -> int:
    """Index every message that has no index row, oldest first (so each finds its parent)."""
    done = 0
    while True:
        with store.read() as tx:
            pending = tx.unindexed_messages(None, batch_size)
            messages = [(t, u, tx.get_message(t, u, m)) for t, u, m in pending]
        if not messages:
            return done
        for tenant, user, message in messages:
            prepared = prepare_turn(message, embedder, cache)
            if prepared is None:
                continue
            with store.write() as wtx:
                write_turn(wtx, tenant, user, message, prepared, session_gap)
            done += 1


def backfill(
    store: Store,
    embedder: Embedder,
    cache: VectorCache,
    *,
    batch_size: int = 256,
    max_batches: int | None = None,
) -> dict[str, int]:
    """Vectors for every indexed turn, word in use and memory lacking one from ``embedder``; the
    model runs between transactions, never inside one. ``max_batches`` bounds the batches of
    each kind per call (a worker interleaving jobs takes one at a time)."""
    counts = {"messages": 0, "terms": 0, "memories": 0}

    def more(kind: str, size: int) -> bool:
        return max_batches is None or counts[kind] < max_batches * size

    while more("messages", batch_size):
        with store.read() as tx:
            turns = tx.missing_message_vectors(embedder.name, batch_size)
        if not turns:
            break
        vectors = normalise(embedder.embed([body for _, _, body in turns]))
        with store.write() as wtx:
            for tenant in sorted({t for t, _, _ in turns}):
                rows = [(m, to_blob(v)) for (t, m, _), v in zip(turns, vectors, strict=True)
                        if t == tenant]  # fmt: skip
                wtx.set_message_vectors(tenant, embedder.name, rows)
        counts["messages"] += len(turns)
    while more("terms", batch_size * 8):
        with store.read() as tx:
            terms = tx.missing_term_vectors(embedder.name, batch_size * 8)
        if not terms:
            break
        words = sorted({term for _, term in terms})
        word_vectors = dict(zip(words, normalise(embedder.embed(words)), strict=True))
        for word, vector in word_vectors.items():
            cache.put(embedder.name, word, vector)
        with store.write() as wtx:
            for tenant in sorted({t for t, _ in terms}):
                mine = [w for t, w in terms if t == tenant]
                wtx.set_term_vectors(
                    tenant, embedder.name, [(w, to_blob(word_vectors[w])) for w in mine]
                )
                wtx.bump_conversations_using(tenant, mine)
        counts["terms"] += len(terms)
    while more("memories", batch_size):
        with store.read() as tx:
            memories = tx.missing_memory_vectors(embedder.name, batch_size)
        if not memories:
            break
        vectors = normalise(embedder.embed([text for _, _, _, text in memories]))
        with store.write() as wtx:
            for (tenant, user, memory_id, _), vector in zip(memories, vectors, strict=True):
                wtx.set_memory_vectors(tenant, user, embedder.name, [(memory_id, to_blob(vector))])
        counts["memories"] += len(memories)
    return counts

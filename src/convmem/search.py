"""Hybrid search over a conversation's turns and a user's memories (the index is kept by
``convmem.indexing``).

The pipeline (measured on the LoCoMo development split; see ``convmem.eval.locomo``):

1. **Query analysis.** The conversation's speaker names found in the query are set aside; the
   content terms are the remaining words less stopwords.
2. **Lexical**: the terms, OR-ed, over FTS5 (porter stemming) with bm25 weighting the turn's own
   text 1 and its neighbours' text 0.5.
3. **Expansion** (with an embedder): each term widened to at most 5 words of the conversation's
   own vocabulary at cosine ≥ 0.6, run as a second lexical query. Word vectors are stored when the
   words first appear, so a query embeds only words its tenant never used — apart from the query,
   in a call of their own (batched with it, each word would be padded to the query's length).
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
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np

from convmem.errors import InvalidInput, InvalidQuery
from convmem.model.memory import MemoryHit, MemoryRecord
from convmem.model.search import MessageHit
from convmem.retrieval.caches import VectorCache, VectorsCache, embed_with_words
from convmem.retrieval.fusion import Fused, boost, lift_by_neighbours, rrf
from convmem.retrieval.lexical import query_terms
from convmem.retrieval.vector import (
    Embedder,
    cosine_order,
    nearest_words,
    normalise,
)
from convmem.store.base import ReadTxn
from convmem.store.sqlite.vectors import from_blobs

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
    depth_of: dict[str, int] = {}  # with vectors: each turn's depth, for the neighbour lift
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
            depth_of = data.depth_of
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
    found = tx.get_messages(who.tenant, who.user, [item.key for item in fused[:k]])
    return [MessageHit(found[item.key], item.score, item.retrievers) for item in fused[:k]]


def check_query(query: object, k: int) -> None:
    if not isinstance(query, str):
        raise InvalidQuery("query must be a string")
    if not isinstance(k, int) or k < 1:
        raise InvalidQuery("k must be a positive integer")


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
    records: dict[str, MemoryRecord] = {hit.record.id: hit.record for hit in lexical}
    rankings: list[tuple[str, list[str]]] = [("lexical", [hit.record.id for hit in lexical])]
    if embedder is not None and query.strip():
        rows = tx.memory_vectors(who.tenant, who.user, embedder.name, scopes=scopes, now=now)
        if rows:
            query_rows = normalise(embedder.embed([query]))
            matrix = from_blobs([blob for _, blob in rows], len(query_rows[0]))
            order, sims = cosine_order(query_rows[0], matrix)
            top = [int(i) for i in order[:depth] if sims[i] >= min_similarity]
            for i in top:
                records.setdefault(rows[i][0].id, rows[i][0])
            rankings.append(("vector", [rows[i][0].id for i in top]))
    fused = rrf(rankings, k=rrf_k)
    return [MemoryHit(records[f.key], f.score, f.retrievers) for f in fused[:k]]

"""Query vectors: an embedder's query path, the per-request and the cross-request caches, and the
fused ranking's pipeline (same results as the list functions, cut at a limit)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import convmem
from convmem import HashingEmbedder
from convmem.engine.parts import GuardedEmbedder, Parts
from convmem.errors import TimeLimitExceeded
from convmem.model.deadline import TimeLimits
from convmem.retrieval.caches import VectorCache, query_vector
from convmem.retrieval.fusion import Fused, Scores, boost, lift_by_neighbours, rrf
from convmem.retrieval.vector import Matrix, QueryEmbedder, RequestEmbedder, embed_queries


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, recording what it embeds as documents and as queries."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.queries: list[str] = []
        self.delay = 0.0

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.texts.extend(texts)
        return super().embed(texts)


class QueryPathEmbedder(CountingEmbedder):
    """An embedder with a query path of its own: a query's vector is its text's, negated, so a
    test can tell which path made it."""

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        self.queries.extend(texts)
        if self.delay:
            time.sleep(self.delay)
        return -HashingEmbedder.embed(self, texts)


TURNS = ["I took up pottery last month.", "How fun!", "The train was late.", "Sorry to hear."]


def test_embed_queries_takes_the_query_path_when_there_is_one() -> None:
    plain, own = CountingEmbedder(), QueryPathEmbedder()
    assert not isinstance(plain, QueryEmbedder) and isinstance(own, QueryEmbedder)
    assert np.allclose(embed_queries(plain, ["pottery"]), plain.embed(["pottery"]))
    assert np.allclose(embed_queries(own, ["pottery"]), -own.embed(["pottery"]))
    assert own.queries == ["pottery"]


def test_a_repeated_query_is_embedded_once_per_process(tmp_path: Path) -> None:
    embedder = QueryPathEmbedder()
    with convmem.open(tmp_path / "db.sqlite", embedder=embedder) as mem:
        conv = mem.scope("acme", "alice").create_conversation()
        for i, line in enumerate(TURNS):
            conv.append("user" if i % 2 == 0 else "assistant", line)
        first = conv.search("what new hobby did I pick up?", k=2)
        again = conv.search("what new hobby did I pick up?", k=2)
        assert embedder.queries == ["what new hobby did I pick up?"]
        assert [(h.message.id, h.score) for h in again] == [(h.message.id, h.score) for h in first]
        conv.search("was the train on time?", k=2)
        assert len(embedder.queries) == 2  # another text is another entry
        mem.vector_cache.forget_queries()
        conv.search("what new hobby did I pick up?", k=2)
        assert len(embedder.queries) == 3


def test_the_query_cache_is_bounded_keyed_by_embedder_and_holds_no_text() -> None:
    cache = VectorCache(queries=2)
    embedder = QueryPathEmbedder()
    for text in ("my locker code is 4471", "second question", "third question"):
        query_vector(embedder, cache, text)
    assert cache.query(embedder.name, "my locker code is 4471") is None  # least recent went
    assert cache.query(embedder.name, "third question") is not None
    assert cache.query("another-model", "third question") is None
    held = repr(cache._queries._items)  # keys are digests of the text
    assert "third" not in held and "4471" not in held
    vector = query_vector(embedder, cache, "third question")
    assert not vector.flags.writeable  # shared between requests


def test_one_request_embeds_a_query_once_on_either_path() -> None:
    plain = CountingEmbedder()
    request = RequestEmbedder(plain)
    request.embed(["where is my locker?"])
    request.embed_queries(["where is my locker?"])  # no query path: the same text, memoised
    assert plain.texts == ["where is my locker?"]
    own = QueryPathEmbedder()
    request = RequestEmbedder(own)
    a = request.embed_queries(["where is my locker?", "where is my locker?"])
    assert own.queries == ["where is my locker?"] and np.array_equal(a[0], a[1])


def test_a_guarded_query_keeps_the_embedders_time_limit() -> None:
    own = QueryPathEmbedder()
    own.delay = 2.0
    guarded = GuardedEmbedder(own, 0.05, Parts(TimeLimits()))
    started = time.monotonic()
    try:
        guarded.embed_queries(["where is my locker?"])
        raise AssertionError("the query was not stopped at the limit")
    except Exception as exc:
        assert isinstance(exc.__cause__, TimeLimitExceeded)
    assert time.monotonic() - started < 1.0
    assert isinstance(guarded.failure, TimeLimitExceeded)


def test_the_scores_pipeline_ranks_as_the_list_functions_do() -> None:
    # equal reciprocal-rank sums (a at 1 and 3, b at 3 and 1) make ties for the steps to keep
    rankings = [("lexical", ["a", "c", "b", "d", "e"]), ("vector", ["b", "e", "a", "f", "c"])]
    position = {"a": 4, "b": 9, "c": 5, "d": 10, "e": 1, "f": 2}
    listed = lift_by_neighbours(boost(rrf(rankings, k=10), {"c", "f"}, 1.2), position, 0.25)
    piped = Scores.rrf(rankings, k=10).boost({"c", "f"}, 1.2).lift(position, 0.25)
    assert piped.ranked() == listed
    assert piped.ranked(3) == listed[:3]
    assert rrf(rankings)[:2] == [Fused("a", 1 / 11 + 1 / 13, ("lexical", "vector")),
                                 Fused("b", 1 / 13 + 1 / 11, ("lexical", "vector"))]  # fmt: skip


def test_search_returns_k_hits_from_a_longer_fused_list(tmp_path: Path) -> None:
    with convmem.open(tmp_path / "db.sqlite", embedder=HashingEmbedder()) as mem:
        conv = mem.scope("acme", "alice").create_conversation()
        for i in range(12):
            conv.append("user", f"pottery class number {i} was fun")
        hits = conv.search("pottery class", k=5)
        assert len(hits) == 5
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)

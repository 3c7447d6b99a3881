"""PostgreSQL ranks a long conversation's turns by meaning through an HNSW index, with the scope
applied while the graph is walked (``convmem.store.postgres.vector_index``): a conversation of
one user among others' gets its own nearest turns, as many as asked, and never another's.

The conversations here are short, so the size from which the index is used is lowered to them
(``APPROXIMATE_FROM``), and the planner is kept off the other paths (a sequential scan, a sort)
so that the statement runs through the index, as it does on a large table: the plan is checked.
Without the iterative scan, an HNSW scan hands back its ``ef_search`` nearest rows of the whole
table and the filter leaves a smaller user a few of them, or none: the walk here keeps as many
candidates as the limit, so that a scan that stops there is caught.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import convmem
from convmem.config import Config
from convmem.domain.indexing import VECTORS_PER_TRANSACTION, index_long_conversations
from convmem.importers.bulk import ImportNode, ImportTree, import_trees
from convmem.model.messages import NewMessage
from convmem.retrieval.vector import HashingEmbedder
from convmem.store.ranking import EVERY_TURN, Window
from tests.extras import module_of_extra
from tests.store.backends import Backend

TURNS = 60
TOPICS = ("kiln glaze pottery", "budget review numbers", "hiking trail boots", "piano scales")


@pytest.fixture
def long_from_half(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    """PostgreSQL only, with the size from which a conversation is ranked through the index
    lowered to ``TURNS // 2`` (the module docstring)."""
    if backend.name != "postgresql":
        pytest.skip("PostgreSQL's HNSW index")
    module_of_extra("psycopg", "postgres")
    from convmem.store.postgres import vector_index

    monkeypatch.setattr(vector_index, "APPROXIMATE_FROM", TURNS // 2)


def _conversation(
    memory: convmem.Memory, user: str, turns: int, salt: str
) -> tuple[str, list[str]]:
    scope = memory.scope("acme", user)
    nodes = [
        ImportNode(f"{salt}{i}", f"{salt}{i - 1}" if i else None,
                   NewMessage("user" if i % 2 == 0 else "assistant",
                              f"{TOPICS[i % len(TOPICS)]} {salt} note {i}"))
        for i in range(turns)
    ]  # fmt: skip
    import_trees(scope, "test", [ImportTree(salt, salt, None, nodes, f"{salt}{turns - 1}")])
    (record,) = scope.conversations()
    return record.id, [m.id for m in scope.conversation(record.id).branch()]


def _nearest(
    memory: convmem.Memory,
    user: str,
    conversation_id: str,
    embedder: HashingEmbedder,
    text: str,
    limit: int,
    window: Window = EVERY_TURN,
    iterative_scan: str = "relaxed_order",
) -> tuple[list[str], str]:
    """The ids ``nearest_messages`` ranks, and the plan of its statement, with the planner kept
    on the index path (the module docstring)."""
    vector = embedder.embed([text])[0]
    with memory.store.read() as tx:
        db: Any = tx._db  # type: ignore[attr-defined]
        db.execute("SET LOCAL enable_seqscan = off")
        db.execute("SET LOCAL enable_bitmapscan = off")
        db.execute("SET LOCAL enable_sort = off")
        # a walk keeping as few candidates as the limit: without the iterative scan, what the
        # filter leaves of them is all a scope gets (the module docstring)
        db.execute(f"SET LOCAL hnsw.ef_search = {limit}")
        db.execute(f"SET LOCAL hnsw.iterative_scan = {iterative_scan}")
        hits = tx.nearest_messages("acme", user, conversation_id, embedder.name, vector,
                                   window=window, limit=limit)  # fmt: skip
        from convmem.store.postgres.rows import halfvec
        from convmem.store.postgres.search import window_sql
        from convmem.store.postgres.vector_index import nearest_sql

        filters, params = window_sql(window)
        query = halfvec(vector)
        scope = ("acme", conversation_id, user, embedder.name, *params)
        plan = db.execute(
            "EXPLAIN " + nearest_sql(len(vector), filters),
            ("acme", conversation_id, query, *scope, query, limit, query, *scope, query, limit),
        ).fetchall()
    return [h.message_id for h in hits], "\n".join(r[0] for r in plan)


def _cosines(memory: convmem.Memory, conversation_id: str, embedder: HashingEmbedder,
             text: str) -> dict[str, float]:  # fmt: skip
    """The oracle: every stored vector of the conversation's cosine to ``text``'s, computed
    here."""
    with memory.store.read() as tx:
        rows = tx._db.execute(  # type: ignore[attr-defined]
            "SELECT message_id, vector FROM message_index WHERE tenant_id = 'acme' "
            "AND conversation_id = %s AND vector IS NOT NULL",
            (conversation_id,),
        ).fetchall()
    query = embedder.embed([text])[0]
    return {r[0]: float(np.dot(np.asarray(r[1].to_numpy(), np.float32), query)) for r in rows}


def _as_good_as_exact(found: list[str], cosines: dict[str, float]) -> bool:
    """``found`` holds turns as near as the exact top ``len(found)`` (turns of equal cosine
    are interchangeable: texts here share most of their words)."""
    bar = sorted(cosines.values(), reverse=True)[len(found) - 1]
    return min(cosines[f] for f in found) >= bar - 1e-3


def test_a_long_conversation_among_others_is_ranked_through_the_index_within_its_scope(
    backend: Backend, long_from_half: None
) -> None:
    embedder = HashingEmbedder()  # 256 wide: one of the indexed widths
    with backend.open(embedder=embedder) as memory:
        # alice's conversation is long; bob's, in the same tenant, five times longer
        alice_conversation, alice_ids = _conversation(memory, "alice", TURNS, "a")
        bob_conversation, bob_ids = _conversation(memory, "bob", 5 * TURNS, "b")
        memory.backfill_embeddings()
        text = f"{TOPICS[0]} a note 12"

        found, plan = _nearest(memory, "alice", alice_conversation, embedder, text, 10)
        assert "message_index_hnsw_256" in plan
        assert len(found) == 10 and set(found) <= set(alice_ids)
        assert found[0] == alice_ids[12]  # the turn the query repeats
        assert _as_good_as_exact(found, _cosines(memory, alice_conversation, embedder, text))

        # bob's neighbours of the same text: his own only, as many as asked
        found, _ = _nearest(memory, "bob", bob_conversation, embedder, text, 10)
        assert len(found) == 10 and set(found) <= set(bob_ids)
        assert _as_good_as_exact(found, _cosines(memory, bob_conversation, embedder, text))

        # alice's conversation under bob's name, and a window: nothing of bob's, nothing newer
        found, _ = _nearest(memory, "bob", alice_conversation, embedder, text, 10)
        assert found == []
        found, _ = _nearest(memory, "alice", alice_conversation, embedder, text, 10,
                            Window(max_depth=20))  # fmt: skip
        assert len(found) == 10 and set(found) <= set(alice_ids[:20])

        # a server whose pgvector has no iterative scan (before 0.8: the setting stays unset)
        # ranks the long conversation exactly instead of cutting the scope's share of a walk
        found, _ = _nearest(memory, "alice", alice_conversation, embedder, text, 10,
                            iterative_scan="off")  # fmt: skip
        assert len(found) == 10 and set(found) <= set(alice_ids)
        assert _as_good_as_exact(found, _cosines(memory, alice_conversation, embedder, text))


def test_a_short_conversation_is_ranked_exactly_without_the_index(backend: Backend) -> None:
    if backend.name != "postgresql":
        pytest.skip("PostgreSQL's HNSW index")
    embedder = HashingEmbedder()
    with backend.open(embedder=embedder) as memory:
        conversation_id, ids = _conversation(memory, "alice", TURNS, "a")
        _conversation(memory, "bob", 5 * TURNS, "b")
        memory.backfill_embeddings()
        text = f"{TOPICS[1]} a note 13"
        found, _ = _nearest(memory, "alice", conversation_id, embedder, text, 10)
        assert found[0] == ids[13]
        cosines = _cosines(memory, conversation_id, embedder, text)
        assert _as_good_as_exact(found, cosines)
        # exact: in the cosines' order (to halfvec's precision)
        assert all(cosines[a] >= cosines[b] - 1e-2 for a, b in itertools.pairwise(found))


def _walks_the_index(
    memory: convmem.Memory, user: str, conversation_id: str, embedder: HashingEmbedder, text: str
) -> bool:
    """Whether ``nearest_messages``' statement ran its HNSW branch for this conversation (the
    plan as executed: the other branch's gate leaves it never executed)."""
    from convmem.store.postgres.rows import halfvec
    from convmem.store.postgres.vector_index import nearest_sql

    query = halfvec(embedder.embed([text])[0])
    scope = ("acme", conversation_id, user, embedder.name)
    with memory.store.read() as tx:
        db: Any = tx._db  # type: ignore[attr-defined]
        db.execute("SET LOCAL enable_seqscan = off")
        db.execute("SET LOCAL enable_bitmapscan = off")
        db.execute("SET LOCAL enable_sort = off")
        db.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        plan = db.execute(
            "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + nearest_sql(256, ""),
            ("acme", conversation_id, query, *scope, query, 10, query, *scope, query, 10),
        ).fetchall()
    lines = [r[0] for r in plan if "message_index_hnsw_256" in r[0]]
    assert lines, "the index branch is in the plan"
    return not any("never executed" in line for line in lines)


def _flagged(memory: convmem.Memory, conversation_id: str) -> int:
    with memory.store.read() as tx:
        row = tx._db.execute(  # type: ignore[attr-defined]
            "SELECT count(*) FILTER (WHERE approximate) FROM message_index "
            "WHERE tenant_id = 'acme' AND conversation_id = %s",
            (conversation_id,),
        ).fetchone()
    return int(row[0])


def test_only_a_long_conversations_turns_go_into_the_index_and_only_once_all_are_there(
    backend: Backend, long_from_half: None
) -> None:
    """A vector written into an HNSW graph costs a walk of it: short conversations' turns stay
    out. A conversation that grows long is ranked exactly until its older turns are added (in
    steps, by the filler, worker or backfill), then through the index, its new turns with it."""
    embedder = HashingEmbedder()
    # no filler: the steps run only when this test runs them
    with backend.open(embedder=embedder, config=Config(embed_on_write=False)) as memory:
        short, _ = _conversation(memory, "bob", TURNS // 3, "b")
        growing, ids = _conversation(memory, "alice", TURNS // 3, "a")
        memory.backfill_embeddings()
        assert _flagged(memory, short) == _flagged(memory, growing) == 0
        text = f"{TOPICS[0]} a note 12"

        # alice's conversation grows past the size: turns written from then on are flagged, the
        # older ones not yet, and it is still ranked exactly
        conversation = memory.scope("acme", "alice").conversation(growing)
        for i in range(TURNS // 3, TURNS):
            ids.append(conversation.append("user", f"{TOPICS[i % len(TOPICS)]} a note {i}").id)
        first_flagged = TURNS // 2 - 1
        assert _flagged(memory, growing) == TURNS - first_flagged
        assert not _walks_the_index(memory, "alice", growing, embedder, text)

        # the older turns added a few depths per step, then the index serves it
        steps = index_long_conversations(memory.store, max_steps=1_000)
        assert steps > first_flagged // VECTORS_PER_TRANSACTION
        assert _flagged(memory, growing) == TURNS
        assert _walks_the_index(memory, "alice", growing, embedder, text)
        memory.backfill_embeddings()  # the new turns' vectors, into the index as they are set
        found, _ = _nearest(memory, "alice", growing, embedder, text, 10)
        assert found[0] == ids[12]
        assert _as_good_as_exact(found, _cosines(memory, growing, embedder, text))

        # a turn written now goes into the index as it is written, and is found through it
        ids.append(conversation.append("user", "glaze kiln firing schedule").id)
        memory.backfill_embeddings()
        assert _flagged(memory, growing) == TURNS + 1
        found, _ = _nearest(memory, "alice", growing, embedder, "glaze kiln firing schedule", 1)
        assert found == [ids[-1]]
        # bob's short conversation never went in
        assert _flagged(memory, short) == 0
        assert index_long_conversations(memory.store) == 0


def test_the_filler_adds_a_grown_conversations_older_turns(
    backend: Backend, long_from_half: None
) -> None:
    """With no worker running, the process's own filler takes the steps after its batches."""
    embedder = HashingEmbedder()
    with backend.open(embedder=embedder) as memory:
        growing, ids = _conversation(memory, "alice", TURNS // 3, "a")
        conversation = memory.scope("acme", "alice").conversation(growing)
        for i in range(TURNS // 3, TURNS):
            ids.append(conversation.append("user", f"{TOPICS[i % len(TOPICS)]} a note {i}").id)
        filler = memory.vector_filler
        assert filler is not None and filler.drain(timeout=30)
        assert _flagged(memory, growing) == TURNS
        text = f"{TOPICS[0]} a note 12"
        assert _walks_the_index(memory, "alice", growing, embedder, text)


def test_m030_adds_the_long_conversations_already_stored_and_leaves_the_short_out(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database at m029 holding a long and a short conversation: m030 flags the long one's
    turns and marks it ready, and builds the indexes over them only."""
    module_of_extra("psycopg", "postgres")
    import psycopg

    from convmem.store import migrations as runner
    from convmem.store.postgres import migrations, vector_index
    from convmem.store.postgres.options import options_from_url

    monkeypatch.setattr(vector_index, "APPROXIMATE_FROM", TURNS // 2)
    before_m030 = [m for m in migrations.LISTED if m.name != "m030_long_conversations_only"]
    with psycopg.connect(options_from_url(postgres_url).url, autocommit=True) as db:
        runner.apply(before_m030, migrations._Ledger(db))
        # rows as m029's code wrote them (no conversation rows: foreign keys off while loading)
        db.execute("SET session_replication_role = replica")
        for conversation, turns in (("long", TURNS), ("short", TURNS // 3)):
            for depth in range(turns):
                db.execute(
                    "INSERT INTO message_index (tenant_id, message_id, user_id, conversation_id, "
                    "depth, created_at, speaker, scope_lexeme, body, ctx, embedder, vector) "
                    "VALUES ('acme', %s, 'alice', %s, %s, now(), 'user', 'x', 'kiln glaze', '', "
                    "'hashing-256', %s::halfvec)",
                    (f"{conversation}-{depth}", conversation, depth,
                     str([1.0] + [0.0] * 255)),
                )  # fmt: skip
            db.execute(
                "INSERT INTO search_generations (tenant_id, conversation_id, generation) "
                "VALUES ('acme', %s, 1)",
                (conversation,),
            )
        db.execute("SET session_replication_role = origin")
        assert runner.apply(migrations.LISTED, migrations._Ledger(db)) == [
            "m030_long_conversations_only"
        ]
        flagged: dict[str, int] = dict(
            db.execute(
                "SELECT conversation_id, count(*) FILTER (WHERE approximate) FROM message_index "
                "GROUP BY conversation_id"
            ).fetchall()
        )
        states: dict[str, str] = dict(
            db.execute("SELECT conversation_id, approximate FROM search_generations").fetchall()
        )
        predicate = db.execute(
            "SELECT pg_get_indexdef(%s::regclass)", (vector_index.index_name(256),)
        ).fetchone()
    assert flagged == {"long": TURNS, "short": 0}
    assert states == {"long": "ready", "short": "no"}
    assert predicate is not None and "WHERE (approximate AND" in predicate[0]

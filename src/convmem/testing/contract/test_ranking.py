"""Ranked search at the store boundary (``RankedSearch``), through the Protocols alone: each
backend ranks in its own engine, under the principal's filters, and returns named rows."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

import convmem
from convmem.domain.indexing import vector_text
from convmem.store import MessageVector, TermVector, Window
from convmem.testing.harness import Backend

EMBEDDER = convmem.HashingEmbedder()
TURNS = [
    "We drove up to the lake on Saturday.",
    "I took up pottery last month, a class on Tuesdays.",
    "The weather was grey all week.",
    "My pottery teacher says my bowls are getting better.",
]


def _conversation(memory: convmem.Memory, user: str = "alice") -> tuple[str, list[str]]:
    conv = memory.scope("acme", user).create_conversation()
    ids = [conv.append("user", text).id for text in TURNS]
    assert memory.wait_for_vectors(30)  # filled in the background, after each write
    return conv.id, ids


def test_nearest_messages_ranks_the_principals_turns_in_the_window(backend: Backend) -> None:
    with backend.open(embedder=EMBEDDER) as memory:
        conv, ids = _conversation(memory)
        query = EMBEDDER.embed(["pottery bowls teacher"])[0]
        with memory.store.read() as tx:
            hits = tx.nearest_messages(
                "acme", "alice", conv, EMBEDDER.name, query, window=Window(), limit=10
            )
            shallow = tx.nearest_messages(
                "acme", "alice", conv, EMBEDDER.name, query, window=Window(max_depth=2), limit=10
            )
            others = tx.nearest_messages(
                "acme", "bob", conv, EMBEDDER.name, query, window=Window(), limit=10
            )
            two = tx.nearest_messages(
                "acme", "alice", conv, EMBEDDER.name, query, window=Window(), limit=2
            )
    assert hits[0].message_id == ids[3] and {h.message_id for h in hits} == set(ids)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(h.speaker == "user" for h in hits)
    assert {h.message_id: h.depth for h in hits} == {m: i for i, m in enumerate(ids)}
    assert {h.message_id for h in shallow} == set(ids[:2])
    assert others == []  # another user's conversation has no candidates for bob
    assert [h.message_id for h in two] == [h.message_id for h in hits[:2]]


def test_search_messages_returns_depth_and_speaker_under_the_window(backend: Backend) -> None:
    with backend.open() as memory:
        conv, ids = _conversation(memory)
        with memory.store.read() as tx:
            hits = tx.search_messages("acme", "alice", conv, ["pottery"], window=Window(), limit=10)
            older = tx.search_messages(
                "acme", "alice", conv, ["pottery"], window=Window(max_depth=3), limit=10
            )
            syntax = tx.search_messages(
                "acme", "alice", conv, ['"', "NEAR(", "*) OR (", "body:"], window=Window(), limit=10
            )
    # the turns that say it first; their neighbours match through the context column
    assert {h.message_id for h in hits[:2]} == {ids[1], ids[3]}
    assert {h.message_id: h.depth for h in hits} == {m: i for i, m in enumerate(ids)}
    assert older[0].message_id == ids[1] and {h.message_id for h in older} == set(ids[:3])
    assert syntax == []  # terms are text, never query syntax: no error, and no match


def test_a_widened_search_ranks_the_terms_and_the_wider_query(backend: Backend) -> None:
    with backend.open() as memory:
        conv, ids = _conversation(memory)
        memory.scope("acme", "bob").create_conversation().append("user", "A lake and a class.")
        with memory.store.read() as tx:

            def search(terms: list[str], user: str = "alice") -> list[str]:
                rows = tx.search_messages("acme", user, conv, terms, window=Window(), limit=10)
                return [r.message_id for r in rows]

            narrow, wide = tx.search_messages_widened(
                "acme", "alice", conv, ["pottery"], ["lake"], window=Window(), limit=10
            )
            shallow = tx.search_messages_widened(
                "acme", "alice", conv, ["pottery"], ["lake"], window=Window(max_depth=2), limit=1
            )
            bobs = tx.search_messages_widened(
                "acme", "bob", conv, ["pottery"], ["lake"], window=Window(), limit=10
            )
            expected_narrow, expected_wide = search(["pottery"]), search(["pottery", "lake"])
    # each ranking is the one its own query gives
    assert [r.message_id for r in wide] == expected_wide
    assert [r.message_id for r in narrow] == expected_narrow
    assert {r.message_id for r in narrow[:2]} == {ids[1], ids[3]}  # who says it, first
    assert {r.message_id: r.depth for r in wide} == {m: i for i, m in enumerate(ids)}
    assert len(shallow[0]) == len(shallow[1]) == 1 and shallow[1][0].message_id in ids[:2]
    assert bobs == ([], [])  # another user's conversation: nothing, whatever the words


def test_nearest_memories_are_the_principals_current_ones(backend: Backend) -> None:
    with backend.open(embedder=EMBEDDER) as memory:
        alice = memory.scope("acme", "alice")
        kept = alice.remember("I prefer aisle seats on long flights.").memory
        other = alice.remember("I prefer aisle seats.", scope="project:apollo").memory
        memory.scope("acme", "bob").remember("I prefer aisle seats too.")
        assert kept is not None and other is not None
        assert memory.wait_for_vectors(30)
        query = EMBEDDER.embed(["aisle seats"])[0]
        with memory.store.read() as tx:
            hits = tx.nearest_memories(
                "acme", "alice", EMBEDDER.name, query, scopes=["user"], purposes=None,
                now=datetime.now(UTC), limit=5,
            )  # fmt: skip
    assert [h.record.id for h in hits] == [kept.id]
    assert 0.0 < hits[0].score <= 1.0 + 1e-6


def test_new_word_vectors_reach_the_next_widening(backend: Backend) -> None:
    with backend.open() as memory:  # written without an embedder: no word has a vector
        conv, _ = _conversation(memory)
        vector = EMBEDDER.embed(["pottery"])[0]
        with memory.store.read() as tx:
            assert tx.vocabulary_vectors("acme", "alice", conv, EMBEDDER.name, ["pottery"]) == {}
        with memory.store.write() as wtx:
            wtx.set_term_vectors("acme", EMBEDDER.name, [TermVector("pottery", vector)])
        with memory.store.read() as tx:
            found = tx.vocabulary_vectors(
                "acme", "alice", conv, EMBEDDER.name, ["pottery", "unheard"]
            )
            bobs = tx.vocabulary_vectors("acme", "bob", conv, EMBEDDER.name, ["pottery"])
            near = tx.nearest_words(
                "acme", "alice", conv, EMBEDDER.name,
                [TermVector("potteries", EMBEDDER.embed(["potteries"])[0])],
                per_term=5, min_similarity=0.3,
            )  # fmt: skip
    assert list(found) == ["pottery"] and np.allclose(found["pottery"], vector, atol=1e-2)
    assert bobs == {}  # another user's conversation lends bob no words
    assert near == ["pottery"]  # the only word with a vector; the term itself never returns


def test_ranked_rows_carry_the_time_each_turn_was_written(backend: Backend) -> None:
    start = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    with backend.open(embedder=EMBEDDER) as memory:
        conv = memory.scope("acme", "alice").create_conversation()
        written = {
            conv.append("user", text, created_at=start + timedelta(days=40 * i)).id: i
            for i, text in enumerate(TURNS)
        }
        assert memory.wait_for_vectors(30)
        query = EMBEDDER.embed(["pottery"])[0]
        with memory.store.read() as tx:
            near = tx.nearest_messages(
                "acme", "alice", conv.id, EMBEDDER.name, query, window=Window(), limit=10
            )
            words = tx.search_messages(
                "acme", "alice", conv.id, ["pottery"], window=Window(), limit=10
            )
            narrow, wide = tx.search_messages_widened(
                "acme", "alice", conv.id, ["pottery"], ["lake"], window=Window(), limit=10
            )
    for rows in (near, words, narrow, wide):
        assert rows
        for row in rows:
            assert row.created_at == start + timedelta(days=40 * written[row.message_id])


def test_a_query_naming_a_month_favours_the_turns_of_that_month(backend: Backend) -> None:
    # the same story told in March and in June; March's telling matches the words better
    march, june = datetime(2023, 3, 10, tzinfo=UTC), datetime(2023, 6, 12, tzinfo=UTC)
    with backend.open(embedder=EMBEDDER) as memory:
        conv = memory.scope("acme", "alice").create_conversation()
        first = conv.append(
            "user", "Pottery class: pottery bowls, pottery glaze.", created_at=march
        )
        for i in range(3):  # unrelated turns between, so neither lends the other a neighbour
            conv.append(
                "user", f"The weather was grey, day {i}.", created_at=march + timedelta(days=i + 1)
            )
        # June's telling goes on about other things: neither its words nor its meaning put it
        # first without the prior
        second = conv.append(
            "user", "Pottery class: new bowls, then a long walk by the lake.", created_at=june
        )
        off = convmem.SearchOptions(date_boost=1.0)
        plain = [h.message.id for h in conv.search("pottery class bowls in June", k=2, options=off)]
        dated = [h.message.id for h in conv.search("pottery class bowls in June", k=2)]
        undated = [h.message.id for h in conv.search("pottery class bowls", k=2)]
    assert plain == [first.id, second.id]  # the words alone rank March first
    assert dated == [second.id, first.id]  # naming June brings June's turn up
    assert undated == plain  # no date named: no prior


def test_a_turns_vector_weighs_its_statements_on_write_and_on_backfill(backend: Backend) -> None:
    text = "I took up pottery last month. Have you tried it? The class is on Tuesdays."
    key = vector_text("user", f"user: {text}")
    assert key == f"user: {text}\nI took up pottery last month. The class is on Tuesdays."
    query = EMBEDDER.embed([key])[0]
    plain = EMBEDDER.embed([f"user: {text}"])[0]
    assert float(query @ plain) < 0.99  # the key is not the body: the test can tell them apart
    found = {}
    for on_write in (True, False):
        config = convmem.Config(embed_on_write=on_write)
        with backend.open(embedder=EMBEDDER, config=config) as memory:
            conv = memory.scope("acme", f"u{on_write}").create_conversation()
            ids = [conv.append("user", t).id for t in (text, "How are you?")]
            assert memory.wait_for_vectors(30)
            if not on_write:
                assert memory.backfill_embeddings()["messages"] == 2
            with memory.store.read() as tx:
                hits = tx.nearest_messages(
                    "acme", f"u{on_write}", conv.id, EMBEDDER.name, query, window=Window(),
                    limit=10,
                )  # fmt: skip
                asked = tx.nearest_messages(
                    "acme", f"u{on_write}", conv.id, EMBEDDER.name,
                    EMBEDDER.embed(["user: How are you?"])[0], window=Window(), limit=1,
                )  # fmt: skip
        found[on_write] = {h.message_id == ids[0]: h.score for h in hits}
        assert hits[0].message_id == ids[0]
        assert asked[0].message_id == ids[1] and asked[0].score > 0.99  # questions only: the body
    assert found[True][True] > 0.99 and found[False][True] > 0.99


def test_a_refresh_embeds_again_the_turns_whose_vectors_are_of_an_older_text(
    backend: Backend,
) -> None:
    """Vectors written before the statement-weighted text (same embedder, so a plain backfill
    leaves them be) are replaced by ``backfill_embeddings(refresh=True)``, every tenant's, and
    a turn that had none is embedded once."""
    text = "I took up pottery last month. Have you tried it? The class is on Tuesdays."
    key = EMBEDDER.embed([vector_text("user", f"user: {text}")])[0]
    old = EMBEDDER.embed([f"user: {text}"])[0]  # what the vector was made of before
    config = convmem.Config(embed_on_write=True)
    with backend.open(embedder=EMBEDDER, config=config) as memory:
        owners = {}
        for tenant in ("acme", "globex"):
            conv = memory.scope(tenant, "alice").create_conversation()
            owners[tenant] = (conv.id, conv.append("user", text).id)
            assert memory.wait_for_vectors(30)
            with memory.store.write() as wtx:  # as an older release stored it
                wtx.set_message_vectors(
                    tenant, EMBEDDER.name, [MessageVector(owners[tenant][1], old)]
                )
        late = memory.scope("acme", "alice").conversation(owners["acme"][0])

        def score(tenant: str) -> float:
            conv_id, message_id = owners[tenant]
            with memory.store.read() as tx:
                hits = tx.nearest_messages(
                    tenant, "alice", conv_id, EMBEDDER.name, key, window=Window(), limit=5
                )
            return {h.message_id: h.score for h in hits}[message_id]

        assert max(score("acme"), score("globex")) < 0.99
        assert memory.backfill_embeddings()["messages"] == 0  # not missing: a backfill keeps them
        assert memory.backfill_embeddings(refresh=True, batch_size=1)["messages"] == 2
        assert min(score("acme"), score("globex")) > 0.99
    with backend.open(embedder=EMBEDDER, config=convmem.Config(embed_on_write=False)) as memory:
        unembedded = memory.scope("acme", "alice").conversation(late.id).append("user", "Hi!")
        counts = memory.backfill_embeddings(refresh=True)
        assert counts["messages"] == 3  # two refreshed, the new one embedded once
        with memory.store.read() as tx:
            hits = tx.nearest_messages(
                "acme", "alice", late.id, EMBEDDER.name,
                EMBEDDER.embed([vector_text("user", "user: Hi!")])[0], window=Window(), limit=1,
            )  # fmt: skip
        assert hits[0].message_id == unembedded.id and hits[0].score > 0.99


def test_a_query_naming_one_speaker_adds_a_ranking_of_that_speakers_turns(
    backend: Backend,
) -> None:
    lines = [
        ("Caroline", "Pottery bowls, pottery glaze, pottery wheel: my pottery weekend."),
        ("Melanie", "The pottery class with the kids was fun."),
        *[(("Caroline", "Melanie")[i % 2], f"The weather was grey, day {i}.") for i in range(8)],
    ]
    with backend.open(embedder=EMBEDDER) as memory:
        conv = memory.scope("acme", "alice").create_conversation()
        speaker = {
            conv.append(
                "user" if name == "Caroline" else "assistant", text, metadata={"name": name}
            ).id: name
            for name, text in lines
        }
        # the vector ranking alone, with no speaker prior or lift, so each share shows
        alone = convmem.SearchOptions(retrievers=("vector",), speaker_boost=1.0, neighbour_lift=0)
        off = replace(alone, speaker_vector_weight=0.0)
        query = "What pottery did Melanie make?"
        plain = conv.search(query, k=len(lines), options=off)
        added = conv.search(query, k=len(lines), options=alone)
        both = conv.search("What pottery did Melanie and Caroline make?", k=3, options=alone)
    # without it, the vector order: Caroline's turn says "pottery" more and comes first
    assert [speaker[h.message.id] for h in plain[:2]] == ["Caroline", "Melanie"]
    assert all(h.retrievers == ("vector",) for h in (*plain, *both))  # two names: no ranking
    # with it, each of Melanie's turns gains 0.5 / (k + its rank among her turns); Caroline's
    # keep their scores, and Melanie's pottery turn comes first
    theirs = [h.message.id for h in plain if speaker[h.message.id] == "Melanie"]
    before = {h.message.id: h.score for h in plain}
    assert {h.message.id for h in added} == set(before)
    for hit in added:
        if speaker[hit.message.id] == "Melanie":
            rank = theirs.index(hit.message.id) + 1
            assert hit.score == pytest.approx(before[hit.message.id] + 0.5 / (10 + rank))
            assert hit.retrievers == ("vector", "speaker_vector")
        else:
            assert hit.score == pytest.approx(before[hit.message.id])
            assert hit.retrievers == ("vector",)
    assert speaker[added[0].message.id] == "Melanie"
    with pytest.raises(convmem.InvalidInput):
        convmem.SearchOptions(speaker_vector_weight=-0.5)

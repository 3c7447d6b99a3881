"""The index form kept beside a text (``convmem.store.index_form``): a database from before it
finds Chinese and Japanese words inside a run (turns, memories, tools) once migrated, the form
goes with a declined proposal's text, and a subject in such a script is searchable.

The migration test is PostgreSQL's (its ``tsvector`` columns are generated from
``coalesce(form, text)``: ``convmem.store.postgres.fulltext``; SQLite's is
``tests/store/sqlite/test_index_form_migration.py``); the others run on every backend.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import Any

import pytest

import convmem
from tests.extras import module_of_extra
from tests.store.backends import Backend, SQLiteHarness

module_of_extra("psycopg", "postgres")  # before the imports that need it

import psycopg  # noqa: E402

from convmem.store.postgres import fulltext  # noqa: E402

TURN = "我上个月开始学陶艺，每周二上课。"
TEA = "我每天早上喝乌龙茶。"
TOOL = {
    "name": "track_parcel",
    "description": "荷物の配達状況を調べる。",
    "input_schema": {"type": "object", "properties": {"number": {"type": "string"}}},
}

# the schema of m008 / m005 before m020: tsvectors generated from the raw text
_BEFORE = [
    "ALTER TABLE message_index DROP COLUMN tsv",
    "ALTER TABLE message_index DROP COLUMN body_form, DROP COLUMN ctx_form",
    "ALTER TABLE message_index ADD COLUMN tsv TSVECTOR GENERATED ALWAYS AS ("
    "array_to_tsvector(ARRAY[scope_lexeme]) || setweight(to_tsvector('english', body), 'A') "
    "|| setweight(to_tsvector('english', ctx), 'B')) STORED",
    "CREATE INDEX message_index_fts ON message_index USING gin (tsv)",
    "ALTER TABLE memories DROP COLUMN tsv",
    "ALTER TABLE memories DROP COLUMN text_form, DROP COLUMN subject_form",
    "ALTER TABLE memories ADD COLUMN tsv TSVECTOR GENERATED ALWAYS AS ("
    "array_to_tsvector(ARRAY[owner_lexeme]) || setweight(to_tsvector('english', text), 'A') "
    "|| setweight(to_tsvector('english', replace(subject_key, '_', ' ')), 'B')) STORED",
    "CREATE INDEX memories_fts ON memories USING gin (tsv)",
    "DELETE FROM _migrations WHERE name IN ('m020_index_form', 'm026_recency_buckets')",
]


@pytest.fixture
def postgres(backend: Backend) -> Backend:
    if backend.name != "postgresql":
        pytest.skip("PostgreSQL's form columns")
    return backend


def _rows(backend: Backend, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(backend.url, autocommit=True) as db:
        return db.execute(sql, params).fetchall()


def test_a_database_from_before_the_forms_finds_words_inside_a_run_once_migrated(
    postgres: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # batches of two rows: the backfill pages through several batches and both tenants
    monkeypatch.setattr(fulltext, "_BATCH", 2)
    ids: dict[str, tuple[str, str, str]] = {}
    with postgres.open() as memory:
        for tenant in ("acme", "globex"):
            alice = memory.scope(tenant, "alice")
            conv = alice.create_conversation()
            conv.append("user", "We drove up to the lake on Saturday.")
            turn = conv.append("user", TURN)
            conv.append("assistant", "The pottery class sounds fun.")
            kept = alice.remember(TEA).memory
            alice.remember("I like hiking.")
            assert kept is not None
            ids[tenant] = (conv.id, turn.id, kept.id)
            memory.tools.register(tenant, TOOL, use_when=["荷物はどこですか"])
    with psycopg.connect(postgres.url, autocommit=True) as db:
        for sql in _BEFORE:
            db.execute(sql)
        # before m020 a tool's document was its raw text
        db.execute("UPDATE tools SET document = %s", (TOOL["description"],))
    # the old columns hold the run as one lexeme: the word inside it matches nothing
    found = "SELECT count(*) FROM {} WHERE tsv @@ to_tsquery('english', %s)"
    assert _rows(postgres, found.format("message_index"), ("陶艺",)) == [(0,)]
    assert _rows(postgres, found.format("memories"), ("乌龙",)) == [(0,)]
    assert _rows(postgres, found.format("tools"), ("配達",)) == [(0,)]

    with postgres.open() as memory:  # migrates
        for tenant, (conversation_id, turn_id, memory_id) in ids.items():
            alice = memory.scope(tenant, "alice")
            conv = alice.conversation(conversation_id)
            assert [h.message.id for h in conv.search("陶艺", k=5)][:1] == [turn_id]
            assert [h.memory.id for h in alice.search_memories("乌龙", k=5)] == [memory_id]
            assert conv.search("lake", k=5)  # English as before
            assert [h.memory.text for h in alice.search_memories("hiking", k=5)] == [
                "I like hiking."
            ]
            with memory.store.read() as tx:
                hits = tx.search_tool_terms(tenant, ["配達"], limit=5)
                assert [h.name for h in hits] == ["track_parcel"]
    # a form only where the text needs one: the English rows spend nothing
    forms = _rows(postgres, "SELECT body, body_form IS NOT NULL FROM message_index")
    assert sorted(needed for body, needed in forms if "陶艺" not in body) == [False] * 4
    assert [needed for body, needed in forms if "陶艺" in body] == [True, True]
    memories = _rows(postgres, "SELECT text, text_form FROM memories ORDER BY text")
    assert [(t, f is not None) for t, f in memories] == [
        ("I like hiking.", False), ("I like hiking.", False),
        (TEA, True), (TEA, True),
    ]  # fmt: skip
    indexes = _rows(
        postgres,
        "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
        "AND indexname IN ('message_index_fts', 'memories_fts') ORDER BY indexname",
    )
    assert indexes == [("memories_fts",), ("message_index_fts",)]


def test_a_declined_proposal_leaves_no_form_of_its_text(backend: Backend) -> None:
    with backend.open() as memory:
        alice = memory.scope("acme", "alice")
        proposal = alice.propose(TEA, subject="乌龙茶").memory
        assert proposal is not None
        assert "早上 上喝" in backend.dump()  # the form was there
        alice.memories.reject(proposal.id)
        assert alice.memories.get(proposal.id).status == "rejected"
    dump = backend.dump()
    for piece in ("乌龙", "龙茶", "早上", "喝乌"):
        assert piece not in dump
    forms = "SELECT text_form, subject_form FROM memories"
    if backend.name == "sqlite":
        with closing(sqlite3.connect(SQLiteHarness.path(backend.url))) as db:
            assert db.execute(forms).fetchall() == [(None, None)]
    else:
        row = _rows(backend, forms.replace(" FROM", ", length(tsv) FROM"))
        assert row == [(None, None, 1)]  # the owner's lexeme alone


def test_the_forms_are_not_exported(backend: Backend) -> None:
    with backend.open() as memory:
        alice = memory.scope("acme", "alice")
        alice.create_conversation().append("user", TURN)
        alice.remember(TEA)
        exported = alice.export()
    text = repr(exported)
    assert TEA in text and TURN in text
    for column in sorted(fulltext.FORM_COLUMNS):
        assert column not in text
    assert "我对 对花" not in text and "学陶 陶艺" not in text


def test_a_subject_in_such_a_script_is_searched(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    kept = alice.remember("I take a class every Tuesday.", subject="陶艺课").memory
    alice.remember("I like hiking.", subject="hiking")
    assert kept is not None
    assert [h.memory.id for h in alice.search_memories("陶艺", k=5)] == [kept.id]

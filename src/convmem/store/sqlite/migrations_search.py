"""The search index's schema migrations (messages' index rows, full text, vectors, vocabulary;
memories' vectors and full text): derived data, rebuilt from the messages and memories at will.
Listed in order in ``convmem.store.sqlite.migrations.MIGRATIONS``.
"""

from __future__ import annotations

import sqlite3

from convmem.store.index_form import stored_index_form
from convmem.store.sqlite.term_counts import column_terms


def m020_message_index(db: sqlite3.Connection) -> None:
    # Derived from messages (DESIGN principle 1): dropped and rebuilt from them at will. One row
    # per indexed message: its speaker-prefixed text, its neighbours' text, its embedding.
    db.execute(
        """
        CREATE TABLE message_index (
            -- never reused, so a cache keyed on rows seen cannot mistake a new row for a gone one
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            tenant_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            depth INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            speaker TEXT NOT NULL,
            -- the caller's session label, when it gives one; neighbours across sessions are no
            -- context for each other
            session TEXT,
            -- tokens naming the owner and the conversation: the full-text query intersects with
            -- them, so a search reads one conversation's postings, not every user's
            scope TEXT NOT NULL,
            body TEXT NOT NULL,
            ctx TEXT NOT NULL DEFAULT '',
            embedder TEXT,
            vector BLOB,
            UNIQUE (tenant_id, message_id)
        )
        """
    )
    db.execute(
        "CREATE INDEX message_index_by_conversation "
        "ON message_index (tenant_id, conversation_id, depth)"
    )
    db.execute(
        "CREATE VIRTUAL TABLE message_fts USING fts5(scope, body, ctx, content='message_index', "
        "content_rowid='id', tokenize='porter unicode61')"
    )
    db.execute(
        "CREATE TRIGGER message_fts_insert AFTER INSERT ON message_index BEGIN "
        "INSERT INTO message_fts (rowid, scope, body, ctx) "
        "VALUES (new.id, new.scope, new.body, new.ctx); END"
    )
    db.execute(
        "CREATE TRIGGER message_fts_delete AFTER DELETE ON message_index BEGIN "
        "INSERT INTO message_fts (message_fts, rowid, scope, body, ctx) "
        "VALUES ('delete', old.id, old.scope, old.body, old.ctx); END"
    )
    db.execute(
        "CREATE TRIGGER message_fts_update AFTER UPDATE OF scope, body, ctx ON message_index "
        "BEGIN INSERT INTO message_fts (message_fts, rowid, scope, body, ctx) "
        "VALUES ('delete', old.id, old.scope, old.body, old.ctx); "
        "INSERT INTO message_fts (rowid, scope, body, ctx) "
        "VALUES (new.id, new.scope, new.body, new.ctx); END"
    )
    # a deleted message leaves the index (and its vector) in the same transaction
    db.execute(
        "CREATE TRIGGER message_index_forget AFTER DELETE ON messages BEGIN "
        "DELETE FROM message_index WHERE tenant_id = old.tenant_id AND message_id = old.id; END"
    )
    db.execute(
        """
        CREATE TABLE search_generations (
            tenant_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            -- bumped whenever the conversation's vectors or vocabulary change: an in-process cache
            -- of them is valid while the number it was built at is current
            generation INTEGER NOT NULL,
            PRIMARY KEY (tenant_id, conversation_id)
        ) WITHOUT ROWID
        """
    )
    db.execute(
        "CREATE TRIGGER search_generation_insert AFTER INSERT ON message_index BEGIN "
        "INSERT INTO search_generations (tenant_id, conversation_id, generation) "
        "VALUES (new.tenant_id, new.conversation_id, 1) "
        "ON CONFLICT (tenant_id, conversation_id) DO UPDATE SET generation = generation + 1; END"
    )
    for event, row in (("DELETE", "old"), ("UPDATE OF vector, embedder", "new")):
        name = "delete" if event == "DELETE" else "update"
        db.execute(
            f"CREATE TRIGGER search_generation_{name} AFTER {event} ON message_index BEGIN "
            "UPDATE search_generations SET generation = generation + 1 "
            f"WHERE tenant_id = {row}.tenant_id AND conversation_id = {row}.conversation_id; END"
        )
    db.execute(
        "CREATE TRIGGER search_generation_forget AFTER DELETE ON conversations BEGIN "
        "DELETE FROM search_generations WHERE tenant_id = old.tenant_id "
        "AND conversation_id = old.id; END"
    )
    db.execute(
        """
        CREATE TABLE conversation_terms (
            tenant_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            -- a word of the conversation, or (speaker = 1) the name of one of its speakers: the
            -- words a query term may be expanded to, the names a query may mention
            term TEXT NOT NULL,
            speaker INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (tenant_id, conversation_id, term)
        ) WITHOUT ROWID
        """
    )
    db.execute("CREATE INDEX conversation_terms_by_term ON conversation_terms (tenant_id, term)")
    db.execute(
        "CREATE TRIGGER conversation_terms_forget AFTER DELETE ON conversations BEGIN "
        "DELETE FROM conversation_terms WHERE tenant_id = old.tenant_id "
        "AND conversation_id = old.id; END"
    )
    db.execute(
        """
        CREATE TABLE term_vectors (
            tenant_id TEXT NOT NULL,
            embedder TEXT NOT NULL,
            -- one vector per word per tenant, not per conversation: a million messages hold
            -- millions of (conversation, word) pairs but tens of thousands of words
            term TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (tenant_id, embedder, term)
        ) WITHOUT ROWID
        """
    )
    # a word no remaining conversation of the tenant uses leaves with its last use
    db.execute(
        "CREATE TRIGGER term_vectors_forget AFTER DELETE ON conversation_terms "
        "WHEN NOT EXISTS (SELECT 1 FROM conversation_terms "
        "WHERE tenant_id = old.tenant_id AND term = old.term) BEGIN "
        "DELETE FROM term_vectors WHERE tenant_id = old.tenant_id AND term = old.term; END"
    )


def m021_memory_search(db: sqlite3.Connection) -> None:
    # The memory index gains an owner column, for the reason message_index has ``scope``; it
    # keeps its own copy of the (short) texts so the owner token needs no column in memories.
    for trigger in ("memories_fts_insert", "memories_fts_delete", "memories_fts_update"):
        db.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    db.execute("DROP TABLE IF EXISTS memories_fts")
    owner = "'m' || hex({0}.tenant_id) || 'x' || hex({0}.user_id)"
    db.execute(
        "CREATE VIRTUAL TABLE memories_fts USING fts5(owner, text, subject_key, "
        "tokenize='porter unicode61')"
    )
    db.execute(
        "INSERT INTO memories_fts (rowid, owner, text, subject_key) "
        f"SELECT rowid, {owner.format('memories')}, text, subject_key FROM memories"
    )
    db.execute(
        "CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN "
        "INSERT INTO memories_fts (rowid, owner, text, subject_key) "
        f"VALUES (new.rowid, {owner.format('new')}, new.text, new.subject_key); END"
    )
    db.execute(
        "CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN "
        "DELETE FROM memories_fts WHERE rowid = old.rowid; END"
    )
    db.execute(
        "CREATE TRIGGER memories_fts_update AFTER UPDATE OF text, subject_key ON memories BEGIN "
        "UPDATE memories_fts SET text = new.text, subject_key = new.subject_key "
        "WHERE rowid = old.rowid; END"
    )
    db.execute(
        """
        CREATE TABLE memory_vectors (
            tenant_id TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            embedder TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (tenant_id, memory_id)
        ) WITHOUT ROWID
        """
    )
    db.execute(
        "CREATE TRIGGER memory_vectors_forget AFTER DELETE ON memories BEGIN "
        "DELETE FROM memory_vectors WHERE tenant_id = old.tenant_id "
        "AND memory_id = old.id; END"
    )


def m065_index_form(db: sqlite3.Connection) -> None:
    # Chinese, Japanese, Korean, Thai… are indexed as overlapping character pairs
    # (convmem.store.index_form). The store writes that form beside each indexed text, NULL when
    # it is the text itself, and the full-text tables read coalesce(form, text). (A SQL function
    # would have saved the columns, but every connection that writes — the sqlite3 shell's too —
    # would then need it.) The message index's external content becomes a view of its rows in
    # that form, so FTS5's highlights, which re-read the content, see what was indexed.
    db.execute("ALTER TABLE message_index ADD COLUMN body_form TEXT")
    db.execute("ALTER TABLE message_index ADD COLUMN ctx_form TEXT")
    _fill_forms(db, "message_index", "id", ("body", "ctx"), ("body_form", "ctx_form"))
    for trigger in ("message_fts_insert", "message_fts_delete", "message_fts_update"):
        db.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    db.execute("DROP TABLE IF EXISTS message_fts")
    db.execute(
        "CREATE VIEW message_fts_source AS SELECT id, scope, coalesce(body_form, body) AS body, "
        "coalesce(ctx_form, ctx) AS ctx FROM message_index"
    )
    db.execute(
        "CREATE VIRTUAL TABLE message_fts USING fts5(scope, body, ctx, "
        "content='message_fts_source', content_rowid='id', tokenize='porter unicode61')"
    )
    new = "new.id, new.scope, coalesce(new.body_form, new.body), coalesce(new.ctx_form, new.ctx)"
    old = "'delete', old.id, old.scope, coalesce(old.body_form, old.body), "
    old += "coalesce(old.ctx_form, old.ctx)"
    db.execute(
        "CREATE TRIGGER message_fts_insert AFTER INSERT ON message_index BEGIN "
        f"INSERT INTO message_fts (rowid, scope, body, ctx) VALUES ({new}); END"
    )
    db.execute(
        "CREATE TRIGGER message_fts_delete AFTER DELETE ON message_index BEGIN "
        f"INSERT INTO message_fts (message_fts, rowid, scope, body, ctx) VALUES ({old}); END"
    )
    db.execute(
        "CREATE TRIGGER message_fts_update AFTER UPDATE OF scope, body, ctx, body_form, ctx_form "
        f"ON message_index BEGIN INSERT INTO message_fts (message_fts, rowid, scope, body, ctx) "
        f"VALUES ({old}); INSERT INTO message_fts (rowid, scope, body, ctx) VALUES ({new}); END"
    )
    db.execute("INSERT INTO message_fts (message_fts) VALUES ('rebuild')")
    # memories_fts holds its own copy of the texts: its triggers copy the index form
    db.execute("ALTER TABLE memories ADD COLUMN text_form TEXT")
    db.execute("ALTER TABLE memories ADD COLUMN subject_form TEXT")
    _fill_forms(db, "memories", "rowid", ("text", "subject_key"), ("text_form", "subject_form"))
    for trigger in ("memories_fts_insert", "memories_fts_update"):
        db.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    owner = "'m' || hex({0}.tenant_id) || 'x' || hex({0}.user_id)"
    texts = "coalesce({0}.text_form, {0}.text), coalesce({0}.subject_form, {0}.subject_key)"
    db.execute(
        "CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN "
        "INSERT INTO memories_fts (rowid, owner, text, subject_key) "
        f"VALUES (new.rowid, {owner.format('new')}, {texts.format('new')}); END"
    )
    db.execute(
        "CREATE TRIGGER memories_fts_update AFTER UPDATE OF text, subject_key, text_form, "
        "subject_form ON memories BEGIN UPDATE memories_fts SET (text, subject_key) = "
        f"({texts.format('new')}) WHERE rowid = old.rowid; END"
    )
    db.execute(
        f"UPDATE memories_fts SET (text, subject_key) = (SELECT {texts.format('m')} "
        "FROM memories m WHERE m.rowid = memories_fts.rowid) WHERE rowid IN "
        "(SELECT rowid FROM memories WHERE text_form IS NOT NULL OR subject_form IS NOT NULL)"
    )
    # a tool's document column exists for its index alone: it is written in index form
    rows = db.execute("SELECT tenant_id, name, document FROM tools").fetchall()
    db.executemany(
        "UPDATE tools SET document = ? WHERE tenant_id = ? AND name = ?",
        [
            (form, tenant, name)
            for tenant, name, doc in rows
            if (form := stored_index_form(doc)) is not None
        ],
    )


def _fill_forms(
    db: sqlite3.Connection, table: str, key: str, texts: tuple[str, str], forms: tuple[str, str]
) -> None:
    """Set ``forms`` from ``texts`` on the rows whose text needs one (names are ours)."""
    select = f"SELECT {key}, {texts[0]}, {texts[1]} FROM {table}"
    update = f"UPDATE {table} SET {forms[0]} = ?, {forms[1]} = ? WHERE {key} = ?"
    batch = [
        (*found, row_key)
        for row_key, first, second in db.execute(select)
        if (found := (stored_index_form(first), stored_index_form(second))) != (None, None)
    ]
    db.executemany(update, batch)


def m070_messages_by_depth(db: sqlite3.Connection) -> None:
    # recall asks how many messages of a conversation are at each of its candidates' depths (a
    # message alone at its depth is on every deeper branch: ``on_branch``); PostgreSQL has had
    # this index from its first migration
    db.execute("CREATE INDEX messages_by_depth ON messages (tenant_id, conversation_id, depth)")


def m071_lineage_indexes(db: sqlite3.Connection) -> None:
    # the lineage cascade finds a source's derived rows by (tenant, column): these edges had no
    # index leading with them, so deleting one message or conversation read every row of its
    # tenant's table (tests/store/test_lineage.py holds every edge to an index)
    for table, column in (
        ("memories", "source_message_id"),
        ("memories", "supersedes_id"),
        ("memories", "conflicts_with_id"),
        ("entity_name_sources", "message_id"),
        ("pinned_instructions", "conversation_id"),
    ):
        db.execute(f"CREATE INDEX {table}_by_{column} ON {table} (tenant_id, {column})")


def m075_term_counts(db: sqlite3.Connection) -> None:
    # each index row's term counts and length per column, counted once on write
    # (``convmem.store.sqlite.term_counts``): ranking read them from FTS5's highlights, which
    # tokenise every candidate's text anew for every query
    for column in ("body_terms TEXT", "body_words INTEGER", "ctx_terms TEXT", "ctx_words INTEGER"):
        db.execute(f"ALTER TABLE message_index ADD COLUMN {column}")
    after = 0
    while batch := db.execute(
        "SELECT id, coalesce(body_form, body), coalesce(ctx_form, ctx) FROM message_index "
        "WHERE id > ? ORDER BY id LIMIT 1000",
        (after,),
    ).fetchall():
        after = batch[-1][0]
        counted = [(column_terms(body), column_terms(ctx), key) for key, body, ctx in batch]
        db.executemany(
            "UPDATE message_index SET body_terms = ?, body_words = ?, ctx_terms = ?, "
            "ctx_words = ? WHERE id = ?",
            [(b.counts, b.words, c.counts, c.words, key) for b, c, key in counted],
        )

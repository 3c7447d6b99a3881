"""The search index's schema migrations (messages' index rows, full text, vectors, vocabulary;
memories' vectors and full text): derived data, rebuilt from the messages and memories at will.
Listed in order in ``convmem.store.sqlite.migrations.MIGRATIONS``.
"""

from __future__ import annotations

import sqlite3

from convmem.store.sqlite.connection import INDEX_FORM_SQL


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
    # (convmem.store.index_form): each full-text table reads its text through the SQL function
    # every connection registers, the one queries go through in Python. The message index's
    # external content becomes a view of the same rows in that form, so FTS5's highlights (which
    # re-read the content) tokenize exactly what was indexed.
    form = INDEX_FORM_SQL
    for trigger in ("message_fts_insert", "message_fts_delete", "message_fts_update"):
        db.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    db.execute("DROP TABLE IF EXISTS message_fts")
    db.execute(
        f"CREATE VIEW message_fts_source AS SELECT id, scope, {form}(body) AS body, "
        f"{form}(ctx) AS ctx FROM message_index"
    )
    db.execute(
        "CREATE VIRTUAL TABLE message_fts USING fts5(scope, body, ctx, "
        "content='message_fts_source', content_rowid='id', tokenize='porter unicode61')"
    )
    new = f"new.id, new.scope, {form}(new.body), {form}(new.ctx)"
    old = f"'delete', old.id, old.scope, {form}(old.body), {form}(old.ctx)"
    db.execute(
        "CREATE TRIGGER message_fts_insert AFTER INSERT ON message_index BEGIN "
        f"INSERT INTO message_fts (rowid, scope, body, ctx) VALUES ({new}); END"
    )
    db.execute(
        "CREATE TRIGGER message_fts_delete AFTER DELETE ON message_index BEGIN "
        f"INSERT INTO message_fts (message_fts, rowid, scope, body, ctx) VALUES ({old}); END"
    )
    db.execute(
        "CREATE TRIGGER message_fts_update AFTER UPDATE OF scope, body, ctx ON message_index "
        f"BEGIN INSERT INTO message_fts (message_fts, rowid, scope, body, ctx) VALUES ({old}); "
        f"INSERT INTO message_fts (rowid, scope, body, ctx) VALUES ({new}); END"
    )
    db.execute("INSERT INTO message_fts (message_fts) VALUES ('rebuild')")
    # memories_fts holds its own copy of the texts: the same triggers, reading the index form
    for trigger in ("memories_fts_insert", "memories_fts_update"):
        db.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    owner = "'m' || hex({0}.tenant_id) || 'x' || hex({0}.user_id)"
    db.execute(
        "CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN "
        "INSERT INTO memories_fts (rowid, owner, text, subject_key) "
        f"VALUES (new.rowid, {owner.format('new')}, {form}(new.text), "
        f"{form}(new.subject_key)); END"
    )
    db.execute(
        "CREATE TRIGGER memories_fts_update AFTER UPDATE OF text, subject_key ON memories BEGIN "
        f"UPDATE memories_fts SET text = {form}(new.text), subject_key = {form}(new.subject_key) "
        "WHERE rowid = old.rowid; END"
    )
    db.execute(
        f"UPDATE memories_fts SET text = {form}(text), subject_key = {form}(subject_key) "
        f"WHERE text <> {form}(text) OR subject_key <> {form}(subject_key)"
    )
    # a tool's document column exists for its index alone, and is written in index form
    db.execute(f"UPDATE tools SET document = {form}(document) WHERE document <> {form}(document)")

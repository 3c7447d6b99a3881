"""Schema migrations, applied in order and recorded by name in ``_migrations``.

Each is a small named function; add new ones at the end, never edit an applied one. Every
table carries ``tenant_id`` and every key starts with it, so PostgreSQL can shard by tenant.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager

from convmem.store import migrations as runner
from convmem.store.sqlite.connection import Statements, transaction
from convmem.store.sqlite.entity_sources import m064_entity_name_sources
from convmem.store.sqlite.erase import install_fts_erasure
from convmem.store.sqlite.migrations_consent import (
    m066_entity_fact_consent,
    m067_pinned_origin,
    m069_page_sessions,
    m072_special_categories_and_proposals,
)
from convmem.store.sqlite.migrations_models import m073_idempotency_keys, m074_embedder_switches
from convmem.store.sqlite.migrations_search import (
    m020_message_index,
    m021_memory_search,
    m065_index_form,
    m070_messages_by_depth,
    m071_lineage_indexes,
    m075_term_counts,
)
from convmem.store.sqlite.sql import SQLITE


def m001_conversations(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE conversations (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            title TEXT,
            -- temporary conversations are never read into or written to long-term memory
            temporary INTEGER NOT NULL DEFAULT 0,
            -- tip of the branch the user sees; appends go under it unless told otherwise
            active_leaf_id TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, id)
        )
        """
    )
    db.execute("CREATE INDEX conversations_by_user ON conversations (tenant_id, user_id, id)")


def m002_messages(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE messages (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            -- denormalised from the conversation so scoped queries need no join
            user_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            parent_id TEXT,
            depth INTEGER NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
            content TEXT NOT NULL,
            tool_calls TEXT,
            tool_call_id TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            -- lineage of edits and regenerations: the message this one is a new version of
            revision_of TEXT,
            revision_kind TEXT CHECK (revision_kind IN ('edit', 'regenerate')),
            -- the conservative estimate, always available; its running sum gives every message a
            -- stable position on its branch, which block eviction quantises
            estimate_tokens INTEGER NOT NULL,
            estimate_before INTEGER NOT NULL,
            PRIMARY KEY (tenant_id, id),
            FOREIGN KEY (tenant_id, conversation_id) REFERENCES conversations (tenant_id, id),
            -- no cascade: a deep subtree would exceed SQLite's cascade depth; the store deletes
            -- subtrees explicitly, and the check is deferred to the end of the transaction
            FOREIGN KEY (tenant_id, parent_id) REFERENCES messages (tenant_id, id)
                DEFERRABLE INITIALLY DEFERRED
        )
        """
    )
    db.execute("CREATE INDEX messages_children ON messages (tenant_id, conversation_id, parent_id)")
    db.execute("CREATE INDEX messages_by_parent ON messages (tenant_id, parent_id)")


def m003_message_tokens(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE message_tokens (
            tenant_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            tokenizer TEXT NOT NULL,
            -- the message's cost in a chat request, framing included, counted once at write
            tokens INTEGER NOT NULL,
            PRIMARY KEY (tenant_id, message_id, tokenizer),
            FOREIGN KEY (tenant_id, message_id) REFERENCES messages (tenant_id, id)
                ON DELETE CASCADE
        ) WITHOUT ROWID
        """
    )


def m004_pinned_instructions(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE pinned_instructions (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            -- NULL: pinned for every conversation of the user
            conversation_id TEXT,
            position INTEGER NOT NULL,
            text TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, id),
            FOREIGN KEY (tenant_id, conversation_id) REFERENCES conversations (tenant_id, id)
                ON DELETE CASCADE
        )
        """
    )
    db.execute(
        "CREATE INDEX pinned_by_owner ON pinned_instructions "
        "(tenant_id, user_id, conversation_id, position)"
    )


def m005_memories(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE memories (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            -- 'user' or 'project:<id>'
            scope TEXT NOT NULL,
            category TEXT NOT NULL
                CHECK (category IN ('preference', 'profile', 'constraint', 'decision', 'fact')),
            -- what the statement is about: a newer one on the same subject supersedes
            subject_key TEXT NOT NULL,
            text TEXT NOT NULL,
            source_kind TEXT NOT NULL CHECK (source_kind IN
                ('user_explicit', 'inference', 'confirmed_inference', 'admin', 'import')),
            source_message_id TEXT,
            status TEXT NOT NULL
                CHECK (status IN ('proposed', 'confirmed', 'superseded', 'rejected')),
            supersedes_id TEXT,
            -- two confirmed records that disagree are flagged for the user, never merged
            conflicts_with_id TEXT,
            sensitivity TEXT NOT NULL DEFAULT 'none',
            purpose TEXT NOT NULL DEFAULT 'personalization',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            expires_at TEXT,
            PRIMARY KEY (tenant_id, id)
        )
        """
    )
    db.execute(
        "CREATE INDEX memories_current ON memories (tenant_id, user_id, status, scope, subject_key)"
    )


def m006_memories_fts(db: sqlite3.Connection) -> None:
    # External-content FTS5 over memories, kept in step by triggers inside the same transaction,
    # so a deleted memory leaves the index when its row does.
    db.execute(
        "CREATE VIRTUAL TABLE memories_fts USING fts5(text, subject_key, content='memories', "
        "content_rowid='rowid', tokenize='porter unicode61')"
    )
    db.execute(
        "CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN "
        "INSERT INTO memories_fts (rowid, text, subject_key) "
        "VALUES (new.rowid, new.text, new.subject_key); END"
    )
    db.execute(
        "CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN "
        "INSERT INTO memories_fts (memories_fts, rowid, text, subject_key) "
        "VALUES ('delete', old.rowid, old.text, old.subject_key); END"
    )
    db.execute(
        "CREATE TRIGGER memories_fts_update AFTER UPDATE OF text, subject_key ON memories BEGIN "
        "INSERT INTO memories_fts (memories_fts, rowid, text, subject_key) "
        "VALUES ('delete', old.rowid, old.text, old.subject_key); "
        "INSERT INTO memories_fts (rowid, text, subject_key) "
        "VALUES (new.rowid, new.text, new.subject_key); END"
    )


def m007_audit_events(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE audit_events (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            -- whose data the event is about
            user_id TEXT NOT NULL,
            -- who did it: 'user:<id>', 'app', 'admin', 'system'
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            object_kind TEXT NOT NULL,
            object_id TEXT NOT NULL,
            at TEXT NOT NULL,
            -- reason codes, statuses, ids: never content
            details TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (tenant_id, id)
        )
        """
    )
    db.execute("CREATE INDEX audit_by_user ON audit_events (tenant_id, user_id, at)")
    db.execute("CREATE INDEX audit_by_object ON audit_events (tenant_id, object_id)")


def m008_settings(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE user_settings (
            tenant_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            -- off: nothing is read from or written to long-term memory for this user
            memory_enabled INTEGER NOT NULL DEFAULT 1,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, user_id)
        )
        """
    )
    db.execute(
        """
        CREATE TABLE tenant_policies (
            tenant_id TEXT NOT NULL PRIMARY KEY,
            -- a tenant may switch long-term memory off for all its users
            memory_disabled INTEGER NOT NULL DEFAULT 0,
            retention_days INTEGER,
            updated_at TEXT NOT NULL
        )
        """
    )


def m010_summaries(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE summaries (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            -- the key: the summary covers the path from the root through this message, which is
            -- unique in a tree, so it is valid on every branch holding the message and no other
            through_message_id TEXT NOT NULL,
            through_depth INTEGER NOT NULL,
            -- sha256 chain over the covered ids; base_hash is the previous summary's, and the
            -- segment_length messages up to the through-message are re-hashed at use
            covered_hash TEXT NOT NULL,
            base_hash TEXT NOT NULL,
            segment_length INTEGER NOT NULL,
            previous_id TEXT,
            summarizer TEXT NOT NULL,
            prompt_version TEXT NOT NULL,
            snapshot TEXT NOT NULL,
            rendered TEXT NOT NULL,
            -- of the rendered text as a system message, in the conservative estimate
            tokens INTEGER NOT NULL,
            cost TEXT NOT NULL DEFAULT '{}',
            -- set when a model summarizer failed and the extractive result stands in
            fallback_reason TEXT,
            created_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, id),
            UNIQUE (tenant_id, through_message_id, summarizer, prompt_version),
            -- derived data dies with the message it runs through (and so with any it covers)
            FOREIGN KEY (tenant_id, through_message_id) REFERENCES messages (tenant_id, id)
                ON DELETE CASCADE
        )
        """
    )
    # nearest ancestor candidates: this conversation's summaries by depth
    db.execute(
        "CREATE INDEX summaries_by_depth ON summaries "
        "(tenant_id, conversation_id, summarizer, prompt_version, through_depth)"
    )


def m011_jobs(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE jobs (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            kind TEXT NOT NULL,
            -- enqueueing the same key again is a no-op: jobs are idempotent
            key TEXT NOT NULL,
            conversation_id TEXT,
            payload TEXT NOT NULL DEFAULT '{}',
            status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            max_attempts INTEGER NOT NULL,
            -- a running job belongs to its worker until the lease expires; a crashed worker's
            -- job is then claimed again (unix seconds)
            lease_owner TEXT,
            lease_expires_at REAL,
            run_after REAL NOT NULL,
            -- a reason (error class, status code), never content
            last_error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, id),
            UNIQUE (tenant_id, key)
        )
        """
    )
    # the queue is served across tenants: workers claim by readiness and address jobs by id
    db.execute("CREATE INDEX jobs_ready ON jobs (status, run_after)")
    db.execute("CREATE INDEX jobs_by_id ON jobs (id)")
    db.execute("CREATE INDEX jobs_by_conversation ON jobs (tenant_id, conversation_id)")


def m030_api_keys(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE api_keys (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('app', 'user', 'admin')),
            -- the one user a 'user' key acts for. Not named user_id on purpose: a key is a
            -- credential, not the user's data, and export / delete-all find data by that column
            acts_for_user TEXT,
            name TEXT,
            -- SHA-256 of the key's 256-bit random secret: enough against a stolen table, since
            -- such a secret cannot be guessed; compared in constant time
            secret_sha256 TEXT NOT NULL,
            created_by TEXT NOT NULL,
            created_at TEXT NOT NULL,
            revoked_at TEXT,
            PRIMARY KEY (tenant_id, id),
            CHECK ((role = 'user') = (acts_for_user IS NOT NULL))
        )
        """
    )
    # a presented key names its id but not its tenant: one lookup table across tenants
    db.execute("CREATE UNIQUE INDEX api_keys_by_id ON api_keys (id)")


def m031_last_assemblies(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE last_assemblies (
            tenant_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            leaf_id TEXT,
            at TEXT NOT NULL,
            -- the assembly report: token counts per section and message / memory ids, never
            -- content; shown on the conversation page as "the last assembled request"
            report TEXT NOT NULL,
            PRIMARY KEY (tenant_id, conversation_id),
            FOREIGN KEY (tenant_id, conversation_id) REFERENCES conversations (tenant_id, id)
                ON DELETE CASCADE
        )
        """
    )


def m032_fts_erasure(db: sqlite3.Connection) -> None:
    # deleted text leaves the FTS5 segments too (see erase.py): triggers note which index to purge
    install_fts_erasure(db)


def m033_key_purposes(db: sqlite3.Connection) -> None:
    # the memory purposes a key's requests may use: comma-separated, NULL for every purpose
    db.execute("ALTER TABLE api_keys ADD COLUMN purposes TEXT")


def m040_tools(db: sqlite3.Connection) -> None:
    # each tenant's tool registry (an application's definitions, not a user's data), found as
    # memories are: its document in an FTS5 index behind a tenant token, vectors per embedder
    db.execute(
        """
        CREATE TABLE tools (
            tenant_id TEXT NOT NULL,
            name TEXT NOT NULL,
            description TEXT NOT NULL,
            parameters TEXT NOT NULL,
            strict INTEGER,
            use_when TEXT NOT NULL,
            risk TEXT NOT NULL CHECK (risk IN ('low', 'medium', 'high')),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            document TEXT NOT NULL,
            PRIMARY KEY (tenant_id, name)
        )
        """
    )
    owner = "'t' || hex({0}.tenant_id)"
    db.execute(
        "CREATE VIRTUAL TABLE tools_fts USING fts5(owner, document, tokenize='porter unicode61')"
    )
    db.execute(
        "CREATE TRIGGER tools_fts_insert AFTER INSERT ON tools BEGIN "
        "INSERT INTO tools_fts (rowid, owner, document) "
        f"VALUES (new.rowid, {owner.format('new')}, new.document); END"
    )
    db.execute(
        "CREATE TRIGGER tools_fts_delete AFTER DELETE ON tools BEGIN "
        "DELETE FROM tools_fts WHERE rowid = old.rowid; END"
    )
    db.execute(
        "CREATE TRIGGER tools_fts_update AFTER UPDATE OF document ON tools BEGIN "
        "UPDATE tools_fts SET document = new.document WHERE rowid = old.rowid; END"
    )
    db.execute(
        """
        CREATE TABLE tool_vectors (
            tenant_id TEXT NOT NULL,
            name TEXT NOT NULL,
            embedder TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (tenant_id, name, embedder)
        )
        """
    )


def m041_message_parts(db: sqlite3.Connection) -> None:
    # a message sent as content parts keeps them as JSON (NULL for plain text); ``content``
    # holds the message as text beside them
    db.execute("ALTER TABLE messages ADD COLUMN parts TEXT")
    # the media's share of a count (images by the provider's rule, files, audio), for reports
    db.execute("ALTER TABLE message_tokens ADD COLUMN media_tokens INTEGER NOT NULL DEFAULT 0")
    db.execute(
        """
        CREATE TABLE message_blobs (
            tenant_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            -- inline media the caller asked convmem to keep, named by its hash as the part is
            sha256 TEXT NOT NULL,
            data BLOB NOT NULL,
            PRIMARY KEY (tenant_id, message_id, sha256),
            FOREIGN KEY (tenant_id, message_id) REFERENCES messages (tenant_id, id)
                ON DELETE CASCADE
        ) WITHOUT ROWID
        """
    )


def m050_entities(db: sqlite3.Connection) -> None:
    # entity memory (derived from messages, like summaries): each user's entities per scope, the
    # names (keys) they are looked up by, and their facts, each citing the message it came from;
    # first/last mention and the count are computed from the facts
    db.execute(
        """
        CREATE TABLE entities (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            scope TEXT NOT NULL,
            name TEXT NOT NULL,
            type TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, id)
        )
        """
    )
    db.execute("CREATE INDEX entities_user ON entities (tenant_id, user_id, scope)")
    db.execute(
        """
        CREATE TABLE entity_names (
            tenant_id TEXT NOT NULL,
            entity_id TEXT NOT NULL,
            key TEXT NOT NULL,
            user_id TEXT NOT NULL,
            scope TEXT NOT NULL,
            alias TEXT NOT NULL,
            PRIMARY KEY (tenant_id, entity_id, key)
        )
        """
    )
    db.execute("CREATE INDEX entity_names_key ON entity_names (tenant_id, user_id, key)")
    db.execute(
        """
        CREATE TABLE entity_facts (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            entity_id TEXT NOT NULL,
            text TEXT NOT NULL,
            message_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            said_at TEXT NOT NULL,
            confidence REAL NOT NULL,
            extractor TEXT NOT NULL,
            PRIMARY KEY (tenant_id, id)
        )
        """
    )
    db.execute("CREATE INDEX entity_facts_entity ON entity_facts (tenant_id, entity_id, said_at)")
    db.execute("CREATE INDEX entity_facts_message ON entity_facts (tenant_id, message_id)")
    db.execute(
        "CREATE INDEX entity_facts_conversation ON entity_facts (tenant_id, conversation_id)"
    )
    db.execute("CREATE INDEX entity_facts_said ON entity_facts (tenant_id, said_at)")


def m060_retention_layers(db: sqlite3.Connection) -> None:
    # A retention period per layer (days; NULL keeps rows until deleted). ``retention_days``
    # stays the transcripts' period, as it always was.
    for layer in ("summaries", "entities", "memories", "audit", "indexes"):
        db.execute(f"ALTER TABLE tenant_policies ADD COLUMN {layer}_days INTEGER")
    # the sweeps read each layer's rows of one tenant by age
    db.execute("CREATE INDEX audit_by_time ON audit_events (tenant_id, at)")
    db.execute("CREATE INDEX summaries_by_time ON summaries (tenant_id, created_at)")
    db.execute("CREATE INDEX memories_by_update ON memories (tenant_id, updated_at)")


def m061_memory_evidence(db: sqlite3.Connection) -> None:
    # The messages a consolidated proposal was drawn from: ids only, no text. They go with
    # their message and with their memory (triggers), and with the user (delete_user).
    db.execute(
        """
        CREATE TABLE memory_evidence (
            tenant_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            added_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, memory_id, message_id)
        )
        """
    )
    db.execute("CREATE INDEX memory_evidence_message ON memory_evidence (tenant_id, message_id)")
    db.execute(
        "CREATE TRIGGER memory_evidence_message_gone AFTER DELETE ON messages BEGIN "
        "DELETE FROM memory_evidence WHERE tenant_id = old.tenant_id "
        "AND message_id = old.id; END"
    )
    db.execute(
        "CREATE TRIGGER memory_evidence_memory_gone AFTER DELETE ON memories BEGIN "
        "DELETE FROM memory_evidence WHERE tenant_id = old.tenant_id "
        "AND memory_id = old.id; END"
    )


def m062_messages_by_time(db: sqlite3.Connection) -> None:
    # the worker's consolidation pass reads the user turns stored since its last pass, across
    # tenants, by id (ids sort by the time convmem stored them)
    db.execute("CREATE INDEX messages_by_time ON messages (id, role)")


def m068_tool_fts_erasure(db: sqlite3.Connection) -> None:
    # a deleted or redefined tool's description leaves FTS5's segments too: the erasure
    # triggers of m032 were installed before the tool registry existed (see erase.py)
    install_fts_erasure(db)


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    m001_conversations,
    m002_messages,
    m003_message_tokens,
    m004_pinned_instructions,
    m005_memories,
    m006_memories_fts,
    m007_audit_events,
    m008_settings,
    m010_summaries,
    m011_jobs,
    m020_message_index,
    m021_memory_search,
    m030_api_keys,
    m031_last_assemblies,
    m032_fts_erasure,
    m033_key_purposes,
    m040_tools,
    m041_message_parts,
    m050_entities,
    m060_retention_layers,
    m061_memory_evidence,
    m062_messages_by_time,
    m064_entity_name_sources,
    m065_index_form,
    m066_entity_fact_consent,
    m067_pinned_origin,
    m068_tool_fts_erasure,
    m069_page_sessions,
    m070_messages_by_depth,
    m071_lineage_indexes,
    m072_special_categories_and_proposals,
    m073_idempotency_keys,
    m074_embedder_switches,
    m075_term_counts,
]
LISTED = runner.listed(MIGRATIONS)


class _Ledger:
    """``_migrations`` on an SQLite file: each step an ``IMMEDIATE`` transaction (the writer
    lock keeps other processes out)."""

    dialect = SQLITE

    def __init__(self, db: sqlite3.Connection) -> None:
        self.connection = db

    def step(self) -> AbstractContextManager[Statements]:
        return transaction(self.connection, "IMMEDIATE")

    def ensure(self, db: Statements) -> None:
        db.execute(
            "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, "
            "applied_at TEXT NOT NULL)"
        )
        columns = {row[1] for row in db.execute("PRAGMA table_info(_migrations)").fetchall()}
        if "checksum" not in columns:
            db.execute("ALTER TABLE _migrations ADD COLUMN checksum TEXT")


def apply_migrations(db: sqlite3.Connection) -> list[str]:
    """Apply what is missing, each in its own transaction (``convmem.store.migrations``).
    Returns the names applied now."""
    return runner.apply(LISTED, _Ledger(db))

"""PostgreSQL schema migrations, applied in order and recorded by name in ``_migrations``.

The same discipline as SQLite's list: small named functions, new ones appended, an applied one
never edited. Differences from the SQLite schema, each for a reason:

- every per-tenant table is keyed ``(tenant_id, …)`` and its foreign keys carry ``tenant_id``, so
  Citus can distribute it by ``tenant_id`` with its neighbours co-located (README, "Scaling out");
- foreign keys never cascade and no trigger maintains anything: the store deletes every derived
  row itself, and a forgotten one fails the foreign key instead of lingering;
- full text is a stored generated ``tsvector`` (English stemming) under a GIN index, read from the
  text's index form where it has one (m020, ``fulltext.py``: scripts without spaces between
  words as character pairs; a generated column cannot call Python). A GIN index
  cannot start with ``tenant_id`` without ``btree_gin``, which a stock build lacks, so, as on
  SQLite, each document carries a lexeme naming its owner (the conversation, or the memory's
  user) that every query intersects with: a search reads one owner's postings. A turn's lexeme
  also names its recency bucket (m025), so a search reads the newest postings first;
- vectors are ``halfvec`` (the float16 the engine stores anyway: lossless round trips);
- a message's token counts are a ``jsonb`` column of the message (one row per append, not one
  per tokenizer);

Tables that are not per tenant: ``_migrations``, ``api_keys`` (a presented key names no tenant),
``tenant_policies`` (read across tenants by retention) and ``jobs`` (one queue across tenants).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg

from convmem.store import migrations as runner
from convmem.store.postgres.connection import Connection
from convmem.store.postgres.entity_sources import m019_entity_name_sources
from convmem.store.postgres.fulltext import TS_CONFIG, m020_index_form, m026_recency_buckets
from convmem.store.postgres.migrations_consent import (
    m021_entity_fact_consent,
    m022_pinned_origin,
    m023_page_sessions,
    m024_lineage_indexes,
    m025_special_categories_and_proposals,
)
from convmem.store.postgres.migrations_entities import m013_entities
from convmem.store.postgres.migrations_models import m027_idempotency_keys, m028_embedder_switches
from convmem.store.postgres.rows import POSTGRES
from convmem.store.postgres.vector_index import (
    m029_message_vector_indexes,
    m030_long_conversations_only,
)


def m001_extensions(db: Connection) -> None:
    db.execute("CREATE EXTENSION IF NOT EXISTS vector")


def m002_conversations(db: Connection) -> None:
    db.execute(
        """
        CREATE TABLE conversations (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            title TEXT,
            -- temporary conversations are never read into or written to long-term memory
            temporary BOOLEAN NOT NULL DEFAULT FALSE,
            -- tip of the branch the user sees; appends lock this row, then move it
            active_leaf_id TEXT,
            metadata JSONB NOT NULL DEFAULT '{}',
            created_at TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (tenant_id, id)
        )
        """
    )
    db.execute("CREATE INDEX conversations_by_user ON conversations (tenant_id, user_id, id)")


def m003_messages(db: Connection) -> None:
    db.execute(
        """
        CREATE TABLE messages (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            -- write order: siblings are listed in it, and re-indexing walks it
            seq BIGINT GENERATED ALWAYS AS IDENTITY,
            -- denormalised from the conversation so scoped queries need no join
            user_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            parent_id TEXT,
            depth INTEGER NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
            content TEXT NOT NULL,
            tool_calls JSONB,
            tool_call_id TEXT,
            metadata JSONB NOT NULL DEFAULT '{}',
            created_at TIMESTAMPTZ NOT NULL,
            revision_of TEXT,
            revision_kind TEXT CHECK (revision_kind IN ('edit', 'regenerate')),
            -- {tokenizer: the message's cost in a chat request, framing included}, counted once
            tokens JSONB NOT NULL DEFAULT '{}',
            -- the conservative estimate and its running sum along the branch (block eviction)
            estimate_tokens INTEGER NOT NULL,
            estimate_before INTEGER NOT NULL,
            PRIMARY KEY (tenant_id, id),
            FOREIGN KEY (tenant_id, conversation_id) REFERENCES conversations (tenant_id, id),
            -- checked at commit: a subtree is deleted in one statement, in any order
            FOREIGN KEY (tenant_id, parent_id) REFERENCES messages (tenant_id, id)
                DEFERRABLE INITIALLY DEFERRED
        )
        """
    )
    db.execute(
        "CREATE INDEX messages_children ON messages (tenant_id, conversation_id, parent_id, seq)"
    )
    db.execute("CREATE INDEX messages_by_parent ON messages (tenant_id, parent_id)")
    db.execute("CREATE INDEX messages_by_depth ON messages (tenant_id, conversation_id, depth)")


def m004_pinned_instructions(db: Connection) -> None:
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
            created_at TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (tenant_id, id),
            FOREIGN KEY (tenant_id, conversation_id) REFERENCES conversations (tenant_id, id)
        )
        """
    )
    db.execute(
        "CREATE INDEX pinned_by_owner ON pinned_instructions "
        "(tenant_id, user_id, conversation_id, position)"
    )


def m005_memories(db: Connection) -> None:
    db.execute(
        f"""
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
            created_at TIMESTAMPTZ NOT NULL,
            updated_at TIMESTAMPTZ NOT NULL,
            expires_at TIMESTAMPTZ,
            -- the owner's lexeme (see the module docstring), then the text (weight A) and the
            -- subject (weight B)
            owner_lexeme TEXT NOT NULL,
            tsv TSVECTOR GENERATED ALWAYS AS (
                array_to_tsvector(ARRAY[owner_lexeme])
                || setweight(to_tsvector('{TS_CONFIG}', text), 'A')
                || setweight(to_tsvector('{TS_CONFIG}', replace(subject_key, '_', ' ')), 'B')
            ) STORED,
            PRIMARY KEY (tenant_id, id)
        )
        """
    )
    db.execute(
        "CREATE INDEX memories_current ON memories (tenant_id, user_id, status, scope, subject_key)"
    )
    db.execute("CREATE INDEX memories_fts ON memories USING gin (tsv)")
    db.execute(
        """
        CREATE TABLE memory_vectors (
            tenant_id TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            embedder TEXT NOT NULL,
            vector HALFVEC NOT NULL,
            PRIMARY KEY (tenant_id, memory_id),
            FOREIGN KEY (tenant_id, memory_id) REFERENCES memories (tenant_id, id)
        )
        """
    )
    db.execute("CREATE INDEX memory_vectors_by_user ON memory_vectors (tenant_id, user_id)")


def m006_audit_and_settings(db: Connection) -> None:
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
            at TIMESTAMPTZ NOT NULL,
            -- reason codes, statuses, ids: never content
            details JSONB NOT NULL DEFAULT '{}',
            PRIMARY KEY (tenant_id, id)
        )
        """
    )
    db.execute("CREATE INDEX audit_by_user ON audit_events (tenant_id, user_id, at)")
    db.execute("CREATE INDEX audit_by_object ON audit_events (tenant_id, object_id)")
    db.execute(
        """
        CREATE TABLE user_settings (
            tenant_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            -- off: nothing is read from or written to long-term memory for this user
            memory_enabled BOOLEAN NOT NULL DEFAULT TRUE,
            updated_at TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (tenant_id, user_id)
        )
        """
    )
    db.execute(
        """
        CREATE TABLE tenant_policies (
            tenant_id TEXT NOT NULL PRIMARY KEY,
            -- a tenant may switch long-term memory off for all its users
            memory_disabled BOOLEAN NOT NULL DEFAULT FALSE,
            retention_days INTEGER,
            updated_at TIMESTAMPTZ NOT NULL
        )
        """
    )


def m007_summaries_and_jobs(db: Connection) -> None:
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
            covered_hash TEXT NOT NULL,
            base_hash TEXT NOT NULL,
            segment_length INTEGER NOT NULL,
            previous_id TEXT,
            summarizer TEXT NOT NULL,
            prompt_version TEXT NOT NULL,
            snapshot JSONB NOT NULL,
            rendered TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            cost JSONB NOT NULL DEFAULT '{}',
            fallback_reason TEXT,
            created_at TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (tenant_id, id),
            UNIQUE (tenant_id, through_message_id, summarizer, prompt_version),
            FOREIGN KEY (tenant_id, through_message_id) REFERENCES messages (tenant_id, id)
        )
        """
    )
    db.execute(
        "CREATE INDEX summaries_by_depth ON summaries "
        "(tenant_id, conversation_id, summarizer, prompt_version, through_depth)"
    )
    db.execute(
        """
        CREATE TABLE jobs (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            kind TEXT NOT NULL,
            -- enqueueing the same key again is a no-op: jobs are idempotent
            key TEXT NOT NULL,
            conversation_id TEXT,
            -- ids only, never content
            payload JSONB NOT NULL DEFAULT '{}',
            status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            max_attempts INTEGER NOT NULL,
            -- a running job belongs to its worker until the lease expires (unix seconds)
            lease_owner TEXT,
            lease_expires_at DOUBLE PRECISION,
            run_after DOUBLE PRECISION NOT NULL,
            last_error TEXT,
            created_at TIMESTAMPTZ NOT NULL,
            updated_at TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (tenant_id, id),
            UNIQUE (tenant_id, key)
        )
        """
    )
    # one queue across tenants: workers claim by readiness and address jobs by id
    db.execute("CREATE INDEX jobs_ready ON jobs (status, run_after)")
    db.execute("CREATE UNIQUE INDEX jobs_by_id ON jobs (id)")
    db.execute("CREATE INDEX jobs_by_conversation ON jobs (tenant_id, conversation_id)")


def m008_message_index(db: Connection) -> None:
    # Derived from messages: dropped and rebuilt from them at will. One row per indexed message.
    db.execute(
        f"""
        CREATE TABLE message_index (
            tenant_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            -- never reused: write order, and a cursor for caches of rows seen
            seq BIGINT GENERATED ALWAYS AS IDENTITY,
            user_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            depth INTEGER NOT NULL,
            created_at TIMESTAMPTZ NOT NULL,
            speaker TEXT NOT NULL,
            session TEXT,
            -- the conversation's lexeme (see the module docstring)
            scope_lexeme TEXT NOT NULL,
            body TEXT NOT NULL,
            ctx TEXT NOT NULL DEFAULT '',
            -- the turn's own words weigh A, its neighbours' B (ranked 1 and 0.5)
            tsv TSVECTOR GENERATED ALWAYS AS (
                array_to_tsvector(ARRAY[scope_lexeme])
                || setweight(to_tsvector('{TS_CONFIG}', body), 'A')
                || setweight(to_tsvector('{TS_CONFIG}', ctx), 'B')
            ) STORED,
            embedder TEXT,
            vector HALFVEC,
            PRIMARY KEY (tenant_id, message_id),
            FOREIGN KEY (tenant_id, message_id) REFERENCES messages (tenant_id, id)
        )
        """
    )
    db.execute(
        "CREATE INDEX message_index_by_conversation "
        "ON message_index (tenant_id, conversation_id, depth)"
    )
    db.execute("CREATE INDEX message_index_fts ON message_index USING gin (tsv)")
    db.execute(
        """
        CREATE TABLE search_generations (
            tenant_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            -- bumped whenever the conversation's vectors or vocabulary change: an in-process cache
            -- of them is valid while the number it was built at is current
            generation BIGINT NOT NULL,
            PRIMARY KEY (tenant_id, conversation_id),
            FOREIGN KEY (tenant_id, conversation_id) REFERENCES conversations (tenant_id, id)
        )
        """
    )
    db.execute(
        """
        CREATE TABLE conversation_terms (
            tenant_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            -- a word of the conversation, or (speaker) the name of one of its speakers
            term TEXT NOT NULL,
            speaker BOOLEAN NOT NULL DEFAULT FALSE,
            PRIMARY KEY (tenant_id, conversation_id, term),
            FOREIGN KEY (tenant_id, conversation_id) REFERENCES conversations (tenant_id, id)
        )
        """
    )
    db.execute("CREATE INDEX conversation_terms_by_term ON conversation_terms (tenant_id, term)")
    db.execute(
        """
        CREATE TABLE term_vectors (
            tenant_id TEXT NOT NULL,
            embedder TEXT NOT NULL,
            -- one vector per word per tenant: a query's terms are widened to their nearest words
            term TEXT NOT NULL,
            vector HALFVEC NOT NULL,
            PRIMARY KEY (tenant_id, embedder, term)
        )
        """
    )
    db.execute("CREATE INDEX term_vectors_by_term ON term_vectors (tenant_id, term)")


def m009_keys_and_assemblies(db: Connection) -> None:
    db.execute(
        """
        CREATE TABLE api_keys (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('app', 'user', 'admin')),
            -- the one user a 'user' key acts for (not user_id: a key is a credential, not data)
            acts_for_user TEXT,
            name TEXT,
            secret_sha256 TEXT NOT NULL,
            created_by TEXT NOT NULL,
            created_at TIMESTAMPTZ NOT NULL,
            revoked_at TIMESTAMPTZ,
            PRIMARY KEY (tenant_id, id),
            CHECK ((role = 'user') = (acts_for_user IS NOT NULL))
        )
        """
    )
    # a presented key names its id but not its tenant: one lookup across tenants
    db.execute("CREATE UNIQUE INDEX api_keys_by_id ON api_keys (id)")
    db.execute(
        """
        CREATE TABLE last_assemblies (
            tenant_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            leaf_id TEXT,
            at TIMESTAMPTZ NOT NULL,
            -- token counts per section and ids, never content
            report JSONB NOT NULL,
            PRIMARY KEY (tenant_id, conversation_id),
            FOREIGN KEY (tenant_id, conversation_id) REFERENCES conversations (tenant_id, id)
        )
        """
    )


def m010_key_purposes(db: Connection) -> None:
    # the memory purposes a key's requests may use: comma-separated, NULL for every purpose
    db.execute("ALTER TABLE api_keys ADD COLUMN purposes TEXT")


def m011_tools(db: Connection) -> None:
    # each tenant's tool registry (an application's definitions, not a user's data), found as
    # memories are: its document's tsvector, vectors per embedder
    db.execute(
        f"""
        CREATE TABLE tools (
            tenant_id TEXT NOT NULL,
            name TEXT NOT NULL,
            description TEXT NOT NULL,
            parameters JSONB NOT NULL,
            strict BOOLEAN,
            use_when JSONB NOT NULL,
            risk TEXT NOT NULL CHECK (risk IN ('low', 'medium', 'high')),
            created_at TIMESTAMPTZ NOT NULL,
            updated_at TIMESTAMPTZ NOT NULL,
            document TEXT NOT NULL,
            tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('{TS_CONFIG}', document)) STORED,
            PRIMARY KEY (tenant_id, name)
        )
        """
    )
    db.execute(
        """
        CREATE TABLE tool_vectors (
            tenant_id TEXT NOT NULL,
            name TEXT NOT NULL,
            embedder TEXT NOT NULL,
            vector HALFVEC NOT NULL,
            PRIMARY KEY (tenant_id, name, embedder),
            -- no cascade: delete_tool removes the vectors first, explicitly
            FOREIGN KEY (tenant_id, name) REFERENCES tools (tenant_id, name)
        )
        """
    )


def m012_message_parts(db: Connection) -> None:
    # a message sent as content parts keeps them (NULL for plain text); ``content`` holds the
    # message as text beside them. media_tokens: {tokenizer: the media's share of tokens}
    db.execute("ALTER TABLE messages ADD COLUMN parts JSONB")
    db.execute("ALTER TABLE messages ADD COLUMN media_tokens JSONB NOT NULL DEFAULT '{}'")
    db.execute(
        """
        CREATE TABLE message_blobs (
            tenant_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            -- inline media the caller asked convmem to keep, named by its hash as the part is
            sha256 TEXT NOT NULL,
            data BYTEA NOT NULL,
            PRIMARY KEY (tenant_id, message_id, sha256),
            FOREIGN KEY (tenant_id, message_id) REFERENCES messages (tenant_id, id)
        )
        """
    )


def m016_retention_layers(db: Connection) -> None:
    # A retention period per layer (days; NULL keeps rows until deleted). ``retention_days``
    # stays the transcripts' period, as it always was.
    for layer in ("summaries", "entities", "memories", "audit", "indexes"):
        db.execute(f"ALTER TABLE tenant_policies ADD COLUMN {layer}_days INTEGER")
    # the sweeps read each layer's rows of one tenant by age
    db.execute("CREATE INDEX audit_by_time ON audit_events (tenant_id, at)")
    db.execute("CREATE INDEX summaries_by_time ON summaries (tenant_id, created_at)")
    db.execute("CREATE INDEX memories_by_update ON memories (tenant_id, updated_at)")


def m017_memory_evidence(db: Connection) -> None:
    # The messages a consolidated proposal was drawn from: ids only, no text. The store
    # deletes them with their message, their memory and their user (the keys fail otherwise).
    db.execute(
        """
        CREATE TABLE memory_evidence (
            tenant_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            added_at TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (tenant_id, memory_id, message_id),
            FOREIGN KEY (tenant_id, memory_id) REFERENCES memories (tenant_id, id),
            FOREIGN KEY (tenant_id, message_id) REFERENCES messages (tenant_id, id)
        )
        """
    )
    db.execute("CREATE INDEX memory_evidence_message ON memory_evidence (tenant_id, message_id)")


MIGRATIONS: list[Callable[[Connection], None]] = [
    m001_extensions,
    m002_conversations,
    m003_messages,
    m004_pinned_instructions,
    m005_memories,
    m006_audit_and_settings,
    m007_summaries_and_jobs,
    m008_message_index,
    m009_keys_and_assemblies,
    m010_key_purposes,
    m011_tools,
    m012_message_parts,
    m013_entities,
    m016_retention_layers,
    m017_memory_evidence,
    m019_entity_name_sources,
    m020_index_form,
    m021_entity_fact_consent,
    m022_pinned_origin,
    m023_page_sessions,
    m024_lineage_indexes,
    m025_special_categories_and_proposals,
    m026_recency_buckets,
    m027_idempotency_keys,
    m028_embedder_switches,
    m029_message_vector_indexes,
    m030_long_conversations_only,
]
LISTED = runner.listed(MIGRATIONS)

# Held while migrating, so processes opening one database at once apply each step once.
_MIGRATION_LOCK = 7_211_432_001


class _Ledger:
    """``_migrations`` on PostgreSQL: each step a transaction holding the migration lock."""

    dialect = POSTGRES

    def __init__(self, db: Connection) -> None:
        self.connection = db

    @contextmanager
    def step(self) -> Iterator[Connection]:
        with self.connection.transaction():
            self.connection.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            yield self.connection

    def ensure(self, db: Connection) -> None:
        db.execute(
            "CREATE TABLE IF NOT EXISTS _migrations "
            "(name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        if not _has_checksums(db):  # (an ALTER at every open would lock the table each time)
            db.execute("ALTER TABLE _migrations ADD COLUMN checksum TEXT")


def _has_checksums(db: Connection) -> bool:
    row = db.execute(
        "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = '_migrations' AND column_name = 'checksum'"
    ).fetchone()
    return row is not None


def pending_migrations(db: Connection) -> list[str]:
    """Names of the migrations this database lacks (every one, for an empty database); refuses
    one whose recorded migrations changed (``convmem.store.migrations``)."""
    exists = db.execute("SELECT to_regclass('_migrations') IS NOT NULL").fetchone()
    if exists is None or not exists[0]:
        return [m.name for m in LISTED]
    if not _has_checksums(db):  # recorded before checksums: nothing to check yet
        rows = db.execute("SELECT name FROM _migrations").fetchall()
        done: dict[str, str | None] = {row[0]: None for row in rows}
        return runner.pending(LISTED, done)
    return runner.pending(LISTED, runner.recorded(db, POSTGRES))


def apply_migrations(db: Connection) -> list[str]:
    """Apply what is missing, each in its own transaction (``db`` is in autocommit mode).
    Returns the names applied now."""
    return runner.apply(LISTED, _Ledger(db))


def migrate(url: str) -> list[str]:
    """Bring the database at ``url`` up to date (``convmem migrate``)."""
    from convmem.store.postgres.connection import map_error
    from convmem.store.postgres.options import options_from_url

    try:
        with psycopg.connect(options_from_url(url).url, autocommit=True) as db:
            return apply_migrations(db)
    except psycopg.Error as exc:
        raise map_error(exc) from exc

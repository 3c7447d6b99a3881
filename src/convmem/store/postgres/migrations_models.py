"""PostgreSQL migrations of writes that do not wait on a model: the idempotency records of
retried writes, and the embedder switches with their staged vectors."""

from __future__ import annotations

from convmem.store.postgres.connection import Connection


def m027_idempotency_keys(db: Connection) -> None:
    # the writes kept under callers' idempotency keys (convmem.store.idempotency): a digest of
    # the call and the ids it stored, never its text; they go with the message or memory
    db.execute(
        """
        CREATE TABLE idempotency_keys (
            tenant_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            key TEXT NOT NULL,
            kind TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            created_at TIMESTAMPTZ NOT NULL,
            message_id TEXT,
            memory_id TEXT,
            result JSONB NOT NULL DEFAULT '{}',
            PRIMARY KEY (tenant_id, user_id, key)
        )
        """
    )
    # the lineage cascade finds a message's or a memory's key by these (every edge indexed)
    db.execute(
        "CREATE INDEX idempotency_keys_by_message ON idempotency_keys (tenant_id, message_id)"
    )
    db.execute("CREATE INDEX idempotency_keys_by_memory ON idempotency_keys (tenant_id, memory_id)")


def m028_embedder_switches(db: Connection) -> None:
    # changing a tenant's embedder without downtime (convmem.store.embedder_switch): which one
    # serves and which is being built, and the built vectors waiting for the switch (derived
    # from their turn or memory: they go with it)
    db.execute(
        """
        CREATE TABLE embedder_switches (
            tenant_id TEXT PRIMARY KEY,
            active TEXT,
            target TEXT,
            target_dimensions INTEGER,
            started_at TIMESTAMPTZ,
            switched_at TIMESTAMPTZ
        )
        """
    )
    db.execute(
        """
        CREATE TABLE staged_message_vectors (
            tenant_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            embedder TEXT NOT NULL,
            vector HALFVEC NOT NULL,
            PRIMARY KEY (tenant_id, message_id)
        )
        """
    )
    db.execute(
        """
        CREATE TABLE staged_memory_vectors (
            tenant_id TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            embedder TEXT NOT NULL,
            vector HALFVEC NOT NULL,
            PRIMARY KEY (tenant_id, memory_id)
        )
        """
    )

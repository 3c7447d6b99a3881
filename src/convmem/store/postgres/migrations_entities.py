"""PostgreSQL migration of the people and things a user's conversations name: entities, their
names and the facts stated about them (the names' sources follow in ``entity_sources``)."""

from __future__ import annotations

from convmem.store.postgres.connection import Connection


def m013_entities(db: Connection) -> None:
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
            created_at TIMESTAMPTZ NOT NULL,
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
            seq BIGINT GENERATED ALWAYS AS IDENTITY,
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
            said_at TIMESTAMPTZ NOT NULL,
            confidence DOUBLE PRECISION NOT NULL,
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

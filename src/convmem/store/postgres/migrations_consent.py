"""PostgreSQL migrations of who may see and keep what: entity facts' speakers and consent, who
pinned an instruction, the memory page's sign-in sessions, and the special categories a
tenant opens to explicit requests with proposals' life cycle."""

from __future__ import annotations

from convmem.store.entities import UNSPOKEN_FACTS, WITHOUT_FACTS, entities_by_tenant
from convmem.store.postgres.connection import Connection
from convmem.store.postgres.entity_sources import recompute_names


def m021_entity_fact_consent(db: Connection) -> None:
    # Entity facts are memory (issue 30): each says who said it — the role of its message and
    # the participant's name the message carried — and is a proposal until the user confirms
    # it. Nobody confirmed anything before, so every fact stored so far is "proposed", and the
    # tenant's switch to recall proposals across conversations starts off.
    db.execute(
        "ALTER TABLE entity_facts ADD COLUMN speaker TEXT, ADD COLUMN speaker_name TEXT, "
        "ADD COLUMN status TEXT NOT NULL DEFAULT 'proposed' "
        "CHECK (status IN ('proposed', 'confirmed'))"
    )
    db.execute(
        "UPDATE entity_facts f SET speaker = m.role, speaker_name = NULLIF(btrim(CASE WHEN "
        "jsonb_typeof(m.metadata -> 'name') = 'string' THEN m.metadata ->> 'name' END, "
        "E' \\t\\n\\r\\f\\v'), '') FROM messages m "
        "WHERE m.tenant_id = f.tenant_id AND m.id = f.message_id"
    )
    # a fact whose message is gone (no delete leaves one) cannot say who said it: it goes, with
    # the names only it kept and the entities it leaves without facts
    orphans = entities_by_tenant(db.execute(UNSPOKEN_FACTS).fetchall())
    for tenant, ids in orphans.items():
        recompute_names(db, tenant, ids)
        for table, column in WITHOUT_FACTS:
            db.execute(
                f"DELETE FROM {table} WHERE tenant_id = %s AND {column} = ANY(%s) "
                "AND NOT EXISTS (SELECT 1 FROM entity_facts f WHERE f.tenant_id = %s "
                f"AND f.entity_id = {table}.{column})",
                (tenant, ids, tenant),
            )
    db.execute(
        "ALTER TABLE entity_facts ALTER COLUMN speaker SET NOT NULL, "
        "ADD CONSTRAINT entity_facts_speaker CHECK (speaker IN ('user', 'assistant'))"
    )
    # other conversations read only the confirmed facts of the entities a message names
    db.execute(
        "CREATE INDEX entity_facts_confirmed ON entity_facts (tenant_id, entity_id, said_at) "
        "WHERE status = 'confirmed'"
    )
    db.execute(
        "ALTER TABLE tenant_policies ADD COLUMN recall_unconfirmed_entity_facts BOOLEAN "
        "NOT NULL DEFAULT FALSE"
    )


def m022_pinned_origin(db: Connection) -> None:
    # who pinned it: the application's pins are instructions, a user key's are quoted requests;
    # the pins made before this were all trusted as instructions, so they stay the application's
    db.execute(
        "ALTER TABLE pinned_instructions ADD COLUMN origin TEXT NOT NULL DEFAULT 'application'"
    )


def m023_page_sessions(db: Connection) -> None:
    # sign-in links and the browser sessions they start (convmem.domain.page_sessions): credentials,
    # not the user's data, so the user column is not named user_id (see api_keys)
    db.execute(
        """
        CREATE TABLE page_sessions (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            acts_for_user TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('link', 'session')),
            secret_sha256 TEXT NOT NULL,
            created_at TIMESTAMPTZ NOT NULL,
            expires_at TIMESTAMPTZ NOT NULL,
            last_seen_at TIMESTAMPTZ NOT NULL,
            ended_at TIMESTAMPTZ,
            PRIMARY KEY (tenant_id, id)
        )
        """
    )


def m024_lineage_indexes(db: Connection) -> None:
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


def m025_special_categories_and_proposals(db: Connection) -> None:
    # issue 36: a tenant may open special categories to a user's explicit request, recalled for
    # the purposes it names (comma-separated; NULL: none open / the default purposes); cap the
    # proposals waiting per user; and expire proposals nobody confirmed (a retention layer)
    for column, kind in (
        ("sensitive_categories", "TEXT"),
        ("sensitive_purposes", "TEXT"),
        ("max_pending_proposals", "INTEGER"),
        ("proposals_days", "INTEGER"),
    ):
        db.execute(f"ALTER TABLE tenant_policies ADD COLUMN {column} {kind}")
    # a proposal's confidence (0..1) and why it was proposed (a code: statement, repeated,
    # model, application); NULL for what the user said or confirmed, and for older rows
    db.execute("ALTER TABLE memories ADD COLUMN confidence DOUBLE PRECISION")
    db.execute("ALTER TABLE memories ADD COLUMN basis TEXT")

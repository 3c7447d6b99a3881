"""SQLite migrations of who may see and keep what: entity facts' speakers and consent, who
pinned an instruction, the memory page's sign-in sessions, and the special categories a
tenant opens to explicit requests with proposals' life cycle."""

from __future__ import annotations

import json
import sqlite3

from convmem.store.entities import UNSPOKEN_FACTS, WITHOUT_FACTS, entities_by_tenant
from convmem.store.sqlite.entity_sources import recompute_names


def m066_entity_fact_consent(db: sqlite3.Connection) -> None:
    # Entity facts are memory (issue 30): each says who said it — the role of its message and
    # the participant's name the message carried — and is a proposal until the user confirms
    # it. Nobody confirmed anything before, so every fact stored so far is "proposed", and the
    # tenant's switch to recall proposals across conversations starts off. (SQLite cannot add
    # a NOT NULL column without a default, and "user" is no default a speaker may have: the
    # column stays nullable, every write names the speaker, and a row without one goes below.)
    db.execute(
        "ALTER TABLE entity_facts ADD COLUMN speaker TEXT CHECK (speaker IN ('user', 'assistant'))"
    )
    db.execute("ALTER TABLE entity_facts ADD COLUMN speaker_name TEXT")
    db.execute(
        "ALTER TABLE entity_facts ADD COLUMN status TEXT NOT NULL DEFAULT 'proposed' "
        "CHECK (status IN ('proposed', 'confirmed'))"
    )
    db.execute(
        "UPDATE entity_facts SET (speaker, speaker_name) = (SELECT m.role, NULLIF(trim(CASE "
        "WHEN json_type(m.metadata, '$.name') = 'text' THEN json_extract(m.metadata, '$.name') "
        "END, char(9, 10, 11, 12, 13, 32)), '') FROM messages m "
        "WHERE m.tenant_id = entity_facts.tenant_id AND m.id = entity_facts.message_id)"
    )
    # a fact whose message is gone (no delete leaves one) cannot say who said it: it goes, with
    # the names only it kept and the entities it leaves without facts
    orphans = entities_by_tenant(db.execute(UNSPOKEN_FACTS).fetchall())
    for tenant, entity_ids in orphans.items():
        ids = json.dumps(entity_ids)
        recompute_names(db, tenant, ids)
        for table, column in WITHOUT_FACTS:
            db.execute(
                f"DELETE FROM {table} WHERE tenant_id = ? AND {column} IN "
                "(SELECT value FROM json_each(?)) AND NOT EXISTS (SELECT 1 FROM entity_facts f "
                f"WHERE f.tenant_id = ? AND f.entity_id = {table}.{column})",
                (tenant, ids, tenant),
            )
    # other conversations read only the confirmed facts of the entities a message names
    db.execute(
        "CREATE INDEX entity_facts_confirmed ON entity_facts (tenant_id, entity_id, said_at) "
        "WHERE status = 'confirmed'"
    )
    db.execute(
        "ALTER TABLE tenant_policies ADD COLUMN recall_unconfirmed_entity_facts INTEGER "
        "NOT NULL DEFAULT 0"
    )


def m067_pinned_origin(db: sqlite3.Connection) -> None:
    # who pinned it: the application's pins are instructions, a user key's are quoted requests;
    # the pins made before this were all trusted as instructions, so they stay the application's
    db.execute(
        "ALTER TABLE pinned_instructions ADD COLUMN origin TEXT NOT NULL DEFAULT 'application'"
    )


def m069_page_sessions(db: sqlite3.Connection) -> None:
    # sign-in links and the browser sessions they start (convmem.domain.page_sessions): credentials,
    # not the user's data, so the user column is not named user_id (see api_keys)
    db.execute(
        """
        CREATE TABLE page_sessions (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            acts_for_user TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('link', 'session')),
            -- SHA-256 of the token's 256-bit random secret, compared in constant time
            secret_sha256 TEXT NOT NULL,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            last_seen_at TEXT NOT NULL,
            ended_at TEXT,
            PRIMARY KEY (tenant_id, id)
        )
        """
    )


def m072_special_categories_and_proposals(db: sqlite3.Connection) -> None:
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
    db.execute("ALTER TABLE memories ADD COLUMN confidence REAL")
    db.execute("ALTER TABLE memories ADD COLUMN basis TEXT")

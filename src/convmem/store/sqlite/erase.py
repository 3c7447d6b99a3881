"""Deleted text leaves no bytes in SQLite's files (DESIGN.md: deletion is real).

SQLite keeps deleted content around in three places, and each is closed here:

* **freed pages and freed space inside pages** keep the old bytes: ``PRAGMA secure_delete = ON``
  (set on every connection) overwrites them with zeros, in the database file and in the pages
  the WAL carries;
* **FTS5 segments** keep a deleted row's terms (the index only records a delete marker) until the
  segments are merged. SQLite 3.42 added FTS5's ``secure-delete`` option; older libraries (3.40 on
  the machines this runs on) have none, so every write transaction that deleted or changed indexed
  text ends with an FTS5 ``optimize`` of the tables concerned, which rewrites the index without
  the deleted entries (the old segment pages are then zeroed by ``secure_delete``). Triggers note
  which tables need it in ``fts_pending``; transactions that delete nothing indexed pay one small
  read;
* **the WAL** keeps earlier page versions until a checkpoint; the last connection to close
  checkpoints and removes it, and ``PRAGMA wal_checkpoint(TRUNCATE)`` empties it at any time.

Cost: ``optimize`` rewrites the whole index of that table, so a delete costs time proportional to
the index (milliseconds for thousands of messages); deletes are rare next to writes.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from convmem.store.sqlite.connection import Statements

# The full-text tables whose deleted entries are purged, and the tables whose rows feed them.
FTS_TABLES: Final = {
    "memories_fts": "memories",
    "message_fts": "message_index",
    "tools_fts": "tools",
}
# Changed text is purged too where a change can remove words (a rejected proposal's text). A
# message's index row changes on every append (its neighbours' context) without removing
# anything that is not still in another row, so only its deletes count.
_ERASING_UPDATES: Final = {"memories": "text, subject_key", "tools": "document"}


def install_fts_erasure(db: sqlite3.Connection) -> None:
    """The ``fts_pending`` table and the triggers that fill it, for the indexed tables that
    exist (a migration step; run again by the migration that adds one)."""
    db.execute("CREATE TABLE IF NOT EXISTS fts_pending (name TEXT PRIMARY KEY) WITHOUT ROWID")
    existing = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for fts, table in FTS_TABLES.items():
        if table not in existing:  # a later migration creates it, and installs its triggers
            continue
        note = f"INSERT OR IGNORE INTO fts_pending (name) VALUES ('{fts}')"
        db.execute(
            f"CREATE TRIGGER IF NOT EXISTS {fts}_erase_deleted AFTER DELETE ON {table} "
            f"BEGIN {note}; END"
        )
        if table in _ERASING_UPDATES:
            db.execute(
                f"CREATE TRIGGER IF NOT EXISTS {fts}_erase_changed AFTER UPDATE OF "
                f"{_ERASING_UPDATES[table]} ON {table} BEGIN {note}; END"
            )


def erase_deleted_fts(statements: Statements) -> None:
    """Before a write commits: rebuild the segments of every FTS5 table that lost text in it."""
    pending = [row[0] for row in statements.execute("SELECT name FROM fts_pending")]
    for name in pending:
        if name in FTS_TABLES:  # names come from our own triggers; checked all the same
            statements.execute(f"INSERT INTO {name} ({name}) VALUES ('optimize')")
    if pending:
        statements.execute("DELETE FROM fts_pending")

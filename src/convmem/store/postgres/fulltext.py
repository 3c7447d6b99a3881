"""What PostgreSQL's full-text columns read: the text search configuration, the index form kept
beside a text (migration m020), and the ``tsvector`` expressions built from them.

PostgreSQL's parser takes a run of letters as one word, so a Chinese, Japanese, Thai or Khmer
phrase (or a Korean word with its particle) was one lexeme and a word inside it matched nothing.
The indexes read such runs in index form (``convmem.store.index_form``: overlapping character
pairs), as queries are read. A generated column cannot call Python, so the form is a column
written beside the text by every writer of the text — NULL when it would equal the text (nearly
every English row: no space spent) — and the ``tsvector`` is generated from
``coalesce(form, text)``. The form is derived from text the never-store policy already checked,
goes with its row on delete, is blanked with its text when the text is erased, and is neither
exported nor shown: the row's text stays what was written. A tool's ``document`` exists for its
index alone, so it is itself written in index form (``postgres/tools.py``); m020 rewrites the
documents registered before it.
"""

from __future__ import annotations

from collections.abc import Sequence

from convmem.store.index_form import stored_index_form
from convmem.store.postgres.connection import Connection

# the text search configuration of every tsvector and tsquery
TS_CONFIG = "english"

# a turn's own words weigh A, its neighbours' B (ranked 1 and 0.5); the conversation's lexeme
# (see the migrations' docstring) carries no weight. m020's column; m025 replaced it.
_M020_MESSAGE_TSV = (
    "array_to_tsvector(ARRAY[scope_lexeme]) "
    f"|| setweight(to_tsvector('{TS_CONFIG}', coalesce(body_form, body)), 'A') "
    f"|| setweight(to_tsvector('{TS_CONFIG}', coalesce(ctx_form, ctx)), 'B')"
)

# Turns per recency bucket (m025). A GIN index returns a term's matches as an unordered set, so
# "the newest TERM_CANDIDATES matches" read every match of the term in the conversation, and
# their rows, before keeping the newest: a common word cost a read of most of a long
# conversation. So a turn's owner lexeme names its conversation AND its bucket, ``depth //
# RECENCY_BUCKET``: a query intersects a term with the newest bucket first, then with the two
# before it, the four before those and so on, and stops as soon as it holds enough matches
# (``postgres/search.py``). A common word is found in the newest bucket or two; a rare one is
# looked up in groups whose number grows with the logarithm of the conversation's length, each
# read from the term's own postings. The lexeme replaces the conversation's (one per turn, as
# before: ``ts_rank``'s length normalisation sees the same length).
RECENCY_BUCKET = 1024

# the bucket lexeme: the conversation's lexeme, 'z' (never a hex digit), the bucket's number
MESSAGE_TSV = (
    f"array_to_tsvector(ARRAY[scope_lexeme || 'z' || (depth / {RECENCY_BUCKET})::text]) "
    f"|| setweight(to_tsvector('{TS_CONFIG}', coalesce(body_form, body)), 'A') "
    f"|| setweight(to_tsvector('{TS_CONFIG}', coalesce(ctx_form, ctx)), 'B')"
)
# the owner's lexeme, then a memory's text (weight A) and its subject (weight B)
MEMORY_TSV = (
    "array_to_tsvector(ARRAY[owner_lexeme]) "
    f"|| setweight(to_tsvector('{TS_CONFIG}', coalesce(text_form, text)), 'A') "
    f"|| setweight(to_tsvector('{TS_CONFIG}', "
    "replace(coalesce(subject_form, subject_key), '_', ' ')), 'B')"
)
# the form columns: never exported (derived, like the tsvector)
FORM_COLUMNS = frozenset({"body_form", "ctx_form", "text_form", "subject_form"})

# rows read per round trip by the backfill
_BATCH = 1000


# A form row: (first form, second form, tenant, key) — the parameters of the UPDATE filling them.
FormRow = tuple[str | None, str | None, str, str]


def message_forms_after(db: Connection, after: int) -> tuple[int | None, list[FormRow]]:
    """The next batch of index rows after ``seq`` ``after``, of every tenant (read across
    tenants on purpose, once, while migrating): the last ``seq`` read (None when none is left)
    and (body_form, ctx_form, tenant, message id) of those whose body or context needs a
    form."""
    rows = db.execute(
        "SELECT seq, tenant_id, message_id, body, ctx FROM message_index "
        "WHERE seq > %s ORDER BY seq LIMIT %s",
        (after, _BATCH),
    ).fetchall()
    found = [
        (*forms, tenant, message_id)
        for _, tenant, message_id, body, ctx in rows
        if (forms := (stored_index_form(body), stored_index_form(ctx))) != (None, None)
    ]
    return (rows[-1][0] if rows else None), found


def memory_forms_after(
    db: Connection, after: tuple[str, str]
) -> tuple[tuple[str, str] | None, list[FormRow]]:
    """The next batch of memories after the key ``after`` (tenant, id), of every tenant (see
    ``message_forms_after``): the last key read (None when none is left) and (text_form,
    subject_form, tenant, memory id) of those whose text or subject needs a form."""
    rows = db.execute(
        "SELECT tenant_id, id, text, subject_key FROM memories "
        "WHERE (tenant_id, id) > (%s, %s) ORDER BY tenant_id, id LIMIT %s",
        (*after, _BATCH),
    ).fetchall()
    found = [
        (*forms, tenant, memory_id)
        for tenant, memory_id, text, subject in rows
        if (forms := (stored_index_form(text), stored_index_form(subject))) != (None, None)
    ]
    return ((rows[-1][0], rows[-1][1]) if rows else None), found


def tool_documents_to_form(db: Connection) -> list[tuple[str, str, str]]:
    """(document in index form, tenant, name) of every tool, of every tenant, whose document
    needs it (a tenant's registry is small: read at once, across tenants, while migrating)."""
    rows = db.execute("SELECT tenant_id, name, document FROM tools").fetchall()
    return [
        (form, tenant, name)
        for tenant, name, doc in rows
        if (form := stored_index_form(doc)) is not None
    ]


def m020_index_form(db: Connection) -> None:
    # The tsvectors are generated from the index form (the module docstring). Each old column
    # is dropped first (its GIN index with it), so filling the forms does not recompute it a
    # row at a time; the new column is computed once as it is added, then indexed again under
    # the old index's name. Each form is written by an UPDATE pinned to its row's tenant.
    db.execute("ALTER TABLE message_index DROP COLUMN tsv")
    db.execute("ALTER TABLE message_index ADD COLUMN body_form TEXT, ADD COLUMN ctx_form TEXT")
    seq: int | None = 0
    while seq is not None:
        seq, found = message_forms_after(db, seq)
        _fill(
            db,
            "UPDATE message_index SET body_form = %s, ctx_form = %s "
            "WHERE tenant_id = %s AND message_id = %s",
            found,
        )
    _add_tsv(db, "message_index", _M020_MESSAGE_TSV, "message_index_fts")

    db.execute("ALTER TABLE memories DROP COLUMN tsv")
    db.execute("ALTER TABLE memories ADD COLUMN text_form TEXT, ADD COLUMN subject_form TEXT")
    key: tuple[str, str] | None = ("", "")
    while key is not None:
        key, found = memory_forms_after(db, key)
        _fill(
            db,
            "UPDATE memories SET text_form = %s, subject_form = %s "
            "WHERE tenant_id = %s AND id = %s",
            found,
        )
    _add_tsv(db, "memories", MEMORY_TSV, "memories_fts")

    # a tool's document exists for its index alone: it is written in index form (its tsvector
    # follows), as SQLite's m065 rewrites it
    _fill(
        db,
        "UPDATE tools SET document = %s WHERE tenant_id = %s AND name = %s",
        tool_documents_to_form(db),
    )


def m026_recency_buckets(db: Connection) -> None:
    # The owner lexeme names the turn's recency bucket too (``RECENCY_BUCKET``). The column is
    # generated, so it is dropped (its GIN index with it), added back computed once, and indexed
    # again under the old name, as m020 did.
    db.execute("ALTER TABLE message_index DROP COLUMN tsv")
    _add_tsv(db, "message_index", MESSAGE_TSV, "message_index_fts")


def _fill(db: Connection, update: str, rows: Sequence[tuple[str | None, ...]]) -> None:
    if rows:
        with db.cursor() as cursor:  # one prepared statement for the batch, not one call a row
            cursor.executemany(update, rows)


def _add_tsv(db: Connection, table: str, expression: str, index: str) -> None:
    db.execute(
        f"ALTER TABLE {table} ADD COLUMN tsv TSVECTOR GENERATED ALWAYS AS ({expression}) STORED"
    )
    db.execute(f"CREATE INDEX {index} ON {table} USING gin (tsv)")

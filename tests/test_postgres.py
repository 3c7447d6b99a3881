"""The PostgreSQL backend on a real server: schema discipline, migrations, concurrency (row
locks, the SKIP LOCKED queue), errors mapped onto convmem's tree."""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner

import convmem
from convmem.cli.main import main
from convmem.model.summary import Job
from tests.extras import module_of_extra

module_of_extra("psycopg", "postgres")  # before the imports that need it

import psycopg  # noqa: E402

from convmem.store.postgres.migrations import MIGRATIONS  # noqa: E402

# Tables that are not per tenant (see the migrations' docstring and the README's "Scaling out").
GLOBAL_TABLES = {"_migrations", "api_keys", "tenant_policies", "jobs"}


@pytest.fixture
def mem(postgres_url: str) -> Iterator[convmem.Memory]:
    with convmem.open(postgres_url) as memory:
        yield memory


def _catalog(url: str, sql: str) -> list[tuple[str, ...]]:
    with psycopg.connect(url, autocommit=True) as db:
        return [tuple(row) for row in db.execute(sql).fetchall()]


def _in_schema(sql: str) -> str:
    return sql.replace("THIS_SCHEMA", "(SELECT current_schema())")


# --- schema and migrations ----------------------------------------------------------------------


def test_every_key_index_and_foreign_key_starts_with_the_tenant(mem: convmem.Memory) -> None:
    url = mem.store.url  # type: ignore[attr-defined]
    tables = {r[0] for r in _catalog(url, _in_schema(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = THIS_SCHEMA"
    ))}  # fmt: skip
    assert {"conversations", "messages", "memories", "message_index", "jobs"} <= tables
    first_columns = _catalog(url, _in_schema(
        "SELECT c.relname, i.relname, a.attname, am.amname, ix.indisprimary "
        "FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid "
        "JOIN pg_class c ON c.oid = ix.indrelid JOIN pg_am am ON am.oid = i.relam "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ix.indkey[0] "
        "WHERE n.nspname = THIS_SCHEMA"
    ))  # fmt: skip
    for table, index, column, method, primary in first_columns:
        if table == "_migrations" or (table in GLOBAL_TABLES and not primary):
            continue  # the global tables' lookups by id or readiness (documented)
        if method == "gin":
            continue  # full text: scoped by the owner lexeme instead (see the migrations)
        assert column == "tenant_id", f"{table}.{index} starts with {column}"
    foreign_keys = _catalog(url, _in_schema(
        "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE contype = 'f' AND connamespace = THIS_SCHEMA::regnamespace"
    ))  # fmt: skip
    assert len(foreign_keys) >= 8
    for table, name, definition in foreign_keys:
        assert definition.startswith("FOREIGN KEY (tenant_id,"), (table, name, definition)
        assert "CASCADE" not in definition, f"{name} cascades: deletes must be explicit"
    per_tenant = tables - GLOBAL_TABLES
    with_tenant = {r[0] for r in _catalog(url, _in_schema(
        "SELECT table_name FROM information_schema.columns WHERE table_schema = THIS_SCHEMA "
        "AND column_name = 'tenant_id'"
    ))}  # fmt: skip
    assert per_tenant - {"_migrations"} <= with_tenant
    triggers = _catalog(url, _in_schema(
        "SELECT tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = THIS_SCHEMA AND NOT t.tgisinternal"
    ))  # fmt: skip
    assert triggers == []


def test_migrations_are_recorded_and_a_behind_database_is_refused(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVMEM_MIGRATE_ON_OPEN", "0")
    with pytest.raises(convmem.StoreError, match="convmem migrate"):
        convmem.open(postgres_url)
    result = CliRunner().invoke(main, ["migrate", "--db", postgres_url])
    assert result.exit_code == 0, result.output
    assert f"{len(MIGRATIONS)} migration(s) applied" in result.output
    again = CliRunner().invoke(main, ["migrate", "--db", postgres_url])
    assert "0 migration(s) applied" in again.output
    names = [r[0] for r in _catalog(postgres_url, "SELECT name FROM _migrations ORDER BY name")]
    assert names == sorted(m.__name__ for m in MIGRATIONS)
    with convmem.open(postgres_url) as mem:
        conv = mem.scope("acme", "alice").create_conversation()
        assert conv.append("user", "hello").depth == 0


def test_an_unreachable_server_is_a_store_error() -> None:
    with pytest.raises(convmem.StoreError):
        convmem.open("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2")


# --- data round trips and bad input ------------------------------------------------------------


def test_messages_round_trip_with_times_metadata_and_tool_calls(mem: convmem.Memory) -> None:
    conv = mem.scope("acme", "alice").create_conversation(title="Trip", metadata={"k": [1, 2]})
    when = datetime(2023, 5, 8, 13, 56, 7, 123456, tzinfo=UTC)
    first = conv.append("user", "I prefer aisle seats.", metadata={"ext_id": "D1:3"},
                        created_at=when)  # fmt: skip
    call = convmem.ToolCall(id="c1", name="search", arguments='{"q": "flights"}')
    conv.append("assistant", "", tool_calls=[call])
    conv.append("tool", "3 flights found", tool_call_id="c1")
    again = conv.message(first.id)
    assert again.created_at == when
    assert (again.metadata, again.content) == ({"ext_id": "D1:3"}, "I prefer aisle seats.")
    branch = conv.branch()
    assert [m.role for m in branch] == ["user", "assistant", "tool"]
    assert branch[1].tool_calls == (call,)
    assert conv.record().metadata == {"k": [1, 2]}


def test_text_postgresql_cannot_hold_is_refused_and_nothing_is_written(
    mem: convmem.Memory,
) -> None:
    conv = mem.scope("acme", "alice").create_conversation()
    conv.append("user", "before")
    with pytest.raises(convmem.InvalidInput, match="NUL"):
        conv.append("user", "a\x00b")
    assert [m.content for m in conv.branch()] == ["before"]


# --- concurrency -----------------------------------------------------------------------------


def _append_many(url: str, conversation_id: str, worker: int, count: int) -> None:
    with convmem.open(url) as memory:
        conv = memory.scope("acme", "alice").conversation(conversation_id)
        for i in range(count):
            conv.append("user", f"worker {worker} message {i}", metadata={"w": worker, "i": i})


def test_processes_appending_to_one_conversation_make_one_chain(mem: convmem.Memory) -> None:
    url = mem.store.url  # type: ignore[attr-defined]
    conv = mem.scope("acme", "alice").create_conversation()
    processes, appends = 3, 60
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_append_many, args=(url, conv.id, w, appends))
        for w in range(processes)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=300)
    assert [worker.exitcode for worker in workers] == [0] * processes
    branch = conv.branch()
    assert [m.depth for m in branch] == list(range(processes * appends))
    assert Counter(m.metadata["w"] for m in branch) == dict.fromkeys(range(processes), appends)
    forks = _catalog(url, "SELECT parent_id FROM messages GROUP BY parent_id HAVING count(*) > 1")
    assert forks == []


def _at_once(count: int, action: Callable[[int], object]) -> list[BaseException]:
    errors: list[BaseException] = []
    start = threading.Barrier(count)

    def run(i: int) -> None:
        start.wait()
        try:
            action(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return errors


def test_concurrent_statements_on_one_subject_leave_one_current_memory(
    mem: convmem.Memory,
) -> None:
    alice = mem.scope("acme", "alice")
    errors = _at_once(8, lambda i: alice.remember(f"I prefer seat {i}", subject="seat"))
    assert errors == []
    records = alice.memories.list(status=None)
    current = [r for r in records if r.status == "confirmed" and r.subject_key == "seat"]
    assert len(current) == 1
    # every other statement was superseded by the next, none lost: a chain of eight
    assert len([r for r in records if r.subject_key == "seat"]) == 8
    superseded = {r.supersedes_id for r in records if r.supersedes_id}
    assert len(superseded) == 7


def test_concurrent_pins_get_distinct_positions(mem: convmem.Memory) -> None:
    alice = mem.scope("acme", "alice")
    errors = _at_once(6, lambda i: alice.pin(f"Rule {i}."))
    assert errors == []
    assert sorted(p.position for p in alice.pinned()) == list(range(1, 7))


def _job(i: int) -> Job:
    now = datetime.now(UTC)
    return Job(f"job_{i:03d}", "acme", "summary", f"key-{i}", None, {}, "pending", 0, 3, None,
               None, 0.0, None, now, now)  # fmt: skip


def test_workers_claim_different_jobs_and_skip_locked_ones(mem: convmem.Memory) -> None:
    store = mem.store
    with store.write() as tx:
        assert all(tx.enqueue_job(_job(i)) for i in range(20))
        assert not tx.enqueue_job(_job(0))  # idempotent by key
    claimed: list[str] = []
    lock = threading.Lock()

    def drain(worker: int) -> None:
        while True:
            with store.write() as tx:
                job = tx.claim_job(f"w{worker}", time.time(), 60.0, ["summary"])
                time.sleep(0.01)  # hold the row lock while others look
            if job is None:
                return
            with lock:
                claimed.append(job.id)

    assert _at_once(4, drain) == []
    assert sorted(claimed) == [f"job_{i:03d}" for i in range(20)]
    with store.read() as reader:
        assert {j.status for j in reader.list_jobs(None, 100)} == {"running"}


def test_a_lost_lease_is_claimed_again(mem: convmem.Memory) -> None:
    with mem.store.write() as tx:
        tx.enqueue_job(_job(1))
        first = tx.claim_job("crashed", time.time() - 100, 1.0, ["summary"])
    assert first is not None
    with mem.store.write() as tx:
        second = tx.claim_job("alive", time.time(), 60.0, ["summary"])
        assert second is not None and (second.id, second.attempts) == (first.id, 2)
        assert not tx.finish_job(first.id, "crashed")
        assert tx.finish_job(first.id, "alive", "ok")


# --- deletes leave nothing derived ---------------------------------------------------------------


def _rows_mentioning(url: str, value: str) -> dict[str, int]:
    """Rows of every table with a text column equal to ``value`` (the audit aside)."""
    found: dict[str, int] = {}
    columns = _catalog(url, _in_schema(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = THIS_SCHEMA AND data_type = 'text' AND table_name <> 'audit_events'"
    ))  # fmt: skip
    with psycopg.connect(url, autocommit=True) as db:
        for table, column in columns:
            row = db.execute(f"SELECT count(*) FROM {table} WHERE {column} = %s", (value,))
            count = row.fetchone()
            if count and count[0]:
                found[f"{table}.{column}"] = count[0]
    return found


def test_deleting_a_conversation_or_a_user_removes_every_derived_row(
    postgres_url: str,
) -> None:
    embedder = convmem.HashingEmbedder()
    with convmem.open(postgres_url, embedder=embedder) as mem:
        alice = mem.scope("acme", "alice")
        conv = alice.create_conversation()
        for i in range(30):
            conv.append("user", f"Remember that my locker number is {i}.")
            conv.append("assistant", f"Locker {i} noted; gravel bikes and espresso.")
        conv.pin("Be brief.")
        conv.assemble("what is my locker?", model=convmem.ModelProfile(context_window=900,
                                                                      max_output=100))  # fmt: skip
        assert conv.search("gravel espresso")
        assert _rows_mentioning(postgres_url, conv.id)
        conv.delete()
        assert _rows_mentioning(postgres_url, conv.id) == {}
        other = alice.create_conversation()
        other.append("user", "Remember that I like tea.")
        alice.delete_all()
        left = _rows_mentioning(postgres_url, "alice")
        assert left == {}, left


# --- time-limited stretches -----------------------------------------------------------------------


def test_a_stretch_that_went_well_keeps_prepared_statements_and_the_session_timeout(
    mem: convmem.Memory,
) -> None:
    """An assembly's parts run in time-limited stretches; ending one must neither drop the
    connection's prepared statements (psycopg forgets them all on a ROLLBACK, so every request
    re-planned every statement) nor leave the stretch's timeout behind."""
    from convmem.model.deadline import Deadline

    conv = mem.scope(tenant="acme", user="alice").create_conversation()
    first = conv.append("user", "hello there")
    with mem.store.read() as tx:
        db = tx._db  # type: ignore[attr-defined]
        before = db.execute("SHOW statement_timeout").fetchone()[0]
        for _ in range(8):  # past psycopg's prepare threshold
            tx.get_message("acme", "alice", first.id)
        prepared = db.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()[0]
        assert prepared > 0
        with tx.time_limited(Deadline(5.0)):
            assert db.execute("SHOW statement_timeout").fetchone()[0] != before
            tx.get_message("acme", "alice", first.id)
        assert db.execute("SHOW statement_timeout").fetchone()[0] == before
        after = db.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()[0]
        assert after >= prepared


# --- bulk imports -------------------------------------------------------------------------------


def _analysed(url: str) -> dict[str, bool]:
    rows = _catalog(url, _in_schema(
        "SELECT relname, last_analyze IS NOT NULL FROM pg_stat_user_tables "
        "WHERE schemaname = THIS_SCHEMA"
    ))  # fmt: skip
    return {str(name): bool(done) for name, done in rows}


def test_a_bulk_import_leaves_its_tables_analysed(mem: convmem.Memory, postgres_url: str) -> None:
    """The planner's statistics of the tables an import fills are brought up to date at its end
    (before, a freshly imported branch was planned as an empty table until autovacuum came)."""
    from convmem.importers.bulk import ImportNode, ImportTree, import_trees
    from convmem.model.messages import NewMessage
    from convmem.store.postgres.store import IMPORTED_TABLES

    assert not any(_analysed(postgres_url).get(table) for table in IMPORTED_TABLES)
    start = datetime(2024, 5, 2, 8, 30, tzinfo=UTC)
    nodes = [
        ImportNode(f"m{n}", f"m{n - 1}" if n else None,
                   NewMessage("user" if n % 2 == 0 else "assistant", f"turn {n}", created_at=start))
        for n in range(40)
    ]  # fmt: skip
    report = import_trees(
        mem.scope("acme", "alice"), "test", [ImportTree("src", "t", start, nodes)]
    )
    assert report.messages == 40
    analysed = _analysed(postgres_url)
    assert all(analysed[table] for table in IMPORTED_TABLES), analysed

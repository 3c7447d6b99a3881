"""Imports: a ChatGPT export (branches, tool calls) and a Mem0 export, through the bulk path."""

from __future__ import annotations

import gc
import json
import os
import pty
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import convmem
from convmem.cli.main import main
from convmem.importers import mem0, openai_chat
from convmem.importers.bulk import import_trees

SECRET = "sk-proj-4f9Qz7LmB2xR8tYp1VwK3nJ6hD0sGcE5aUoI"


def _node(key: str, parent: str | None, role: str | None, content: Any, **extra: Any) -> Any:
    message = None if role is None else {
        "id": key, "author": {"role": role}, "create_time": 1_700_000_000 + len(key),
        "content": content, "recipient": extra.pop("recipient", "all"), **extra,
    }  # fmt: skip
    return {"id": key, "parent": parent, "children": [], "message": message}


def _text(*parts: Any) -> dict[str, Any]:
    return {"content_type": "text", "parts": list(parts)}


def chatgpt_export() -> list[dict[str, Any]]:
    nodes = [
        _node("root", None, None, None),
        _node("sys", "root", "system", _text("")),  # hidden
        _node("u1", "sys", "user", _text("Plan a trip to Lisbon in May.")),
        _node("a1", "u1", "assistant", _text("Lisbon in May is warm; book early.")),
        _node("u2", "a1", "user", _text("What does the flight cost?")),
        _node("u2b", "a1", "user", _text("What does the train cost?")),  # an edit: a branch
        _node(
            "call",
            "u2b",
            "assistant",
            {"content_type": "code", "text": "price('train')"},
            recipient="python",
        ),
        _node("out", "call", "tool", {"content_type": "execution_output", "text": "42 EUR"}),
        _node("a3", "out", "assistant", _text("The train costs 42 EUR.")),
        _node("think", "a3", "assistant", {"content_type": "thoughts", "thoughts": []}),
        _node(
            "u4",
            "think",
            "user",
            {"content_type": "multimodal_text", "parts": [{"asset": "x"}, "Is this it?"]},
        ),
    ]
    mapping = {n["id"]: n for n in nodes}
    for n in nodes:
        if n["parent"]:
            mapping[n["parent"]]["children"].append(n["id"])
    return [{"id": "chat-1", "title": "Lisbon", "create_time": 1_700_000_000,
             "mapping": mapping, "current_node": "u4"}]  # fmt: skip


def test_a_chatgpt_export_keeps_its_branches_and_tool_calls(
    alice: convmem.Scope, tmp_path: Path
) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(chatgpt_export()))
    report = import_trees(alice, openai_chat.SOURCE, openai_chat.read(path))
    assert (report.conversations, report.messages) == (1, 8)
    assert dict(report.skipped) == {"empty_message": 1, "unsupported_content": 1}
    (record,) = alice.conversations()
    assert record.title == "Lisbon"
    assert record.metadata["import"] == {"source": "openai-chat", "id": "chat-1"}
    conv = alice.conversation(record.id)
    branch = conv.branch()
    assert [m.metadata["ext_id"] for m in branch] == ["u1", "a1", "u2b", "call", "out", "a3", "u4"]
    call, out = branch[3], branch[4]
    assert (call.tool_calls[0].name, call.tool_calls[0].arguments_object()) == (
        "python", {"input": "price('train')"})  # fmt: skip
    assert (out.role, out.tool_call_id, out.content) == ("tool", call.tool_calls[0].id, "42 EUR")
    assert branch[-1].content == "[image]\nIs this it?"
    assert [m.content for m in conv.siblings(branch[2].id)] == [
        "What does the flight cost?", "What does the train cost?"]  # fmt: skip
    assert branch[0].created_at.timestamp() == 1_700_000_002
    assert conv.search("flight cost")[0].message.metadata["ext_id"] == "u2"
    assert not alice.memories.list()  # history does not act on memory
    again = import_trees(alice, openai_chat.SOURCE, openai_chat.read(path))
    assert (again.already_imported, again.messages) == (1, 0)
    assert len(alice.conversations()) == 1


def test_the_bulk_path_stores_what_append_would(alice: convmem.Scope, tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(chatgpt_export()))
    trees = openai_chat.read(path)
    import_trees(alice, openai_chat.SOURCE, trees)
    (record,) = alice.conversations()
    bulk = alice.conversation(record.id)
    by_hand = alice.create_conversation()
    ids: dict[str, str] = {}
    for node in trees[0].nodes:  # the same tree, one append at a time
        new = node.message
        made = by_hand.append(new.role, new.content, tool_calls=new.tool_calls,
                              tool_call_id=new.tool_call_id, created_at=new.created_at,
                              parent_id=ids.get(node.parent_key or ""),
                              metadata={"ext_id": node.key})  # fmt: skip
        ids[node.key] = made.id
    by_hand.switch_branch(ids["u4"])
    small = convmem.ModelProfile(context_window=400, max_output=100)
    for question in ["How much is the train?", "When should I go?"]:
        one = bulk.assemble(question, model=small)
        other = by_hand.assemble(question, model=small)
        assert one.report.sections == other.report.sections
        assert one.messages == other.messages
        hits = [h.message.metadata["ext_id"] for h in bulk.search(question)]
        assert hits == [h.message.metadata["ext_id"] for h in by_hand.search(question)]


def test_the_cli_imports_a_chatgpt_export_and_resumes(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    export = chatgpt_export()
    second = json.loads(json.dumps(export[0]))
    second["id"] = "chat-2"
    path.write_text(json.dumps([*export, second]))
    db = str(tmp_path / "new.db")
    args = ["import", "openai-chat", "--db", db, "--tenant", "acme", "--user", "alice", str(path)]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    assert "imported 2 conversations, 16 messages" in first.output
    assert "skipped 2: empty_message" in first.output
    again = CliRunner().invoke(main, args)
    assert "imported 0 conversations, 0 messages" in again.output
    assert "2 already imported" in again.output
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    bad = CliRunner().invoke(main, [*args[:-1], str(broken)])
    assert bad.exit_code == 2 and "cannot read a ChatGPT export" in bad.output


def mem0_export() -> dict[str, Any]:
    return {"results": [
        {"id": "m1", "memory": "Prefers aisle seats", "user_id": "alice",
         "created_at": "2024-05-01T10:00:00-07:00", "metadata": {"source": "chat"}},
        {"id": "m2", "memory": "Is vegetarian", "user_id": "alice"},
        {"id": "m3", "memory": f"OpenAI key is {SECRET}", "user_id": "alice"},
        {"id": "m4", "memory": "Lives in Porto", "user_id": "bob"},
        {"id": "m5", "memory": "Likes jazz"},
    ]}  # fmt: skip


def test_a_mem0_export_becomes_confirmed_imported_memories(
    memory: convmem.Memory, tmp_path: Path
) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(mem0_export()))
    report = mem0.import_mem0(memory, "acme", mem0.read(path), as_named=True)
    assert report.saved == 3
    assert report.blocked == [("m3", "credential")]
    assert report.invalid == [("m5", "no user_id (pass --user)")]
    alice = memory.scope("acme", "alice")
    records = alice.memories.list()
    assert sorted(m.text for m in records) == ["Is vegetarian", "Prefers aisle seats"]
    assert {(m.status, m.source_kind) for m in records} == {("confirmed", "import")}
    assert SECRET not in json.dumps(alice.export())
    assert {e.actor for e in alice.audit()} == {"import:mem0"}
    assert [m.text for m in memory.scope("acme", "bob").memories.list()] == ["Lives in Porto"]
    again = mem0.import_mem0(memory, "acme", mem0.read(path), user="carol", as_named=True)
    assert (again.saved, again.already_present) == (1, 3)  # only m5, now for carol
    assert len(alice.memories.list()) == 2


def test_the_cli_reports_blocked_mem0_records(tmp_path: Path) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(mem0_export()["results"]))  # a bare list works too
    db = str(tmp_path / "new.db")
    done = CliRunner().invoke(main, ["import", "mem0", "--db", db, "--tenant", "acme",
                                     "--user", "dan", "--as-named", str(path)])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "saved 4 memories; 0 already present" in done.output
    assert "blocked m3: credential" in done.output
    assert SECRET not in done.output


@pytest.mark.parametrize("content", ['{"results": 3}', "[1, 2]", "nope"])
def test_a_malformed_mem0_file_is_refused(tmp_path: Path, content: str) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(content)
    with pytest.raises(convmem.InvalidInput):
        mem0.read(path)


def test_a_mem0_import_keeps_each_records_times(memory: convmem.Memory, tmp_path: Path) -> None:
    records = [
        {"id": "t1", "memory": "Prefers aisle seats", "user_id": "alice",
         "created_at": "2024-05-01T10:00:00-07:00", "updated_at": "2024-06-02T08:30:00-07:00"},
        {"id": "t2", "memory": "Is vegetarian", "user_id": "alice",
         "created_at": "2023-01-15T09:00:00", "updated_at": None},  # naive: UTC
        {"id": "t3", "memory": "Plays the cello", "user_id": "alice",
         "created_at": "2024-03-01T00:00:00Z", "updated_at": "2024-02-01T00:00:00Z"},
        {"id": "t4", "memory": "Lives in Porto", "user_id": "alice", "created_at": "last week"},
    ]  # fmt: skip
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(records))
    before = datetime.now(UTC)
    assert mem0.import_mem0(memory, "acme", mem0.read(path), user="alice").saved == 4
    by_text = {m.text: m for m in memory.scope("acme", "alice").memories.list()}
    aisle, veg, cello, porto = (by_text[t] for t in (
        "Prefers aisle seats", "Is vegetarian", "Plays the cello", "Lives in Porto"))  # fmt: skip
    assert (aisle.created_at, aisle.updated_at) == (
        datetime(2024, 5, 1, 17, 0, tzinfo=UTC),
        datetime(2024, 6, 2, 15, 30, tzinfo=UTC),
    )
    assert veg.created_at == veg.updated_at == datetime(2023, 1, 15, 9, 0, tzinfo=UTC)
    # updated before created cannot be: the update time is the creation time
    assert cello.created_at == cello.updated_at == datetime(2024, 3, 1, tzinfo=UTC)
    assert porto.created_at >= before  # unreadable: the time of the import


def test_progress_is_told_each_batch_and_accounts_for_every_conversation(
    alice: convmem.Scope, tmp_path: Path
) -> None:
    export = chatgpt_export()
    many = []
    for n in range(7):
        copy = json.loads(json.dumps(export[0]))
        copy["id"] = f"chat-{n}"
        many.append(copy)
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(many))
    told: list[int] = []
    report = import_trees(alice, openai_chat.SOURCE, openai_chat.read(path),
                          progress=told.append, batch_messages=16)  # fmt: skip
    assert (report.conversations, report.messages) == (7, 56)
    assert told == [2, 2, 2, 1]  # 8 messages a conversation: two per batch of 16
    told.clear()
    again = import_trees(alice, openai_chat.SOURCE, openai_chat.read(path), progress=told.append)
    assert (again.already_imported, sum(told)) == (7, 7)
    with pytest.raises(convmem.InvalidInput):
        import_trees(alice, openai_chat.SOURCE, [], batch_messages=0)


def test_the_cli_draws_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(chatgpt_export()))
    leader, follower = pty.openpty()
    db = str(tmp_path / "new.db")
    command = [sys.executable, "-m", "convmem.cli.main", "import", "openai-chat", "--db", db,
               "--tenant", "acme", "--user", "alice", str(path)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(command, stdout=follower, stderr=subprocess.PIPE, env=env, timeout=120,
                          check=False)  # fmt: skip
    os.close(follower)
    output = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal is closed once everything is read
            break
        if not chunk:
            break
        output += chunk
    os.close(leader)
    assert done.returncode == 0, done.stderr
    text = output.decode()
    assert "conversations  [####" in text and "100%" in text
    assert "imported 1 conversations, 8 messages" in text


def test_an_import_leaves_the_cycle_collector_as_it_found_it(
    alice: convmem.Scope, tmp_path: Path
) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(chatgpt_export()))
    seen: list[bool] = []

    def told(settled: int) -> None:
        seen.append(gc.isenabled())

    assert gc.isenabled()
    import_trees(alice, openai_chat.SOURCE, openai_chat.read(path), progress=told)
    assert seen == [False] and gc.isenabled()  # paused while it ran, on again after
    gc.disable()
    try:
        with pytest.raises(convmem.InvalidInput):
            import_trees(alice, openai_chat.SOURCE, [], batch_messages=0)
        import_trees(alice, "another-source", openai_chat.read(path))
        assert not gc.isenabled()  # the caller's choice stands
    finally:
        gc.enable()


# --- the principal comes from the caller ------------------------------------------------------


def _file_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(db.parent.glob(db.name + "*")))


@pytest.mark.parametrize("field", ["user_id", "userId"])
def test_a_mem0_file_naming_another_user_is_refused_whole(tmp_path: Path, field: str) -> None:
    """``--user bob`` on a file whose records say alice wrote into alice; now nothing is
    written and the error names no user and no memory text."""
    records = [
        {"id": "m1", "memory": "Prefers aisle seats", field: "bob"},
        {"id": "m2", "memory": "Lives in Porto"},  # names nobody: bob's
        {"id": "m3", "memory": "Is vegetarian", field: "alice"},
    ]
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(records))
    db = tmp_path / "convmem.db"
    convmem.open(db).close()
    before = _file_bytes(db)
    args = ["import", "mem0", "--db", str(db), "--tenant", "acme", "--user", "bob", str(path)]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 2, done.output
    assert "name another user" in done.output and "m3" in done.output
    assert "alice" not in done.output and "vegetarian" not in done.output
    assert _file_bytes(db) == before
    with convmem.open(db) as memory:
        with pytest.raises(convmem.InvalidInput):
            mem0.import_mem0(memory, "acme", records, user="bob")
        with pytest.raises(convmem.InvalidInput):  # no user: no principal to write for
            mem0.import_mem0(memory, "acme", [records[1]])
        assert memory.scope("acme", "alice").memories.list() == []
        assert memory.scope("acme", "bob").memories.list() == []
        # the records that are bob's (or name nobody) import into bob
        mine = mem0.import_mem0(memory, "acme", records[:2], user="bob")
        assert mine.saved == 2
        assert memory.scope("acme", "alice").memories.list() == []
    refused = CliRunner().invoke(main, [*args[:-3], str(path)])  # no --user, no --as-named
    assert refused.exit_code == 2 and "--user is required" in refused.output


def test_an_administrator_imports_each_record_as_the_user_it_names(tmp_path: Path) -> None:
    records = [
        {"id": "m1", "memory": "Prefers aisle seats", "user_id": "alice"},
        {"id": "m2", "memory": "Lives in Porto", "user_id": "Łukasz"},
        {"id": "m3", "memory": "Likes jazz"},
    ]
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(records))
    db = str(tmp_path / "convmem.db")
    args = ["import", "mem0", "--db", db, "--tenant", "acme", "--as-named", str(path)]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    assert "saved 2 memories" in done.output and "invalid m3: no user_id" in done.output
    with convmem.open(db) as memory:
        assert [m.text for m in memory.scope("acme", "Łukasz").memories.list()] == [
            "Lives in Porto"
        ]
        # an owner no backend could store is refused before anything is written
        bad = [{"id": "x1", "memory": "Likes tea", "user_id": "bob"},
               {"id": "x2", "memory": "Likes jazz", "user_id": "Ł" * 200}]  # fmt: skip
        with pytest.raises(convmem.InvalidIdentifier):
            mem0.import_mem0(memory, "acme", bad, as_named=True)
        with pytest.raises(convmem.InvalidInput):
            mem0.import_mem0(memory, "acme", [{"id": "y", "memory": "x", "user_id": 7}],
                             as_named=True)  # fmt: skip
        assert memory.scope("acme", "bob").memories.list() == []


def test_a_chat_export_naming_another_user_is_refused_whole(tmp_path: Path) -> None:
    export = chatgpt_export()
    second = json.loads(json.dumps(export[0]))
    second["id"], second["user_id"] = "chat-2", "alice"
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([*export, second]))
    db = tmp_path / "convmem.db"
    convmem.open(db).close()
    before = _file_bytes(db)
    args = ["import", "openai-chat", "--db", str(db), "--tenant", "acme", "--user", "bob",
            str(path)]  # fmt: skip
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 2, done.output
    assert "conversation chat-2" in done.output and "alice" not in done.output
    assert _file_bytes(db) == before  # the first conversation (naming nobody) was not written
    with convmem.open(db) as memory:
        with pytest.raises(convmem.InvalidInput):
            import_trees(memory.scope("acme", "bob"), openai_chat.SOURCE, openai_chat.read(path))
        assert memory.scope("acme", "bob").conversations() == []
    named = CliRunner().invoke(main, [*args[:-1], "--as-named", str(path)])
    assert named.exit_code == 0, named.output
    assert "imported 2 conversations" in named.output
    with convmem.open(db) as memory:
        assert len(memory.scope("acme", "bob").conversations()) == 1
        assert len(memory.scope("acme", "alice").conversations()) == 1


def test_an_import_builds_the_people_and_things_and_the_cli_rebuilds_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(chatgpt_export()))
    db = str(tmp_path / "new.db")
    args = ["import", "openai-chat", "--db", db, "--tenant", "acme", "--user", "alice", str(path)]
    imported = CliRunner().invoke(main, args)
    assert imported.exit_code == 0, imported.output
    assert "statements about people and things" in imported.output
    with convmem.open(db) as memory:
        alice = memory.scope("acme", "alice")
        names = {e.name for e in alice.entities.list()}
        assert "Lisbon" in names and "EUR" not in names
        (lisbon,) = alice.entities.search("Lisbon")
        alice.entities.delete(lisbon.id)
        assert alice.entities.search("Lisbon") == []
    rebuild = ["entities", "rebuild", "--db", db, "--tenant", "acme", "--user", "alice"]
    rebuilt = CliRunner().invoke(main, rebuild)
    assert rebuilt.exit_code == 0, rebuilt.output
    assert "rebuilt the entities of alice" in rebuilt.output
    with convmem.open(db) as memory:
        assert [e.name for e in memory.scope("acme", "alice").entities.search("Lisbon")] == [
            "Lisbon"
        ]
        assert memory.scope("acme", "bob").entities.list() == []
    missing = CliRunner().invoke(main, [*rebuild[:-4], "--user", "alice"])
    assert missing.exit_code == 2 and "--tenant" in missing.output
    with convmem.open(db) as memory:
        alice = memory.scope("acme", "alice")
        for entity in alice.entities.list(limit=500):
            alice.entities.delete(entity.id)
    everyone = CliRunner().invoke(main, rebuild[:-2])  # no --user: every user of the tenant
    assert everyone.exit_code == 0, everyone.output
    assert "rebuilt the entities of every user of acme" in everyone.output
    with convmem.open(db) as memory:
        assert memory.scope("acme", "alice").entities.search("Lisbon")

"""A bulk import killed mid-run (SIGKILL to a real ``convmem import`` process) and run again ends
with the same rows as a run that was never interrupted: nothing lost, nothing twice."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import convmem
from convmem.store.sqlite.search import conversation_token

CONVERSATIONS = 150
WORDS = ("ferry", "Lisbon", "tram", "pastry", "museum", "tile", "river", "hill", "sunset",
         "harbour", "ticket", "castle")  # fmt: skip


def _node(key: str, parent: str, role: str, content: dict[str, Any], **extra: Any) -> Any:
    message = {"id": key, "author": {"role": role}, "content": content, "recipient": "all",
               **extra}  # fmt: skip
    return {"id": key, "parent": parent, "children": [], "message": message}


def _export() -> list[dict[str, Any]]:
    """Conversations of 16 turns; every third has an edited turn (a branch), every fourth a tool
    call and its result."""
    export = []
    for c in range(CONVERSATIONS):
        nodes = [_node("root", "", "", {}) | {"parent": None, "message": None}]
        parent = "root"
        for t in range(16):
            key = f"c{c}t{t}"
            words = " ".join(WORDS[(c + t + k) % len(WORDS)] for k in range(5 + t % 7))
            text = f"Turn {t} of trip {c}: {words}."
            nodes.append(_node(key, parent, "user" if t % 2 == 0 else "assistant",
                               {"content_type": "text", "parts": [text]}))  # fmt: skip
            parent = key
        if c % 3 == 0:
            nodes.append(_node(f"c{c}edit", f"c{c}t2", "user",
                               {"content_type": "text", "parts": [f"Edit {c}"]}))  # fmt: skip
        if c % 4 == 0:
            code = {"content_type": "code", "text": "fares()"}
            output = {"content_type": "execution_output", "text": f"{c} EUR"}
            nodes.append(_node(f"c{c}call", parent, "assistant", code, recipient="python"))
            nodes.append(_node(f"c{c}out", f"c{c}call", "tool", output))
            parent = f"c{c}out"
        mapping = {n["id"]: n for n in nodes}
        for n, node in enumerate(nodes[1:], start=1):
            node["message"]["create_time"] = 1_700_000_000 + c * 999 + n * 40
            mapping[node["parent"]]["children"].append(node["id"])
        export.append({"id": f"trip-{c}", "title": f"Trip {c}", "create_time": 1_700_000_000 + c,
                       "mapping": mapping, "current_node": parent})  # fmt: skip
    return export


def _command(db: Path, export: Path) -> list[str]:
    return [sys.executable, "-m", "convmem.cli.main", "import", "openai-chat", "--db", str(db),
            "--tenant", "acme", "--user", "alice", "--batch-messages", "40",
            str(export)]  # fmt: skip


def _imported(db: Path) -> int:
    with convmem.open(db) as memory:
        return len(memory.scope("acme", "alice").conversations(limit=1000))


def _committed(db: Path) -> int:
    """Conversations committed so far, read without convmem: opening a database through the
    library takes long enough that a fast import could write every batch between two looks."""
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.05)) as con:
            return int(con.execute("SELECT count(*) FROM conversations").fetchone()[0])
    except sqlite3.OperationalError:  # not created or not migrated yet, or busy
        return 0


# Rows of the tables an import writes, with the random ids (messages, conversations) replaced by
# the source's own keys and the FTS5 rowids by message keys: equal for equal imports.
_TABLES = {
    "conversations": "title, temporary, active_leaf_id, metadata, created_at, user_id",
    "messages": "id, user_id, conversation_id, parent_id, depth, role, content, tool_calls, "
    "tool_call_id, metadata, created_at, revision_of, revision_kind, estimate_tokens, "
    "estimate_before",
    "message_tokens": "message_id, tokenizer, tokens",
    "message_index": "message_id, user_id, conversation_id, depth, created_at, speaker, session, "
    "scope, body, ctx, embedder, vector",
    "conversation_terms": "conversation_id, term, speaker",
    "search_generations": "conversation_id, generation",
}


def _canonical_rows(db: Path) -> list[str]:
    with closing(sqlite3.connect(db)) as con:
        names = dict(con.execute("SELECT id, json_extract(metadata, '$.ext_id') FROM messages"))
        # the full-text scope token names the conversation by its id too (in hex)
        conversations = list(
            con.execute("SELECT id, json_extract(metadata, '$.import.id') FROM conversations")
        )
        names |= dict(conversations)
        names |= {conversation_token("acme", cid): f"scope:{name}" for cid, name in conversations}
        ids = re.compile("|".join(re.escape(k) for k in sorted(names, key=len, reverse=True)))
        rows = []
        for table, columns in _TABLES.items():
            for row in con.execute(f"SELECT {columns} FROM {table}"):
                rows.append(ids.sub(lambda m: names[m.group()], f"{table} {row!r}"))
        message_of = dict(con.execute("SELECT id, message_id FROM message_index"))
        con.execute(
            "CREATE VIRTUAL TABLE temp.postings USING fts5vocab(main, message_fts, instance)"
        )
        for term, doc, column, offset in con.execute("SELECT * FROM temp.postings"):
            rows.append(ids.sub(lambda m: names[m.group()],
                                f"posting {term} {message_of[doc]} {column} {offset}"))  # fmt: skip
        con.execute("INSERT INTO message_fts (message_fts) VALUES ('integrity-check')")
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    return sorted(rows)


def test_a_killed_import_resumes_to_the_state_of_an_uninterrupted_one(tmp_path: Path) -> None:
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(_export()))
    killed, whole = tmp_path / "killed.db", tmp_path / "whole.db"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    run = subprocess.Popen(_command(killed, export), env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 240
    while run.poll() is None and time.monotonic() < deadline:
        if killed.exists() and _committed(killed) > 0:  # at least one batch committed
            os.kill(run.pid, signal.SIGKILL)
            break
        time.sleep(0.002)
    run.wait(timeout=60)
    assert run.returncode == -signal.SIGKILL, run.stderr.read() if run.stderr else ""
    partial = _imported(killed)
    assert 0 < partial < CONVERSATIONS  # stopped mid-run, whole batches kept

    again = subprocess.run(_command(killed, export), env=env, capture_output=True, text=True,
                           timeout=300, check=False)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert f"{partial} already imported" in again.stdout
    assert f"imported {CONVERSATIONS - partial} conversations" in again.stdout
    once = subprocess.run(_command(whole, export), env=env, capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip
    assert once.returncode == 0, once.stderr

    rows = _canonical_rows(killed)
    assert rows == _canonical_rows(whole)
    assert sum(r.startswith("conversations ") for r in rows) == CONVERSATIONS
    unmapped = re.compile(r"(msg|conv)_[0-9A-Z]{26}|" + conversation_token("acme", "conv_"))
    assert not [r for r in rows if unmapped.search(r)]  # every id was mapped

"""The bulk import path stores, row for row, what one ``append`` at a time stores: messages,
per-tokenizer counts, running estimates, index rows (body and neighbour context), the full-text
postings, the conversation's vocabulary and its search generation; on a tree with branches, tool
calls and results, a node that cannot be stored, and text in several scripts, long and short.

Compared on the SQLite file itself (every column), ids mapped through the source keys.
Not compared: entity memory, which ``append`` derives and an import leaves to
``Scope.entities.rebuild``.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import convmem
from convmem.errors import ConvmemError
from convmem.importers.bulk import ImportNode, ImportTree, import_trees
from convmem.model.messages import NewMessage, Role, ToolCall

START = datetime(2024, 5, 2, 8, 30, tzinfo=UTC)
KEY = "sk-proj-4f9Qz7LmB2xR8tYp1VwK3nJ6hD0sGcE5aUoI"  # a dense run the estimate prices apart
TEXTS = [
    "Plan a trip to Lisbon in May, please.",
    "ok",
    "Bonjour ! Où est la gare ? Je voudrais un billet aller-retour pour Porto.",
    "Где находится вокзал? Мне нужен билет до Порту на пятницу.",
    "我想预订一张去波尔图的火车票，星期五早上出发。",
    "أريد حجز تذكرة قطار إلى بورتو يوم الجمعة 🚆🎫",
    f"My old key was {KEY}, rotated since; ID 0x7fA3b9 and 1234567890.",
    "def price(route: str) -> int:\n    return TABLE[route]  # EUR\n\n\n",
    "HTTPS APIs and iPhone apps; NASA, ESA, UK; tl;dr: GO!!!",
    "hotel " * 900,  # longer than the index keeps, and than a neighbour's share
    "Thanks!",
]


def _tree() -> ImportTree:
    """Two branches under the second turn, a tool run, a tool result answering nothing (refused:
    its child hangs from the stored ancestor), and every text above."""
    nodes: list[ImportNode] = []
    when = START

    def add(key: str, parent: str | None, message: NewMessage) -> None:
        nodes.append(ImportNode(key, parent, message))

    def at(minutes: int) -> datetime:
        return when + timedelta(minutes=minutes)

    parent: str | None = None
    for n, text in enumerate(TEXTS):
        role: Role = "user" if n % 2 == 0 else "assistant"
        add(f"t{n}", parent, NewMessage(role, text, created_at=at(n)))
        parent = f"t{n}"
    call = ToolCall("call-1", "python", json.dumps({"input": "price('train')"}))
    add("call", "t1", NewMessage("assistant", "", (call,), created_at=at(20)))
    add("out", "call", NewMessage("tool", "42 EUR", tool_call_id="call-1", created_at=at(21)))
    add("stray", "out", NewMessage("tool", "nobody asked", tool_call_id="nope", created_at=at(22)))
    add("after", "stray", NewMessage("assistant", "The train costs 42 EUR.", created_at=at(23)))
    add("late", "t1", NewMessage("user", "And next day?", created_at=at(60 * 24)))  # new session
    return ImportTree("src-1", "Trip", START, nodes, active_key="after")


def _append_one_at_a_time(conv: convmem.Conversation, tree: ImportTree) -> None:
    """The tree's nodes in the order the bulk path walks them (parents first, children in the
    source's order), each appended under its nearest stored ancestor."""
    children: dict[str | None, list[ImportNode]] = defaultdict(list)
    for node in tree.nodes:
        children[node.parent_key].append(node)
    stored: dict[str, str | None] = {}
    stack = list(reversed(children[None]))
    while stack:
        node = stack.pop()
        parent = stored.get(node.parent_key) if node.parent_key else None
        new = node.message
        try:
            made = conv.append(new.role, new.content, tool_calls=new.tool_calls,
                               tool_call_id=new.tool_call_id, created_at=new.created_at,
                               parent_id=parent, metadata={"ext_id": node.key})  # fmt: skip
            stored[node.key] = made.id
        except ConvmemError:
            stored[node.key] = parent
        stack.extend(reversed(children[node.key]))
    leaf = stored[str(tree.active_key)]
    assert leaf is not None
    conv.switch_branch(leaf)


def _rows(db: sqlite3.Connection, conversation_id: str) -> dict[str, Any]:
    """Everything stored for a conversation, with message ids replaced by their source keys."""
    key_of = {
        mid: json.loads(meta)["ext_id"]
        for mid, meta in db.execute(
            "SELECT id, metadata FROM messages WHERE conversation_id = ?", (conversation_id,)
        )
    }
    messages = {
        key_of[r[0]]: (key_of.get(r[1]), *r[2:])
        for r in db.execute(
            "SELECT id, parent_id, depth, role, content, tool_calls, tool_call_id, metadata, "
            "created_at, revision_of, revision_kind, estimate_tokens, estimate_before, parts "
            "FROM messages WHERE conversation_id = ?",
            (conversation_id,),
        )
    }
    tokens = {
        (key_of[r[0]], r[1]): r[2:]
        for r in db.execute(
            "SELECT message_id, tokenizer, tokens, media_tokens FROM message_tokens "
            "WHERE message_id IN (SELECT id FROM messages WHERE conversation_id = ?)",
            (conversation_id,),
        )
    }
    index_rows = db.execute(
        "SELECT id, message_id, depth, created_at, speaker, session, body, ctx, embedder, vector "
        "FROM message_index WHERE conversation_id = ?",
        (conversation_id,),
    ).fetchall()
    key_of_row = {r[0]: key_of[r[1]] for r in index_rows}
    index = {key_of[r[1]]: r[2:] for r in index_rows}
    # the postings of body and ctx (scope names the conversation: its tokens differ by design)
    postings = sorted(
        (term, key_of_row[doc], column, offset)
        for term, doc, column, offset in db.execute(
            "SELECT term, doc, col, offset FROM postings WHERE col != 'scope'"
        )
        if doc in key_of_row
    )
    terms = set(
        db.execute(
            "SELECT term, speaker FROM conversation_terms WHERE conversation_id = ?",
            (conversation_id,),
        )
    )
    (generation,) = db.execute(
        "SELECT generation FROM search_generations WHERE conversation_id = ?", (conversation_id,)
    ).fetchone()
    (leaf,) = db.execute(
        "SELECT active_leaf_id FROM conversations WHERE id = ?", (conversation_id,)
    ).fetchone()
    return {
        "messages": messages, "tokens": tokens, "index": index, "postings": postings,
        "terms": terms, "generation": generation, "active_leaf": key_of[leaf],
    }  # fmt: skip


@pytest.mark.parametrize("batch_messages", [1, 5000])
def test_a_bulk_import_stores_the_rows_appends_store(tmp_path: Path, batch_messages: int) -> None:
    path = tmp_path / "rows.db"
    tree = _tree()
    with convmem.open(path) as mem:
        alice = mem.scope("acme", "alice")
        # another tree first: the batch counters have seen text before this one
        import_trees(alice, "test", [ImportTree("src-0", "x", START, _tree().nodes[:4])])
        report = import_trees(alice, "test", [tree], batch_messages=batch_messages)
        assert (report.messages, dict(report.skipped)) == (
            len(tree.nodes) - 1,
            {"InvalidMessage": 1},
        )
        bulk_id = next(r.id for r in alice.conversations() if r.title == "Trip")
        by_hand = alice.create_conversation()
        _append_one_at_a_time(by_hand, tree)
    db = sqlite3.connect(path)
    db.execute("CREATE VIRTUAL TABLE temp.postings USING fts5vocab(main, message_fts, instance)")
    bulk, appended = _rows(db, bulk_id), _rows(db, by_hand.id)
    assert len(bulk["messages"]) == len(tree.nodes) - 1  # the stray tool result was refused
    assert bulk["postings"]  # the comparison below compares something
    assert {key for key, _ in bulk["tokens"]} == set(bulk["messages"])
    for part in appended:
        assert bulk[part] == appended[part], part

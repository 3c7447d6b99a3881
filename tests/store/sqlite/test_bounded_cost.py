"""Recall's statements on SQLite do work bounded by what they return, not by the conversation's
length (DESIGN principle 14): counted in SQLite's own virtual-machine steps (its progress
handler), the same call on a conversation ten times longer costs about the same.

A step count is deterministic (no clock, no load), so the bound is tight: within
``SLACK`` of the shorter conversation's count, where reading every turn would be ten times it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

import convmem
from convmem.importers.bulk import ImportNode, ImportTree, import_trees
from convmem.model.messages import NewMessage
from convmem.store.ranking import Window

T = TypeVar("T")

SHORT, LONG = 600, 6_000
SLACK = 1.5
STEP = 100  # the progress handler's period, in virtual-machine instructions


def _text(i: int) -> str:
    rare = " The quokka came up again." if i % 97 == 0 else ""
    return f"The budget review moved to slot {i}, bring the numbers.{rare}"


def _conversation(scope: convmem.Scope, key: str, turns: int) -> tuple[str, list[str]]:
    """A conversation of ``turns`` turns on one branch: its id and its turns' ids in order."""
    nodes = [
        ImportNode(f"{key}{i}", f"{key}{i - 1}" if i else None,
                   NewMessage("user" if i % 2 == 0 else "assistant", _text(i)))
        for i in range(turns)
    ]  # fmt: skip
    import_trees(scope, "test", [ImportTree(key, key, None, nodes, f"{key}{turns - 1}")])
    (record,) = [c for c in scope.conversations() if c.title == key]
    ids = [m.id for m in scope.conversation(record.id).branch()]
    return record.id, ids


def _steps(
    db: sqlite3.Connection, call: Callable[..., T], *args: Any, **kwargs: Any
) -> tuple[T, int]:
    """``call(*args, **kwargs)``'s result and the virtual-machine steps (in ``STEP``s) its
    statements ran."""
    count = 0

    def tick() -> int:
        nonlocal count
        count += 1
        return 0

    db.set_progress_handler(tick, STEP)
    try:
        result = call(*args, **kwargs)
    finally:
        db.set_progress_handler(None, 0)
    return result, count


@pytest.fixture
def conversations(memory: convmem.Memory) -> dict[int, tuple[str, list[str]]]:
    scope = memory.scope("acme", "alice")
    return {SHORT: _conversation(scope, "short", SHORT), LONG: _conversation(scope, "long", LONG)}


def _raw(tx: Any) -> sqlite3.Connection:
    db: sqlite3.Connection = tx._db._db
    return db


def test_on_branch_reads_the_candidates_not_the_conversation(
    memory: convmem.Memory, conversations: dict[int, tuple[str, list[str]]]
) -> None:
    costs = {}
    for size, (_, ids) in conversations.items():
        candidates = ids[10:30] + ids[-40:-20]
        with memory.store.read() as tx:
            found, costs[size] = _steps(_raw(tx), tx.on_branch, "acme", ids[-1], candidates, 0)
        assert found == set(candidates)
    assert costs[LONG] <= SLACK * costs[SHORT] + 5, costs


@pytest.mark.parametrize("terms", [["budget"], ["budget", "numbers", "quokka"]])
def test_a_common_words_search_reads_its_newest_matches_whatever_the_length(
    memory: convmem.Memory, conversations: dict[int, tuple[str, list[str]]], terms: list[str]
) -> None:
    """Each term brings its newest ``TERM_CANDIDATES`` matches however many turns hold it: the
    statements run as many steps on ten times the turns (main counted a common word's postings
    up to 5,000 on every query, and so ran ever more steps until that cap). The rare word's
    matches grow with the conversation (all are read, fewer than the bound); it says little."""
    costs = {}
    for size, (conversation_id, ids) in conversations.items():
        window = Window(max_depth=size - 20)  # the newest turns are the assembled window's
        with memory.store.read() as tx:
            hits, costs[size] = _steps(
                _raw(tx), tx.search_messages, "acme", "alice", conversation_id, terms,
                window=window, limit=10,
            )  # fmt: skip
        assert len(hits) == 10 and {h.message_id for h in hits} <= set(ids[: size - 20])
    assert costs[LONG] <= SLACK * costs[SHORT] + 5, costs

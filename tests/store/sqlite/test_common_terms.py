"""A common word's candidates on SQLite (``RankingTxnMixin._read_common``): of its newest
``TERM_CANDIDATES`` matches, only ``READ_PER_COMMON_TERM`` are read and scored from their stored
counts — those holding more of the question's words first — and the rest stay candidates,
ranked after them. Reading each candidate was most of recall's time at 100,000 turns."""

from __future__ import annotations

import convmem
from convmem.importers.bulk import ImportNode, ImportTree, import_trees
from convmem.model.messages import NewMessage
from convmem.store.ranking import EVERY_TURN, TERM_CANDIDATES
from convmem.store.sqlite.ranking import READ_PER_COMMON_TERM

TURNS = 1_500
BOTH_EVERY = 5  # of the oldest turns, one in this many also says "invoice"


def _text(i: int) -> str:
    # "invoice": in old turns only, and in more of them than are read for a word
    invoice = " The invoice was late." if i < 1_200 and i % BOTH_EVERY == 0 else ""
    return f"Turn {i}: the budget review moved again.{invoice}"


def _conversation(memory: convmem.Memory) -> tuple[str, list[str]]:
    scope = memory.scope("acme", "alice")
    nodes = [
        ImportNode(f"m{i}", f"m{i - 1}" if i else None,
                   NewMessage("user" if i % 2 == 0 else "assistant", _text(i)))
        for i in range(TURNS)
    ]  # fmt: skip
    import_trees(scope, "test", [ImportTree("long", "Budgets", None, nodes, f"m{TURNS - 1}")])
    (record,) = scope.conversations()
    return record.id, [m.id for m in scope.conversation(record.id).branch()]


def test_a_common_word_reads_a_bounded_share_and_ranks_every_candidate(
    memory: convmem.Memory,
) -> None:
    conversation_id, ids = _conversation(memory)
    with memory.store.read() as tx:
        matched = tx._matching("acme", "alice", conversation_id, ["budget"], EVERY_TURN)  # type: ignore[attr-defined]
        hits = tx.search_messages(
            "acme", "alice", conversation_id, ["budget"], window=EVERY_TURN,
            limit=10 * TERM_CANDIDATES,
        )  # fmt: skip
    assert matched is not None
    newest = ids[-TERM_CANDIDATES:]
    # the newest are read (they hold no other word of the question), the older ones are not
    assert sorted(row[0] for row in matched.rows) == sorted(newest[-READ_PER_COMMON_TERM:])
    assert sorted(matched.unread) == sorted(newest[:-READ_PER_COMMON_TERM])
    # every candidate is ranked, each with a positive score
    assert sorted(h.message_id for h in hits) == sorted(newest)
    assert all(h.score > 0 for h in hits)


def test_turns_holding_two_common_words_are_read_first_and_rank_first(
    memory: convmem.Memory,
) -> None:
    conversation_id, ids = _conversation(memory)
    with memory.store.read() as tx:
        hits = tx.search_messages(
            "acme", "alice", conversation_id, ["budget", "invoice"], window=EVERY_TURN, limit=10
        )
    # "invoice" turns are old: none is among "budget"'s newest, read first or not; each one
    # that says both words in its own text outranks the newest turns saying one
    both = {ids[i] for i in range(1_200) if i % BOTH_EVERY == 0}
    assert len(hits) == 10
    assert {h.message_id for h in hits} <= both

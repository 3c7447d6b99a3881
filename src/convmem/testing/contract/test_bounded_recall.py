"""Full-text search of a long conversation reads a bounded share of its matches, per query term
(``convmem.store.ranking.TERM_CANDIDATES``), on every backend.

A search used to score the newest few thousand turns matching any of its words, so a question
pairing a rare word with a common one missed the rare word's turn once the common word filled
that many newer turns — the older the evidence, the likelier to be missed, and the longer the
conversation, the more work per question. Each term now brings its own newest matches: a word
said once is found however many turns hold the other words, and the work depends on the
number of terms, not on the conversation's length.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import convmem
from convmem import ToolCall
from convmem.importers import openai_chat
from convmem.importers.bulk import import_trees
from convmem.testing.harness import Backend

# more newer turns holding the common word than the old search ever scored (5,000)
NEWER_TURNS = 5_200
OLD_TURN = "We agreed the quokka enclosure needs its own budget line."


def long_export(path: Path) -> Path:
    """One conversation: the old turn first, then ``NEWER_TURNS`` turns saying "budget"."""
    texts = [OLD_TURN] + [
        f"The budget review moved to slot {i}, bring the numbers." for i in range(NEWER_TURNS)
    ]
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None,
                                        "children": []}}  # fmt: skip
    parent = "root"
    for i, text in enumerate(texts):
        key = f"m{i}"
        mapping[key] = {"id": key, "parent": parent, "children": [], "message": {
            "id": key, "author": {"role": "user" if i % 2 == 0 else "assistant"},
            "create_time": 1_700_000_000.0 + 30 * i, "recipient": "all",
            "content": {"content_type": "text", "parts": [text]}}}  # fmt: skip
        mapping[parent]["children"].append(key)
        parent = key
    export = [{"id": "long", "title": "Budgets", "create_time": 1_700_000_000.0,
               "mapping": mapping, "current_node": parent}]  # fmt: skip
    path.write_text(json.dumps(export))
    return path


def test_a_rare_word_said_long_ago_is_found_past_thousands_of_newer_matches(
    backend: Backend, tmp_path: Path
) -> None:
    trees = openai_chat.read(long_export(tmp_path / "conversations.json"))
    with backend.open() as memory:
        scope = memory.scope("acme", "alice")
        import_trees(scope, openai_chat.SOURCE, trees)
        (record,) = scope.conversations()
        conv = scope.conversation(record.id)
        hits = conv.search("How much budget does the quokka enclosure get?", k=5)
        assert hits[0].message.content == OLD_TURN
        # the common word alone still ranks turns holding it (its frequency counted past the
        # turns read), and another user's search reaches none of them
        common = conv.search("budget numbers", k=5)
        assert len(common) == 5 and all("budget" in h.message.content for h in common)
        other = memory.scope("acme", "bob").create_conversation()
        other.append("user", "Nothing about money here.")
        assert other.search("quokka budget", k=5) == []


def test_on_branch_keeps_the_ancestors_only_across_forks(memory: convmem.Memory) -> None:
    """A candidate alone at its depth is on the branch at once; one at a depth a fork shares is
    checked against the branch, whether its sibling is indexed or not (a tool call's empty turn
    is not)."""
    conv = memory.scope("acme", "alice").create_conversation()
    ids = [conv.append("user" if i % 2 == 0 else "assistant", f"turn {i} about gardens").id
           for i in range(12)]  # fmt: skip
    edited = conv.edit(ids[4], "turn 4 again, about lakes").id  # a fork at depth 4
    later = [conv.append("assistant" if i % 2 == 0 else "user", f"new {i}").id for i in range(4)]
    # a fork at the new leaf's depth whose sibling is a tool call with no text: never indexed
    conv.append("user", "and the weather?")
    call = conv.append("assistant", "", tool_calls=[ToolCall("c1", "weather", "{}")])
    conv.append("tool", "sunny", tool_call_id="c1")
    regenerated = conv.regenerate(call.id).id
    branch = {m.id for m in conv.branch()}
    start = conv.branch()[-1].id
    candidates = [*ids, edited, *later, call.id, regenerated]
    with memory.store.read() as tx:
        found = tx.on_branch("acme", start, candidates, 0)
        assert found == {c for c in candidates if c in branch}
        assert ids[4] not in found and ids[11] not in found and edited in found
        assert call.id not in found and regenerated in found
        # none shallower than the depth asked for
        assert tx.on_branch("acme", start, candidates, 3) == {c for c in found if c not in ids[:3]}


def test_branch_messages_are_the_principal_s_candidates_on_the_branch(backend: Backend) -> None:
    """What recall reads of its ranked turns, as one unit: the candidates that are the start or
    its ancestors, as messages; another branch's turns, unknown ids and another principal's
    messages are left out."""
    with backend.open() as memory:
        conv = memory.scope("acme", "alice").create_conversation()
        ids = [conv.append("user" if i % 2 == 0 else "assistant", f"turn {i}").id
               for i in range(6)]  # fmt: skip
        edited = conv.edit(ids[2], "turn 2 again").id  # a fork at depth 2: ids[2:] leave
        tip = conv.append("assistant", "after the edit").id
        theirs = memory.scope("acme", "bob").create_conversation().append("user", "mine").id
        candidates = [ids[0], ids[3], edited, tip, ids[1], theirs, "msg_unknown"]
        with memory.store.read() as tx:
            found = tx.branch_messages("acme", "alice", tip, candidates)
            assert set(found) == {ids[0], ids[1], edited, tip}
            assert found[edited].content == "turn 2 again" and found[ids[1]].content == "turn 1"
            assert tx.branch_messages("acme", "bob", tip, candidates) == {}
            assert tx.branch_messages("acme", "alice", tip, []) == {}

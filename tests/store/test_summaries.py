"""Summaries are derived and checked at use, on every backend: a stored summary whose covered
messages no longer match is not used but rebuilt, and the tampered row is dropped. (The same
check with the row rewritten in SQLite itself: ``tests/store/sqlite/test_summary_rows.py``.)"""

from __future__ import annotations

from dataclasses import replace

import convmem
from convmem.memory.gate import admit
from convmem.model.admitted import Admitted
from tests.test_summaries import DECISION, SMALL, chat


def test_a_summary_that_no_longer_matches_its_messages_is_rebuilt(
    memory: convmem.Memory, alice: convmem.Scope
) -> None:
    conv = alice.create_conversation()
    conv.append("user", DECISION)
    chat(conv, 40, assemble=True)
    used = conv.assemble("continue", model=SMALL).report.summary_id
    assert used is not None
    (record,) = [r for r in conv.summaries() if r.id == used]
    with memory.store.write() as tx:  # as if the covered path had changed under it
        tx.delete_summary(alice.tenant, used)
        tampered = admit(replace(record, id="sum_tampered", covered_hash="x"), reader=tx,
                         tenant=alice.tenant, user=alice.user)  # fmt: skip
        assert isinstance(tampered, Admitted)
        assert tx.insert_summary(alice.tenant, alice.user, tampered)
    again = conv.assemble("continue", model=SMALL)
    assert again.report.summary_id not in (None, used, "sum_tampered")
    assert again.report.summary_source == "built"
    assert "sum_tampered" not in {r.id for r in conv.summaries()}

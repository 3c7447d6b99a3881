"""Property: with two tenants and two users each holding similar memories, no call made for one
principal ever returns, ranks or injects another's memory."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import convmem

PRINCIPALS = [("acme", "alice"), ("acme", "bob"), ("globex", "alice"), ("globex", "bob")]
FACTS = ["prefer aisle seats", "live in Lisbon", "like green tea", "use Python daily",
         "work at the harbour", "prefer short answers"]  # fmt: skip

operation = st.tuples(
    st.sampled_from(range(len(PRINCIPALS))),
    st.sampled_from(["remember", "propose_confirm", "delete_first", "update_first"]),
    st.sampled_from(FACTS),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(operation, min_size=1, max_size=16), query=st.sampled_from(FACTS))
def test_no_call_crosses_principals(ops: list[tuple[int, str, str]], query: str) -> None:
    with tempfile.TemporaryDirectory() as folder, convmem.open(Path(folder) / "i.db") as mem:
        scopes = [mem.scope(tenant, user) for tenant, user in PRINCIPALS]
        for index, action, fact in ops:
            scope = scopes[index]
            tag = f"{fact} (owner {index})"
            if action == "remember":
                scope.remember(f"I {tag}")
            elif action == "propose_confirm":
                notice = scope.propose(f"I {tag}")
                if notice.memory is not None and notice.status == "proposed":
                    scope.memories.confirm(notice.memory.id)
            elif scope.memories.list():
                first = scope.memories.list()[0]
                if action == "delete_first":
                    scope.memories.delete(first.id)
                else:
                    scope.memories.update(first.id, f"I now {tag}")

        owned = {i: {m.id for m in s.memories.list(status=None)} for i, s in enumerate(scopes)}
        for index, scope in enumerate(scopes):
            others = set().union(*(ids for i, ids in owned.items() if i != index))
            marker = f"(owner {index})"
            listed = scope.memories.list(status=None, include_expired=True)
            assert all(m.tenant_id == PRINCIPALS[index][0] for m in listed)
            assert all(m.user_id == PRINCIPALS[index][1] for m in listed)
            hits = scope.search_memories(query, k=50)
            assert not {h.memory.id for h in hits} & others
            assert all(marker in h.memory.text for h in hits)
            ctx = scope.create_conversation().assemble(f"Do I {query}?")
            assert not set(ctx.report.memory_ids) & others
            rendered = json.dumps(ctx.messages)
            for other in range(len(PRINCIPALS)):
                if other != index:
                    assert f"(owner {other})" not in rendered
            exported = json.dumps(scope.export())
            for other in range(len(PRINCIPALS)):
                if other != index:
                    assert f"(owner {other})" not in exported

"""The tool registry on every backend: per tenant, replace by name, delete, refusals write
nothing, another tenant's tools are invisible."""

from __future__ import annotations

from typing import Any

import pytest

import convmem
from convmem.model.tools import ToolSpec
from convmem.testing.harness import Backend

REFUND = {
    "type": "function",
    "function": {
        "name": "refund_order",
        "description": "Refund an order to the original payment method.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string", "description": "The order"}},
            "required": ["order_id"],
        },
        "strict": True,
    },
}
TRACK = {
    "name": "track_parcel",
    "description": "Where a parcel is now.",
    "input_schema": {"type": "object", "properties": {"tracking_number": {"type": "string"}}},
}


def test_tools_are_registered_listed_replaced_and_deleted_per_tenant(
    memory: convmem.Memory,
) -> None:
    tools = memory.tools
    refund = tools.register("acme", REFUND, use_when=["wants money back"], risk="high")
    tools.register("acme", TRACK, use_when=["asks where a parcel is", "¿dónde está mi paquete?"])
    tools.register("globex", TRACK)
    listed = tools.list("acme")
    assert [t.name for t in listed] == ["refund_order", "track_parcel"]
    stored = listed[0]
    assert stored.spec == ToolSpec(
        "refund_order",
        "Refund an order to the original payment method.",
        REFUND["function"]["parameters"],  # type: ignore[index]
        strict=True,
    )
    assert stored.risk == "high" and stored.risky and stored.use_when == ("wants money back",)
    assert stored.created_at == refund.created_at
    assert listed[1].use_when == ("asks where a parcel is", "¿dónde está mi paquete?")
    assert listed[1].spec.strict is None and listed[1].risk == "low"

    again = tools.register("acme", {**TRACK, "description": "Track a parcel."}, risk="medium")
    after = {t.name: t for t in tools.list("acme")}
    assert after["track_parcel"].spec.description == "Track a parcel."
    assert after["track_parcel"].use_when == () and after["track_parcel"].risk == "medium"
    assert after["track_parcel"].created_at == listed[1].created_at
    assert after["track_parcel"].updated_at == again.updated_at

    tools.delete("acme", "track_parcel")
    assert [t.name for t in tools.list("acme")] == ["refund_order"]
    assert [t.name for t in tools.list("globex")] == ["track_parcel"]
    with pytest.raises(convmem.NotFound):
        tools.delete("acme", "track_parcel")
    with pytest.raises(convmem.NotFound):  # another tenant's tool is not there for acme
        tools.delete("initech", "refund_order")
    assert [t.name for t in tools.list("acme")] == ["refund_order"]


@pytest.mark.parametrize(
    ("definition", "fields"),
    [
        ({"name": "bad name"}, {}),
        ({"name": "ok", "parameters": {"type": "string"}}, {}),
        (TRACK, {"risk": "extreme"}),
        (TRACK, {"use_when": "a string, not a list"}),
        (TRACK, {"use_when": ["x" * 301]}),
        (TRACK, {"use_when": [""]}),
        (TRACK, {"use_when": ["nul \x00"]}),
    ],
)
def test_refused_registrations_write_nothing(
    memory: convmem.Memory, backend: Backend, definition: Any, fields: dict[str, Any]
) -> None:
    memory.tools.register("acme", REFUND)
    before = backend.dump()
    with pytest.raises(convmem.InvalidInput):
        memory.tools.register("acme", definition, **fields)
    assert backend.dump() == before


def test_a_user_s_deletion_leaves_the_tenant_s_tools(memory: convmem.Memory) -> None:
    memory.tools.register("acme", TRACK)
    alice = memory.scope("acme", "alice")
    alice.create_conversation().append("user", "hello")
    alice.delete_all()
    assert [t.name for t in memory.tools.list("acme")] == ["track_parcel"]


def test_register_many_is_all_or_nothing(memory: convmem.Memory, backend: Backend) -> None:
    from convmem.tools.registry import ToolEntry

    memory.tools.register("acme", REFUND)
    before = backend.dump()
    for entries in (
        [ToolEntry(TRACK), ToolEntry({"name": "bad name"})],
        [ToolEntry(TRACK), ToolEntry(TRACK)],
        [ToolEntry(TRACK), ToolEntry(REFUND, risk="extreme")],
    ):
        with pytest.raises(convmem.InvalidInput):
            memory.tools.register_many("acme", entries)
        assert backend.dump() == before
    stored = memory.tools.register_many(
        "acme", [ToolEntry(TRACK, ["asks where a parcel is"]), ToolEntry(REFUND, risk="high")]
    )
    assert [t.name for t in stored] == ["track_parcel", "refund_order"]
    assert {t.name: t.risk for t in memory.tools.list("acme")} == {
        "refund_order": "high", "track_parcel": "low",
    }  # fmt: skip

"""Which registry tools a request offers, on every backend: the relevant ones, never a risky one
unless the caller allows it, a tool whose result is still in the window, within the count and
token caps; the report says why each other tool was left out."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import convmem
from convmem.domain.search import rank_tools
from convmem.tools.select import GIVEN, NOT_RELEVANT, OVER_COUNT, OVER_TOKENS, RISKY
from tests.store.backends import Backend

REGISTRY = Path(__file__).resolve().parents[1] / "data" / "tool_registry.json"
PROFILE = convmem.ModelProfile(context_window=32_768, max_output=1024, name="gpt-4o")
NAMES = (
    "get_weather", "search_flights", "search_hotels", "track_parcel", "get_order_status",
    "refund_order", "transfer_money", "convert_currency", "set_reminder", "send_email",
)  # fmt: skip


def _definitions() -> dict[str, dict[str, Any]]:
    tools = json.loads(REGISTRY.read_text())["tools"]
    return {t["definition"]["function"]["name"]: t for t in tools}


@pytest.fixture
def shop(backend: Backend) -> Iterator[convmem.Memory]:
    """Ten tools of the benchmark's registry (two risky) for tenant acme, with vectors."""
    with backend.open(embedder=convmem.HashingEmbedder()) as memory:
        found = _definitions()
        for name in NAMES:
            tool = found[name]
            memory.tools.register(
                "acme", tool["definition"], use_when=tool["use_when"], risk=tool["risk"]
            )
        yield memory


def _suppressed(context: convmem.AssembledContext) -> dict[str, str]:
    return {s["name"]: s["reason"] for s in context.report.tools_suppressed}


def test_the_store_ranks_tools_by_words_and_by_vector(shop: convmem.Memory) -> None:
    with shop.store.read() as tx:
        lexical = tx.search_tool_terms("acme", ["parcel", "tracking"], limit=5)
        assert lexical[0].name == "track_parcel"
        assert tx.search_tool_terms("globex", ["parcel"], limit=5) == []
        embedder = shop.embedder
        assert embedder is not None
        vector = embedder.embed(["where is my parcel, tracking number 1Z99"])[0]
        nearest = tx.nearest_tools("acme", embedder.name, vector, limit=3)
        assert len(nearest) == 3 and nearest[0].score >= nearest[-1].score
        assert "track_parcel" in [hit.name for hit in nearest]
        assert tx.nearest_tools("globex", embedder.name, vector, limit=3) == []
        fused = rank_tools(tx, "acme", "where is my parcel?", embedder=embedder)
    assert fused[0].key == "track_parcel"
    assert {"lexical:message", "vector:message"} <= set(fused[0].retrievers)


def test_a_request_is_offered_the_tools_it_needs_and_told_why_not_the_rest(
    shop: convmem.Memory,
) -> None:
    conv = shop.scope("acme", "alice").create_conversation()
    context = conv.assemble(
        "Is it going to rain in Lisbon tomorrow?", model=PROFILE, offer_tools=True
    )
    offered = context.report.tools_offered
    assert "get_weather" in offered
    assert context.tools is not None
    assert [t["function"]["name"] for t in context.tools] == offered
    assert context.report.sections["tools"] > 0
    suppressed = _suppressed(context)
    # every registered tool is either offered or suppressed with a reason
    assert set(offered) | set(suppressed) == set(NAMES)
    assert not set(offered) & set(suppressed)
    assert suppressed["refund_order"] == RISKY and suppressed["transfer_money"] == RISKY
    assert NOT_RELEVANT in suppressed.values()


def test_without_offer_tools_the_registry_is_not_read(shop: convmem.Memory) -> None:
    conv = shop.scope("acme", "alice").create_conversation()
    context = conv.assemble("Is it going to rain in Lisbon tomorrow?", model=PROFILE)
    assert context.report.tools_offered == [] and context.tools is None
    assert context.report.tools_suppressed == [] and context.report.sections["tools"] == 0


@pytest.mark.parametrize("allow", [False, [], ["transfer_money"]])
def test_a_risky_tool_is_never_offered_unless_the_caller_allows_it(
    shop: convmem.Memory, allow: Any
) -> None:
    conv = shop.scope("acme", "alice").create_conversation()
    context = conv.assemble(
        "I want a refund for order 5512, the blender arrived broken",
        model=PROFILE, offer_tools=True, allow_risky=allow,
    )  # fmt: skip
    assert "refund_order" not in context.report.tools_offered
    assert _suppressed(context)["refund_order"] == RISKY


@pytest.mark.parametrize("allow", [True, ["refund_order"]])
def test_a_risky_tool_the_caller_allows_is_offered_when_relevant(
    shop: convmem.Memory, allow: Any
) -> None:
    conv = shop.scope("acme", "alice").create_conversation()
    context = conv.assemble(
        "I want a refund for order 5512, the blender arrived broken",
        model=PROFILE, offer_tools=True, allow_risky=allow,
    )  # fmt: skip
    assert "refund_order" in context.report.tools_offered
    if allow is not True:  # allowing one risky tool allows no other
        assert _suppressed(context)["transfer_money"] == RISKY


def _weather_exchange(conv: convmem.Conversation) -> None:
    conv.append("user", "What's the weather in Oslo?")
    call = convmem.ToolCall("call_1", "get_weather", '{"location": "Oslo"}')
    conv.append("assistant", "", tool_calls=[call])
    conv.append("tool", "Oslo: 4°C, light snow", tool_call_id="call_1")
    conv.append("assistant", "It's 4°C with light snow in Oslo.")


def test_a_tool_whose_result_is_in_the_window_stays_offered(shop: convmem.Memory) -> None:
    conv = shop.scope("acme", "alice").create_conversation()
    _weather_exchange(conv)
    # no tool is relevant by rank (tools_k = 0): only the follow-up rule can offer one
    options = convmem.AssemblyOptions(tools_k=0)
    context = conv.assemble("and on Sunday?", model=PROFILE, offer_tools=True, options=options)
    assert context.report.tools_offered == ["get_weather"]
    assert set(_suppressed(context)) == set(NAMES) - {"get_weather"}


def test_a_tool_whose_result_left_the_window_is_not_kept(shop: convmem.Memory) -> None:
    conv = shop.scope("acme", "alice").create_conversation()
    _weather_exchange(conv)
    for i in range(40):  # later talk pushes the exchange out of a small window
        conv.append("user", f"Tell me about chapter {i} of the novel we are reading together.")
        conv.append("assistant", f"Chapter {i} follows the brothers across the frozen lake.")
    small = convmem.ModelProfile(context_window=2_000, max_output=200, name="gpt-4o")
    options = convmem.AssemblyOptions(tools_k=0)
    context = conv.assemble("and on Sunday?", model=small, offer_tools=True, options=options)
    kept = {m.get("tool_call_id") for m in context.messages if isinstance(m, dict)}
    assert "call_1" not in kept
    assert context.report.tools_offered == []


def test_relevant_tools_are_capped_by_count(shop: convmem.Memory) -> None:
    conv = shop.scope("acme", "alice").create_conversation()
    message = "Find flights to Lisbon and a hotel there, and tell me if it will rain"
    context = conv.assemble(
        message, model=PROFILE, offer_tools=True, options=convmem.AssemblyOptions(tools_k=1)
    )
    assert len(context.report.tools_offered) == 1
    assert OVER_COUNT.format(k=1) in _suppressed(context).values()


def test_relevant_tools_are_capped_by_tokens(shop: convmem.Memory) -> None:
    conv = shop.scope("acme", "alice").create_conversation()
    # 0.1 % of a 31k budget: about 31 tokens, less than any of these tools costs
    options = convmem.AssemblyOptions(tools_share=0.001)
    context = conv.assemble(
        "Is it going to rain in Lisbon tomorrow?", model=PROFILE, offer_tools=True,
        options=options,
    )  # fmt: skip
    assert context.report.tools_offered == []
    assert _suppressed(context)["get_weather"] == OVER_TOKENS
    assert context.report.sections["tools"] == 0


def test_the_caller_s_own_tool_takes_the_registry_s_name(shop: convmem.Memory) -> None:
    conv = shop.scope("acme", "alice").create_conversation()
    mine = {"name": "get_weather", "description": "Our own weather tool.", "input_schema": {}}
    context = conv.assemble(
        "Is it going to rain in Lisbon tomorrow?", model=PROFILE, offer_tools=True,
        tools=[mine],
    )  # fmt: skip
    assert context.report.tools_offered.count("get_weather") == 1
    assert _suppressed(context)["get_weather"] == GIVEN
    assert context.tools is not None
    sent = next(t for t in context.tools if t["function"]["name"] == "get_weather")
    assert sent["function"]["description"] == "Our own weather tool."


def test_another_tenant_s_registry_is_never_offered(shop: convmem.Memory) -> None:
    conv = shop.scope("globex", "alice").create_conversation()
    context = conv.assemble(
        "Is it going to rain in Lisbon tomorrow?", model=PROFILE, offer_tools=True
    )
    assert context.report.tools_offered == [] and context.report.tools_suppressed == []
    with pytest.raises(convmem.NotFound):
        shop.tools.delete("globex", "get_weather")
    assert "get_weather" in [t.name for t in shop.tools.list("acme")]


@pytest.mark.parametrize("allow", ["refund_order", 3, [3], ["bad name"]])
def test_a_bad_allow_risky_is_refused_and_nothing_is_written(
    shop: convmem.Memory, backend: Backend, allow: Any
) -> None:
    conv = shop.scope("acme", "alice").create_conversation()
    before = backend.dump()
    with pytest.raises(convmem.InvalidInput):
        conv.assemble("hello", model=PROFILE, offer_tools=True, allow_risky=allow)
    assert backend.dump() == before


def test_when_the_embedder_fails_tools_are_ranked_by_words(backend: Backend) -> None:
    class Broken(convmem.HashingEmbedder):
        broken = False

        def embed(self, texts: Any) -> Any:
            if self.broken:
                raise RuntimeError("model gone")
            return super().embed(texts)

    embedder = Broken()
    with backend.open(embedder=embedder) as memory:
        tool = _definitions()["track_parcel"]
        memory.tools.register("acme", tool["definition"], use_when=tool["use_when"])
        embedder.broken = True
        conv = memory.scope("acme", "alice").create_conversation()
        context = conv.assemble(
            "where is my parcel? tracking 1Z99", model=PROFILE, offer_tools=True
        )
    assert context.report.tools_offered == ["track_parcel"]
    assert "embedder: error RuntimeError" in context.report.degraded

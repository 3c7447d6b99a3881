"""Retrieved documents in the request (issue 37): checked, ordered, cut, cited, placed after the
recent turns in every format, reported, and without effect on the window or the stable prefix.
On a real SQLite file through the public surface."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

import convmem
from convmem import Document, InvalidDocument
from convmem.content.tokens import get_counter
from convmem.context.documents import CUT_MARK, DOCUMENTS_BLOCK
from convmem.context.formats import count_openai_request
from convmem.model.messages import Role

PROFILE = convmem.ModelProfile(context_window=4096, max_output=512, tokenizer="o200k_base")
REFUND = {"id": "kb-refund", "title": "Refund policy", "source": "Help centre",
          "url": "https://example.com/help/refunds", "date": "2024-03-01",
          "text": "Damaged kettles are refunded in full within 30 days of delivery."}  # fmt: skip
SHIPPING = {"id": "kb-shipping", "title": "Shipping",
            "text": "Orders ship within three working days from our Porto warehouse."}  # fmt: skip
WARRANTY = {"id": "kb-warranty", "text": "Every kettle carries a two-year warranty on parts."}


@pytest.fixture
def conv(memory: convmem.Memory) -> convmem.Conversation:
    c = memory.scope("acme", "alice").create_conversation(title="Support")
    c.append("user", "I bought a kettle last week.")
    c.append("assistant", "Thanks, how can I help with it?")
    return c


def documents_text(ctx: convmem.AssembledContext) -> str:
    """The one system message holding the documents block (OpenAI format)."""
    found = [m["content"] for m in ctx.messages if m["role"] == "system"
             and m["content"].startswith(DOCUMENTS_BLOCK.header)]  # fmt: skip
    assert len(found) == 1
    return str(found[0])


def test_documents_sit_after_the_recent_turns_and_before_the_message_in_every_format(
    conv: convmem.Conversation,
) -> None:
    question = "Can I get a refund for my damaged kettle?"
    docs = [REFUND, SHIPPING]
    openai = conv.assemble(question, model=PROFILE, documents=docs)
    roles = [m["role"] for m in openai.messages]
    assert roles == ["user", "assistant", "system", "user"]
    block = documents_text(openai)
    assert block == openai.messages[2]["content"]
    assert "[doc:kb-refund]" in block and "[doc:kb-shipping]" in block
    assert '"Refund policy"' in block and "2024-03-01" in block
    assert '"https://example.com/help/refunds"' in block
    assert openai.messages[-1] == {"role": "user", "content": question}

    responses = conv.assemble(question, model=PROFILE, format="responses", documents=docs)
    items = [(i["role"], i["content"]) for i in responses.messages]
    assert items[2] == ("system", block) and items[-1] == ("user", question)

    anthropic = conv.assemble(question, model=PROFILE, format="anthropic", documents=docs)
    last = anthropic.messages[-1]
    assert last["role"] == "user"
    assert [b["text"] for b in last["content"]] == [block, question]
    assert block not in json.dumps(anthropic.system)  # not in the cached system blocks
    for ctx in (openai, responses, anthropic):
        assert ctx.report.sections["documents"] > 0
        assert [d["id"] for d in ctx.report.documents] == ["kb-refund", "kb-shipping"]


def test_the_callers_score_orders_them_and_without_one_relevance_to_the_message(
    conv: convmem.Conversation,
) -> None:
    scored = [{**SHIPPING, "score": 0.2}, {**REFUND, "score": 0.9}, {**WARRANTY, "score": 0.5}]
    ctx = conv.assemble("Anything about my kettle?", model=PROFILE, documents=scored)
    assert [d["id"] for d in ctx.report.documents] == ["kb-refund", "kb-warranty", "kb-shipping"]
    block = documents_text(ctx)
    assert block.index("kb-refund") < block.index("kb-warranty") < block.index("kb-shipping")

    # no score: BM25 over the documents' words for the message's terms
    ctx = conv.assemble("How long is the warranty on parts?", model=PROFILE,
                        documents=[REFUND, SHIPPING, WARRANTY])  # fmt: skip
    assert ctx.report.documents[0]["id"] == "kb-warranty"
    ctx = conv.assemble("When do orders ship from the warehouse?", model=PROFILE,
                        documents=[REFUND, WARRANTY, SHIPPING])  # fmt: skip
    assert ctx.report.documents[0]["id"] == "kb-shipping"
    # scored ones first, the rest after them by relevance
    mixed: list[dict[str, Any]] = [WARRANTY, {**SHIPPING, "score": 0.1}, REFUND]
    ctx = conv.assemble("A refund for a damaged kettle?", model=PROFILE, documents=mixed)
    assert [d["id"] for d in ctx.report.documents] == ["kb-shipping", "kb-refund", "kb-warranty"]


def test_a_long_document_is_cut_at_a_sentence_end_with_a_marker(
    conv: convmem.Conversation,
) -> None:
    sentences = [f"Clause {n} says the kettle policy point number {n} applies." for n in range(400)]
    long = {"id": "terms", "title": "Terms", "text": " ".join(sentences)}
    options = convmem.AssemblyOptions(document_max_tokens=300)
    ctx = conv.assemble("What do the terms say?", model=PROFILE, documents=[long, SHIPPING],
                        options=options)  # fmt: skip
    uses = {d["id"]: d for d in ctx.report.documents}
    assert uses["terms"]["status"] == "trimmed"
    assert 0 < uses["terms"]["tokens"] <= 300 < uses["terms"]["full_tokens"]
    assert uses["kb-shipping"]["status"] == "included"
    line = next(x for x in documents_text(ctx).split("\n") if x.startswith("- [doc:terms]"))
    assert line.endswith('applies."' + CUT_MARK)  # the last kept sentence is whole
    kept = json.loads(line[line.index(": ") + 2 : -len(CUT_MARK)])
    assert kept in " ".join(sentences) and kept.endswith("applies.")


@pytest.mark.parametrize(
    ("text", "ending"),
    [
        ("这是第一句话，讲的是退款。" * 200, "。"),
        ("यह पहला वाक्य है और यह वापसी के बारे में है। " * 200, "।"),
        ("Это первое предложение о возврате денег! " * 200, "!"),
    ],
)
def test_cuts_fall_at_the_sentence_ends_of_other_scripts(
    conv: convmem.Conversation, text: str, ending: str
) -> None:
    options = convmem.AssemblyOptions(document_max_tokens=200)
    ctx = conv.assemble("退款 refund", model=PROFILE, documents=[{"id": "d1", "text": text}],
                        options=options)  # fmt: skip
    (use,) = ctx.report.documents
    assert use["status"] == "trimmed" and use["tokens"] <= 200
    line = documents_text(ctx).split("\n")[2]
    kept = json.loads(line[line.index(": ") + 2 : -len(CUT_MARK)])
    assert kept.endswith(ending)


def test_what_does_not_fit_is_dropped_and_reported_with_its_tokens(
    conv: convmem.Conversation,
) -> None:
    docs = [{"id": f"d{n}", "text": f"Fact {n}: " + "the kettle boils water quickly. " * 60,
             "score": 100 - n} for n in range(12)]  # fmt: skip
    options = convmem.AssemblyOptions(documents_share=0.2)
    ctx = conv.assemble("kettle", model=PROFILE, documents=docs, options=options)
    statuses = [d["status"] for d in ctx.report.documents]
    assert statuses[0] == "included" and statuses[-1] == "dropped"
    assert statuses == sorted(statuses, key=["included", "trimmed", "dropped"].index)
    room = int(PROFILE.input_budget * 0.2)
    assert ctx.report.sections["documents"] <= room
    for use in ctx.report.documents:
        assert use["full_tokens"] > 0
        assert (use["tokens"] == 0) == (use["status"] == "dropped")
        cited = f"[doc:{use['id']}]" in documents_text(ctx)
        assert cited == (use["status"] != "dropped")


def test_the_request_fits_the_budget_as_counted(conv: convmem.Conversation) -> None:
    counter = get_counter("o200k_base")
    docs = [{"id": f"d{n}", "text": "Porto kettles. " * 300} for n in range(20)]
    ctx = conv.assemble("kettles in Porto", model=PROFILE, documents=docs)
    assert count_openai_request(counter, ctx.messages) == ctx.report.total_tokens
    assert ctx.report.total_tokens <= PROFILE.input_budget


def _long_conversation(memory: convmem.Memory) -> convmem.Conversation:
    conv = memory.scope("acme", "alice").create_conversation(title="Long")
    for n in range(120):
        role: Role = "user" if n % 2 == 0 else "assistant"
        conv.append(role, f"Turn {n}: we talked about the garden, the weather and plan {n}.")
    return conv


def test_the_window_and_the_stable_prefix_do_not_depend_on_which_documents_come(
    memory: convmem.Memory,
) -> None:
    conv = _long_conversation(memory)
    small = [{"id": "a", "text": "Short note."}]
    large = [{"id": f"b{n}", "text": "A much longer reference text about gardens. " * 40}
             for n in range(15)]  # fmt: skip
    seen = []
    for docs in ([], small, large, [*small, *large]):
        ctx = conv.assemble("What did we plan for the garden?", model=PROFILE, documents=docs)
        assert ctx.report.evicted_ids  # the history does not fit: the window had to be chosen
        leading = len([m for m in ctx.messages if m["role"] == "system"]) - bool(docs)
        seen.append((ctx.report.stable_prefix_hash, ctx.report.included_ids,
                     ctx.report.summary_id, ctx.report.prefix_digests[: leading + len(
                         ctx.report.included_ids)]))  # fmt: skip
    assert all(s == seen[0] for s in seen)


def test_a_short_conversation_is_sent_whole_with_or_without_documents(
    conv: convmem.Conversation,
) -> None:
    without = conv.assemble("Refund?", model=PROFILE)
    with_docs = conv.assemble("Refund?", model=PROFILE, documents=[REFUND])
    assert with_docs.report.stable_prefix_hash == without.report.stable_prefix_hash
    assert with_docs.report.included_ids == without.report.included_ids
    n = len(without.report.included_ids)
    assert with_docs.report.prefix_digests[:n] == without.report.prefix_digests[:n]


def test_the_floor_holds_when_the_share_cannot_and_below_it_the_request_is_refused(
    conv: convmem.Conversation,
) -> None:
    small = convmem.ModelProfile(context_window=700, max_output=100, tokenizer="o200k_base")
    message = "word " * 400  # leaves less than the share's room, more than the floor's
    options = convmem.AssemblyOptions(documents_share=0.4, documents_floor=0.15)
    ctx = conv.assemble(message, model=small, documents=[SHIPPING, REFUND], options=options)
    assert 0 < ctx.report.sections["documents"] <= int(small.input_budget * 0.15)
    assert ctx.report.total_tokens <= small.input_budget
    with pytest.raises(convmem.BudgetExceeded):
        conv.assemble("word " * 500, model=small, documents=[SHIPPING], options=options)
    # without documents the same message fits: the floor is what refused it
    conv.assemble("word " * 500, model=small, options=options)


@pytest.mark.parametrize(
    "bad",
    [
        {"text": "no id"},
        {"id": "", "text": "x"},
        {"id": "has space", "text": "x"},
        {"id": "a]b", "text": "x"},
        {"id": "<x>", "text": "x"},
        {"id": "x" * 129, "text": "x"},
        {"id": True, "text": "x"},
        {"id": "d", "text": "   "},
        {"id": "d", "text": "nul\x00"},
        {"id": "d"},
        {"id": "d", "text": "x", "content": "y"},
        {"id": "d", "text": 5},
        {"id": "d", "text": "x", "score": float("nan")},
        {"id": "d", "text": "x", "score": "0.5"},
        {"id": "d", "text": "x", "score": True},
        {"id": "d", "text": "x", "date": "yesterday"},
        {"id": "d", "text": "x", "date": 20240301},
        {"id": "d", "text": "x", "url": "not a url"},
        {"id": "d", "text": "x", "url": "example.com/x"},
        {"id": "d", "text": "x", "title": 7},
        {"id": "d", "text": "x", "title": "t" * 501},
        {"id": "d", "text": "x", "author": "someone"},
        {"id": "d", "content": [{"type": "nonsense"}]},
        "just a string",
    ],
)
def test_a_bad_document_refuses_the_request_naming_its_place_not_its_text(
    conv: convmem.Conversation, memory: convmem.Memory, bad: Any
) -> None:
    before = len(conv.branch())
    with pytest.raises(InvalidDocument) as caught:
        conv.assemble("Refund?", model=PROFILE, documents=[SHIPPING, bad])
    assert "documents[1]" in str(caught.value)
    assert "Porto warehouse" not in str(caught.value)
    assert isinstance(caught.value, convmem.InvalidInput)
    assert len(conv.branch()) == before


def test_the_list_itself_is_checked(conv: convmem.Conversation) -> None:
    for bad in ("text", {"id": "d", "text": "x"}, [SHIPPING, SHIPPING],
                [{"id": f"d{n}", "text": "x"} for n in range(201)]):  # fmt: skip
        with pytest.raises(InvalidDocument):
            conv.assemble("Refund?", model=PROFILE, documents=bad)  # type: ignore[arg-type]


def test_document_values_content_parts_and_numeric_ids_are_accepted(
    conv: convmem.Conversation,
) -> None:
    value = Document("manual-7", "Descale the kettle monthly.", title="Manual",
                     date=dt.datetime(2023, 5, 8, 13, 56), score=3)  # fmt: skip
    parts = {"id": 42, "content": [
        {"type": "text", "text": "The lid opens with the rear button."},
        {"type": "file", "url": "https://example.com/m.pdf", "name": "manual.pdf",
         "extracted_text": "Page 2: cleaning the filter."},
    ]}  # fmt: skip
    ctx = conv.assemble("How do I clean it?", model=PROFILE, documents=[value, parts])
    block = documents_text(ctx)
    assert "[doc:manual-7]" in block and "2023-05-08" in block and "[doc:42]" in block
    assert "rear button" in block and "cleaning the filter" in block
    assert value.citation == "[doc:manual-7]"


def test_an_empty_list_holds_the_room_and_sends_no_section(conv: convmem.Conversation) -> None:
    ctx = conv.assemble("Refund?", model=PROFILE, documents=[])
    assert ctx.report.sections["documents"] == 0 and ctx.report.documents == []
    assert all(not str(m["content"]).startswith(DOCUMENTS_BLOCK.header) for m in ctx.messages)


def test_options_are_checked() -> None:
    for bad in ({"documents_share": 1.0}, {"documents_floor": 0.3, "documents_share": 0.2},
                {"documents_floor": -0.1}, {"document_max_tokens": 0}):  # fmt: skip
        with pytest.raises(convmem.InvalidInput):
            convmem.AssemblyOptions(**bad)


def test_the_report_holds_ids_and_counts_never_the_text(
    conv: convmem.Conversation, tmp_path: Path
) -> None:
    ctx = conv.assemble("Refund?", model=PROFILE, documents=[REFUND])
    conv.record_assembly(ctx)
    kept = conv.last_assembly()
    assert kept is not None
    stored = json.dumps(kept.report)
    assert (
        "kb-refund" in stored and "refunded in full" not in stored and "Help centre" not in stored
    )


def test_a_stored_turn_being_answered_comes_after_the_documents(
    conv: convmem.Conversation,
) -> None:
    """With no new message the stored user turn is the request's user message: the late
    sections go before it, as before a new one (and tool results stay after their call)."""
    asked = conv.append("user", "Can I get a refund?")
    ctx = conv.assemble(model=PROFILE, documents=[REFUND])
    assert ctx.messages[-1] == {"role": "user", "content": "Can I get a refund?"}
    assert ctx.messages[-2]["content"].startswith(DOCUMENTS_BLOCK.header)
    assert ctx.report.included_ids[-1] == asked.id
    anthropic = conv.assemble(model=PROFILE, format="anthropic", documents=[REFUND])
    blocks = anthropic.messages[-1]["content"]
    assert blocks[-1] == {"type": "text", "text": "Can I get a refund?"}
    assert blocks[-2]["text"].startswith(DOCUMENTS_BLOCK.header)

    call = convmem.ToolCall("c1", "lookup_order", "{}")
    conv.append("assistant", "", tool_calls=[call])
    conv.append("tool", "order 5512: delivered", tool_call_id="c1")
    ctx = conv.assemble(model=PROFILE, documents=[REFUND])
    roles = [m["role"] for m in ctx.messages]
    assert roles[-3:] == ["assistant", "tool", "system"]  # nothing between call and result

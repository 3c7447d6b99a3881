"""The rules behind tool provenance, as values: which call a result answers, how provenance is
attached and serialised, how a note's source is rendered, and what a model may not set. (The
same end to end on every backend: ``tests/store/test_tool_provenance.py``.)"""

from __future__ import annotations

import json
import unicodedata
from datetime import UTC, datetime, timedelta, timezone

import pytest

from convmem.content.blocks import is_invisible, quote_data, quote_name
from convmem.model.messages import Message, Role, ToolCall
from convmem.model.snapshot import Snapshot, SnapshotItem, SnapshotSchemaError, ToolSource
from convmem.summarize.extractive import MAX_TOOL_FACTS, ExtractiveSummarizer
from convmem.summarize.llm import parse_snapshot
from convmem.summarize.provenance import attach_tool_provenance, calls_answered, tool_sources
from convmem.summarize.render import render_snapshot
from convmem.summarize.rolling import ChainStart, build_chain

AT = datetime(2026, 11, 30, 10, 3, tzinfo=UTC)


def path(*specs: tuple[Role, str, tuple[ToolCall, ...], str | None]) -> list[Message]:
    """One branch, oldest first, a minute apart from ``AT`` on."""
    out: list[Message] = []
    for i, (role, content, calls, call_id) in enumerate(specs):
        parent = out[-1].id if out else None
        at = AT + timedelta(minutes=i)
        out.append(Message(f"m{i}", "c", parent, i, role, content, calls, call_id, {}, at))
    return out


LOOKUP = ToolCall("c1", "lookup", '{"q": "x"}')
STATUS = ToolCall("c2", "export_status", '{"job_id": 42}')


def test_each_result_answers_the_call_of_the_assistant_above_its_run() -> None:
    turns = path(
        ("user", "check both", (), None),
        ("assistant", "", (LOOKUP, STATUS), None),
        ("tool", "found x", (), "c1"),
        ("tool", '{"status": "done"}', (), "c2"),
        ("user", "again", (), None),
        ("assistant", "", (ToolCall("c1", "other_tool"),), None),  # the id reused: its own call
        ("tool", "other", (), "c1"),
    )
    assert calls_answered(turns) == {"m2": LOOKUP, "m3": STATUS, "m6": turns[5].tool_calls[0]}
    # a run that starts inside a tool run learns the calls from above it; without them, unknown
    assert calls_answered(turns[3:4], {"c2": STATUS}) == {"m3": STATUS}
    assert calls_answered(turns[3:4]) == {"m3": None}
    sources = tool_sources(turns[3:4])
    assert sources == {"m3": ToolSource("m3", None, AT + timedelta(minutes=3))}


def test_provenance_is_set_from_the_known_sources_whatever_the_note_said() -> None:
    real = ToolSource("m3", "export_status", AT)
    forged = ToolSource("m0", "admin_console", AT - timedelta(days=400))
    snapshot = Snapshot(
        facts=(
            SnapshotItem("a user claim", ("m0",), tools=(forged,)),
            SnapshotItem("status done", ("m0", "m3")),
        )
    )
    attached = attach_tool_provenance(snapshot, {"m3": real})
    assert attached.facts[0].tools == ()
    assert attached.facts[1].tools == (real,)


def test_a_snapshot_round_trips_and_an_old_one_reads_without_provenance() -> None:
    item = SnapshotItem("status done", ("m0", "m3"), tools=(ToolSource("m3", "export_status", AT),))
    document = json.loads(json.dumps(Snapshot(facts=(item,)).to_dict()))
    assert document["facts"][0]["tools"] == [
        {"source": "m3", "tool": "export_status", "at": "2026-11-30T10:03:00+00:00"}
    ]
    assert Snapshot.from_dict(document).facts == (item,)
    old = {"facts": [{"text": "status done", "sources": ["m3"]}]}
    assert Snapshot.from_dict(old).facts[0].tools == ()
    assert "tools" not in Snapshot.from_dict(old).to_dict()["facts"][0]


@pytest.mark.parametrize(
    "tools",
    [
        {"source": "m3"},
        [{"source": "m9", "tool": "t", "at": "2026-11-30T10:03:00+00:00"}],  # not a source
        [{"source": "m3", "tool": 7, "at": "2026-11-30T10:03:00+00:00"}],
        [{"source": "m3", "tool": "t", "at": "2026-11-30T10:03:00"}],  # no zone
        [{"source": "m3", "tool": "t", "at": "yesterday"}],
    ],
    ids=repr,
)
def test_malformed_provenance_is_refused_by_name_not_content(tools: object) -> None:
    with pytest.raises(SnapshotSchemaError) as caught:
        Snapshot.from_dict({"facts": [{"text": "secret 123", "sources": ["m3"], "tools": tools}]})
    assert "secret" not in str(caught.value)


def test_a_model_may_echo_provenance_in_any_shape_it_is_dropped_before_parsing() -> None:
    answer = {
        "goal": {"text": "ship", "sources": ["m0"], "tools": "nonsense"},
        "facts": [{"text": "done", "sources": ["m3"], "tools": [{"tool": "forged"}]}],
    }
    snapshot = parse_snapshot(json.dumps(answer))
    assert [item.tools for _, item in snapshot.items()] == [(), ()]


def test_a_tool_source_renders_with_its_tool_and_utc_time_to_the_minute() -> None:
    plus_two = timezone(timedelta(hours=2))
    item = SnapshotItem(
        "status done",
        ("m0", "m3", "m4"),
        tools=(
            ToolSource("m3", "export_status", datetime(2026, 11, 30, 12, 3, 59, tzinfo=plus_two)),
            ToolSource("m4", None, AT),
        ),
    )
    text = render_snapshot(Snapshot(facts=(item,)))
    assert (
        '- "status done" [m0, m3 from export_status at 2026-11-30 10:03 UTC, '
        "m4 from an unnamed tool at 2026-11-30 10:03 UTC]"
    ) in text


def test_names_are_bare_only_when_plain_and_format_characters_are_always_escaped() -> None:
    assert quote_name("export_status") == "export_status"
    assert quote_name("crm.lookup:v2") == "crm.lookup:v2"
    assert quote_name("a b") == '"a b"'
    assert quote_name("x" * 65) == quote_data("x" * 65)
    assert quote_name("ex\u202eport") == '"ex\\u202eport"'
    # bidi overrides, isolates, zero-width space, a tag character: escaped; joiners kept
    hidden = "a\u202eb\u2067c\u200bd\U000e0041e \U0001f469\u200d\U0001f4bb"
    assert (
        quote_data(hidden)
        == '"a\\u202eb\\u2067c\\u200bd\\udb40\\udc41e \U0001f469\u200d\U0001f4bb"'
    )


Spec = tuple[Role, str, tuple[ToolCall, ...], str | None]


def results(count: int) -> list[Spec]:
    """``count`` calls of export_status, each for another job, each answered."""
    specs: list[Spec] = []
    for i in range(count):
        call = ToolCall(f"c{i}", "export_status", json.dumps({"job_id": i}))
        specs.append(("assistant", "", (call,), None))
        specs.append(("tool", json.dumps({"status": "done", "job": i}), (), f"c{i}"))
    return specs


def test_tool_facts_are_capped_and_never_crowd_out_a_persons_facts() -> None:
    turns = path(("user", "My account number is AC-77.", (), None), *results(MAX_TOOL_FACTS + 3))
    (record,) = build_chain(ChainStart(None), turns, ExtractiveSummarizer(), conversation_id="c")
    facts = record.snapshot.facts
    assert facts[0].text == "My account number is AC-77." and facts[0].tools == ()
    from_tools = [item for item in facts if item.tools]
    assert len(from_tools) == MAX_TOOL_FACTS
    # the newest results are the ones kept, each with its own call's provenance
    assert [item.sources[0] for item in from_tools] == [
        turns[-1 - 2 * i].id for i in reversed(range(MAX_TOOL_FACTS))
    ]


def test_a_withheld_tool_result_keeps_its_provenance() -> None:
    call = ToolCall("c1", "get_credentials", "{}")
    turns = path(
        ("assistant", "", (call,), None),
        ("tool", "password: hunter2xyz99!", (), "c1"),
    )
    (record,) = build_chain(ChainStart(None), turns, ExtractiveSummarizer(), conversation_id="c")
    (fact,) = record.snapshot.facts
    assert fact.text.startswith("(withheld: never-store")
    assert fact.tools == (ToolSource("m1", "get_credentials", turns[1].created_at),)
    assert "hunter2" not in record.rendered
    assert "from get_credentials at" in record.rendered


def test_a_result_nested_too_deep_for_json_is_kept_as_text() -> None:
    call = ToolCall("c1", "deep", "{}")
    nested = "[" * 100_000 + "]" * 100_000
    turns = path(("assistant", "", (call,), None), ("tool", nested, (), "c1"))
    (fact,) = ExtractiveSummarizer().summarize(None, turns).snapshot.facts
    assert fact.text.startswith("returned: [[[")


def test_the_listed_format_characters_are_every_one_this_python_knows_but_the_joiners() -> None:
    known = {chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"} - {
        "\u200c",
        "\u200d",
    }
    assert all(is_invisible(ch) for ch in known)
    assert not any(is_invisible(ch) for ch in "\u200c\u200d plain text, é, ü, 中文, \U0001f469")

"""The extractive summarizer and the snapshot rendering, as pure functions over values."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from convmem.content.tokens import get_counter, message_tokens
from convmem.model.messages import Message, Role
from convmem.summarize import ExtractiveSummarizer, Snapshot, render_snapshot
from convmem.summarize.render import HEADER
from convmem.summarize.text import literals


def script(*turns: tuple[Role, str], start: int = 0, parent: str | None = None) -> list[Message]:
    messages = []
    for offset, (role, text) in enumerate(turns):
        index = start + offset
        message = Message(
            f"msg_{index:03d}", "conv", parent, index, role, text, (), None, {}, datetime.now(UTC)
        )
        messages.append(message)
        parent = message.id
    return messages


def roll(*batches: Sequence[Message]) -> Snapshot:
    snapshot = None
    for batch in batches:
        snapshot = ExtractiveSummarizer().summarize(snapshot, batch).snapshot
    assert snapshot is not None
    return snapshot


def texts(snapshot: Snapshot, category: str) -> list[str]:
    return [item.text for item in snapshot.category(category)]


def test_each_category_is_extracted_verbatim_with_its_source() -> None:
    turns = script(
        ("user", "Our goal is to launch the booking API by June."),
        ("assistant", "Great, let's plan it."),
        ("user", "Decision: we'll use PostgreSQL 16 for the database."),
        ("user", "Constraint: p95 latency must stay under 250 ms."),
        ("user", "TODO: migrate the `orders_v2` table before release 3.4."),
        ("user", "I prefer examples in Python."),
        ("user", "My customer id is ACME-4471."),
    )
    snapshot = roll(turns)
    assert snapshot.goal[0].text == "Our goal is to launch the booking API by June."
    assert snapshot.goal[0].sources == ("msg_000",)
    assert snapshot.decisions[0].text == "Decision: we'll use PostgreSQL 16 for the database."
    assert snapshot.decisions[0].sources == ("msg_002",)
    assert snapshot.constraints[0].sources == ("msg_003",)
    assert texts(snapshot, "open_tasks") == [
        "TODO: migrate the `orders_v2` table before release 3.4."
    ]
    assert texts(snapshot, "preferences") == ["I prefer examples in Python."]
    assert texts(snapshot, "facts") == ["My customer id is ACME-4471."]
    for _, item in snapshot.items():
        source = next(m for m in turns if m.id == item.sources[0])
        assert item.text in source.content  # verbatim: identifiers, numbers and code survive


def test_code_blocks_stay_with_the_sentence_that_introduces_them() -> None:
    code = "```sql\nCREATE INDEX orders_by_user ON orders (user_id);\n```"
    snapshot = roll(
        script(("user", f"Decision: we'll use this index for the orders table:\n{code}"))
    )
    assert code in snapshot.decisions[0].text


def test_a_completed_task_leaves_the_snapshot() -> None:
    first = script(
        ("user", "TODO: write the migration for orders_v2."),
        ("user", "Remember to email the release notes to Dana."),
    )
    later = script(
        ("assistant", "I've written the migration for orders_v2; it is done."),
        start=2,
        parent=first[-1].id,
    )
    snapshot = roll(first, later)
    assert texts(snapshot, "open_tasks") == ["Remember to email the release notes to Dana."]


def test_a_superseded_decision_is_replaced_not_duplicated() -> None:
    first = script(("user", "Decision: we'll use PostgreSQL 16 for the database."))
    later = script(
        ("user", "Lots of unrelated talk about lunch."),
        ("user", "Change of plan: we'll use SQLite for the database instead."),
        ("user", "Let's use Redis streams for the job queue."),
        start=1,
        parent=first[-1].id,
    )
    snapshot = roll(first, later)
    decisions = texts(snapshot, "decisions")
    assert decisions == [
        "Change of plan: we'll use SQLite for the database instead.",
        "Let's use Redis streams for the job queue.",
    ]
    assert snapshot.decisions[0].sources == ("msg_002",)


def test_newer_preference_on_the_same_topic_replaces_the_older() -> None:
    snapshot = roll(
        script(
            ("user", "I prefer aisle seats."),
            ("user", "I like short answers."),
            ("user", "Actually I prefer window seats now."),
        )
    )
    assert texts(snapshot, "preferences") == [
        "I like short answers.",
        "Actually I prefer window seats now.",
    ]


def test_deferred_questions_stay_open_until_answered_or_decided() -> None:
    first = script(
        ("user", "Which message queue should we pick?"),
        ("assistant", "I'm not sure yet, let me check the options."),
        ("user", "What is the capital of Portugal?"),
        ("assistant", "Lisbon."),
    )
    snapshot = roll(first)
    assert texts(snapshot, "open_questions") == ["Which message queue should we pick?"]
    assert snapshot.open_questions[0].sources == ("msg_000", "msg_001")
    later = script(
        ("user", "Let's use Redis streams as the message queue."), start=4, parent="msg_003"
    )
    assert roll(first, later).open_questions == ()


def test_unrelated_chat_adds_nothing() -> None:
    chat = []
    for i in range(30):
        chat.append(("user", f"Tell me a fun fact about the number {i}."))
        chat.append(("assistant", f"The number {i} appears in many old stories and songs."))
    assert roll(script(*chat)).is_empty()  # type: ignore[arg-type]


def test_the_summarizer_is_deterministic() -> None:
    turns = script(
        ("user", "Decision: we'll use PostgreSQL 16 for the database."),
        ("user", "TODO: write the migration for orders_v2."),
    )
    assert roll(turns) == roll(turns)
    assert render_snapshot(roll(turns)) == render_snapshot(roll(turns))


def test_rendering_cites_sources_and_drops_the_least_important_notes_to_fit() -> None:
    turns = script(
        ("user", "Decision: we'll use PostgreSQL 16 for the database."),
        ("user", "Constraint: p95 latency must stay under 250 ms."),
        *[("user", f"My server number {i} is srv-{i:04d}.") for i in range(20)],
    )
    snapshot = roll(turns)
    full = render_snapshot(snapshot)
    assert full.startswith(HEADER)
    assert '- "Decision: we\'ll use PostgreSQL 16 for the database." [msg_000]' in full
    counter = get_counter("o200k_base")
    budget = message_tokens(counter, "system", full) // 2
    short = render_snapshot(snapshot, counter, budget)
    assert message_tokens(counter, "system", short) <= budget
    assert "PostgreSQL 16" in short  # decisions and constraints go last
    assert "250 ms" in short
    assert short.count("srv-") < full.count("srv-")  # facts go first
    assert render_snapshot(snapshot, counter, 5) == ""
    assert render_snapshot(Snapshot()) == ""


def test_literals_are_numbers_identifiers_and_code() -> None:
    found = literals("Flight LH1234 at 09:40 costs 1,800 EUR; run `make test` on eu-west-1.")
    assert {"LH1234", "09:40", "1,800", "`make test`", "eu-west-1"} <= set(found)

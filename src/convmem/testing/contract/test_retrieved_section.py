"""The retrieved section of assembly on every backend: what stands out comes back, sized to what
was found, in room the window does not need — the window itself never depends on it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import convmem
from convmem.context.budget import retrieved_reserve
from convmem.context.formats import Format
from convmem.model.messages import Role
from convmem.testing.harness import Backend

# What these tests check is which turns the section holds, not how long finding them may take:
# no part has a time limit, so a busy machine cannot make retrieval skip and the section empty.
UNHURRIED = convmem.Config(
    time_limits=convmem.TimeLimits(
        memories=None, tools=None, retrieval=None, summary=None, embedder=None
    )
)

PROFILE = convmem.ModelProfile(context_window=900, max_output=100, tokenizer="o200k_base")
FILLER = [
    "Let's talk about the weather this week, it has been rainy and grey.",
    "I watched a documentary about deep sea creatures last night.",
    "The office coffee machine broke again this morning.",
    "We should plan the quarterly report outline soon.",
    "My neighbour keeps practising the trumpet at odd hours.",
    "The train was delayed by twenty minutes today.",
]


def chat(conv: convmem.Conversation, lines: list[str]) -> list[str]:
    at = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
    ids = []
    for i, line in enumerate(lines):
        role: Role = "user" if i % 2 == 0 else "assistant"
        ids.append(conv.append(role, line, created_at=at + timedelta(minutes=i)).id)
    return ids


def lines_with(evidence: dict[int, str], count: int = 60) -> list[str]:
    lines = [FILLER[i % len(FILLER)] + f" (note {i})" for i in range(count)]
    for at, text in evidence.items():
        lines[at] = text
    return lines


@pytest.mark.parametrize("format", ["openai", "anthropic"])
def test_the_section_takes_the_room_the_window_left_and_never_moves_the_window(
    backend: Backend, format: Format
) -> None:
    """A held reserve too small for what was found: the section grows into the history room the
    window's block boundary left unused, within the budget, and the window is the one a message
    that retrieves nothing gets."""
    with backend.open(config=UNHURRIED) as memory:
        conv = memory.scope("acme", "alice").create_conversation()
        evidence = {
            2: "The gym locker code is 4471 and the locker is number 12 on the second floor.",
            8: "The spare gym locker key hangs in the blue cabinet beside the reception desk.",
        }
        ids = chat(conv, lines_with(evidence))
        # blocks of half the budget: the window's start leaves much of its room unused
        small = convmem.AssemblyOptions(retrieved_share=0.03, eviction_block=0.5)
        reserve = retrieved_reserve(PROFILE.input_budget, 0.03, small.retrieved_max_tokens)
        asked = conv.assemble(
            "Where is the gym locker key and what is the locker code?",
            model=PROFILE, options=small, format=format,
        )  # fmt: skip
        nothing = conv.assemble(
            "Any zeppelins?", model=PROFILE, options=small, format=format
        ).report
    report = asked.report
    assert {ids[2], ids[8]} <= set(report.retrieved_ids)
    assert not {ids[2], ids[8]} & set(report.included_ids)
    assert report.sections["retrieved"] > reserve  # more than the reserve alone could hold
    unused = report.history_budget - report.sections["history"]
    assert report.sections["retrieved"] <= reserve + unused
    assert report.total_tokens <= PROFILE.input_budget
    assert nothing.retrieved_ids == []
    assert report.included_ids == nothing.included_ids  # the window does not depend on it
    text = str(asked.messages[-2]["content"] if format == "openai" else asked.messages[-1])
    assert "4471" in text and "blue cabinet" in text


def test_only_the_turns_that_stand_out_come_back(backend: Backend) -> None:
    """Many evicted turns brush the message (one shared word); the one that answers it comes back
    with the few near it, not the whole tail the section's cap would have held."""
    with backend.open(config=UNHURRIED) as memory:
        conv = memory.scope("acme", "alice").create_conversation()
        lines = lines_with({}, 80)
        for i in range(4, 60, 2):  # evicted turns that share only "weather" with the question
            lines[i] = f"The weather on day {i} was {('mild', 'windy', 'wet')[i % 3]} (note {i})."
        lines[3] = "For the weather station on the roof, the calibration password is 7730."
        ids = chat(conv, lines)
        roomy = convmem.AssemblyOptions(retrieved_share=0.5, retrieved_k=60)
        question = "What is the calibration password of the weather station on the roof?"
        shown = conv.assemble(question, model=PROFILE, options=roomy).report
        every = conv.assemble(
            question, model=PROFILE, options=convmem.AssemblyOptions(
                retrieved_share=0.5, retrieved_k=60, retrieved_bar=0
            ),
        ).report  # fmt: skip
        best_only = conv.assemble(
            question, model=PROFILE, options=convmem.AssemblyOptions(
                retrieved_share=0.5, retrieved_k=60, retrieved_bar=1
            ),
        ).report  # fmt: skip
    assert ids[3] in shown.retrieved_ids and ids[3] in every.retrieved_ids
    assert best_only.retrieved_ids == [ids[3]]
    assert len(shown.retrieved_ids) < len(every.retrieved_ids)
    assert shown.sections["retrieved"] < every.sections["retrieved"]
    assert shown.included_ids == every.included_ids  # the same window either way


def test_the_bar_is_checked() -> None:
    for bad in (-0.1, 1.5):
        with pytest.raises(convmem.InvalidInput):
            convmem.AssemblyOptions(retrieved_bar=bad)

"""The never-store gate's judgement as a function (``convmem.memory.gate``), over values: a text
is judged on its own words, on the turns it cites (a refused turn refuses whatever cites it, with
that turn's reason), and on the turns it was derived from (a secret-looking value of a refused one
may not travel in it, whichever turn it cites). The store-level paths are in
``tests/store/test_gate.py``."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from convmem.memory.gate import admit, decide, judge_source, withheld_note, withheld_reason
from convmem.memory.policy import PolicyDecision
from convmem.model.admitted import Admitted
from convmem.model.messages import Message, Role
from convmem.model.parts import FilePart, MediaRef, TextPart
from convmem.model.snapshot import Snapshot, SnapshotItem
from convmem.model.summary import SummaryRecord
from convmem.store.conversations import PinnedInstruction
from convmem.summarize.withhold import withhold_never_store

NOW = datetime(2026, 12, 2, tzinfo=UTC)


def turn(message_id: str, content: str, role: Role = "user", **extra: object) -> Message:
    parts = extra.get("parts", ())
    return Message(message_id, "conv", None, 0, role, content, (), None, {}, NOW,
                   parts=parts)  # type: ignore[arg-type]  # fmt: skip


PASSWORD = turn("msg_1", "My password for the bank is Falcon!9921")
BENIGN = turn("msg_2", "I prefer aisle seats on long flights.")
DIAGNOSIS = turn("msg_3", "I was diagnosed with type 2 diabetes last year.")


@pytest.mark.parametrize(
    ("source", "paraphrase", "reason"),
    [
        (PASSWORD, "I log in to the bank with the one I told you.", "credential"),
        (turn("m", "My gmail password is tulip-rain-44"), "I use the same one for gmail.",
         "credential"),
        (DIAGNOSIS, "I see an endocrinologist every three months.", "health"),
        (turn("m", "Mi contraseña del banco es Halcon-7731"), "Entro al banco con Halcon-7731.",
         "credential"),
        (turn("m", "Ich habe Diabetes."), "Ich messe jeden Morgen meinen Zucker.", "health"),
        (turn("m", "My card number is 4111 1111 1111 1111."), "I pay with the Visa.",
         "payment_card"),
    ],
)  # fmt: skip
def test_a_paraphrase_of_a_refused_turn_is_refused_with_the_turns_reason(
    source: Message, paraphrase: str, reason: str
) -> None:
    assert decide({"text": paraphrase}).allowed  # its own words pass ...
    decision = decide({"text": paraphrase}, sources=[source])  # ... its source does not
    assert (decision.allowed, str(decision.reason)) == (False, reason)
    assert "cites" in decision.detail
    # the detail never quotes the text, the turn or its values
    values = [w for w in source.content.split() if any(c.isdigit() for c in w)]
    for quoted in (paraphrase, source.content, *values):
        assert quoted not in decision.detail


def test_the_issues_paraphrases_are_refused_on_their_own_words_and_with_their_source() -> None:
    # the policy reads these on their own now (a made-up value used to log in); the gate adds
    # the source turn's refusal either way
    for paraphrase in ("I log in to the bank with Falcon!9921.", "I use tulip-rain-44 for gmail."):
        assert not decide({"text": paraphrase}).allowed
        assert not decide({"text": paraphrase}, sources=[PASSWORD]).allowed


def test_a_value_of_a_refused_turn_it_was_read_from_is_refused_whatever_it_cites() -> None:
    carried = "Noted tulip-rain-44 for later."  # its own words pass; the value is the secret
    secret = turn("m", "My gmail password is tulip-rain-44")
    assert decide({"text": carried}, sources=[BENIGN]).allowed
    decision = decide({"text": carried}, sources=[BENIGN], read=[BENIGN, secret])
    assert (decision.allowed, decision.reason) == (False, "credential")
    # a value that only a benign turn holds travels freely
    flight = turn("m", "My flight is LH4410 on Friday.")
    assert decide({"text": "Flight LH4410."}, sources=[flight], read=[flight, secret]).allowed


def test_a_turn_is_judged_with_its_parts() -> None:
    attached = turn("m", "Here is the file.", parts=(
        TextPart("Here is the file."),
        FilePart(MediaRef(url="https://files.example/a.txt"), name="notes.txt",
                 extracted_text="My password is Falcon!9921"),
    ))  # fmt: skip
    assert not judge_source(attached).allowed
    assert not decide({"text": "I attached my notes."}, sources=[attached]).allowed


def test_a_memory_from_a_tool_result_or_citing_a_refused_turn_is_not_admitted() -> None:
    from convmem.model.memory import MemoryRecord

    def memory(text: str, source: str | None) -> MemoryRecord:
        return MemoryRecord(
            id="mem_1", tenant_id="acme", user_id="alice", scope="user", category="fact",
            subject_key="bank", text=text, source_kind="inference", source_message_id=source,
            status="proposed", supersedes_id=None, conflicts_with_id=None, sensitivity="none",
            purpose="personalization", created_at=NOW, updated_at=NOW, expires_at=None,
        )  # fmt: skip

    said = "I log in to the bank on Mondays."
    assert isinstance(admit(memory(said, BENIGN.id), known=[BENIGN]), Admitted)
    refused = admit(memory(said, PASSWORD.id), known=[PASSWORD])
    assert isinstance(refused, PolicyDecision) and refused.reason == "credential"
    tool = turn("msg_9", "The bank opens at 9.", role="tool")
    refused = admit(memory("The bank opens at 9.", tool.id), known=[tool])
    assert isinstance(refused, PolicyDecision) and refused.reason == "tool_output"
    # evidence counts like the source message
    refused = admit(memory(said, BENIGN.id), cites=[PASSWORD.id], known=[BENIGN, PASSWORD])
    assert isinstance(refused, PolicyDecision) and refused.reason == "credential"


def test_summary_notes_citing_a_refused_turn_are_withheld_and_the_rest_kept() -> None:
    snapshot = Snapshot(facts=(
        SnapshotItem("Logs in to the bank with a saved login.", (PASSWORD.id,)),
        SnapshotItem("Prefers aisle seats.", (BENIGN.id,)),
        SnapshotItem("Sees an endocrinologist.", (DIAGNOSIS.id,), subject="doctor"),
    ))  # fmt: skip
    checked = withhold_never_store(snapshot, [PASSWORD, BENIGN, DIAGNOSIS])
    assert [item.text for item in checked.facts] == [
        withheld_note("credential"), "Prefers aisle seats.", withheld_note("health"),
    ]  # fmt: skip
    assert checked.facts[0].sources == (PASSWORD.id,)  # a person can still find the message
    assert withheld_reason(checked.facts[2].text) == "health"
    # rolled on: a note citing a message that only withheld notes cite is withheld too
    later = Snapshot(facts=(SnapshotItem("Uses online banking.", (PASSWORD.id,)),))
    rolled = withhold_never_store(later, [], previous=checked)
    assert [item.text for item in rolled.facts] == [withheld_note("credential")]


def test_a_summary_record_is_admitted_only_when_every_note_passes() -> None:
    def record(snapshot: Snapshot) -> SummaryRecord:
        return SummaryRecord("sum_1", "conv", BENIGN.id, 1, "h", "", 2, None, "x", "v1",
                             snapshot, "rendered", 3)  # fmt: skip

    kept = Snapshot(facts=(SnapshotItem("Prefers aisle seats.", (BENIGN.id,)),
                           SnapshotItem(withheld_note("credential"), (PASSWORD.id,))))  # fmt: skip
    assert isinstance(admit(record(kept), known=[BENIGN, PASSWORD]), Admitted)
    leaked = Snapshot(facts=(SnapshotItem("Logs in with a saved login.", (PASSWORD.id,)),))
    refused = admit(record(leaked), known=[PASSWORD])
    assert isinstance(refused, PolicyDecision) and refused.reason == "credential"


def test_a_pin_is_judged_on_its_text() -> None:
    pin = PinnedInstruction("pin_1", "The wifi password is Falcon!9921, tell guests.", None, 1, NOW)
    assert isinstance(admit(pin), PolicyDecision)
    assert isinstance(admit(PinnedInstruction("pin_2", "Answer in French.", None, 1, NOW)),
                      Admitted)  # fmt: skip

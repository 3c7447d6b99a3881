"""The current turn wins: a recalled memory that what the user says now contradicts is older
background, not the current truth.

A memory "My home is Porto" recalled into a request whose new message says "my home is Lisbon
now" would have the model answer from the stale memory (the seed's "stale memory overrides the
current message" failure). The memory is still shown (the user may be speaking of a trip, not a
move), but marked as saved on its date and possibly changed by the conversation.

Only slots compare: the intent grammar reads the slot and its value from the memory and from
each sentence of the user's recent turns (7 languages), and a memory is outdated when the newest
statement about its slot gives another value. Questions and quoted sentences say nothing, and a
statement that agrees with the memory leaves it current.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from convmem.memory.intent import statements
from convmem.memory.slots import SlotValue, slot_value
from convmem.model.memory import MemoryRecord

# A slot's subject key is one or two words ("home", "answer length"); any other memory's is the
# words of its whole statement, and is not looked at further.
_SLOT_WORDS = 2


def memory_slot(record: MemoryRecord) -> SlotValue | None:
    """The slot a memory holds a value for, as its text says it (None when its text names no
    slot, or another one than its subject key)."""
    if len(record.subject_key.split()) > _SLOT_WORDS:
        return None
    return slot_value(record.text, (record.subject_key,))


def outdated_memories(
    memories: Sequence[MemoryRecord], user_turns_newest_first: Iterable[str]
) -> set[str]:
    """The ids of ``memories`` that the newest statement about their slot, in the user's turns
    (newest first, the new message leading), contradicts."""
    slots = {record.id: slot for record in memories if (slot := memory_slot(record)) is not None}
    wanted = {slot.subject for slot in slots.values()}
    newest: dict[str, SlotValue] = {}
    for turn in user_turns_newest_first:
        if len(newest) == len(wanted):
            break
        for sentence in reversed(statements(turn)):  # a turn's last word on a slot is its newest
            said = slot_value(sentence, wanted - newest.keys())
            if said is not None:
                newest[said.subject] = said
    return {
        record_id
        for record_id, slot in slots.items()
        if slot.subject in newest and not newest[slot.subject].agrees_with(slot)
    }

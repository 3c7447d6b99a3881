"""The current turn wins, on every backend: scripted conversations in several languages in which
the user changes what a saved memory says (in the window or in the new message). The memory
stays in its block but is marked as older background with its date; repeating the same value,
or talking about something else, leaves the block exactly as it was."""

from __future__ import annotations

import pytest

import convmem

MODEL = convmem.ModelProfile(context_window=4000, max_output=200, tokenizer="o200k_base")
MARK = "the conversation may have changed this"

# (language, memory, turns before the new message, the new message)
CHANGED = [
    ("en", "My home city is Porto.",
     ["Can you help me plan my week?", "Of course. What is on it?",
      "We moved last month. I live in Lisbon now.", "Congratulations on the move!"],
     "Which neighbourhoods should I explore near home?"),
    ("fr", "Je m'appelle Claire.",
     ["Bonjour !", "Bonjour, que puis-je faire pour vous ?"],
     "Je m'appelle Léa, en fait. Peux-tu écrire ma signature d'e-mail ?"),
    ("de", "Meine Lieblingsfarbe ist Blau.",
     ["Ich plane ein neues Logo.", "Gern, welche Farben magst du?",
      "Meine Lieblingsfarbe ist Grün, schon seit einem Jahr.", "Gut zu wissen."],
     "Welche Farben passen zum Logo?"),
    ("es", "Vivo en Madrid.",
     ["Me mudé en verano.", "¡Qué bien! ¿Adónde?", "Ahora vivo en Sevilla.", "¡Estupendo!"],
     "¿Qué puedo visitar este fin de semana cerca de casa?"),
    ("nl", "Mijn favoriete kaas is Gouda.",
     ["Ik maak een kaasplank.", "Leuk! Welke kazen?"],
     "Mijn favoriete kaas is Edam. Wat past erbij?"),
]  # fmt: skip


def memory_block(ctx: convmem.AssembledContext) -> str:
    blocks = [m["content"] for m in ctx.messages if "<user_memories>" in str(m["content"])]
    assert len(blocks) == 1
    return str(blocks[0])


def entry(block: str, memory: convmem.MemoryRecord) -> str:
    lines = [line for line in block.splitlines() if line.startswith("- [")]
    found = [line for line in lines if memory.text.split()[-1].rstrip(".") in line]
    assert len(found) == 1, lines
    return found[0]


def start(
    memory: convmem.Memory, saved: str, turns: list[str]
) -> tuple[convmem.Conversation, convmem.MemoryRecord]:
    alice = memory.scope("acme", "alice")
    kept = alice.remember(saved).memory
    assert kept is not None and kept.status == "confirmed"
    alice.remember("I prefer aisle seats.")  # another slot: never touched
    conv = alice.create_conversation()
    for i, text in enumerate(turns):
        conv.append("user" if i % 2 == 0 else "assistant", text)
    return conv, kept


@pytest.mark.parametrize(("lang", "saved", "turns", "new"), CHANGED, ids=[c[0] for c in CHANGED])
def test_a_memory_the_conversation_changed_is_older_background(
    memory: convmem.Memory, lang: str, saved: str, turns: list[str], new: str
) -> None:
    conv, kept = start(memory, saved, turns)
    ctx = conv.assemble(new, model=MODEL)
    assert kept.id in ctx.report.memory_ids  # still shown …
    line = entry(memory_block(ctx), kept)
    date = kept.updated_at.date().isoformat()
    assert line.endswith(f"(saved {date}; {MARK})"), line  # … as background, with its date
    assert MARK not in entry(memory_block(ctx), _seat(memory))
    assert ctx.report.total_tokens <= MODEL.input_budget


def _seat(memory: convmem.Memory) -> convmem.MemoryRecord:
    found = [m for m in memory.scope("acme", "alice").memories.list() if "aisle" in m.text]
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize(
    ("saved", "turns", "new"),
    [
        # the same value again
        ("My home city is Porto.", ["I live in Porto, near the river.", "Lovely."],
         "Which neighbourhoods should I explore near home?"),
        ("Je m'appelle Claire.", [], "Je m'appelle Claire Martin. Peux-tu écrire ma signature ?"),
        # the slot changed and changed back: the newest word stands
        ("Vivo en Madrid.", ["Ahora vivo en Sevilla.", "¡Vale!", "Perdón, vivo en Madrid."],
         "¿Qué puedo visitar?"),
        # something else entirely, or only a question about the slot
        ("Meine Lieblingsfarbe ist Blau.", ["Ich mag Katzen.", "Ich auch."],
         "Ist meine Lieblingsfarbe Grün?"),
    ],
)  # fmt: skip
def test_the_same_value_or_another_topic_leaves_the_block_as_it_was(
    memory: convmem.Memory, saved: str, turns: list[str], new: str
) -> None:
    conv, _ = start(memory, saved, turns)
    ctx = conv.assemble(new, model=MODEL)
    assert MARK not in memory_block(ctx)
    quiet = memory.scope("acme", "alice").create_conversation()
    assert memory_block(quiet.assemble("Hello.", model=MODEL)) == memory_block(ctx)

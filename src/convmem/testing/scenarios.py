"""Data the contract tests share: conversations that fill every derived table."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import convmem
from convmem.ops.worker import Worker
from convmem.testing.harness import Backend

# small enough that 40 turns overflow it: eviction, hence summaries
SMALL = convmem.ModelProfile(context_window=600, max_output=100, tokenizer="o200k_base")
# a run longer than 20 turns is queued for the worker instead of summarised inline
QUEUEING = convmem.Config(max_inline_summary_messages=20, summary_segment_messages=20)
START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def turn_text(i: int) -> str:
    return f"Turn {i}: the walrus number {i} dreams of kelp forests and lighthouse {i * 7}."


def chat(conv: convmem.Conversation, start: int, stop: int) -> list[convmem.Message]:
    return [
        conv.append(
            "user" if i % 2 == 0 else "assistant",
            turn_text(i),
            created_at=START + timedelta(minutes=i),
        )
        for i in range(start, stop)
    ]


def open_full(backend: Backend) -> convmem.Memory:
    """A Memory that writes every kind of derived row: vectors, queued jobs, summaries."""
    return backend.open(config=QUEUEING, embedder=convmem.HashingEmbedder())


def populate(memory: convmem.Memory, *scopes: convmem.Scope) -> list[convmem.Conversation]:
    """One conversation per scope with every derived row a conversation can have: index and
    full-text rows, vectors, vocabulary and word vectors, token counts, summaries, a finished and
    a pending summary job, the last assembly's report, and a pinned instruction.
    ``memory`` must come from ``open_full``."""
    conversations = [scope.create_conversation(title="sea life") for scope in scopes]
    for conv in conversations:
        chat(conv, 0, 40)
        conv.assemble("continue", model=SMALL)  # queues a summary job (too long a run inline)
    # builds the summaries: a done job each
    assert Worker(memory).run(exit_when_idle=True) == len(conversations)
    for conv in conversations:
        chat(conv, 40, 80)
        ctx = conv.assemble("continue", model=SMALL)  # queues the next one: a pending job
        conv.record_assembly(ctx)
        conv.pin("Answer in one sentence.")
        statuses = sorted(job.status for job in memory.jobs() if job.conversation_id == conv.id)
        assert statuses == ["done", "pending"], statuses
        assert conv.summaries()
    # vectors are filled after each write: a caller counting rows now must see all of them
    assert memory.wait_for_vectors(30)
    return conversations

"""convmem.aio: the same surface with async def, run in a bounded pool off the event loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

import convmem
import convmem.aio
from convmem.retrieval.vector import HashingEmbedder, Matrix


class GatedEmbedder(HashingEmbedder):
    """Blocks every embed call until released; counts how many run at once and where."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.running = self.most = 0
        self.threads: set[str] = set()

    def embed(self, texts: Sequence[str]) -> Matrix:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.threads.add(threading.current_thread().name)
        try:
            assert self.release.wait(timeout=60)
            return super().embed(texts)
        finally:
            with self.lock:
                self.running -= 1


def test_the_async_surface_matches_the_sync_one(db_path: Path) -> None:
    async def run() -> tuple[str, list[str], list[str]]:
        async with convmem.aio.open(db_path) as mem:
            user = mem.scope(tenant="acme", user="alice")
            conv = await user.create_conversation(title="Trip")
            said = await conv.append("user", "Remember that I prefer aisle seats.")
            await conv.append("assistant", "Noted.")
            ctx = await conv.assemble("Which seat?", format="anthropic")
            again = await user.conversation(conv.id)
            hits = await again.search("aisle")
            memories = await user.memories.list()
            with pytest.raises(convmem.NotFound):
                await mem.scope("acme", "bob").conversation(conv.id)
            with pytest.raises(convmem.InvalidMessage):
                await conv.append("user", "   ")
            return (said.notices[0].status, [h.message.id for h in hits],
                    [*ctx.report.memory_ids, *[m.id for m in memories]])  # fmt: skip

    status, hits, memory_ids = asyncio.run(run())
    assert status == "saved"
    with convmem.open(db_path) as mem:
        alice = mem.scope("acme", "alice")
        (conv,) = alice.conversations()
        first = alice.conversation(conv.id).branch()[0]
        assert hits[0] == first.id
        (memory,) = alice.memories.list()
        assert memory_ids == [memory.id, memory.id]


def test_an_async_scope_takes_a_purpose_cap_and_calls_narrow_it(db_path: Path) -> None:
    async def run() -> tuple[list[str], list[str], str]:
        async with convmem.aio.open(db_path) as mem:
            owner = mem.scope("acme", "alice")
            await owner.remember("Ship my orders to the Elm Street office.",
                                 purpose="task_automation")  # fmt: skip
            await owner.remember("I prefer aisle seats.")
            capped = mem.scope("acme", "alice", purposes=["personalization"])
            conv = await capped.create_conversation()
            ctx = await conv.assemble("Where do my orders go?")
            tasks = await owner.search_memories("orders", purposes=["task_automation"])
            with pytest.raises(convmem.PurposeNotAllowed) as refused:
                await capped.search_memories("orders", purposes=["task_automation"])
            return (
                list(ctx.report.memory_ids),
                [h.memory.purpose for h in tasks],
                str(refused.value),
            )

    recalled, purposes, refusal = asyncio.run(run())
    with convmem.open(db_path) as mem:
        (seats,) = [m for m in mem.scope("acme", "alice").memories.list() if "aisle" in m.text]
    assert recalled == [seats.id]
    assert purposes == ["task_automation"]
    assert "task_automation" in refusal


def test_calls_run_in_a_bounded_pool_and_the_loop_keeps_running(db_path: Path) -> None:
    embedder = GatedEmbedder()

    async def run() -> int:
        # a write no longer calls the embedder (its vector is filled after it): six backfills
        # of the turns written with embedding off are the calls that block on it here
        config = convmem.Config(embed_on_write=False)
        async with convmem.aio.open(
            db_path, config=config, embedder=embedder, max_workers=2
        ) as mem:
            conv = await mem.scope("acme", "alice").create_conversation()
            for i in range(6):
                await conv.append("user", f"note {i}")
            writes = [asyncio.ensure_future(mem.backfill_embeddings()) for _ in range(6)]
            ticks = 0
            while embedder.running < 2:  # the loop turns while two calls are blocked
                await asyncio.sleep(0.01)
                ticks += 1
            for _ in range(20):
                await asyncio.sleep(0.01)
                ticks += 1
            assert embedder.running == 2  # the others queue behind the bound
            embedder.release.set()
            await asyncio.gather(*writes)
            assert len(await conv.messages()) == 6
            return ticks

    assert asyncio.run(run()) >= 20
    assert embedder.most == 2
    assert embedder.threads and all(t.startswith("convmem-aio") for t in embedder.threads)


def test_max_workers_must_be_positive(db_path: Path) -> None:
    with pytest.raises(ValueError, match="max_workers"):
        convmem.aio.open(db_path, max_workers=0)

"""Counting many messages at once (an import's path) gives each message the costs counting it
alone gives: every tokenizer, every role, tool calls and results, media parts and their share."""

from __future__ import annotations

import json
from pathlib import Path

import convmem
from convmem.content.parts import read_content
from convmem.model.messages import NewMessage, ToolCall

IMAGE = [
    {"type": "text", "text": "Why is this banner red?"},
    {"type": "image_url", "image_url": {"url": "https://app.example/u/a.png", "detail": "high"},
     "width": 1280, "height": 720, "name": "a.png", "caption": "the quota banner"},
]  # fmt: skip


def _messages() -> list[NewMessage]:
    text, parts, blobs = read_content(IMAGE, keep_bytes=False, max_bytes=1_000_000)
    call = ToolCall("call-7", "search_flights", json.dumps({"to": "Porto", "day": "Friday"}))
    return [
        NewMessage("system", "You are a travel assistant."),
        NewMessage("user", "Plan a trip to Lisbon in May, please."),
        NewMessage("user", text, parts=parts, blobs=blobs),  # sent as parts: a media share
        NewMessage("assistant", text, parts=parts),  # sent as its text: no media share
        NewMessage("assistant", "", (call,)),
        NewMessage("tool", '{"flights": 3}', tool_call_id="call-7"),
        NewMessage("assistant", "我想预订一张去波尔图的火车票 🚆 sk-4f9Qz7LmB2xR8tYp1VwK3nJ6"),
        NewMessage("user", "ok"),
        NewMessage("user", "hotel " * 900),
        NewMessage("assistant", "Plan a trip to Lisbon in May, please."),  # a repeat
    ]


def test_counting_together_gives_what_counting_alone_gives(tmp_path: Path) -> None:
    with convmem.open(tmp_path / "count.db") as mem:
        messages = _messages()
        alone = [mem.count_message(m) for m in messages]
        together = mem.count_messages(messages)
        batched = mem.count_messages(messages, mem.batch_counters())
    assert together == alone and batched == alone
    assert set(alone[0].tokens) == {"estimate", "o200k_base", "cl100k_base"}
    assert alone[2].media and all(share > 0 for share in alone[2].media.values())
    assert not any(cost.media for n, cost in enumerate(alone) if n != 2)
    assert alone[4].tokens["o200k_base"] > alone[7].tokens["o200k_base"]  # the call is counted


def test_a_batchs_counts_do_not_depend_on_its_order(tmp_path: Path) -> None:
    messages = _messages()
    with convmem.open(tmp_path / "order.db") as mem:
        counters = mem.batch_counters()
        forward = mem.count_messages(messages, counters)
        backward = mem.count_messages(messages[::-1], counters)[::-1]
    assert forward == backward

"""Assembly with content parts: images sent in each format's shape, old images stubbed before
whole turns are dropped while the newest the user sent is kept, the report's media shares."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

import convmem
from convmem import ModelProfile
from convmem.content.media_tokens import openai_image_tokens

OLD = "https://app.example/u/old.png"
NEW = "https://app.example/u/new.png"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x01" * 40
PROFILE = ModelProfile(context_window=200_000, max_output=1000, tokenizer="o200k_base")
NO_SUMMARY = convmem.AssemblyOptions(summary_threshold=None, eviction_block=0, retrieved_k=0)


def shot(url: str, name: str, text: str, **extra: Any) -> list[dict[str, Any]]:
    return [
        {"type": "text", "text": text},
        {"type": "image_url", "image_url": {"url": url, "detail": "high"}, "width": 1280,
         "height": 720, "name": name, "caption": f"{name} caption", **extra},
    ]  # fmt: skip


@pytest.fixture
def mem(tmp_path: Path) -> convmem.Memory:
    return convmem.open(tmp_path / "parts.db")


def chat_with_two_screenshots(mem: convmem.Memory) -> tuple[convmem.Conversation, str, str]:
    conv = mem.scope("acme", "alice").create_conversation()
    old = conv.append("user", shot(OLD, "old.png", "Why is this red?")).id
    conv.append("assistant", "The quota banner shows when the limit is reached.")
    for turn in range(6):
        conv.append("user", f"Follow-up question number {turn} about the quota.")
        conv.append("assistant", f"Answer number {turn}: it resets at midnight.")
    new = conv.append("user", shot(NEW, "new.png", "And now this one?")).id
    return conv, old, new


def test_images_go_in_each_formats_shape(mem: convmem.Memory) -> None:
    conv, _, _ = chat_with_two_screenshots(mem)
    chat = conv.assemble(model=PROFILE, options=NO_SUMMARY).messages
    assert chat[-1]["content"] == [
        {"type": "text", "text": "And now this one?"},
        {"type": "image_url", "image_url": {"url": NEW, "detail": "high"}},
    ]
    responses = conv.assemble(model=PROFILE, format="responses", options=NO_SUMMARY).messages
    assert responses[-1] == {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "And now this one?"},
            {"type": "input_image", "image_url": NEW, "detail": "high"},
        ],
    }
    anthropic = conv.assemble(model=PROFILE, format="anthropic", options=NO_SUMMARY).messages
    assert anthropic[-1]["content"] == [
        {"type": "text", "text": "And now this one?"},
        {"type": "image", "source": {"type": "url", "url": NEW}},
    ]
    assert anthropic[0]["content"][1] == {"type": "image", "source": {"type": "url", "url": OLD}}


def test_kept_bytes_are_sent_inline(mem: convmem.Memory) -> None:
    conv = mem.scope("acme", "alice").create_conversation()
    data = base64.b64encode(PNG).decode()
    conv.append(
        "user",
        [{"type": "text", "text": "this"},
         {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data},
          "width": 64, "height": 64}],
        keep_bytes=True,
    )  # fmt: skip
    chat = conv.assemble(model=PROFILE).messages
    assert chat[-1]["content"][1]["image_url"]["url"] == f"data:image/png;base64,{data}"
    anthropic = conv.assemble(model=PROFILE, format="anthropic").messages
    assert anthropic[-1]["content"][1]["source"] == {
        "type": "base64", "media_type": "image/png", "data": data,
    }  # fmt: skip


def test_the_report_splits_text_and_media_tokens(mem: convmem.Memory) -> None:
    conv, _, _ = chat_with_two_screenshots(mem)
    report = conv.assemble(model=PROFILE, options=NO_SUMMARY).report
    image = openai_image_tokens(1280, 720, "high")
    assert report.media_tokens == {"history": image, "user": image}
    assert report.sections["user"] > image and report.media_stubbed_ids == []
    report = conv.assemble("Thanks!", model=PROFILE, options=NO_SUMMARY).report
    assert report.media_tokens == {"history": 2 * image, "user": 0}


def test_old_images_are_stubbed_before_whole_turns_go_and_the_newest_is_kept(
    mem: convmem.Memory,
) -> None:
    conv, old, _ = chat_with_two_screenshots(mem)
    roomy = conv.assemble(model=PROFILE, options=NO_SUMMARY).report
    image = roomy.media_tokens["history"]
    # room for every turn and one image, not two
    tight = ModelProfile(
        context_window=roomy.total_tokens - image + 40 + PROFILE.max_output,
        max_output=PROFILE.max_output, tokenizer="o200k_base", safety_margin=0,
    )  # fmt: skip
    ctx = conv.assemble(model=tight, options=NO_SUMMARY)
    report = ctx.report
    assert report.evicted_ids == [] and report.included_ids == roomy.included_ids
    assert report.media_stubbed_ids == [old]
    assert ctx.messages[0]["content"] == [
        {"type": "text", "text": "Why is this red?"},
        {"type": "text", "text": f"[image: old.png, 1280\u00d7720, described in message {old}]"},
    ]
    assert ctx.messages[-1]["content"][1]["image_url"]["url"] == NEW  # the newest, kept
    assert report.media_tokens == {"history": 0, "user": image}
    assert OLD not in str(ctx.messages)
    assert report.total_tokens <= tight.input_budget


def test_the_newest_image_is_stubbed_too_when_it_cannot_fit(mem: convmem.Memory) -> None:
    conv = mem.scope("acme", "alice").create_conversation()
    big = shot(NEW, "huge.png", "Look.", width=1568, height=1568)
    sent = conv.append("user", big).id
    small = ModelProfile(context_window=600, max_output=100, tokenizer="o200k_base")
    ctx = conv.assemble(model=small, options=NO_SUMMARY)
    assert ctx.report.media_stubbed_ids == [sent] and ctx.report.included_ids == [sent]
    assert ctx.report.total_tokens <= small.input_budget


def test_summaries_name_media_by_label_and_caption_never_by_url(mem: convmem.Memory) -> None:
    conv = mem.scope("acme", "alice").create_conversation()
    first = conv.append("user", shot(OLD, "old.png", "Why is this red?"))
    conv.append("assistant", "The quota banner shows when the limit is reached.")
    for turn in range(30):
        conv.append("user", f"Follow-up question number {turn} about the quota limits today.")
        conv.append("assistant", f"Answer number {turn}: the quota resets at midnight UTC.")
    small = ModelProfile(context_window=1200, max_output=200, tokenizer="o200k_base")
    ctx = conv.assemble("And what now?", model=small)
    assert ctx.report.summary_id is not None and first.id not in ctx.report.included_ids
    (summary,) = [s for s in conv.summaries() if s.id == ctx.report.summary_id]
    facts = [item for item in summary.snapshot.facts if first.id in item.sources]
    assert [item.text for item in facts] == [
        "Shared [image: old.png, 1280\u00d7720]: old.png caption"
    ]
    assert "Shared [image: old.png, 1280\u00d7720]: old.png caption" in summary.rendered
    assert "app.example" not in summary.rendered

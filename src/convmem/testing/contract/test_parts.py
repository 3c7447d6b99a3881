"""Messages with content parts on every backend: stored and read back, counted once at write
(media's share apart), refused with nothing written, kept bytes exported and deleted with the
message (no byte of them left anywhere in the database)."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import pytest

import convmem
from convmem import ContentTooLarge, InvalidMessage
from convmem.content.media_tokens import anthropic_image_tokens, openai_image_tokens
from convmem.content.parts import MAX_INLINE_BYTES
from convmem.model.parts import FilePart, ImagePart, TextPart
from convmem.testing.harness import Backend

SHOT = "https://app.example/u/screenshot.png"
# kept bytes carry a marker a database dump would show (repr of the row)
MARKER = b"QVZKEPTMEDIAMARKER"
PNG = b"\x89PNG\r\n\x1a\n" + MARKER + b"\x00" * 32
DATA_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()
PNG_SHA = hashlib.sha256(PNG).hexdigest()


def screenshot(**extra: Any) -> dict[str, Any]:
    return {
        "type": "image_url",
        "image_url": {"url": SHOT, "detail": "high"},
        "width": 1280,
        "height": 720,
        "name": "screenshot.png",
        "caption": "the settings page with a red quota banner",
        **extra,
    }


def test_parts_are_stored_and_read_back_with_the_message_as_text(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    sent = conv.append(
        "user",
        [
            {"type": "text", "text": "Why does this banner show up?"},
            screenshot(),
            {"type": "file", "blob_id": "file-77", "name": "limits.pdf", "page_count": 3,
             "extracted_text": "Quota: 500 requests per minute."},
        ],
    )  # fmt: skip
    reply = conv.append("assistant", "Your quota of 500 requests per minute was reached.")
    for stored in (conv.message(sent.id), conv.branch()[0], conv.messages()[0], sent):
        assert isinstance(stored.parts[0], TextPart)
        image = stored.parts[1]
        assert isinstance(image, ImagePart)
        assert (image.ref.url, image.width, image.height, image.detail) == (SHOT, 1280, 720, "high")
        assert image.caption == "the settings page with a red quota banner"
        document = stored.parts[2]
        assert isinstance(document, FilePart) and document.ref.blob_id == "file-77"
        assert stored.content == (
            "Why does this banner show up?\n[image: screenshot.png, 1280\u00d7720]\n"
            "the settings page with a red quota banner\n[file: limits.pdf, 3 pages]\n"
            "Quota: 500 requests per minute."
        )
    assert conv.message(reply.id).parts == ()
    as_dict = conv.message(sent.id).to_dict()
    assert as_dict["parts"][1]["url"] == SHOT and "parts" not in conv.message(reply.id).to_dict()


def test_media_is_counted_once_at_write_by_each_tokenizers_provider_rule(
    memory: convmem.Memory,
) -> None:
    conv = memory.scope("acme", "alice").create_conversation()
    text_only = conv.append("user", "Why does this banner show up?")
    with_image = conv.append(
        "user", [{"type": "text", "text": "Why does this banner show up?"}, screenshot()]
    )
    with memory.store.read() as tx:
        rows = {
            name: {row.message.id: row for row in tx.branch("acme", with_image.id, name)}
            for name in ("o200k_base", "estimate")
        }
    openai = openai_image_tokens(1280, 720, "high")  # 85 + 170 x 3x2 tiles (short side < 768)
    larger = max(openai, anthropic_image_tokens(1280, 720))  # 1229 by w*h/750
    assert rows["o200k_base"][with_image.id].media_tokens == openai == 1105
    assert rows["estimate"][with_image.id].media_tokens == larger == 1229
    assert rows["o200k_base"][text_only.id].media_tokens == 0
    for name, media in (("o200k_base", openai), ("estimate", larger)):
        text_tokens = rows[name][with_image.id].tokens
        assert text_tokens is not None
        assert text_tokens - media == rows[name][text_only.id].tokens


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ([{"type": "video", "url": SHOT}], "unknown type 'video'"),
        ([{"type": "image_url", "image_url": {"url": SHOT}}], "without width and height"),
        ([{"type": "file", "url": SHOT, "name": "a.pdf"}], "extracted_text or token_estimate"),
        ([], "non-empty list of parts"),
        ([{"type": "text", "text": "a\x00b"}], "NUL"),
        ([screenshot(width=0)], "width must be an integer"),
    ],
)
def test_bad_parts_are_refused_and_nothing_is_written(
    backend: Backend, content: list[dict[str, Any]], error: str
) -> None:
    with backend.open() as memory:
        conv = memory.scope("acme", "alice").create_conversation()
        conv.append("user", "hello")
        before = backend.fingerprint()
        with pytest.raises(InvalidMessage, match=error):
            conv.append("user", content)
        assert backend.fingerprint() == before


def test_inline_media_above_the_limit_is_refused_and_nothing_is_written(backend: Backend) -> None:
    big = base64.b64encode(b"\x00" * (MAX_INLINE_BYTES + 1)).decode()
    with backend.open() as memory:
        conv = memory.scope("acme", "alice").create_conversation()
        before = backend.fingerprint()
        with pytest.raises(ContentTooLarge):
            conv.append(
                "user",
                [{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{big}"},
                  "width": 10, "height": 10}],
                keep_bytes=True,
            )  # fmt: skip
        assert backend.fingerprint() == before


def test_inline_bytes_are_dropped_unless_kept(backend: Backend) -> None:
    inline = {"type": "image_url", "image_url": {"url": DATA_URL}, "width": 64, "height": 64}
    with backend.open() as memory:
        alice = memory.scope("acme", "alice")
        conv = alice.create_conversation()
        dropped = conv.append("user", [{"type": "text", "text": "look"}, inline])
        image = dropped.parts[1]
        assert isinstance(image, ImagePart)
        assert (image.ref.sha256, image.ref.kept, image.ref.url) == (PNG_SHA, False, None)
        assert MARKER.decode() not in backend.dump()
        kept = conv.append("user", [{"type": "text", "text": "again"}, inline], keep_bytes=True)
        image = conv.message(kept.id).parts[1]
        assert isinstance(image, ImagePart) and image.ref.kept
        with memory.store.read() as tx:
            assert tx.message_blobs("acme", [kept.id, dropped.id]) == {PNG_SHA: PNG}
            assert tx.message_blobs("acme", [dropped.id]) == {}
        exported = alice.export()["data"]
        json.dumps(exported)  # JSON-ready: the bytes as base64 text
        assert [(b["message_id"], b["sha256"], base64.b64decode(b["data"]))
                for b in exported["message_blobs"]] == [(kept.id, PNG_SHA, PNG)]  # fmt: skip
        parts = {m["id"]: m["parts"] for m in exported["messages"]}
        assert PNG_SHA in str(parts[kept.id]) and SHOT not in str(parts)


def test_edit_and_regenerate_take_parts(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    question = conv.append("user", "What is on this page?")
    answer = conv.append("assistant", "A form.")
    edited = conv.edit(question.id, [{"type": "text", "text": "And this one?"}, screenshot()])
    assert edited.parent_id == question.parent_id and isinstance(edited.parts[1], ImagePart)
    conv.append("assistant", "A banner.")
    regenerated = conv.regenerate(
        answer.id, [{"type": "image", "url": SHOT, "width": 512, "height": 512}]
    )
    assert isinstance(conv.message(regenerated.id).parts[0], ImagePart)
    assert conv.message(regenerated.id).content == "[image: image, 512\u00d7512]"


def _delete_message(scope: convmem.Scope, conv: convmem.Conversation, message_id: str) -> None:
    conv.delete_message(message_id)


def _delete_conversation(scope: convmem.Scope, conv: convmem.Conversation, _: str) -> None:
    conv.delete()


def _delete_everything(scope: convmem.Scope, conv: convmem.Conversation, _: str) -> None:
    scope.delete_all()


@pytest.mark.parametrize(
    "delete",
    [_delete_message, _delete_conversation, _delete_everything],
    ids=["message", "conversation", "delete_all"],
)
def test_kept_bytes_are_deleted_with_their_message(backend: Backend, delete: object) -> None:
    assert callable(delete)
    inline = {"type": "image_url", "image_url": {"url": DATA_URL}, "width": 64, "height": 64}
    with backend.open() as memory:
        alice = memory.scope("acme", "alice")
        conv = alice.create_conversation()
        conv.append("user", "first")
        shot = conv.append("user", [{"type": "text", "text": "see"}, inline], keep_bytes=True)
        conv.append("assistant", "seen")
        control = memory.scope("acme", "bob").create_conversation()
        control.append("user", [{"type": "text", "text": "mine"}, inline], keep_bytes=True)
        dump = backend.dump()
        assert dump.count(MARKER.decode()) == 2 or dump.count(MARKER.hex()) == 2
        delete(alice, conv, shot.id)
        dump = backend.dump()
        assert dump.count(MARKER.decode()) + dump.count(MARKER.hex()) == 1  # bob's alone
        with memory.store.read() as tx:
            assert tx.message_blobs("acme", [shot.id]) == {}


def test_captions_and_extracted_text_are_searched_urls_and_ids_are_not(
    alice: convmem.Scope,
) -> None:
    conv = alice.create_conversation()
    conv.append("user", "Something unrelated about walruses.")
    sent = conv.append(
        "user",
        [
            {"type": "text", "text": "What does this mean?"},
            screenshot(),
            {"type": "file", "blob_id": "file-zq77", "name": "limits.pdf",
             "extracted_text": "Throughput ceiling: 500 requests per minute."},
        ],
    )  # fmt: skip
    assert conv.search("quota banner")[0].message.id == sent.id
    assert conv.search("throughput ceiling")[0].message.id == sent.id
    for reference in ("app.example", "zq77"):
        assert sent.id not in {hit.message.id for hit in conv.search(reference)}


KEY = "sk-proj-4f9Qz7LmB2xR8tYp1VwK3nJ6hD0sGcE5aUoI"


@pytest.mark.parametrize(
    "leak",
    [
        {"caption": f"my key {KEY}"},
        {"name": f"{KEY}.png"},
    ],
    ids=["caption", "file name"],
)
def test_a_memory_from_a_message_whose_parts_hold_a_secret_is_refused(
    alice: convmem.Scope, leak: dict[str, str]
) -> None:
    conv = alice.create_conversation()
    clean = conv.append("user", [{"type": "text", "text": "Remember that I prefer aisle seats."},
                                 screenshot()])  # fmt: skip
    assert [n.status for n in clean.notices] == ["saved"]
    leaking = conv.append(
        "user",
        [{"type": "text", "text": "Remember that I prefer window seats."}, screenshot(**leak)],
    )
    assert [n.status for n in leaking.notices] == ["blocked"]
    assert leaking.notices[0].reason == "credential"
    assert [m.text for m in alice.memories.list()] == ["I prefer aisle seats."]


def test_a_caption_is_not_a_request_to_remember(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    shot = screenshot(caption="Remember that I prefer window seats.")
    sent = conv.append("user", [{"type": "text", "text": "Here is the page."}, shot])
    assert sent.notices == () and alice.memories.list() == []

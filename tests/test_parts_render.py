"""Parts rendered in OpenAI chat, Responses and Anthropic shapes; what a format cannot carry is
sent as text, never as a reference the provider would refuse."""

from __future__ import annotations

import base64
from typing import Any

from convmem.content.parts import parse_parts
from convmem.content.parts_render import (
    anthropic_content,
    media_stub,
    openai_content,
    responses_content,
)

SHOT = "https://app.example/u/shot.png"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x01" * 32


def parts(*raw: dict[str, Any], keep: bool = False) -> Any:
    return parse_parts(list(raw), keep_bytes=keep)


def test_image_by_url_in_every_format() -> None:
    p = parts(
        {"type": "text", "text": "What is wrong here?"},
        {"type": "image", "url": SHOT, "width": 1280, "height": 720, "detail": "low"},
    )
    assert openai_content(p.parts, {}) == [
        {"type": "text", "text": "What is wrong here?"},
        {"type": "image_url", "image_url": {"url": SHOT, "detail": "low"}},
    ]
    assert responses_content(p.parts, {})[1] == {
        "type": "input_image",
        "image_url": SHOT,
        "detail": "low",
    }
    assert anthropic_content(p.parts, {})[1] == {
        "type": "image",
        "source": {"type": "url", "url": SHOT},
    }


def test_kept_bytes_go_inline_and_dropped_bytes_become_the_stub() -> None:
    raw = {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
        "width": 1280,
        "height": 720,
        "name": "screenshot.png",
        "caption": "login form with a red error",
    }
    kept = parts(raw, keep=True)
    url = openai_content(kept.parts, kept.blobs)[0]["image_url"]["url"]
    assert url == "data:image/png;base64," + base64.b64encode(PNG).decode()
    source = anthropic_content(kept.parts, kept.blobs)[0]["source"]
    assert source["type"] == "base64" and base64.b64decode(source["data"]) == PNG
    dropped = parts(raw)
    text = openai_content(dropped.parts, {})[0]
    assert text == {
        "type": "text",
        "text": "[image: screenshot.png, 1280\u00d7720]\nlogin form with a red error",
    }


def test_documents_in_every_format() -> None:
    by_id = parts({"type": "file", "blob_id": "file-9", "name": "q3.pdf", "token_estimate": 800})
    assert openai_content(by_id.parts, {}) == [{"type": "file", "file": {"file_id": "file-9"}}]
    assert responses_content(by_id.parts, {}) == [
        {"type": "input_file", "filename": "q3.pdf", "file_id": "file-9"}
    ]
    assert anthropic_content(by_id.parts, {}) == [
        {"type": "document", "source": {"type": "file", "file_id": "file-9"}, "title": "q3.pdf"}
    ]
    with_text = parts({"type": "file", "url": SHOT, "name": "n.txt", "extracted_text": "Hi."})
    assert anthropic_content(with_text.parts, {})[0]["source"] == {
        "type": "text",
        "media_type": "text/plain",
        "data": "Hi.",
    }


def test_stub_names_media_without_bytes() -> None:
    p = parts(
        {"type": "file", "blob_id": "b", "name": "deck.pdf", "page_count": 12, "token_estimate": 9},
        {"type": "audio", "url": SHOT, "name": "memo.m4a", "transcript": "call me"},
    )
    assert media_stub(p.parts[0], "m7") == "[file: deck.pdf, 12 pages, described in message m7]"
    assert media_stub(p.parts[1], "m7") == "[audio: memo.m4a, described in message m7]"


def test_summaries_and_budget_stubs_never_carry_bytes_or_urls() -> None:
    from convmem.content.parts_render import content_text, stub_media

    data = "data:image/png;base64," + base64.b64encode(PNG).decode()
    p = parts(
        {"type": "text", "text": "see"},
        {
            "type": "image_url",
            "image_url": {"url": data},
            "width": 640,
            "height": 480,
            "name": "s.png",
            "caption": "a chart",
        },
        {"type": "image", "url": SHOT, "width": 10, "height": 10},
        keep=True,
    )
    text = content_text(p.parts)
    assert text == "see\n[image: s.png, 640\u00d7480]\na chart\n[image: image, 10\u00d710]"
    assert "base64" not in text and SHOT not in text
    stubbed = stub_media(p.parts, "m2")
    assert [type(x).__name__ for x in stubbed] == ["TextPart"] * 3
    assert openai_content(stubbed, p.blobs)[1]["type"] == "text"

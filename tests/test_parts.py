"""Content parts as OpenAI, the Responses API and Anthropic send them: read, checked, counted."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest

from convmem.content.parts import MAX_INLINE_BYTES, parse_parts, part_tokens
from convmem.content.tokens import TiktokenCounter
from convmem.errors import ContentTooLarge, InvalidMessage
from convmem.model.parts import AudioPart, FilePart, ImagePart, TextPart, part_strings

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
PNG_B64 = base64.b64encode(PNG).decode()
PNG_SHA = hashlib.sha256(PNG).hexdigest()
SHOT = "https://app.example/u/shot.png"


def one(raw: dict[str, Any], **kwargs: Any) -> Any:
    parsed = parse_parts([raw], **kwargs)
    assert len(parsed.parts) == 1
    return parsed.parts[0]


def test_string_is_one_text_part() -> None:
    assert parse_parts("hello").parts == (TextPart("hello"),)


def test_the_same_image_in_every_provider_shape() -> None:
    dims = {"width": 1280, "height": 720}
    shapes = [
        {"type": "image_url", "image_url": {"url": SHOT, "detail": "high"}, **dims},
        {"type": "input_image", "image_url": SHOT, "detail": "high", **dims},
        {"type": "image", "source": {"type": "url", "url": SHOT}, "detail": "high", **dims},
        {"type": "image", "url": SHOT, "detail": "high", **dims},
    ]
    parts = [one(shape) for shape in shapes]
    assert all(isinstance(p, ImagePart) for p in parts)
    assert {(p.ref.url, p.width, p.height, p.detail) for p in parts} == {(SHOT, 1280, 720, "high")}


def test_inline_bytes_are_hashed_and_dropped_unless_kept() -> None:
    data_url = f"data:image/png;base64,{PNG_B64}"
    raw = {"type": "image_url", "image_url": {"url": data_url}, "width": 8, "height": 8}
    dropped = parse_parts([raw])
    image = dropped.parts[0]
    assert isinstance(image, ImagePart)
    assert (image.ref.url, image.ref.sha256, image.ref.media_type) == (None, PNG_SHA, "image/png")
    assert dropped.blobs == {} and not image.ref.kept
    assert PNG_B64 not in repr(image.to_dict())
    kept = parse_parts([raw], keep_bytes=True)
    assert kept.blobs == {PNG_SHA: PNG} and kept.parts[0].ref.kept  # type: ignore[union-attr]
    anthropic = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64},
        "width": 8,
        "height": 8,
    }
    assert one(anthropic).ref.sha256 == PNG_SHA


def test_documents_in_every_shape() -> None:
    pdf = base64.b64encode(b"%PDF-1.7 tiny").decode()
    openai = {
        "type": "file",
        "file": {"file_data": f"data:application/pdf;base64,{pdf}", "filename": "q3.pdf"},
        "token_estimate": 900,
        "page_count": 3,
    }
    responses = {
        "type": "input_file",
        "file_id": "file-abc",
        "filename": "q3.pdf",
        "extracted_text": "Revenue rose.",
    }
    anthropic_text = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "Revenue rose."},
        "title": "q3.txt",
    }
    a, b, c = (one(raw) for raw in (openai, responses, anthropic_text))
    assert isinstance(a, FilePart) and (a.name, a.page_count, a.size_bytes) == ("q3.pdf", 3, 13)
    assert a.ref.media_type == "application/pdf" and a.ref.sha256
    assert isinstance(b, FilePart) and b.ref.blob_id == "file-abc"
    assert isinstance(c, FilePart) and c.extracted_text == "Revenue rose." and c.name == "q3.txt"


def test_audio_reference() -> None:
    wav = base64.b64encode(b"RIFF....WAVE").decode()
    part = one(
        {
            "type": "input_audio",
            "input_audio": {"data": wav, "format": "wav"},
            "transcript": "Call me at noon.",
        }
    )
    assert isinstance(part, AudioPart) and part.ref.media_type == "audio/wav"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"type": "video", "url": SHOT}, "unknown type"),
        ({"type": "image_url", "image_url": {"url": SHOT}}, "width and height"),
        ({"type": "image", "url": SHOT, "width": 10}, "width and height"),
        ({"type": "image", "url": "file:///etc/passwd", "width": 1, "height": 1}, "http"),
        ({"type": "image", "url": SHOT, "width": 1, "height": 1, "detail": "max"}, "detail"),
        ({"type": "file", "url": SHOT, "name": "a.pdf"}, "extracted_text or token_estimate"),
        ({"type": "file", "url": SHOT, "token_estimate": 5}, "name"),
        ({"type": "audio", "url": SHOT}, "transcript or token_estimate"),
        ({"type": "image", "width": 1, "height": 1}, "url or a blob_id"),
        ({"type": "text", "text": ""}, "non-empty"),
        (
            {"type": "image", "source": {"type": "base64", "data": "!!"}, "width": 1, "height": 1},
            "base64",
        ),
    ],
)
def test_bad_parts_are_refused_clearly(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidMessage, match=message):
        parse_parts([raw])


def test_inline_data_above_the_limit_is_refused_before_decoding() -> None:
    big = "A" * ((MAX_INLINE_BYTES // 3 + 10) * 4)
    raw = {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{big}"},
        "width": 1,
        "height": 1,
    }
    with pytest.raises(ContentTooLarge):
        parse_parts([raw])


def test_empty_list_and_non_objects_are_refused() -> None:
    with pytest.raises(InvalidMessage):
        parse_parts([])
    with pytest.raises(InvalidMessage):
        parse_parts(["text"])  # type: ignore[list-item]


def test_every_string_field_reaches_the_policy() -> None:
    image = one(
        {"type": "image", "url": SHOT, "width": 1, "height": 1, "name": "n.png", "caption": "cap"}
    )
    file = one({"type": "file", "blob_id": "b1", "name": "f.pdf", "extracted_text": "ex"})
    audio = one({"type": "audio", "url": SHOT, "name": "a.wav", "transcript": "tr"})
    assert {f for f, _ in part_strings(image)} == {"name", "caption", "url"}
    assert {f for f, _ in part_strings(file)} == {"name", "extracted_text", "blob_id"}
    assert {f for f, _ in part_strings(audio)} == {"name", "transcript", "url"}
    # Every str-typed field of every part class is listed (a new field must be added there).
    for part in (image, file, audio):
        values = {v for _, v in part_strings(part)}
        for name, value in vars(part).items():
            if isinstance(value, str) and name != "detail":
                assert value in values, name


def test_parts_are_counted_by_the_provider_rule() -> None:
    counter = TiktokenCounter("o200k_base")
    image = one({"type": "image", "url": SHOT, "width": 1024, "height": 1024, "detail": "high"})
    assert part_tokens(image, counter.name, counter.count) == 765
    doc = one({"type": "file", "blob_id": "b", "name": "d.pdf", "token_estimate": 1200})
    assert part_tokens(doc, counter.name, counter.count) == 1200
    text_doc = one({"type": "file", "blob_id": "b", "name": "d.txt", "extracted_text": "hello"})
    assert part_tokens(text_doc, counter.name, counter.count) == counter.count("hello")
    assert part_tokens(image, "estimate", counter.count) == 1399  # 1024^2/750 > 765


def test_search_and_policy_see_every_caller_string() -> None:
    from convmem.content.parts import policy_fields
    from convmem.content.parts_render import content_text
    from convmem.memory.policy import check_fields

    key = "sk-proj-4f9Qz7LmB2xR8tYp1VwK3nJ6hD0sGcE5aUoI"
    parsed = parse_parts(
        [
            {"type": "text", "text": "Here is the error"},
            {"type": "image", "url": SHOT, "width": 9, "height": 9, "caption": "red banner"},
            {"type": "file", "blob_id": "b", "name": "notes.txt", "extracted_text": "step 3"},
        ]
    )
    assert content_text(parsed.parts) == (
        "Here is the error\n[image: image, 9\u00d79]\nred banner\n[file: notes.txt]\nstep 3"
    )
    assert SHOT not in content_text(parsed.parts)
    assert check_fields(policy_fields(parsed.parts)).allowed
    secret = f"my key {key}"
    leaking: list[dict[str, Any]] = [
        {"type": "image", "url": SHOT, "width": 9, "height": 9, "caption": secret},
        {"type": "image", "url": SHOT, "width": 9, "height": 9, "name": secret},
        {"type": "file", "blob_id": "b", "name": "n.txt", "extracted_text": secret},
        {"type": "file", "blob_id": secret, "name": "n.txt", "token_estimate": 1},
        {"type": "audio", "url": SHOT, "transcript": secret},
    ]
    for raw in leaking:
        decision = check_fields(policy_fields(parse_parts([raw]).parts))
        assert not decision.allowed, raw
        assert key not in decision.detail

"""Content parts in each provider's request shape, and the stub that stands in for old media.

Media is sent the way the caller stored it: by the caller's URL, by the caller's file id (a
``blob_id``; Anthropic and the Responses API take one, OpenAI chat only for files), or, when
convmem kept the bytes, inline as base64 (``kept`` is looked up in ``blobs`` by sha256). What a
format cannot carry goes as its text — a caption, extracted text, a transcript — or as the stub,
so a request never holds a reference the provider would refuse. That text is what the part was
counted as at write when it cost more than the media (``convmem.content.parts.media_part_tokens``).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from convmem.model.parts import FilePart, ImagePart, MediaRef, Part, TextPart, own_text


def media_stub(part: Part, message_id: str | None = None) -> str:
    """The short label media is named by in text: with ``message_id``, the stub an old image
    is replaced by in a request ("described in message …": the caller's record of it)."""
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, ImagePart):
        label = f"image: {part.name or 'image'}, {part.width}\u00d7{part.height}"
    elif isinstance(part, FilePart):
        pages = f", {part.page_count} pages" if part.page_count else ""
        label = f"file: {part.name}{pages}"
    else:
        label = f"audio: {part.name or 'audio'}"
    if message_id is None:
        return f"[{label}]"
    return f"[{label}, described in message {message_id}]"


def openai_content(parts: Sequence[Part], blobs: Mapping[str, bytes]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, ImagePart) and (url := _url(part.ref, blobs)):
            out.append({"type": "image_url", "image_url": {"url": url, "detail": part.detail}})
        elif isinstance(part, FilePart) and part.ref.blob_id and not part.extracted_text:
            out.append({"type": "file", "file": {"file_id": part.ref.blob_id}})
        else:
            out.append({"type": "text", "text": as_text(part, None)})
    return out


def responses_content(parts: Sequence[Part], blobs: Mapping[str, bytes]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, ImagePart) and (url := _url(part.ref, blobs)):
            out.append({"type": "input_image", "image_url": url, "detail": part.detail})
        elif isinstance(part, ImagePart) and part.ref.blob_id:
            out.append({"type": "input_image", "file_id": part.ref.blob_id, "detail": part.detail})
        elif isinstance(part, FilePart) and not part.extracted_text and _has_ref(part.ref):
            ref = part.ref
            where = {"file_id": ref.blob_id} if ref.blob_id else {"file_url": ref.url}
            out.append({"type": "input_file", "filename": part.name, **where})
        else:
            out.append({"type": "input_text", "text": as_text(part, None)})
    return out


def anthropic_content(parts: Sequence[Part], blobs: Mapping[str, bytes]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in parts:
        source = _anthropic_source(part, blobs) if not isinstance(part, TextPart) else None
        if isinstance(part, ImagePart) and source:
            out.append({"type": "image", "source": source})
        elif isinstance(part, FilePart) and part.extracted_text:
            text_source = {"type": "text", "media_type": "text/plain", "data": part.extracted_text}
            out.append({"type": "document", "source": text_source, "title": part.name})
        elif isinstance(part, FilePart) and source:
            out.append({"type": "document", "source": source, "title": part.name})
        else:
            out.append({"type": "text", "text": as_text(part, None)})
    return out


def _anthropic_source(part: Part, blobs: Mapping[str, bytes]) -> dict[str, Any] | None:
    assert not isinstance(part, TextPart)
    ref = part.ref
    if ref.url:
        return {"type": "url", "url": ref.url}
    if ref.blob_id:
        return {"type": "file", "file_id": ref.blob_id}
    data = _kept(ref, blobs)
    if data is not None and ref.media_type:
        encoded = base64.b64encode(data).decode("ascii")
        return {"type": "base64", "media_type": ref.media_type, "data": encoded}
    return None


def _url(ref: MediaRef, blobs: Mapping[str, bytes]) -> str | None:
    if ref.url:
        return ref.url
    data = _kept(ref, blobs)
    if data is None or not ref.media_type:
        return None
    return f"data:{ref.media_type};base64,{base64.b64encode(data).decode('ascii')}"


def _kept(ref: MediaRef, blobs: Mapping[str, bytes]) -> bytes | None:
    if not ref.kept or ref.sha256 is None:
        return None
    return blobs.get(ref.sha256)


def _has_ref(ref: MediaRef) -> bool:
    return bool(ref.url or ref.blob_id)


def as_text(part: Part, message_id: str | None) -> str:
    """A part as text: its own text when it has one (caption, extracted text, transcript) after
    the stub that names it, else the stub alone."""
    if isinstance(part, TextPart):
        return part.text
    stub = media_stub(part, message_id)
    own = own_text(part)
    return f"{stub}\n{own}" if own else stub


def content_text(parts: Sequence[Part]) -> str:
    """A message with parts as text (its ``content``): text parts verbatim, media by its label
    and the caller's caption, extracted text or transcript, never bytes or URLs. What search
    indexes and recalls, summaries read, and formats send where they cannot carry the media."""
    return "\n".join(as_text(part, None) for part in parts)


def text_parts(parts: Sequence[Part]) -> str:
    """Only what the user typed: the text parts (a caption is the caller's, not a request)."""
    return "\n".join(part.text for part in parts if isinstance(part, TextPart))


def stub_media(parts: tuple[Part, ...], message_id: str) -> tuple[Part, ...]:
    """The message with every media part replaced by its stub (budgeting: old images go first,
    before whole turns)."""
    return tuple(
        part if isinstance(part, TextPart) else TextPart(media_stub(part, message_id))
        for part in parts
    )

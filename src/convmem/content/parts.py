"""Reading content parts as callers send them, and what they cost.

Accepted shapes, one list per message (a plain string is one text part):

* OpenAI chat: ``text``; ``image_url`` {url, detail}; ``input_audio`` {data, format};
  ``file`` {file_id | file_data, filename}.
* OpenAI Responses: ``input_text``; ``input_image`` {image_url | file_id, detail};
  ``input_file`` {file_id | file_url | file_data, filename}.
* Anthropic: ``text``; ``image`` / ``document`` with ``source`` {type base64 | url | file | text}.
* convmem's own (what ``Part.to_dict`` writes): ``image`` / ``file`` / ``audio`` with ``url`` or
  ``blob_id`` beside the fields below.

convmem fields may sit beside any shape: ``width``, ``height`` (an image needs both: counting
needs them), ``name``, ``caption``, ``page_count``, ``size_bytes``, ``extracted_text``,
``transcript``, ``token_estimate``, ``sha256``. Inline bytes (data URLs, base64) are hashed and
dropped, or returned to be kept when the caller asks; above ``MAX_INLINE_BYTES`` they are refused.
Every error is an ``InvalidMessage`` raised before anything is written.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from convmem.content.media_tokens import check_dimensions, image_tokens, provider_of
from convmem.content.parts_render import as_text, content_text, media_stub
from convmem.content.tokens import TokenCounter, message_tokens
from convmem.errors import ContentTooLarge, InvalidMessage
from convmem.model.messages import NewMessage, ToolCall
from convmem.model.parts import (
    AudioPart,
    FilePart,
    ImageDetail,
    ImagePart,
    MediaRef,
    Part,
    TextPart,
    part_strings,
)

# Anthropic's per-image API limit; OpenAI's is larger. Inline media above it is refused.
MAX_INLINE_BYTES = 5 * 1024 * 1024
MAX_PARTS = 100
# all the bytes one message may ask convmem to keep
MAX_KEPT_BYTES = 4 * MAX_INLINE_BYTES
_SHA256 = re.compile(r"[0-9a-f]{64}")
_DATA_URL = re.compile(r"data:([\w.+-]+/[\w.+-]+)?(?:;[\w=.+-]+)*;base64,(.*)", re.S | re.I)
_DETAILS: tuple[ImageDetail, ...] = ("low", "high", "auto")


@dataclass(frozen=True)
class ParsedParts:
    """A message's parts, and the inline bytes the caller asked to keep (by sha256)."""

    parts: tuple[Part, ...]
    blobs: Mapping[str, bytes]


Content = str | Sequence[Mapping[str, Any] | Part]


def parse_parts(content: Content, *, keep_bytes: bool = False) -> ParsedParts:
    if isinstance(content, str):
        return ParsedParts((TextPart(content),), {})
    if not isinstance(content, Sequence) or not content:
        raise InvalidMessage("message content must be a string or a non-empty list of parts")
    if len(content) > MAX_PARTS:
        raise InvalidMessage(f"a message holds at most {MAX_PARTS} parts")
    parts: list[Part] = []
    blobs: dict[str, bytes] = {}
    for index, raw in enumerate(content):
        if isinstance(raw, TextPart | ImagePart | FilePart | AudioPart):
            raw = raw.to_dict()  # a part value is read like the dict it writes
        if not isinstance(raw, Mapping):
            raise InvalidMessage(f"part {index} must be an object with a 'type'")
        part, data = _parse_one(raw, index)
        if data is not None and keep_bytes and not isinstance(part, TextPart):
            blobs[_sha(data)] = data
            part = _mark_kept(part)
        parts.append(part)
    return ParsedParts(tuple(parts), blobs)


def read_content(
    content: object, *, keep_bytes: bool, max_bytes: int
) -> tuple[str, tuple[Part, ...], Mapping[str, bytes]]:
    """A message's content as the tree stores it: its text (a string is its own), its parts
    (none for a string) and the inline bytes to keep. The parts' stored form is held to the
    content limit like text (extracted text counts), the kept bytes to ``MAX_KEPT_BYTES``."""
    if isinstance(content, str):
        return content, (), {}
    if keep_bytes not in (True, False):
        raise InvalidMessage("keep_bytes must be true or false")
    parsed = parse_parts(content, keep_bytes=keep_bytes)  # type: ignore[arg-type]
    stored = json.dumps([part.to_dict() for part in parsed.parts], ensure_ascii=False)
    try:
        size = len(stored.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidMessage("message parts are not valid unicode (lone surrogates)") from exc
    if size > max_bytes:
        raise ContentTooLarge(size, max_bytes)
    kept = sum(len(data) for data in parsed.blobs.values())
    if kept > MAX_KEPT_BYTES:
        raise ContentTooLarge(kept, MAX_KEPT_BYTES)
    return content_text(parsed.parts), parsed.parts, parsed.blobs


def part_tokens(part: Part, counter_name: str, count_text: Callable[[str], int]) -> int:
    """What ``part`` costs in a request counted by ``counter_name``; ``count_text`` counts text."""
    if isinstance(part, TextPart):
        return count_text(part.text)
    if isinstance(part, ImagePart):
        return image_tokens(part.width, part.height, part.detail, provider_of(counter_name))
    if isinstance(part, FilePart):
        if part.extracted_text:
            return count_text(part.extracted_text)
        assert part.token_estimate is not None  # parse_parts requires one or the other
        return part.token_estimate
    if part.transcript:
        return count_text(part.transcript)
    assert part.token_estimate is not None
    return part.token_estimate


def sends_parts(role: str, parts: Sequence[Part]) -> bool:
    """Whether a message goes to a provider as a list of parts. Only user turns carry media in
    every format (OpenAI chat takes text alone from the other roles, Anthropic's assistant turns
    hold no images), so any other message goes as its text (``Message.content``)."""
    return role == "user" and bool(parts)


def media_part_tokens(part: Part, counter: TokenCounter) -> int:
    """What a media part of a user turn costs in ``counter``'s request: its provider charge or,
    when the format cannot carry it and sends its label and caption instead, that text;
    the larger, so one stored count bounds every format."""
    as_sent = part_tokens(part, counter.name, counter.count)
    return max(as_sent, counter.count(as_text(part, None)))


def message_cost(
    counter: TokenCounter,
    role: str,
    content: str,
    parts: Sequence[Part] = (),
    tool_calls: Sequence[ToolCall] = (),
    tool_call_id: str | None = None,
) -> tuple[int, int]:
    """A message's cost in a request counted by ``counter`` (framing included) and the media's
    share of it; counted once at write and stored."""
    if not sends_parts(role, parts):
        return message_tokens(counter, role, content, tool_calls, tool_call_id), 0
    media = sum(
        media_part_tokens(part, counter) for part in parts if not isinstance(part, TextPart)
    )
    texts = sum(counter.count(part.text) for part in parts if isinstance(part, TextPart))
    # the framing of an empty message, as message_tokens counts it
    framing = message_tokens(counter, role, "")
    return framing + texts + media, media


def message_costs(
    counter: TokenCounter, messages: Sequence[NewMessage]
) -> tuple[list[int], dict[int, int]]:
    """``message_cost`` of each message, for many at once (an import): the totals, and the
    media's share by the position of each message that has one. A message of text alone costs
    its role's framing, worked out once per role, plus its text."""
    count = counter.count
    framing: dict[str, int] = {}
    totals: list[int] = []
    media: dict[int, int] = {}
    for m in messages:
        if m.tool_calls or m.tool_call_id is not None or sends_parts(m.role, m.parts):
            total, share = message_cost(
                counter, m.role, m.content, m.parts, m.tool_calls, m.tool_call_id
            )
            if share:
                media[len(totals)] = share
            totals.append(total)
            continue
        base = framing.get(m.role)
        if base is None:  # message_tokens is the framing plus the text's count (none for "")
            base = framing[m.role] = message_tokens(counter, m.role, "")
        totals.append(base + count(m.content))
    return totals, media


def stubbed_cost(counter: TokenCounter, parts: Sequence[Part], message_id: str) -> int:
    """What the media parts of a user turn cost once each is replaced by its stub."""
    return sum(
        counter.count(media_stub(part, message_id))
        for part in parts
        if not isinstance(part, TextPart)
    )


def policy_fields(parts: Sequence[Part]) -> dict[str, str]:
    """Every caller string of every part, named for ``memory.policy.check_fields``: a caption,
    a file name or a blob id holding a secret is refused like text holding one."""
    return {
        f"part {index} {field}": value
        for index, part in enumerate(parts)
        for field, value in part_strings(part)
    }


def _parse_one(raw: Mapping[str, Any], index: int) -> tuple[Part, bytes | None]:
    kind = raw.get("type")
    where = f"part {index}"
    if kind in ("text", "input_text"):
        return TextPart(_text(raw.get("text"), f"{where} text", required=True) or ""), None
    if kind in ("image_url", "input_image", "image"):
        ref, data = _image_ref(raw, where)
        return _image(raw, ref, where), data
    if kind in ("file", "input_file", "document"):
        ref, data, text = _file_ref(raw, where)
        return _file(raw, ref, data, text, where), data
    if kind in ("audio", "input_audio"):
        ref, data = _audio_ref(raw, where)
        return _audio(raw, ref, where), data
    raise InvalidMessage(
        f"{where} has unknown type {str(kind)[:40]!r}; use text, image, file or audio "
        "(or the OpenAI / Anthropic names for them)"
    )


def _image_ref(raw: Mapping[str, Any], where: str) -> tuple[MediaRef, bytes | None]:
    if isinstance(raw.get("image_url"), Mapping):  # OpenAI chat
        return _from_url(raw["image_url"].get("url"), raw, where)
    if isinstance(raw.get("image_url"), str):  # Responses
        return _from_url(raw["image_url"], raw, where)
    if isinstance(raw.get("source"), Mapping):  # Anthropic
        return _from_source(raw["source"], raw, where)
    return _native_ref(raw, where)


def _file_ref(raw: Mapping[str, Any], where: str) -> tuple[MediaRef, bytes | None, str | None]:
    inner = raw.get("file")
    if isinstance(inner, Mapping):  # OpenAI chat
        if inner.get("file_data") is not None:
            ref, data = _from_url(inner["file_data"], raw, where)
            return ref, data, None
        return _blob(inner.get("file_id"), raw, where), None, None
    if isinstance(raw.get("source"), Mapping):  # Anthropic document
        source = raw["source"]
        if source.get("type") == "text":
            text = _text(source.get("data"), f"{where} document text", required=True)
            return MediaRef(media_type=_media_type(source, "text/plain")), None, text
        ref, data = _from_source(source, raw, where)
        return ref, data, None
    if raw.get("file_data") is not None:  # Responses
        ref, data = _from_url(raw["file_data"], raw, where)
        return ref, data, None
    if raw.get("file_url") is not None:
        ref, _ = _from_url(raw["file_url"], raw, where)
        return ref, None, None
    if raw.get("file_id") is not None:
        return _blob(raw["file_id"], raw, where), None, None
    ref, data = _native_ref(raw, where)
    return ref, data, None


def _audio_ref(raw: Mapping[str, Any], where: str) -> tuple[MediaRef, bytes | None]:
    inner = raw.get("input_audio")
    if isinstance(inner, Mapping):  # OpenAI chat: base64 data and a format (wav, mp3)
        data = _b64(inner.get("data"), where)
        fmt = _text(inner.get("format"), f"{where} format") or "wav"
        return MediaRef(media_type=f"audio/{fmt}", sha256=_sha(data)), data
    return _native_ref(raw, where)


def _from_source(
    source: Mapping[str, Any], raw: Mapping[str, Any], where: str
) -> tuple[MediaRef, bytes | None]:
    kind = source.get("type")
    if kind == "base64":
        data = _b64(source.get("data"), where)
        return MediaRef(media_type=_media_type(source), sha256=_sha(data)), data
    if kind == "url":
        return _from_url(source.get("url"), raw, where)
    if kind == "file":
        return _blob(source.get("file_id"), raw, where), None
    raise InvalidMessage(f"{where} source type must be base64, url, file or text")


def _from_url(url: object, raw: Mapping[str, Any], where: str) -> tuple[MediaRef, bytes | None]:
    text = _text(url, f"{where} url", required=True) or ""
    if text[:5].lower() == "data:":
        match = _DATA_URL.match(text)
        if match is None:
            raise InvalidMessage(f"{where} is a data URL that is not base64")
        data = _b64(match.group(2), where)
        return MediaRef(media_type=(match.group(1) or "").lower() or None, sha256=_sha(data)), data
    if not re.match(r"https?://", text, re.I):
        raise InvalidMessage(f"{where} url must be http(s) or a base64 data URL")
    return MediaRef(url=text, media_type=_media_type(raw), sha256=_given_sha(raw, where)), None


def _native_ref(raw: Mapping[str, Any], where: str) -> tuple[MediaRef, bytes | None]:
    if raw.get("url") is not None:
        return _from_url(raw["url"], raw, where)
    if raw.get("blob_id") is not None:
        return _blob(raw["blob_id"], raw, where), None
    raise InvalidMessage(f"{where} needs a url or a blob_id (or inline data)")


def _blob(blob_id: object, raw: Mapping[str, Any], where: str) -> MediaRef:
    value = _text(blob_id, f"{where} blob id", required=True)
    return MediaRef(blob_id=value, media_type=_media_type(raw), sha256=_given_sha(raw, where))


def _image(raw: Mapping[str, Any], ref: MediaRef, where: str) -> ImagePart:
    if raw.get("width") is None or raw.get("height") is None:
        raise InvalidMessage(f"{where} is an image without width and height; counting needs both")
    width, height = check_dimensions(raw["width"], raw["height"])
    inner = raw.get("image_url")
    detail = inner.get("detail") if isinstance(inner, Mapping) else raw.get("detail")
    if detail is None:
        detail = "auto"
    if detail not in _DETAILS:
        raise InvalidMessage(f"{where} detail must be low, high or auto")
    return ImagePart(
        ref=ref,
        width=width,
        height=height,
        detail=detail,
        name=_text(raw.get("name"), f"{where} name"),
        caption=_text(raw.get("caption"), f"{where} caption"),
    )


def _file(
    raw: Mapping[str, Any], ref: MediaRef, data: bytes | None, text: str | None, where: str
) -> FilePart:
    inner = raw.get("file")
    name = raw.get("name") or raw.get("filename") or raw.get("title")
    if name is None and isinstance(inner, Mapping):
        name = inner.get("filename")
    extracted = text or _text(raw.get("extracted_text"), f"{where} extracted text")
    estimate = _count(raw.get("token_estimate"), f"{where} token_estimate")
    if not extracted and estimate is None:
        raise InvalidMessage(
            f"{where} is a file without extracted_text or token_estimate; counting needs one"
        )
    size = _count(raw.get("size_bytes"), f"{where} size_bytes")
    return FilePart(
        ref=ref,
        name=_text(name, f"{where} name", required=True) or "",
        size_bytes=len(data) if data is not None and size is None else size,
        page_count=_count(raw.get("page_count"), f"{where} page_count"),
        extracted_text=extracted,
        token_estimate=estimate,
    )


def _audio(raw: Mapping[str, Any], ref: MediaRef, where: str) -> AudioPart:
    transcript = _text(raw.get("transcript"), f"{where} transcript")
    estimate = _count(raw.get("token_estimate"), f"{where} token_estimate")
    if not transcript and estimate is None:
        raise InvalidMessage(
            f"{where} is audio without transcript or token_estimate; counting needs one"
        )
    duration = raw.get("duration_seconds")
    if duration is not None and (
        isinstance(duration, bool)
        or not isinstance(duration, int | float)
        or not math.isfinite(duration)
        or duration < 0
    ):
        raise InvalidMessage(f"{where} duration_seconds must be a non-negative number")
    return AudioPart(
        ref=ref,
        name=_text(raw.get("name"), f"{where} name"),
        duration_seconds=None if duration is None else float(duration),
        transcript=transcript,
        token_estimate=estimate,
    )


def _mark_kept(part: Part) -> Part:
    assert not isinstance(part, TextPart)
    return replace(part, ref=replace(part.ref, kept=True))


def _b64(value: object, where: str) -> bytes:
    if not isinstance(value, str):
        raise InvalidMessage(f"{where} inline data must be base64 text")
    # Refuse before decoding: base64 is 4 characters per 3 bytes.
    if len(value) > (MAX_INLINE_BYTES + 2) // 3 * 4 + 4:
        raise ContentTooLarge(len(value) * 3 // 4, MAX_INLINE_BYTES)
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidMessage(f"{where} inline data is not valid base64") from exc
    if len(data) > MAX_INLINE_BYTES:
        raise ContentTooLarge(len(data), MAX_INLINE_BYTES)
    return data


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _given_sha(raw: Mapping[str, Any], where: str) -> str | None:
    value = raw.get("sha256")
    if value is None:
        return None
    if not isinstance(value, str) or not _SHA256.fullmatch(value):
        raise InvalidMessage(f"{where} sha256 must be 64 lower-case hex digits")
    return value


def _media_type(raw: Mapping[str, Any], default: str | None = None) -> str | None:
    value = raw.get("media_type", default)
    if value is None:
        return None
    if not isinstance(value, str) or not re.fullmatch(r"[\w.+-]+/[\w.+-]+", value):
        raise InvalidMessage("media_type must look like type/subtype")
    return value.lower()


def _text(value: object, what: str, *, required: bool = False) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        raise InvalidMessage(f"{what} must be a non-empty string")
    if "\x00" in value:
        raise InvalidMessage(f"{what} holds a NUL character")
    return value


def _count(value: object, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2**31 - 1:
        raise InvalidMessage(f"{what} must be a non-negative integer")
    return value

"""Content parts: what a message holds when it is more than one string.

A part keeps a *reference* to media (a URL the caller serves, or the id of a blob the caller
stores), never the bytes themselves unless the caller asked convmem to keep them; with the
reference go what counting, rendering and display need: media type, dimensions or size, a
content hash, and the caller's own caption or extracted text (the only parts of media that are
searched and summarised).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

ImageDetail = Literal["low", "high", "auto"]


@dataclass(frozen=True)
class TextPart:
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class MediaRef:
    """Where media lives: ``url`` (the caller's http(s) URL) or ``blob_id`` (a key in the caller's
    own storage). Media sent inline (a data URL, base64) has neither unless the caller asked
    convmem to keep the bytes: then only ``sha256`` names it, and ``kept`` says the bytes are in
    convmem's blob table under that hash."""

    url: str | None = None
    blob_id: str | None = None
    media_type: str | None = None
    sha256: str | None = None
    kept: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            key: value
            for key, value in (
                ("url", self.url),
                ("blob_id", self.blob_id),
                ("media_type", self.media_type),
                ("sha256", self.sha256),
            )
            if value is not None
        }
        if self.kept:
            out["kept"] = True
        return out


@dataclass(frozen=True)
class ImagePart:
    ref: MediaRef
    width: int
    height: int
    detail: ImageDetail = "auto"
    name: str | None = None
    caption: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "image", **self.ref.to_dict()}
        out.update(width=self.width, height=self.height, detail=self.detail)
        _put_optional(out, name=self.name, caption=self.caption)
        return out


@dataclass(frozen=True)
class FilePart:
    """A document or other file. Counted by its extracted text when the caller supplies it, else
    by ``token_estimate`` (the caller's stated estimate); one of them is required."""

    ref: MediaRef
    name: str
    size_bytes: int | None = None
    page_count: int | None = None
    extracted_text: str | None = None
    token_estimate: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "file", **self.ref.to_dict(), "name": self.name}
        _put_optional(
            out,
            size_bytes=self.size_bytes,
            page_count=self.page_count,
            extracted_text=self.extracted_text,
            token_estimate=self.token_estimate,
        )
        return out


@dataclass(frozen=True)
class AudioPart:
    """An audio clip by reference; counted by the caller's transcript or stated estimate."""

    ref: MediaRef
    name: str | None = None
    duration_seconds: float | None = None
    transcript: str | None = None
    token_estimate: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "audio", **self.ref.to_dict()}
        _put_optional(
            out,
            name=self.name,
            duration_seconds=self.duration_seconds,
            transcript=self.transcript,
            token_estimate=self.token_estimate,
        )
        return out


Part = TextPart | ImagePart | FilePart | AudioPart


def part_strings(part: Part) -> list[tuple[str, str]]:
    """Every caller-supplied string of a part, as (field, value): what the never-store policy
    must check. A new string field on a part belongs here, or it would skip the policy."""
    if isinstance(part, TextPart):
        fields: list[tuple[str, str | None]] = [("text", part.text)]
    elif isinstance(part, ImagePart):
        fields = [("name", part.name), ("caption", part.caption)]
    elif isinstance(part, FilePart):
        fields = [("name", part.name), ("extracted_text", part.extracted_text)]
    else:
        fields = [("name", part.name), ("transcript", part.transcript)]
    ref = part.ref if not isinstance(part, TextPart) else None
    if ref is not None:
        # A URL's path or query and a blob id are caller text too (a file name, a signed token).
        fields += [("url", ref.url), ("blob_id", ref.blob_id)]
    return [(name, value) for name, value in fields if value]


def own_text(part: Part) -> str:
    """A part's own text: a text part's, or the caller's caption, extracted text or transcript
    of media (never bytes or URLs)."""
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, ImagePart):
        return part.caption or ""
    if isinstance(part, FilePart):
        return part.extracted_text or ""
    return part.transcript or ""


def _put_optional(out: dict[str, Any], **values: Any) -> None:
    out.update({key: value for key, value in values.items() if value is not None})


def part_from_dict(value: dict[str, Any]) -> Part:
    """A stored part back (what ``to_dict`` wrote; the store holds only checked parts)."""
    kind = value["type"]
    if kind == "text":
        return TextPart(value["text"])
    ref = MediaRef(
        url=value.get("url"),
        blob_id=value.get("blob_id"),
        media_type=value.get("media_type"),
        sha256=value.get("sha256"),
        kept=bool(value.get("kept", False)),
    )
    if kind == "image":
        return ImagePart(
            ref, value["width"], value["height"], value.get("detail", "auto"),
            value.get("name"), value.get("caption"),
        )  # fmt: skip
    if kind == "file":
        return FilePart(
            ref, value["name"], value.get("size_bytes"), value.get("page_count"),
            value.get("extracted_text"), value.get("token_estimate"),
        )  # fmt: skip
    return AudioPart(
        ref, value.get("name"), value.get("duration_seconds"), value.get("transcript"),
        value.get("token_estimate"),
    )  # fmt: skip

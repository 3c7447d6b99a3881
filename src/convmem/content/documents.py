"""Reading the retrieved documents a caller sends with a request into ``Document`` values.

A document arrives as a ``Document`` or as a mapping (the shape the HTTP API and MCP take):
``id``, ``text`` — or ``content``, a string or a list of content parts as messages take them
(``convmem.content.parts``: text parts verbatim, media by its label and its caption or extracted
text) — and optionally ``title``, ``source``, ``url``, ``date`` (ISO 8601) and ``score``. The
whole list is checked before anything is read: a bad document refuses the request, with an
``InvalidDocument`` naming its position and field, never its text.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from convmem.content.parts import parse_parts
from convmem.content.parts_render import content_text
from convmem.errors import InvalidDocument, InvalidInput
from convmem.model.documents import Document

# Enough for any retrieval stage's top-k; a bound on what one request asks convmem to rank.
MAX_DOCUMENTS = 200
_FIELDS = frozenset({"id", "text", "content", "title", "source", "url", "date", "score"})


def read_documents(items: object, *, max_bytes: int) -> tuple[Document, ...]:
    """``items`` as documents, each id once; each text at most ``max_bytes`` of UTF-8."""
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Sequence):
        raise InvalidDocument("documents must be a list of documents")
    if len(items) > MAX_DOCUMENTS:
        raise InvalidDocument(f"a request carries at most {MAX_DOCUMENTS} documents")
    documents: list[Document] = []
    seen: set[str] = set()
    for position, item in enumerate(items):
        try:
            document = _document(item)
            _check_size(document, max_bytes)
        except InvalidInput as exc:
            raise InvalidDocument(f"documents[{position}]: {exc}") from exc
        if document.id in seen:
            raise InvalidDocument(f"documents[{position}]: the id of an earlier document")
        seen.add(document.id)
        documents.append(document)
    return tuple(documents)


def _document(item: object) -> Document:
    if isinstance(item, Document):
        return item
    if not isinstance(item, Mapping):
        raise InvalidDocument("a document is a Document or an object with an id and text")
    unknown = sorted(str(key) for key in item if key not in _FIELDS)
    if unknown:
        raise InvalidDocument(f"unknown fields {', '.join(unknown)}")
    if ("text" in item) == ("content" in item):
        raise InvalidDocument("a document has either text or content")
    raw_id = item.get("id")
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        raw_id = str(raw_id)  # a numeric id from a search engine's JSON is the same key
    return Document(
        id=raw_id,  # type: ignore[arg-type]  # checked by Document
        text=_text(item["text"]) if "text" in item else _content(item["content"]),
        title=item.get("title"),
        source=item.get("source"),
        url=item.get("url"),
        date=_date(item.get("date")),
        score=item.get("score"),
    )


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidDocument("a document's text must be a string")
    return value


def _content(value: object) -> str:
    """A document's content parts as the text the request carries."""
    if isinstance(value, str):
        return value
    parsed = parse_parts(value)  # type: ignore[arg-type]  # parse_parts checks the shape
    return content_text(parsed.parts)


def _date(value: Any) -> dt.date | None:
    if value is None or isinstance(value, dt.date):
        return value
    if not isinstance(value, str):
        raise InvalidDocument("a document's date is an ISO 8601 date or date-time")
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        pass
    try:
        return dt.datetime.fromisoformat(value)
    except ValueError as exc:
        raise InvalidDocument("a document's date is an ISO 8601 date or date-time") from exc


def _check_size(document: Document, max_bytes: int) -> None:
    try:
        size = len(document.text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidDocument("a document's text is not valid unicode (lone surrogates)") from exc
    if size > max_bytes:
        raise InvalidDocument(f"a document's text is {size} bytes; the limit is {max_bytes}")
    for label in (document.title, document.source, document.url):
        if label is not None:
            try:
                label.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise InvalidDocument("a document's label is not valid unicode") from exc

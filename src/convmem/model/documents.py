"""A retrieved document: shared reference material an application found for one request.

Documents ride in the request's documents section (``assemble(documents=[...])``) and nowhere
else: convmem never stores them (DESIGN.md principle 9: content from retrieved documents is
untrusted and must not become memory). A document is checked when it is made, so a request with
a bad one is refused whole, before anything is read; errors name the field, never the text.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from convmem.errors import InvalidDocument

# A citation key is ``[doc:ID]``: the id is what a model copies into its answer and the
# application looks up again, so it is one run of letters, digits and the punctuation ids from
# search engines and vector stores use (uuids, paths, "handbook.md#3", "kb:12"), with no space,
# bracket, quote or angle bracket that would end the key or read as markup.
_DOCUMENT_ID = re.compile(r"\w[\w.:/#@+=~-]*")
MAX_DOCUMENT_ID_CHARS = 128
# labels (title, source) are shown in full beside every document: a line, not a page
MAX_LABEL_CHARS = 500
MAX_URL_CHARS = 2048


@dataclass(frozen=True)
class Document:
    """One retrieved document. ``id`` is its citation key (``[doc:ID]`` in the request);
    ``text`` what the model reads; ``title`` and ``source`` label it; ``url`` and ``date`` (of
    publication or last change) are shown beside it; ``score`` is the caller's relevance (higher
    is better): documents with one are ordered by it, the others by relevance to the message."""

    id: str
    text: str
    title: str | None = None
    source: str | None = None
    url: str | None = None
    date: dt.date | None = None
    score: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise InvalidDocument("a document needs an id (a non-empty string)")
        if len(self.id) > MAX_DOCUMENT_ID_CHARS or not _DOCUMENT_ID.fullmatch(self.id):
            raise InvalidDocument(
                f"a document id is 1 to {MAX_DOCUMENT_ID_CHARS} letters, digits and . : / # @ + "
                "= ~ - _ without spaces, not starting with punctuation (its citation key is "
                "[doc:ID])"
            )
        if not isinstance(self.text, str) or not self.text.strip():
            raise InvalidDocument("a document needs text")
        if "\x00" in self.text:
            raise InvalidDocument("a document's text must not contain NUL characters")
        for name in ("title", "source"):
            value = getattr(self, name)
            if value is None:
                continue
            if not isinstance(value, str) or "\x00" in value:
                raise InvalidDocument(f"a document's {name} must be a string without NUL")
            if len(value) > MAX_LABEL_CHARS:
                raise InvalidDocument(f"a document's {name} is over {MAX_LABEL_CHARS} characters")
        if self.url is not None:
            _check_url(self.url)
        if self.date is not None and not isinstance(self.date, dt.date):
            raise InvalidDocument("a document's date must be a date or a datetime")
        if self.score is not None and (
            isinstance(self.score, bool)
            or not isinstance(self.score, int | float)
            or not math.isfinite(self.score)
        ):
            raise InvalidDocument("a document's score must be a finite number")

    @property
    def citation(self) -> str:
        """The key a model cites the document by: ``[doc:ID]``."""
        return f"[doc:{self.id}]"

    @property
    def day(self) -> str | None:
        """The date as shown in the request (ISO, the day only)."""
        if self.date is None:
            return None
        day = self.date.date() if isinstance(self.date, dt.datetime) else self.date
        return day.isoformat()


def _check_url(url: object) -> None:
    if not isinstance(url, str) or not url or len(url) > MAX_URL_CHARS:
        raise InvalidDocument(f"a document's url must be a string of 1 to {MAX_URL_CHARS} chars")
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        raise InvalidDocument("a document's url must not contain spaces or control characters")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise InvalidDocument("a document's url is not a URL") from exc
    if not parts.scheme or not (parts.netloc or parts.path):
        raise InvalidDocument("a document's url needs a scheme (https://…, file:…)")

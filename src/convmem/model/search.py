"""Search results."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from convmem.model.messages import Message


@dataclass(frozen=True)
class MessageHit:
    """A ranked turn of a conversation: the message, its fused score, and which retrievers found
    it (``lexical``, ``expansion`` — lexical with the query's terms widened to related words of the
    conversation — and ``vector``)."""

    message: Message
    score: float
    retrievers: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "message": self.message.to_dict(),
            "score": self.score,
            "retrievers": list(self.retrievers),
        }


T = TypeVar("T")


class Ranked(list[T]):
    """A search's ranked hits (a list), with what it could not rank by meaning: ``unembedded``,
    how many of its candidates had no vector yet (written while the embedder was busy or down:
    ranked by words only until the background embedding fills them), and ``degraded``, the
    parts the search went without (``"embedder: timeout 2000 ms"``), named as assembly's report
    names them."""

    def __init__(
        self, hits: Iterable[T] = (), *, unembedded: int = 0, degraded: Sequence[str] = ()
    ) -> None:
        super().__init__(hits)
        self.unembedded = unembedded
        self.degraded: tuple[str, ...] = tuple(degraded)

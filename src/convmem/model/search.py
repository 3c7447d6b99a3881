"""Search results."""

from __future__ import annotations

from dataclasses import dataclass

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

"""Entity memory values: the people, places and things a user's conversations mention, and what
was said about each. Derived data, like summaries: rebuilt from messages, deleted with them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

EntityType = Literal["person", "animal", "place", "organisation", "project", "work", "thing"]
ENTITY_TYPES: tuple[str, ...] = get_args(EntityType)
# the role of the turn a fact was said in: the user's own words, or the assistant's
FactSpeaker = Literal["user", "assistant"]
# a fact is a proposal until the user confirms it; only then may another conversation recall
# it (unless the tenant's policy recalls proposals too: see ``TenantPolicy``)
FactStatus = Literal["proposed", "confirmed"]
FACT_STATUSES: tuple[str, ...] = get_args(FactStatus)


@dataclass(frozen=True)
class EntityFact:
    """One statement a message made about an entity: the sentence that mentions it, with who
    said it — the turn's role, and the participant's name when the turn carried one (a
    multi-party chat: ``metadata["name"]``) — and whether the user confirmed it."""

    id: str
    entity_id: str
    text: str
    message_id: str
    conversation_id: str
    said_at: datetime  # the source message's time
    confidence: float  # how sure the extractor was that the sentence is about the entity
    extractor: str
    speaker: FactSpeaker
    speaker_name: str | None = None
    status: FactStatus = "proposed"

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["said_at"] = self.said_at.isoformat()
        return out


@dataclass(frozen=True)
class Entity:
    """A person, place or thing with its names. First and last mention and the count come from
    its facts (one per mentioning sentence)."""

    id: str
    scope: str  # "user", or "project:<id>" for a project conversation's entities
    name: str
    type: EntityType
    aliases: tuple[str, ...]  # other names it goes by (the canonical name not repeated)
    first_mention: datetime
    last_mention: datetime
    mention_count: int
    facts: tuple[EntityFact, ...] = field(default=())  # filled by ``get``; empty in lists

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "scope": self.scope,
            "name": self.name,
            "type": self.type,
            "aliases": list(self.aliases),
            "first_mention": self.first_mention.isoformat(),
            "last_mention": self.last_mention.isoformat(),
            "mention_count": self.mention_count,
            "facts": [fact.to_dict() for fact in self.facts],
        }


@dataclass(frozen=True)
class Mention:
    """What an extractor found in one message: an entity's name, the names it also goes by,
    its type, and the sentences about it with the extractor's confidence in each."""

    name: str
    type: EntityType
    aliases: tuple[str, ...] = ()
    sentences: tuple[tuple[str, float], ...] = ()

"""A tenant's policy: the administrator's memory switch, whether entity facts the user never
confirmed are recalled across conversations, and a retention period per layer."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Literal

RetentionLayer = Literal["transcripts", "summaries", "entities", "memories", "audit", "indexes"]
# in the order a sweep visits them: canonical rows first, so what they take along is not
# deleted twice
RETENTION_LAYERS: tuple[RetentionLayer, ...] = (
    "transcripts", "summaries", "entities", "memories", "audit", "indexes",
)  # fmt: skip


@dataclass(frozen=True)
class RetentionPeriods:
    """Days each layer keeps a row after it was last written; None keeps it until it is deleted.

    - ``transcripts``: conversations nothing was written to for that long, with everything
      derived from them (the period ``retention_days`` always set);
    - ``summaries``: rolling summaries and their state snapshots (rebuilt from the messages if
      the conversation goes on);
    - ``entities``: entity facts said that long ago (an entity left without facts goes);
    - ``memories``: long-term memories neither stored nor changed for that long, with their
      superseded versions;
    - ``audit``: audit events;
    - ``indexes``: the search-index rows and vectors of messages stored that long ago (the
      messages stay in the transcript and the window; search no longer finds them).
    """

    transcripts: int | None = None
    summaries: int | None = None
    entities: int | None = None
    memories: int | None = None
    audit: int | None = None
    indexes: int | None = None

    def set(self) -> dict[RetentionLayer, int]:
        """The layers with a period, in sweep order."""
        return {
            layer: days for layer in RETENTION_LAYERS if (days := getattr(self, layer)) is not None
        }

    def to_dict(self) -> dict[str, int | None]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class TenantPolicy:
    """What an administrator set for a tenant (the defaults for a tenant that set nothing).

    ``recall_unconfirmed_entity_facts``: what a user's conversations said about the people and
    things a new message names is recalled in their *other* conversations only once the user
    confirmed the statement — unless the tenant turns this on (off by default), e.g. for an
    application whose users agreed to it when they signed up."""

    tenant_id: str
    memory_disabled: bool = False
    retention: RetentionPeriods = field(default_factory=RetentionPeriods)
    recall_unconfirmed_entity_facts: bool = False

    @property
    def retention_days(self) -> int | None:
        """The transcripts' period, under the name it has always had."""
        return self.retention.transcripts

    def to_dict(self) -> dict[str, object]:
        return {
            "tenant": self.tenant_id,
            "memory_disabled": self.memory_disabled,
            "retention_days": self.retention.transcripts,
            "retention": self.retention.to_dict(),
            "recall_unconfirmed_entity_facts": self.recall_unconfirmed_entity_facts,
        }

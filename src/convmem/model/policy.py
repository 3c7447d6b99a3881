"""A tenant's policy: the administrator's memory switch, whether entity facts the user never
confirmed are recalled across conversations, which special categories a user may ask to have
kept and for which purposes they are recalled, how many proposals wait per user, and a
retention period per layer."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Literal

RetentionLayer = Literal[
    "transcripts", "summaries", "entities", "memories", "proposals", "audit", "indexes"
]
# in the order a sweep visits them: canonical rows first, so what they take along is not
# deleted twice
RETENTION_LAYERS: tuple[RetentionLayer, ...] = (
    "transcripts", "summaries", "entities", "memories", "proposals", "audit", "indexes",
)  # fmt: skip

# The never-store categories a tenant may open to a user's explicit request (the gate's reason
# codes): ``health`` (conditions, allergies and intolerances, medication, diets for a medical
# reason ...) and ``sensitive_category`` (GDPR art. 9's others: beliefs and practices such as
# keeping kosher, orientation, political opinion, union membership, ethnic origin, criminal
# record, genetic and biometric data). Credentials, payment cards, bank accounts, government ids
# and inferred traits are not among them: no policy opens those.
SPECIAL_CATEGORIES: tuple[str, ...] = ("health", "sensitive_category")
# the purposes a special category is recalled for when the tenant names none
DEFAULT_SENSITIVE_PURPOSES: tuple[str, ...] = ("personalization",)


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
    - ``proposals``: suggestions (status ``proposed``) the user neither confirmed nor declined
      within that long of their last change (a user who stopped writing included);
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
    proposals: int | None = None  # last: rows and old callers build the others by position

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
    application whose users agreed to it when they signed up.

    ``sensitive_categories``: the special categories (``SPECIAL_CATEGORIES``) a user may have
    kept, **only** on their explicit request ("Remember that I am allergic to peanuts"); none by
    default. Such a memory is marked with its category (``MemoryRecord.sensitivity``) and is
    recalled only by requests that may use one of ``sensitive_purposes`` (and only while the
    tenant keeps the category open). Never proposed, inferred, imported or extracted.

    ``max_pending_proposals``: at most this many proposals wait per user (None: no cap). A new
    one beyond it replaces the pending proposal of lowest confidence (the oldest of those) when
    its own confidence is at least as high; otherwise it is not made.
    """

    tenant_id: str
    memory_disabled: bool = False
    retention: RetentionPeriods = field(default_factory=RetentionPeriods)
    recall_unconfirmed_entity_facts: bool = False
    sensitive_categories: tuple[str, ...] = ()
    sensitive_purposes: tuple[str, ...] = DEFAULT_SENSITIVE_PURPOSES
    max_pending_proposals: int | None = None

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
            "sensitive_categories": list(self.sensitive_categories),
            "sensitive_purposes": list(self.sensitive_purposes),
            "max_pending_proposals": self.max_pending_proposals,
        }

    def sensitive_recall(self, purposes: tuple[str, ...] | None) -> SensitiveRecall:
        """What a request that may use ``purposes`` (None: every purpose) may recall of the
        special categories: the labels open now, for the tenant's purposes it may use."""
        usable = tuple(p for p in self.sensitive_purposes if purposes is None or p in purposes)
        labels = sensitivity_labels(self.sensitive_categories) if usable else ()
        return SensitiveRecall(labels, usable)


NOT_SENSITIVE = "none"


def sensitivity_label(categories: tuple[str, ...] | list[str] | set[str]) -> str:
    """How a memory's special categories are stored: sorted, comma-joined; ``none``."""
    return ",".join(sorted(set(categories))) or NOT_SENSITIVE


def sensitive_categories(label: str) -> tuple[str, ...]:
    """The special categories a stored label names (none for ``none``)."""
    return () if label == NOT_SENSITIVE else tuple(c for c in label.split(",") if c)


def sensitivity_labels(categories: tuple[str, ...]) -> tuple[str, ...]:
    """Every stored label made of ``categories`` only (each non-empty subset)."""
    found = sorted(set(categories))
    labels = []
    for mask in range(1, 2 ** len(found)):
        labels.append(",".join(c for i, c in enumerate(found) if mask >> i & 1))
    return tuple(labels)


@dataclass(frozen=True)
class SensitiveRecall:
    """The recall filter on special categories, applied in the store's query before ranking:
    a memory not sensitive passes; a sensitive one only when its label is among ``labels``
    and its purpose among ``purposes``."""

    labels: tuple[str, ...]
    purposes: tuple[str, ...]

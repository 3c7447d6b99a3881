"""From a turn's mentions to stored entities and facts, inside the engine's write transaction.

Rules of derived data kept here:

- only user and assistant turns of a conversation that is not temporary are read (a tool result
  is not what anyone said; a temporary conversation leaves nothing behind);
- every name, alias and fact passes the never-store gate memories pass
  (``convmem.memory.gate``, citing the turn): nothing is taken from a turn the policy refuses,
  a blocked name drops the entity's mention, a blocked sentence drops that fact, and a mention
  left with no fact is dropped;
- a mention merges into the entity of its scope that already goes by one of its names (or, for a
  person's full name, by its first name): "Caroline", then "Caroline Smith", is one person;
- a one-word name that is the start of exactly one known person's first name is that person's
  short form, and the other way round ("Melanie", then "Mel"; "Mel", then "Melanie"): at least
  ``MIN_SHORT_FORM`` letters, and never two candidates (with Anna and Annette known, "Ann" is
  nobody's);
- a run of capitalised words that opens a sentence ("Remember Jon") is recorded as its rest
  when only the rest is a known name;
- every name a turn attaches cites the turn (``add_entity_name_sources``): deleting the last
  message that said a name takes the name off the entity (``convmem.store.entity_sources``);
- every fact says who said it: the role of its turn (the user's words, or the assistant's —
  never one for the other) and the participant's name the turn carried; it is stored as a
  proposal, which only the user's confirmation (``Entities.confirm``) lets other conversations
  recall (``convmem.engine.request.recall_entity_facts``);
- everything is rebuildable from the messages (``rebuild_entities``), and a rebuild keeps the
  user's confirmations: a fact re-derived with the same text from the same message stays
  confirmed.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Protocol

from convmem.content.parts_render import text_parts
from convmem.entities.extract import EXTRACTOR, Extraction, extract
from convmem.entities.names import name_key
from convmem.ids import new_id
from convmem.memory.gate import admit, decide, judge_source
from convmem.model.admitted import Admitted
from convmem.model.conversation import ConversationRecord
from convmem.model.entities import Entity, EntityFact, EntityType, FactSpeaker, Mention
from convmem.model.messages import Message
from convmem.store.base import EntityRow, WriteTxn

EXTRACTED_ROLES = frozenset({"user", "assistant"})
MIN_SHORT_FORM = 3
_SHORT_FORM_TYPES = frozenset({"person", "thing"})
# how many of a conversation's messages a rebuild reads per transaction
_REBUILD_BATCH = 500


def entity_scope(record: ConversationRecord) -> str:
    """The scope a conversation's entities live in: its project's when it has one."""
    project = record.metadata.get("project")
    return f"project:{project}" if isinstance(project, str) and project else "user"


def recall_scopes(record: ConversationRecord) -> tuple[str, ...]:
    """The scopes a conversation may recall entities from: the user's, and its project's."""
    scope = entity_scope(record)
    return ("user",) if scope == "user" else ("user", scope)


def said_text(message: Message) -> str:
    """What a turn says, as text: its text parts when it has parts."""
    return text_parts(message.parts) if message.parts else message.content


def speaker_of(message: Message) -> str | None:
    """The participant's name a turn carries (``metadata["name"]``), if any."""
    name = message.metadata.get("name")
    return name.strip() if isinstance(name, str) and name.strip() else None


def speaker_role(message: Message) -> FactSpeaker:
    """Whose words a read turn is (only user and assistant turns are: ``record_mentions``)."""
    return "assistant" if message.role == "assistant" else "user"


def extract_turn(message: Message) -> Extraction | None:
    """The mentions of a turn, or None for a turn entities are not read from."""
    if message.role not in EXTRACTED_ROLES:
        return None
    text = said_text(message)
    if not text.strip():
        return None
    return extract(text, speaker_of(message))


@dataclass
class _Allowed:
    """Never-store decisions within one turn (a sentence about two entities is checked once)."""

    seen: dict[str, bool] = field(default_factory=dict)

    def __call__(self, text: str) -> bool:
        decision = self.seen.get(text)
        if decision is None:
            decision = self.seen[text] = decide({"name or fact": text}).allowed
        return decision


def _first_name(mention: Mention) -> str | None:
    words = mention.name.split()
    if mention.type == "person" and len(words) > 1 and not mention.name.startswith("@"):
        return words[0]
    return None


def _merge_type(old: EntityType, new: EntityType) -> EntityType:
    return new if old == "thing" else old


def record_mentions(
    tx: WriteTxn,
    tenant: str,
    user: str,
    scope: str,
    message: Message,
    extraction: Extraction,
    extractor: str = EXTRACTOR,
    confirmed: Collection[tuple[str, str]] = (),
) -> int:
    """Store what ``extraction`` found in ``message``; returns how many facts were stored.
    Nothing is taken from a message the never-store policy blocks as a whole: cut into
    sentences, a secret (a token with dots, a number split over a line) might pass in pieces.
    ``confirmed``: (message id, text) of the statements the user confirmed before a rebuild;
    they are stored confirmed again."""
    if message.role not in EXTRACTED_ROLES:  # a tool result or a system prompt: not said
        return 0
    weak_keys = [name_key(m.name) for m in extraction.weak]
    asked = [*weak_keys, *extraction.opening, *(name_key(v) for v in extraction.opening.values())]
    known = {
        name_key(a) for e in tx.entities_named(tenant, user, asked, scopes=[scope])
        for a in (e.name, *e.aliases)
    } if asked else set()  # fmt: skip
    mentions = [
        *(_opening_rest(m, extraction, known) for m in extraction.strong),
        *(m for m in extraction.weak if name_key(m.name) in known),
    ]
    # the policy over the whole message only once there is something to keep: most turns name
    # nothing known, and the check was a third of an append's CPU under load (py-spy)
    allowed = _Allowed()
    if not mentions or not judge_source(message).allowed:
        return 0
    stored = 0
    for mention in mentions:
        if not allowed(mention.name):
            continue
        names = [mention.name, *(a for a in mention.aliases if allowed(a))]
        first = _first_name(mention)
        if first is not None and allowed(first):
            names.append(first)
        facts = [(text, conf) for text, conf in mention.sentences if allowed(text)]
        if not facts:
            continue
        keys = list(dict.fromkeys(k for k in (name_key(n) for n in names) if k))
        existing = tx.entities_named(tenant, user, keys, scopes=[scope])
        if not existing:
            existing = _short_form_match(tx, tenant, user, scope, mention)
        row = admit(
            _merged_row(existing[0] if existing else None, mention, scope, names),
            reader=tx, tenant=tenant, user=user, cites=(message.id,), known=(message,),
        )  # fmt: skip
        if not isinstance(row, Admitted):
            continue
        found = admit(
            tuple(
                EntityFact(new_id("fact"), row.value.id, text, message.id,
                           message.conversation_id, message.created_at, confidence, extractor,
                           speaker_role(message), speaker_of(message),
                           "confirmed" if (message.id, text) in confirmed else "proposed")
                for text, confidence in facts
            ),
            reader=tx, tenant=tenant, user=user, known=(message,),
        )  # fmt: skip
        if not isinstance(found, Admitted):
            continue
        tx.put_entity(tenant, user, row)
        # the names this turn said, spelled as it said them: each goes with its last message
        said = {name_key(n): n for n in reversed(names) if name_key(n)}
        tx.add_entity_name_sources(tenant, user, row, message.id, [(n, k) for k, n in said.items()])
        tx.add_entity_facts(tenant, user, found)
        stored += len(facts)
    return stored


def _opening_rest(mention: Mention, extraction: Extraction, known: set[str]) -> Mention:
    """``mention`` as its rest ("Jon" of "Remember Jon") when it opens a sentence and only the
    rest is a known name."""
    key = name_key(mention.name)
    rest = extraction.opening.get(key)
    if rest is None or key in known or name_key(rest) not in known:
        return mention
    return replace(mention, name=rest)


def _short_form_match(
    tx: WriteTxn, tenant: str, user: str, scope: str, mention: Mention
) -> list[Entity]:
    """The one known entity ``mention`` is the short or the full form of, if there is exactly
    one (see the module docstring); else none."""
    words = mention.name.split()
    key = name_key(mention.name)
    if mention.type not in _SHORT_FORM_TYPES or mention.name.startswith("@") or not words:
        return []
    if len(words) == 1 and len(key) >= MIN_SHORT_FORM:  # "Mel": a known Melanie?
        found = tx.entities_named_prefix(tenant, user, key, scopes=[scope], limit=3)
        longer = [
            e for e in found
            if name_key(e.name).split()[0].startswith(key) and name_key(e.name).split()[0] != key
        ]  # fmt: skip
        if len(longer) == 1 and longer[0].type == "person":
            return longer
    first = name_key(words[0])
    if mention.type != "person" or len(first) <= MIN_SHORT_FORM:
        return []
    # "Melanie" (or "Melanie Hart"): a known one-word Mel?
    prefixes = [first[:n] for n in range(MIN_SHORT_FORM, len(first))]
    found = tx.entities_named(tenant, user, prefixes, scopes=[scope])
    short = [
        e for e in found
        if e.type in _SHORT_FORM_TYPES and " " not in name_key(e.name)
        and name_key(e.name) in prefixes
    ]  # fmt: skip
    return short if len(short) == 1 else []


def _merged_row(
    existing: Entity | None, mention: Mention, scope: str, names: Iterable[str]
) -> EntityRow:
    if existing is None:
        entity_id, name, kind = new_id("ent"), mention.name, mention.type
        created = datetime.now(UTC)
    else:
        entity_id, kind = existing.id, _merge_type(existing.type, mention.type)
        created = existing.first_mention
        # the fuller name becomes the canonical one: "Caroline" then "Caroline Smith"
        old, new = existing.name, mention.name
        longer = len(name_key(new)) > len(name_key(old))
        name = new if longer and name_key(new).startswith(name_key(old)) else old
    aliases = tuple(dict.fromkeys((n, name_key(n)) for n in (name, *names) if name_key(n)))
    return EntityRow(entity_id, scope, name, kind, aliases, created)


def derive_turn(
    tx: WriteTxn,
    record: ConversationRecord,
    message: Message,
    extraction: Extraction | None,
    extractor: str = EXTRACTOR,
    confirmed: Collection[tuple[str, str]] = (),
) -> int:
    """Record a newly written turn's mentions (none for a temporary conversation)."""
    if extraction is None or record.temporary:
        return 0
    return record_mentions(
        tx, record.tenant_id, record.user_id, entity_scope(record), message, extraction,
        extractor, confirmed,
    )  # fmt: skip


class TurnExtractor(Protocol):
    """An extractor other than the deterministic one (``convmem.entities.llm``): the mentions of
    a turn's text and the name of the extractor that found them (its fallback's, when it fell
    back)."""

    def extract(self, text: str, speaker: str | None) -> tuple[Extraction, str]: ...


def extract_with(extractor: TurnExtractor, message: Message) -> tuple[Extraction, str] | None:
    """``extractor``'s reading of a turn, or None for a turn entities are not read from."""
    if message.role not in EXTRACTED_ROLES or not said_text(message).strip():
        return None
    return extractor.extract(said_text(message), speaker_of(message))


def rebuild_entities(
    tx: WriteTxn,
    tenant: str,
    user: str,
    conversations: Sequence[ConversationRecord],
    extracted: Mapping[str, tuple[Extraction, str]] | None = None,
) -> int:
    """Drop the user's entities and derive them again from every message of ``conversations``
    (the user's, all of them); how many facts were stored. ``extracted``: mentions already read
    by another extractor, by message id (a message without them is read deterministically).
    The user's confirmations are kept: a statement derived again from the same message with the
    same text is confirmed again (other wording is a new proposal: it is not what was
    confirmed)."""
    confirmed = tx.confirmed_fact_sources(tenant, user)
    tx.delete_user_entities(tenant, user)
    stored = 0
    for record in conversations:
        messages = tx.conversation_messages(tenant, record.id)
        for message in sorted(messages, key=lambda m: (m.created_at, m.id)):
            given = extracted.get(message.id) if extracted else None
            if given is not None:
                stored += derive_turn(tx, record, message, given[0], given[1], confirmed)
            else:
                stored += derive_turn(
                    tx, record, message, extract_turn(message), confirmed=confirmed
                )
    return stored

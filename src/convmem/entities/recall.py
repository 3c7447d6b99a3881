"""Entity-aware retrieval: the turns about the people, places and things a question names.

A question that names an entity ("Where did Oscar hide his bone?", "what does Caro do?") is
looked up among the user's entity names and aliases (``convmem.entities.lookup``); the turns of
the conversation that the named entities have facts from become one more ranking for the
fusion (``convmem.search``), so a turn about the entity climbs even when the question shares
few words with it, and a nickname finds the turns that use the full name.

The ranking orders those turns by how much of what the question names they mention — each
named entity weighing ``1 / (1 + ln n)`` for an entity with ``n`` such turns, so a turn about
a rarely mentioned name outranks one about a name that is everywhere (a conversation's own
speakers) — and, among equals, by the fusion of the other retrievers' rankings, so the turns
about the entity that also match the question's words come first.

A one-word name is taken as named only as the question writes it: in a question with capitals,
capitalised (so "How is the store doing?" does not name an entity called "Doing", nor "the
dance studio" one called "Dance"); in an all-lowercase question, as it comes (people who do not
capitalise do not capitalise names either). A name of several words ("my sister", "ana lopez")
is specific enough in any case.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from convmem.entities.lookup import MAX_NAME_WORDS, name_keys
from convmem.entities.names import name_key
from convmem.errors import InvalidInput
from convmem.model.entities import Entity
from convmem.retrieval.fusion import rrf
from convmem.store.base import EntityTurnRow, MessageHitRow, ReadTxn
from convmem.store.ranking import Window

# how many (turn, entity) rows one question reads: a name said in every turn of a very long
# conversation weighs little anyway
MAX_ENTITY_TURNS = 2000
# how many of the conversation's turns the specificity's reference counts, at most: past it, an
# entity of a few hundred turns is about as unspecific as one of a few thousand
MAX_TURNS = 20_000

_TOKEN = re.compile(r"@?[\w'’.-]+", re.U)


@dataclass(frozen=True)
class EntityRecallOptions:
    """Knobs of entity-aware retrieval; the defaults are the measured ones
    (``convmem eval locomo``)."""

    enabled: bool = True
    # The entity ranking's share in the fusion, beside the lexical and vector rankings' 1. On
    # the LoCoMo development split (questions naming an entity other than the speakers), 0.5
    # left the lexical ranking as it was and lifted hybrid recall@10; 1.0 and more cost the
    # lexical ranking (0.94 -> 0.83 on conv-26's 16 such questions).
    weight: float = 0.5
    # Leave out the entities that are the conversation's own speakers (a named speaker's
    # first-person sentences are facts about them): the speaker prior already favours their
    # turns, and counting them again cost LoCoMo recall@10 overall (conv-26 hybrid 0.838 ->
    # 0.817 at 0.5).
    skip_speakers: bool = True

    def __post_init__(self) -> None:
        if self.weight < 0:
            raise InvalidInput("the entity ranking's weight must not be negative")


def _capitalised_keys(query: str) -> set[str]:
    """The name keys of ``query``'s runs of words that start with a capital (or an @)."""
    tokens = [t.rstrip(".'’-") for t in _TOKEN.findall(query)]
    tokens = [t for t in tokens if t]
    keys: set[str] = set()
    for start, token in enumerate(tokens):
        if not (token[0].isupper() or token.startswith("@")):
            continue
        for width in range(1, MAX_NAME_WORDS + 1):
            if start + width > len(tokens):
                break
            keys.add(name_key(" ".join(tokens[start : start + width])))
    return keys


def query_name_keys(query: str) -> list[str]:
    """The name keys ``query`` names, as it writes them (see the module docstring)."""
    keys = name_keys(query)
    if query == query.lower():
        return keys
    said = _capitalised_keys(query)
    return [key for key in keys if " " in key or key in said]


def named_entities(
    tx: ReadTxn,
    tenant: str,
    user: str,
    query: str,
    *,
    scopes: Sequence[str] | None,
    leave_out: Sequence[str] = (),
) -> list[Entity]:
    """The user's entities of ``scopes`` (None: any) that ``query`` names; the names in
    ``leave_out`` are not looked up (no query at all when nothing else is named)."""
    left_out = {name_key(name) for name in leave_out}
    keys = [key for key in query_name_keys(query) if key not in left_out]
    if not keys:
        return []
    found: list[Entity] = tx.entities_named(tenant, user, keys, scopes=scopes)
    return found


def specificity(turns: int, total: int) -> float:
    """How much naming an entity says about which of ``total`` turns are meant, when it has
    facts from ``turns`` of them: ln((T + 1) / n) / ln(T + 1), an inverse document frequency
    scaled to 1 for an entity of one turn and 0 for one of every turn (a conversation's own
    speakers, a partner mentioned everywhere)."""
    total = max(total, turns, 1)
    if total == 1:
        return 1.0
    return max(0.0, math.log((total + 1) / max(turns, 1)) / math.log(total + 1))


@dataclass(frozen=True)
class EntityRanking:
    """The turns about the entities a question names, best first, and the ranking's weight in
    the fusion: ``EntityRecallOptions.weight`` times the specificity of the most specific
    entity named (an entity of every turn adds nothing)."""

    turns: list[MessageHitRow]
    weight: float


NO_ENTITY_RANKING = EntityRanking([], 0.0)


def rank_entity_turns(
    rows: Sequence[EntityTurnRow], prior: Mapping[str, float], total: int
) -> tuple[list[MessageHitRow], float]:
    """The turns of ``rows`` best first — by the summed specificity (among ``total`` turns) of
    the named entities each mentions, then by ``prior`` (the other retrievers' fused score),
    then newest first — and the highest specificity."""
    turns_of: dict[str, int] = {}
    for row in rows:
        turns_of[row.entity_id] = turns_of.get(row.entity_id, 0) + 1
    weight = {entity: specificity(n, total) for entity, n in turns_of.items()}
    score: dict[str, float] = {}
    first: dict[str, EntityTurnRow] = {}
    for row in rows:
        score[row.message_id] = score.get(row.message_id, 0.0) + weight[row.entity_id]
        first.setdefault(row.message_id, row)
    order = sorted(score, key=lambda m: (-score[m], -prior.get(m, 0.0), -first[m].depth, m))
    ranked = [
        MessageHitRow(m, first[m].speaker, first[m].depth, score[m], first[m].created_at)
        for m in order
    ]
    return ranked, max(weight.values(), default=0.0)


def entity_ranking(
    tx: ReadTxn,
    tenant: str,
    user: str,
    conversation_id: str,
    query: str,
    rankings: Sequence[tuple[str, Sequence[str]]],
    *,
    rrf_k: float,
    speakers: Sequence[str],
    window: Window,
    options: EntityRecallOptions,
    limit: int,
) -> EntityRanking:
    """The conversation's turns about the entities ``query`` names, best first (at most
    ``limit``), ties broken by the fusion of the other ``rankings``, with the ranking's fusion
    weight; empty when it names none, or entity recall is off. Every scope's entities are looked
    up: only the conversation's own turns are candidates, and those are of its scope by
    construction."""
    if not options.enabled or not query.strip() or options.weight == 0:
        return NO_ENTITY_RANKING
    spoken = speakers if options.skip_speakers else ()
    entities = named_entities(tx, tenant, user, query, scopes=None, leave_out=spoken)
    if spoken:  # a speaker named by another of their names ("Mel" for Melanie)
        keys = {name_key(s) for s in spoken}
        entities = [e for e in entities if name_key(e.name) not in keys]
    if not entities:
        return NO_ENTITY_RANKING
    rows = tx.entity_turns(
        tenant, user, conversation_id, [e.id for e in entities], window=window,
        limit=MAX_ENTITY_TURNS,
    )  # fmt: skip
    if not rows:
        return NO_ENTITY_RANKING
    total = tx.indexed_turn_count(tenant, user, conversation_id, window=window, cap=MAX_TURNS)
    prior = {f.key: f.score for f in rrf(rankings, k=rrf_k)}
    ranked, most_specific = rank_entity_turns(rows, prior, total)
    return EntityRanking(ranked[:limit], options.weight * most_specific)

"""Entity-aware retrieval: the turns about the people, places and things a question names.

A question that names an entity ("Where did Oscar hide his bone?", "what does Caro do?") is
looked up among the user's entity names and aliases (``convmem.entities.lookup``); the turns of
the conversation that the named entities have facts from become one more ranking for the
fusion (``convmem.domain.search``), so a turn about the entity climbs even when the question shares
few words with it, and a nickname finds the turns that use the full name.

The ranking orders those turns by how much of what the question names they mention, each named
entity weighing its *specificity* — an inverse document frequency over the conversation's
indexed turns, ln((T + 1) / n) / ln(T + 1) for an entity with facts from n of T turns — and,
among equals, by the fusion of the other retrievers' rankings, so the turns about the entity
that also match the question's words come first. The ranking's weight in the fusion is
``EntityRecallOptions.weight`` times the specificity of the most specific entity named: a name
that is in every turn (a conversation's own speakers, a partner talked about throughout) says
nothing about which turn is meant and adds next to nothing, while a name of two turns lifts
them. So a conversation whose speakers are not named in its metadata needs no special case; a
question naming only the conversation's speakers reads nothing here, as their turns are the
speaker prior's.

A one-word name is taken as named only as the question writes it: in a question with capitals,
capitalised (so "How is the store doing?" does not name an entity called "Doing", nor "the
dance studio" one called "Dance"); in an all-lowercase question, as it comes (people who do not
capitalise do not capitalise names either). A name of several words ("my sister", "ana lopez")
is specific enough in any case.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from convmem.entities.lookup import name_runs
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


@dataclass(frozen=True)
class EntityRecallOptions:
    """Knobs of entity-aware retrieval; the defaults are the measured ones
    (``convmem eval locomo``)."""

    enabled: bool = True
    # The entity ranking's share in the fusion at specificity 1, beside the lexical and vector
    # rankings' 1. On the LoCoMo development split (hybrid, MiniLM), recall@10 of the questions
    # naming an entity with entity recall on (off: conv-26 0.847, conv-30 0.890): 0.25 and 0.5
    # gave 0.848 and 0.900, 1.0 0.848 and 0.890, 2.0 0.849 and 0.890.
    weight: float = 0.5
    # Leave out the entities that are the conversation's own speakers. When counted, they are
    # weighed by their specificity (they are in most turns), and a question naming one speaker
    # and nothing else is left to the speaker prior, which favours that speaker's turns already
    # (reading their few hundred turns for it cost ~4 ms a search, for no change in hybrid
    # recall@10 on the split and +0.004 lexical). Counted
    # beside another name ("What does Jon tell Gina?"), the turns that mention both come first:
    # on the split above, conv-30's 0.890 -> 0.900 and conv-26's 0.848 unchanged, against
    # leaving them out. (Before the specificity weight, counting them cost conv-26 0.838 ->
    # 0.817 overall.)
    skip_speakers: bool = False

    def __post_init__(self) -> None:
        if not (math.isfinite(self.weight) and self.weight >= 0):
            raise InvalidInput("the entity ranking's weight must be finite and not negative")


@functools.lru_cache(maxsize=256)
def query_name_keys(query: str) -> tuple[str, ...]:
    """The name keys ``query`` names, as it writes them (see the module docstring). Kept for
    the last few hundred queries: one request reads them for its search and for the facts
    block."""
    runs = name_runs(query)
    if query == query.lower():
        return tuple(runs)
    return tuple(key for key, capitalised in runs.items() if " " in key or capitalised)


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
    rows: Sequence[EntityTurnRow], prior: Mapping[str, float], total: int, limit: int
) -> tuple[list[MessageHitRow], float]:
    """The best ``limit`` turns of ``rows`` — by the summed specificity (among ``total`` turns)
    of the named entities each mentions, then by ``prior`` (the other retrievers' fused score),
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
    ranked = [  # rows for the kept turns only: a speaker has hundreds
        MessageHitRow(m, first[m].speaker, first[m].depth, score[m], first[m].created_at)
        for m in order[:limit]
    ]
    return ranked, max(weight.values(), default=0.0)


def _ranked_entities(
    tx: ReadTxn, tenant: str, user: str, query: str, *, speakers: Sequence[str],
    options: EntityRecallOptions,
) -> list[Entity]:  # fmt: skip
    """The entities whose turns ``entity_ranking`` reads (none: it reads no turns)."""
    if not options.enabled or not query.strip() or options.weight == 0:
        return []
    spoken = {name_key(s) for s in speakers}
    entities = named_entities(
        tx, tenant, user, query, scopes=None, leave_out=speakers if options.skip_speakers else ()
    )
    others = [e for e in entities if name_key(e.name) not in spoken]  # "Mel" names Melanie too
    if options.skip_speakers or not others:
        # Speakers alone are the speaker prior's (``convmem.domain.search``): no read for them. Each
        # has facts from a large share of the turns, so their ranking weighs ~0.1 x ``weight``; on
        # the LoCoMo development split leaving out the read for questions naming two speakers
        # changed no recall@10 (0.878 overall) and took 2-5 ms off those questions' searches.
        entities = others
    return entities


def read_entity_ranking_ahead(
    tx: ReadTxn, tenant: str, user: str, conversation_id: str, query: str, *,
    speakers: Sequence[str], window: Window, options: EntityRecallOptions,
) -> None:  # fmt: skip
    """Send ``entity_ranking``'s read of turns now (``ReadTxn.read_counted_entity_turns_ahead``),
    so on PostgreSQL it goes with the round trip of the rankings read before it (the entities
    themselves are the request's snapshot read: asked once, by the memories part)."""
    entities = _ranked_entities(tx, tenant, user, query, speakers=speakers, options=options)
    if entities:
        tx.read_counted_entity_turns_ahead(
            tenant, user, conversation_id, [e.id for e in entities], window=window,
            limit=MAX_ENTITY_TURNS, cap=MAX_TURNS,
        )  # fmt: skip


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
    entities = _ranked_entities(tx, tenant, user, query, speakers=speakers, options=options)
    if not entities:
        return NO_ENTITY_RANKING
    # the turns, and how many turns they were read among (the newest ones only, when there
    # were MAX_ENTITY_TURNS: weighed among their span)
    rows, total = tx.counted_entity_turns(
        tenant, user, conversation_id, [e.id for e in entities], window=window,
        limit=MAX_ENTITY_TURNS, cap=MAX_TURNS,
    )  # fmt: skip
    if not rows:
        return NO_ENTITY_RANKING
    prior = {f.key: f.score for f in rrf(rankings, k=rrf_k)}
    ranked, most_specific = rank_entity_turns(rows, prior, total, limit)
    return EntityRanking(ranked, options.weight * most_specific)

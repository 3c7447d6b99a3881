"""Hybrid search over a conversation's turns and a user's memories (the index is kept by
``convmem.domain.indexing``).

The pipeline (measured on the LoCoMo development split; see ``convmem.eval.locomo``):

1. **Query analysis.** The conversation's speaker names found in the query are set aside, and
   so are the other names a speaker goes by in the chat (``convmem.entities.aliases``: "Kate"
   for turns signed "Emi"; REALTALK split A 0.529 -> 0.570, B unchanged); the
   content terms are the remaining words less stopwords. A turn without a name is spoken by its
   role, and a role is no name ("user" in "user authentication" stays a term). Where the user is
   unnamed (an application's user ↔ assistant chat), a question in the first person singular
   ("When does my first sprint end?") names the user as its speaker, so steps 4 and 5 favour
   what the user said, as for a question naming a speaker: in such chats the user states the
   facts in short turns and the assistant's long replies echo their words. On BEAM's
   development chats (MiniLM, evidence recall@10, splits of ``convmem.eval.splits``), hybrid went
   from 0.606 to 0.696 on split A (where it was chosen) and from 0.532 to 0.546 on split B
   (contradiction 0.733 to 0.817, multi-session 0.628 to 0.683, summarization 0.071 to 0.059,
   the other abilities unchanged); LoCoMo and REALTALK, whose speakers are named, are unchanged
   (0.876 / 0.900 and 0.530 / 0.706). Tried on split A and left out: a lexical ranking of the
   named speaker's turns beside the vector one (BEAM 0.710, LoCoMo 0.856: adversarial 0.936 to
   0.872), a larger prior for the user (1.5 and 2: BEAM 0.708 and 0.719, a factor fitted to 18
   questions), lifting only the favoured speaker's turns (no gain), per-query fusion weights
   from how far each ranking's head stands out of its scores (BEAM 0.657, LoCoMo 0.856,
   REALTALK 0.568).
2. **Lexical**: the terms, OR-ed, ranked by the store (SQLite: FTS5 with porter stemming and
   bm25 weighting the turn's own text 1 and its neighbours' text 0.5).
3. **Expansion** (with an embedder): each term widened to at most 5 words of the conversation's
   own vocabulary at cosine ≥ 0.6, run as a second lexical query (the store ranks both from one
   pass where it can: ``search_messages_widened``). Word vectors are stored when the
   words first appear, so a query embeds only words its tenant never used — apart from the query,
   in a call of their own (batched with it, each word would be padded to the query's length).
4. **Vector**: cosine between the query without speaker names (a name dominates the embedding of a
   short question) and every turn of the conversation, ranked by the store (SQLite: numpy). A
   turn's vector is that of its body with its statements said twice
   (``convmem.domain.indexing.vector_text``). When the query names exactly one speaker, a second
   vector ranking holds only that speaker's turns among the same candidates, weighing 0.5 in
   the fusion: a list question ("What activities does Melanie partake in?") has evidence turns
   far down the whole conversation's ranking, about twice as high in the speaker's own. On the
   LoCoMo development split (MiniLM), hybrid evidence recall@10 went from 0.878 to 0.884,
   multi-hop 0.540 to 0.571, open-domain 0.636 to 0.682, temporal 0.984 held; per conversation
   0.867 to 0.876 (conv-26; multi-hop 0.555 to 0.596) and 0.900 to 0.900 (conv-30, every
   category unchanged). Weights 0.4-0.6 gave the same figures on both conversations, 0.3 less
   on conv-26 (0.868), 0.7-0.8 cost conv-30 (0.890); a cross-check tuned on conv-26 picks
   0.4-0.7 and holds conv-30, tuned on conv-30 it has no preference up to 0.6. The price is at
   the head: recall@1 0.404 to 0.376, mostly LoCoMo's adversarial questions, which name the
   wrong speaker on purpose (0.324 to 0.183; at 10 they hold, 0.944). Without the x1.2 prior of
   step 5 the ranking alone gives 0.880 (recall@1 0.390). Reading the speaker's turns from
   twice as deep changed no figure; one such ranking for each speaker of a query naming two
   cost conv-30 (0.881-0.895).
5. **Fusion**: reciprocal rank fusion, k = 10, the vector ranking weighing 1.5 (the named
   speaker's 0.5, the others 1, entity recall's its own), then x1.2 for turns of the single
   speaker the query names, if it names exactly one. The vector weight came with the
   statement-weighted vectors: on the LoCoMo development split (MiniLM), hybrid evidence
   recall@10 tuned on conv-26 (0.854 at 1, 0.857 at 1.25, 0.867 at 1.5, 0.863 at 1.75, 0.861 at
   2) and tested on conv-30 (0.903, 0.890, 0.900, 0.903, 0.890 — 0.893 before both changes);
   over the body-only vectors 1.5 did not help (0.853 and 0.884). In a user ↔ assistant chat each
   word ranking is fused as one ranking per role (``fusion_rankings``). Tried beside it on split A
   of each set and left out (hybrid recall@10, A / B): word rankings weighted per query by their
   top 20's overlap with the vector ranking's (BEAM 0.701 / 0.577, LoCoMo 0.858 / 0.869, REALTALK
   0.535 / 0.722); the vector ranking weighted per query by how far its best cosine stands above
   its 10th (BEAM 0.698 / 0.575, LoCoMo 0.868 / 0.878); min-max score fusion instead of ranks
   (without the role split: BEAM 0.662 / 0.565, LoCoMo 0.876 / 0.888); for questions over a span
   ("in what order", "throughout", "summarize"), at most one turn per day at the head (BEAM 0.705 /
   0.575: event ordering 0.258 / 0.216, no gain on A); splitting the vector ranking by role too
   (BEAM 0.671 / 0.561).
6. **Date prior**: x1.5 for turns written in a period the query names (a day, a month of any
   year, a year: ``convmem.retrieval.dates``) or in the week after it (a turn tells of a day
   just past). On the LoCoMo development split (MiniLM), judged per conversation, evidence
   recall@10 went from 0.838 to 0.848 (conv-26) and 0.884 to 0.893 (conv-30), temporal
   questions from 0.919 to 0.973 and 1.0 to 1.0; factors 1.5 to 3 gave the same figures on both
   conversations, 1.2 only on conv-30's, and counting the week after changed nothing there.
7. **Neighbour lift** (with an embedder; the store's hits carry each turn's depth): each fused
   score plus 0.25 x the best fused score of the turns one step above or below it. On the LoCoMo
   development split (MiniLM), judged per conversation, evidence recall@10 went from 0.821 to
   0.839 (conv-26) and 0.860 to 0.893 (conv-30), multi-hop from 0.526 to 0.526 and 0.483 to
   0.529; weights 0.2-0.25 helped both conversations, 0.3 and more cost conv-26 multi-hop
   questions, lifting before the speaker prior or from one side only did worse, and requiring
   the neighbour to be in the same sitting changed nothing. Depth stands in for adjacency: in a
   branched conversation, turns of a sibling branch at the next depth count as neighbours too.
   Spreading the top 10 over sessions or away from neighbours (caps, MMR) cost recall overall.

Steps 2-4 happen at the store boundary (``convmem.store.ranking``), so each backend ranks in its
own engine; analysis, widening, fusion and the lift are here, shared by every backend. Every store
call carries the principal's tenant and user: filters come before ranking.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

from convmem.entities.aliases import speaker_aliases
from convmem.entities.recall import EntityRecallOptions, entity_ranking, read_entity_ranking_ahead
from convmem.errors import InvalidInput, InvalidQuery
from convmem.model.memory import MemoryHit, MemoryRecord
from convmem.model.policy import SensitiveRecall, TenantPolicy
from convmem.model.search import MessageHit
from convmem.model.tree import MAX_COUNT
from convmem.retrieval.caches import VectorCache, embed_with_words, query_vector
from convmem.retrieval.dates import Period, named_periods
from convmem.retrieval.fusion import Fused, Scores, agreement_share, rrf
from convmem.retrieval.lexical import query_terms
from convmem.retrieval.rerank import Reranker, reorder
from convmem.retrieval.vector import Embedder, normalise
from convmem.store.base import MessageHitRow, ReadTxn, TermVector
from convmem.store.ranking import EVERY_TURN as EVERY_TURN  # re-exported with Window
from convmem.store.ranking import Window as Window  # re-exported: callers name windows here

if TYPE_CHECKING:
    from convmem.model.principal import Principal

RETRIEVERS = ("lexical", "expansion", "vector")


@dataclass(frozen=True)
class SearchOptions:
    """Knobs of the hybrid ranking; the defaults are the measured ones."""

    retrievers: tuple[str, ...] = RETRIEVERS
    rrf_k: float = 10.0
    # the vector ranking's share in the fusion (the lexical ones weigh 1)
    vector_weight: float = 1.5
    speaker_boost: float = 1.2
    expansion_per_term: int = 5
    expansion_min_similarity: float = 0.6
    # how deep each ranking goes into the fusion; past ~100 a rank adds < 1/110 of a top hit
    depth: int = 200
    # Embed query terms the conversation never used, so they too can be expanded (one model call
    # with the query either way, but a longer batch).
    expand_unknown_terms: bool = True
    # share in the fusion of a second vector ranking holding only the turns of the speaker the
    # query names, when it names exactly one (0 turns it off)
    speaker_vector_weight: float = 0.5
    # share of its best neighbour's fused score added to a turn's (0 turns the lift off)
    neighbour_lift: float = 0.25
    # entity-aware retrieval: the turns about the entities the query names, as one more ranking
    entities: EntityRecallOptions = field(default_factory=EntityRecallOptions)
    # factor for turns written in a period the query names ("in June", "on 13 October");
    # 1 turns the prior off
    date_boost: float = 1.5
    # a first-person question names the unnamed user as its speaker (``plan_query``)
    self_reference: bool = True
    # with a reranker: how many of the fused best it reorders (a search's k when larger); each
    # is one (query, text) pair the reranker reads
    rerank_depth: int = 20
    # in a user ↔ assistant chat, each role's turns are ranked lexically among their own
    # (``fusion_rankings``); None (the default): when a vector ranking is there to weigh against
    # it, True: always, False: never. Alone, by rank
    # it lifts a turn that shares one word with the query to the fusion's head when its role has
    # nothing better (the contract's test_only_the_turns_that_stand_out_come_back); a floor on
    # its score share that kept that test (0.75 of the best) lost the gain on BEAM (split B
    # 0.564 -> 0.541, 0.546 without)
    rank_roles_apart: bool | None = None
    # a word ranking whose first ``agreement_head`` turns share less than ``agreement_full_at``
    # with the vector ranking's keeps that share of its weight, at least ``agreement_floor``
    # (``convmem.retrieval.fusion.agreement_share``; ``agreement_full_at`` 0 turns it off). As
    # set: a word ranking whose top 10 holds none of the vector ranking's top 10 weighs half.
    # Chosen over a grid (full_at 0.05-0.3, head 10/20, floor 0-0.5) on the A splits of
    # LoCoMo, REALTALK and BEAM together, and again on the B splits: both chose this. MiniLM,
    # hybrid R@10 A/B: LoCoMo 0.876/0.900 unchanged, REALTALK 0.570/0.706 -> 0.593/0.713,
    # BEAM 0.696/0.546 -> 0.696/0.559
    agreement_head: int = 10
    agreement_full_at: float = 0.05
    agreement_floor: float = 0.5
    # a name one of two speakers addresses the other by names that speaker
    # (``convmem.entities.aliases``)
    speaker_aliases: bool = True

    def __post_init__(self) -> None:
        unknown = set(self.retrievers) - set(RETRIEVERS)
        if unknown or not self.retrievers:
            raise InvalidInput(f"retrievers must be among {', '.join(RETRIEVERS)}")
        # "not (x > 0)" rather than "x <= 0": NaN compares false either way and must not pass;
        # an infinite weight or factor would turn every fused score it touches into inf or NaN
        positive = (self.rrf_k, self.speaker_boost, self.date_boost, self.vector_weight)
        if self.rerank_depth < 1 or self.agreement_head < 1:
            raise InvalidInput("rerank_depth and agreement_head must be positive whole numbers")
        shares = (self.agreement_full_at, self.agreement_floor)
        if not all(math.isfinite(v) and 0 <= v <= 1 for v in shares):
            raise InvalidInput("agreement_full_at and agreement_floor must be between 0 and 1")
        if self.depth < 1 or not all(math.isfinite(v) and v > 0 for v in positive):
            raise InvalidInput(
                "rrf_k, depth, speaker_boost, date_boost and vector_weight must be positive "
                "finite numbers"
            )
        non_negative = (self.neighbour_lift, self.speaker_vector_weight)
        if not all(math.isfinite(v) and v >= 0 for v in non_negative):
            raise InvalidInput(
                "neighbour_lift and speaker_vector_weight must be finite and not negative"
            )
        if not (math.isfinite(self.expansion_min_similarity) and self.expansion_per_term >= 0):
            raise InvalidInput(
                "expansion_min_similarity must be finite and expansion_per_term not negative"
            )


# --- query analysis -----------------------------------------------------------------------------


@dataclass(frozen=True)
class QueryPlan:
    names: tuple[str, ...]  # speakers the query names
    terms: tuple[str, ...]  # content terms, names left out
    vector_text: str  # the query without the names
    periods: tuple[Period, ...] = ()  # the dates it names


def _name_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(name)}(?:['\u2019]s)?(?!\w)", re.IGNORECASE)


# A turn with no name of its own is spoken by its role (``convmem.retrieval.index.speaker_of``):
# such a speaker is no name a query can write — "user" in "user authentication" is a word.
ROLE_SPEAKERS = frozenset({"user", "assistant", "system", "tool"})
# The person asking is the conversation's user: a question in the first person singular ("When
# does my sprint end?") asks about what the user said, as a question naming a speaker asks about
# what that speaker said. Only where the user is unnamed: a named user's turns carry a name, and
# which speaker is the one asking is then not known.
_FIRST_PERSON = re.compile(r"(?<!\w)(?:i|me|my|mine|myself)(?!\w)", re.IGNORECASE)


def plan_query(
    query: str,
    speakers: Sequence[str],
    *,
    self_reference: bool = True,
    aliases: Mapping[str, str] | None = None,
) -> QueryPlan:
    """``aliases``: other names of speakers (``convmem.entities.aliases``), each to its speaker;
    a query writing one names that speaker."""
    said = {s: [s] for s in speakers if s.lower() not in ROLE_SPEAKERS}
    for alias, speaker in (aliases or {}).items():
        if speaker in said:
            said[speaker].append(alias)
    names = tuple(
        s for s, forms in said.items() if any(_name_pattern(f).search(query) for f in forms)
    )
    if self_reference and not names and "user" in speakers and _FIRST_PERSON.search(query):
        return QueryPlan(("user",), tuple(query_terms(query)), query, named_periods(query))
    forms = [f for n in names for f in said[n]]
    name_words = {w for f in forms for w in f.lower().split()}
    terms = query_terms(query, drop=name_words)
    if not terms:  # "Caroline?" still searches for the name
        terms = query_terms(query)
    stripped = query
    for form in forms:
        stripped = _name_pattern(form).sub(" ", stripped)
    stripped = " ".join(stripped.split())
    # read without the names: a speaker called June or April names no month
    return QueryPlan(names, tuple(terms), stripped or query, named_periods(stripped))


# --- searching a conversation ---------------------------------------------------------------------


@dataclass(frozen=True)
class Candidates:
    """What the store ranked for one query, before fusion: each retriever's rows best first
    (``speaker_vector``: the named speaker's share of ``vector``), and what the priors read."""

    plan: QueryPlan
    rows: Mapping[str, Sequence[MessageHitRow]]
    entity_weight: float = 0.0
    with_embedder: bool = False
    # no speaker of the conversation has a name: a user ↔ assistant chat
    roles_only: bool = False

    def keys(self, name: str) -> list[str]:
        return [row.message_id for row in self.rows.get(name, ())]


@dataclass(frozen=True)
class Ranker:
    """How a conversation's turns are ranked for a query: the embedder (None: words only) with
    its cache, the knobs, and the window of turns searched."""

    embedder: Embedder | None
    cache: VectorCache
    options: SearchOptions
    window: Window = EVERY_TURN


def gather_candidates(
    tx: ReadTxn, who: Principal, conversation_id: str, query: str, ranker: Ranker
) -> Candidates:
    """Every ranking the fusion of ``query`` reads, each ranked by the store in its own engine."""
    embedder, cache, options, window = ranker.embedder, ranker.cache, ranker.options, ranker.window
    tenant, user = who.tenant, who.user
    speakers = tx.conversation_speakers(tenant, conversation_id)
    aliases: Mapping[str, str] = {}
    if options.speaker_aliases:
        named = [s for s in speakers if s.lower() not in ROLE_SPEAKERS]
        aliases = speaker_aliases(tx, tenant, user, conversation_id, query, named)
    plan = plan_query(query, speakers, self_reference=options.self_reference, aliases=aliases)
    use = set(options.retrievers)
    if embedder is None:
        use -= {"expansion", "vector"}
    rows: dict[str, Sequence[MessageHitRow]] = {}
    # the entity ranking's read goes with the first ranking's round trip (it needs their ids only
    # after its own rows are back)
    read_entity_ranking_ahead(
        tx, tenant, user, conversation_id, query, speakers=[*speakers, *aliases], window=window,
        options=options.entities,
    )  # fmt: skip

    def lexical(terms: Sequence[str]) -> list[MessageHitRow]:
        return tx.search_messages(
            tenant, user, conversation_id, terms, window=window, limit=options.depth
        )

    extra: list[str] = []
    if embedder is not None and "expansion" in use and plan.terms:
        extra = widening_words(tx, who, conversation_id, plan.terms, embedder, cache, options)
    if "lexical" in use and plan.terms and extra:  # both from one pass where the store can
        rows["lexical"], rows["expansion"] = tx.search_messages_widened(
            tenant, user, conversation_id, plan.terms, extra, window=window, limit=options.depth
        )
    elif "lexical" in use and plan.terms:
        rows["lexical"] = lexical(plan.terms)
    elif extra:
        rows["expansion"] = lexical([*plan.terms, *extra])
    # a blank query asks for nothing: its vector would rank every turn by the model's own
    # markers (memories' search skips it the same way)
    if embedder is not None and "vector" in use and plan.vector_text.strip():
        vector = query_vector(embedder, cache, plan.vector_text)
        rows["vector"] = tx.nearest_messages(
            tenant, user, conversation_id, embedder.name, vector, window=window,
            limit=options.depth,
        )  # fmt: skip
        if len(plan.names) == 1 and options.speaker_vector_weight > 0:
            # the same candidates, the named speaker's only: reading twice as deep for them
            # changed no figure on LoCoMo (their turns past the depth weigh < 1/110 of a top hit)
            rows["speaker_vector"] = [r for r in rows["vector"] if r.speaker == plan.names[0]]
    about = entity_ranking(
        tx, tenant, user, conversation_id, query,
        [(name, [r.message_id for r in found]) for name, found in rows.items()],
        rrf_k=options.rrf_k, speakers=[*speakers, *aliases], window=window,
        options=options.entities,
        limit=options.depth,
    )  # fmt: skip
    if about.turns:
        rows["entity"] = about.turns
    return Candidates(
        plan, rows, about.weight, embedder is not None and bool(use & {"expansion", "vector"}),
        roles_only=bool(speakers) and all(s.lower() in ROLE_SPEAKERS for s in speakers),
    )  # fmt: skip


# The rankings that score words, where a long turn holds more of a query's words by its length.
WORD_RANKINGS = frozenset({"lexical", "expansion"})


def fusion_rankings(candidates: Candidates, options: SearchOptions) -> list[tuple[str, list[str]]]:
    """The rankings to fuse, in retriever order. In a user ↔ assistant chat (``roles_only``,
    with ``rank_roles_apart``) each word ranking becomes one ranking per role, under the same
    retriever name and weight: the assistant's replies are long and repeat the user's words,
    so they fill the head of a word ranking (on BEAM's development chats ~60 % of the lexical
    top 10, while three quarters of the evidence is the user's shorter turns); ranked among
    their own, the user's best turns meet the assistant's best at the head of the fusion. On
    BEAM (MiniLM, evidence recall@10, splits of ``convmem.eval.splits``) hybrid went from 0.696
    to 0.710 on split A, where it was chosen, and from 0.546 to 0.564 on split B. Between named
    speakers (LoCoMo, REALTALK) turns are of one kind and nothing changes: splitting there by
    speaker cost LoCoMo's split A 0.876 -> 0.866. The vector ranking stays whole (split too,
    BEAM A 0.671): a vector does not grow with its turn's length."""
    # by default with a vector ranking only: alone, a role's word ranking would put its best
    # turn at the head of the fusion however little it shares with the query (one word; the
    # contract's test_only_the_turns_that_stand_out_come_back), with nothing to weigh against it
    wanted = options.rank_roles_apart
    if wanted is None:
        wanted = "vector" in candidates.rows
    apart = wanted and candidates.roles_only
    rankings: list[tuple[str, list[str]]] = []
    for name, rows in candidates.rows.items():
        if not (apart and name in WORD_RANKINGS):
            rankings.append((name, [row.message_id for row in rows]))
            continue
        by_role: dict[str, list[str]] = {}  # roles in order of their best turn
        for row in rows:
            by_role.setdefault(row.speaker, []).append(row.message_id)
        rankings += [(name, keys) for keys in by_role.values()]
    return rankings


def fuse_candidates(candidates: Candidates, options: SearchOptions) -> Scores[str]:
    """The rankings fused, then the priors: the speaker the query names, the dates it names,
    the neighbours' lift. Pure: no store, no model."""
    plan = candidates.plan
    speaker_of: dict[str, str] = {}
    depth_of: dict[str, int] = {}  # each ranked turn's depth, for the neighbour lift
    written: dict[str, datetime] = {}  # and its time, for the date prior
    for found in candidates.rows.values():
        for row in found:
            speaker_of[row.message_id] = row.speaker
            depth_of[row.message_id] = row.depth
            written[row.message_id] = row.created_at
    weights = {
        "vector": options.vector_weight,
        "speaker_vector": options.speaker_vector_weight,
        "entity": candidates.entity_weight,
    }
    vector_keys = candidates.keys("vector")
    for name in WORD_RANKINGS & candidates.rows.keys():
        weights[name] = agreement_share(
            candidates.keys(name), vector_keys, head=options.agreement_head,
            full_at=options.agreement_full_at, floor=options.agreement_floor,
        )  # fmt: skip
    fused = Scores.rrf(fusion_rankings(candidates, options), k=options.rrf_k, weights=weights)
    if len(plan.names) == 1:
        named = plan.names[0]
        favoured = {key for key, speaker in speaker_of.items() if speaker == named}
        fused = fused.boost(favoured, options.speaker_boost)
    if plan.periods and options.date_boost != 1.0:
        fused = fused.boost(dated_turns(written, plan.periods), options.date_boost)
    if candidates.with_embedder and options.neighbour_lift > 0:
        fused = fused.lift(depth_of, options.neighbour_lift)
    return fused


def rank_conversation(
    tx: ReadTxn,
    who: Principal,
    conversation_id: str,
    query: str,
    ranker: Ranker,
    *,
    limit: int | None = None,
) -> list[Fused[str]]:
    """Fused ranking of a conversation's turns (message ids) for ``query``, the best ``limit``
    (every candidate when None). The store ranks each retriever's candidates in its own engine;
    this fuses them."""
    candidates = gather_candidates(tx, who, conversation_id, query, ranker)
    return fuse_candidates(candidates, ranker.options).ranked(limit)


def dated_turns(written: dict[str, datetime], periods: Sequence[Period]) -> set[str]:
    """The turns written (in UTC, as stored) in one of ``periods`` or in the week after it.
    Decided once per calendar day: a search's candidates share a few dozen days."""
    by_day: dict[date, bool] = {}
    out: set[str] = set()
    for key, at in written.items():
        day = at.astimezone(UTC).date()
        held = by_day.get(day)
        if held is None:
            held = by_day[day] = any(period.holds_or_after(day) for period in periods)
        if held:
            out.add(key)
    return out


def widening_words(
    tx: ReadTxn,
    who: Principal,
    conversation_id: str,
    terms: Sequence[str],
    embedder: Embedder,
    cache: VectorCache,
    options: SearchOptions,
) -> list[str]:
    """Words of the conversation's vocabulary near the query's terms. A term the vocabulary
    holds brings its stored vector; another (with ``expand_unknown_terms``) comes from the
    process cache, the tenant's stored word vectors or, last, the model."""
    known = tx.vocabulary_vectors(who.tenant, who.user, conversation_id, embedder.name, terms)
    unknown = [t for t in terms if t not in known] if options.expand_unknown_terms else []
    _, word_vectors = embed_with_words(
        embedder, cache, [], unknown,
        stored=lambda words: tx.stored_term_vectors(who.tenant, embedder.name, words),
    )  # fmt: skip
    vectors = {**word_vectors, **known}
    expandable = [TermVector(t, vectors[t]) for t in terms if t in vectors]
    if not expandable:
        return []
    return tx.nearest_words(
        who.tenant, who.user, conversation_id, embedder.name, expandable,
        per_term=options.expansion_per_term, min_similarity=options.expansion_min_similarity,
    )  # fmt: skip


def search_conversation(
    tx: ReadTxn,
    who: Principal,
    conversation_id: str,
    query: str,
    k: int,
    *,
    embedder: Embedder | None,
    cache: VectorCache,
    options: SearchOptions,
    window: Window = EVERY_TURN,
    reranker: Reranker | None = None,
) -> list[MessageHit]:
    """The best ``k`` turns; with a ``reranker``, the fused best ``max(k, rerank_depth)`` in its
    order (a reranker that gives no scores, e.g. one past its time limit, leaves the fused
    order)."""
    check_query(query, k)
    depth = max(k, options.rerank_depth) if reranker is not None else k
    ranker = Ranker(embedder, cache, options, window)
    fused = rank_conversation(tx, who, conversation_id, query, ranker, limit=depth)
    found = tx.get_messages(who.tenant, who.user, [item.key for item in fused])
    if reranker is not None and fused:
        fused = reorder(fused, reranker.score(query, [found[f.key].content for f in fused]))
    return [MessageHit(found[item.key], item.score, item.retrievers) for item in fused[:k]]


def check_query(query: object, k: int) -> None:
    if not isinstance(query, str):
        raise InvalidQuery("query must be a string")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_COUNT:
        raise InvalidQuery(f"k must be an integer from 1 to {MAX_COUNT}")


# --- searching memories ---------------------------------------------------------------------------
def sensitive_recall(
    tx: ReadTxn, who: Principal, policy: TenantPolicy | None = None
) -> SensitiveRecall:
    """The special categories a recall by ``who`` may read: the tenant's open ones, for the
    purposes the tenant named that the request may use (none when it may use none of them).
    ``policy``: the tenant's, when the caller read it already (else it is read)."""
    policy = policy if policy is not None else tx.tenant_policy(who.tenant)
    return policy.sensitive_recall(who.purposes)


def search_memories(
    tx: ReadTxn,
    who: Principal,
    query: str,
    k: int,
    *,
    scopes: Sequence[str],
    now: datetime,
    embedder: Embedder | None,
    rrf_k: float = 10.0,
    min_similarity: float = 0.2,
    reranker: Reranker | None = None,
    rerank_depth: int = 20,
    policy: TenantPolicy | None = None,
) -> list[MemoryHit]:
    """Current memories by lexical and (with an embedder) vector rank, fused. A memory unrelated
    to the query (cosine below ``min_similarity``) is not a vector hit: a short list of memories
    should not come back whole for any question. Only memories of the purposes ``who`` may use
    are candidates, and of the special categories the tenant opened only those of the purposes
    it named (``sensitive_recall``): both rankings filter in the store's query. With a
    ``reranker``, the fused best ``max(k, rerank_depth)`` in its order."""

    check_query(query, k)
    terms = query_terms(query)
    depth = max(50, 4 * k)
    sensitive = sensitive_recall(tx, who, policy)
    lexical = tx.search_memory_terms(
        who.tenant,
        who.user,
        terms,
        scopes=scopes,
        purposes=who.purposes,
        now=now,
        limit=depth,
        sensitive=sensitive,
    )
    records: dict[str, MemoryRecord] = {hit.record.id: hit.record for hit in lexical}
    nearest: list[tuple[str, float]] = []
    if embedder is not None and query.strip():
        vector = normalise(embedder.embed([query]))[0]
        for hit in tx.nearest_memories(
            who.tenant, who.user, embedder.name, vector, scopes=scopes,
            purposes=who.purposes, now=now, limit=depth, sensitive=sensitive,
        ):  # fmt: skip
            records.setdefault(hit.record.id, hit.record)
            nearest.append((hit.record.id, hit.score))
    rankings = hybrid_rankings([hit.record.id for hit in lexical], nearest, min_similarity)
    fused = rrf(rankings, k=rrf_k)
    if reranker is not None and fused:
        head = fused[: max(k, rerank_depth)]
        fused = reorder(fused, reranker.score(query, [records[f.key].text for f in head]))
    return [MemoryHit(records[f.key], f.score, f.retrievers) for f in fused[:k]]


def hybrid_rankings(
    lexical: Sequence[str], nearest: Sequence[tuple[str, float]], min_similarity: float
) -> list[tuple[str, list[str]]]:
    """The rankings a short list (memories, tools) is fused from: the store's lexical ranking,
    and its vector ranking cut at ``min_similarity`` — below it an item is no vector hit, or a
    short list would come back whole for any question."""
    rankings: list[tuple[str, list[str]]] = [("lexical", list(lexical))]
    if nearest:
        rankings.append(("vector", [key for key, score in nearest if score >= min_similarity]))
    return rankings


# --- ranking a tenant's tools ---------------------------------------------------------------------


@dataclass(frozen=True)
class ToolRankOptions:
    """Knobs of tool ranking (``rank_tools``); the defaults are the measured ones
    (``benchmarks/tool_selection.py``, tuning split)."""

    rrf_k: float = 10.0
    # Lower than memories' 0.2: a registry is a closed list where missing a needed tool costs
    # more than offering a spare one (the count and token caps bound the spares). On the tuning
    # set, 0.1/0.15/0.2/0.25 offered 0.98/0.97/0.94/0.92 of the needed tools (MiniLM).
    min_similarity: float = 0.1
    # share of the recent turns' rankings beside the new message's
    recent_weight: float = 0.5
    depth: int = 50


def rank_tools(
    tx: ReadTxn,
    tenant: str,
    message: str,
    recent: str = "",
    *,
    embedder: Embedder | None,
    options: ToolRankOptions | None = None,
) -> list[Fused[str]]:
    """The tenant's tools (names) by relevance to a request, ranked as memories are: the store's
    lexical ranking of the query's content terms and (with an embedder) its vector ranking, fused
    by reciprocal rank. The new ``message`` and the ``recent`` turns are each such a query, the
    recent turns' rankings weighing ``recent_weight``: a follow-up like "and tomorrow?" finds
    the tool the conversation is about. A tool no ranking holds has no evidence."""
    options = options or ToolRankOptions()
    rankings: list[tuple[str, list[str]]] = []
    weights: dict[str, float] = {}
    for label, text, weight in (
        ("message", message, 1.0),
        ("recent", recent, options.recent_weight),
    ):
        if not text.strip() or weight <= 0:
            continue
        lexical = tx.search_tool_terms(tenant, query_terms(text), limit=options.depth)
        nearest: list[tuple[str, float]] = []
        if embedder is not None:
            vector = normalise(embedder.embed([text]))[0]
            hits = tx.nearest_tools(tenant, embedder.name, vector, limit=options.depth)
            nearest = [(hit.name, hit.score) for hit in hits]
        found = [hit.name for hit in lexical]
        for name, ranking in hybrid_rankings(found, nearest, options.min_similarity):
            rankings.append((f"{name}:{label}", ranking))
            weights[f"{name}:{label}"] = weight
    return rrf(rankings, k=options.rrf_k, weights=weights)

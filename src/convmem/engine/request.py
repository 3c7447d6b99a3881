"""The request pipeline of ``Conversation.assemble``: memories → plan → retrieve → summary → render.

Each step is a plain function (planning is a small object, since every later step plans again)
over a ``Request`` — the checked inputs of one assembly and what was read to start it — and the
read transaction the request runs in. ``Conversation.assemble`` composes them; the window itself
is chosen by the pure functions of ``convmem.context.assemble``, and the sections' rooms come from
``convmem.context.budget``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from convmem.content.parts import message_cost
from convmem.content.tokens import TokenCounter
from convmem.context.assemble import (
    AssemblyOptions,
    FixedParts,
    HistoryPlan,
    SummaryUse,
    finish_request,
    plan_history,
    unused_history_room,
    with_retrieved,
)
from convmem.context.budget import documents_room, memory_caps, retrieved_reserve, tools_cap
from convmem.context.documents import render_documents
from convmem.context.formats import Format
from convmem.context.history_units import ChainEntry
from convmem.context.report import AssembledContext
from convmem.domain.memories import memory_gate, memory_policy
from convmem.domain.memory_recall import recall_candidates
from convmem.domain.search import Ranker, Window, rank_conversation, rank_tools
from convmem.domain.summaries import Lookup, SummaryFlow
from convmem.engine.handles import Database
from convmem.entities.derive import recall_scopes
from convmem.entities.facts_block import choose_facts, render_entity_facts
from convmem.entities.recall import query_name_keys
from convmem.errors import BudgetExceeded, StoreError
from convmem.memory.current_turn import outdated_memories
from convmem.memory.recall import (
    RELEVANT_MEMORY_BLOCK,
    expired_ids,
    irrelevant_ids,
    render_memory_block,
)
from convmem.model.conversation import ConversationRecord
from convmem.model.documents import Document
from convmem.model.messages import Message
from convmem.model.parts import TextPart
from convmem.model.principal import Principal
from convmem.model.profile import ModelProfile
from convmem.model.tools import ToolSpec
from convmem.retrieval.lexical import query_terms
from convmem.retrieval.novelty import novel
from convmem.retrieval.recall import render_retrieved_block, standing_out
from convmem.retrieval.rerank import Reranker, reorder
from convmem.retrieval.vector import Embedder
from convmem.store.base import BranchRow, ReadTxn
from convmem.summarize.render import render_snapshot
from convmem.tools.cost import tool_tokens
from convmem.tools.select import select_tools


@dataclass(frozen=True)
class Request:
    """One request being assembled: its checked inputs and what was read to start it."""

    who: Principal
    conversation: ConversationRecord
    leaf: str | None  # the branch's newest stored message; None for an empty conversation
    user_message: str | None  # the new turn, not stored
    query: str  # what recall and retrieval rank for: the new turn, else the leaf's text
    system: str | None
    pinned: list[str]  # the application's pinned instructions
    profile: ModelProfile
    counter: TokenCounter
    format: Format
    options: AssemblyOptions
    embedder: Embedder | None  # the request's own (it embeds the query once)
    reranker: Reranker | None = None  # the request's own, under its time limit
    tools: tuple[ToolSpec, ...] = ()  # the tool definitions the caller sends with the request
    offer_tools: bool = False  # add the relevant tools of the tenant's registry
    allow_risky: bool | frozenset[str] = False  # risky registry tools allowed for this request
    user_pinned: Sequence[str] = ()  # the user's own pinned requests (quoted data)
    # the caller's retrieved documents, checked (None: the request carries no documents section)
    documents: tuple[Document, ...] | None = None


class CountOnce:
    """A request's counter: each distinct text is tokenised once however many steps cost it.

    Planning runs up to four times per request, and each plan, the memory and retrieved blocks
    and the final render cost the same system prompt, pins, blocks and user message again; the
    counts are remembered here instead, for this request only (the texts die with it).
    """

    def __init__(self, counter: TokenCounter) -> None:
        self._counter = counter
        self._counts: dict[str, int] = {}

    @property
    def name(self) -> str:
        return self._counter.name

    def count(self, text: str) -> int:
        found = self._counts.get(text)
        if found is None:
            found = self._counts[text] = self._counter.count(text)
        return found


def branch_entries(rows: Iterator[BranchRow], counter: TokenCounter) -> Iterator[ChainEntry]:
    """The branch's ``rows`` (newest first) with each message's cost in ``counter``."""
    for row in rows:
        tokens, media = row.tokens, row.media_tokens
        if tokens is None:  # a tokenizer not counted at write: count now
            m = row.message
            tokens, media = message_cost(
                counter, m.role, m.content, m.parts, m.tool_calls, m.tool_call_id
            )
        yield ChainEntry(row.message, tokens, row.estimate_before, media)


# --- 1. memories --------------------------------------------------------------------------------


# The branch's newest messages whose user turns may overtake a recalled memory: about the window
# of a chat-sized budget, read before recall (the plans replay them, so they cost no extra read).
CURRENT_TURNS = 24


def recall_memories(tx: ReadTxn, request: Request, recent_user_turns: list[str]) -> FixedParts:
    """The fixed parts: system prompt, pins and the long-term memory of this request (the block,
    and the late memories for a large set). A temporary conversation, a user or tenant with
    memory off, or recall switched off read no memory at all. A memory that the new message or
    ``recent_user_turns`` (newest first) contradict is shown as older background: the current
    turn wins (``convmem.memory.current_turn``)."""
    fixed = FixedParts(
        system_prompt=request.system,
        pinned=request.pinned,
        user_pinned=request.user_pinned,
        tools=request.tools,
    )
    who, options, record = request.who, request.options, request.conversation
    if record.temporary or options.memory_k == 0:
        return fixed
    closed, policy = memory_policy(tx, who)
    if closed is not None:
        return fixed
    scopes = ["user"]
    project = record.metadata.get("project")
    if isinstance(project, str) and project:
        scopes.append(f"project:{project}")
    block, ranked = recall_candidates(
        tx, who, request.query, k=options.memory_k, scopes=scopes, embedder=request.embedder,
        reranker=request.reranker, policy=policy,
    )  # fmt: skip
    # the store leaves expired memories out; one that comes anyway stays out and is reported
    expired = set(expired_ids([*block, *ranked], datetime.now(UTC)))
    block = [m for m in block if m.id not in expired]
    ranked = [m for m in ranked if m.id not in expired]
    said = [request.user_message, *recent_user_turns] if request.user_message else recent_user_turns
    background = outdated_memories([*block, *ranked], said) if block or ranked else set()
    cap, late_cap = memory_caps(request.profile.input_budget, options.memory_share)
    text, ids = render_memory_block(block, request.counter, cap, background=background)
    shown = set(ids)
    extra = [m for m in ranked if m.id not in shown][: options.memory_relevant_k]
    late, late_ids = render_memory_block(
        extra, request.counter, late_cap, RELEVANT_MEMORY_BLOCK, background=background
    )
    candidates = {m.id: m for m in (*block, *ranked)}
    recalled = [candidates[i] for i in (*ids, *late_ids)]
    return replace(
        fixed, memories=text, memory_ids=ids, relevant_memories=late, relevant_memory_ids=late_ids,
        memory_candidates=len(candidates), expired_memory_ids=sorted(expired),
        irrelevant_memory_ids=irrelevant_ids(request.query, recalled),
    )  # fmt: skip


# --- 1b. what was said elsewhere about the entities the message names -------------------------

# how many of the named entities' newest facts are read to choose from
_ENTITY_FACTS_READ = 200


@dataclass(frozen=True)
class _EntityFactsAsked:
    """The arguments of the request's ``named_entity_facts`` read."""

    args: tuple[str, str, list[str]]
    kwargs: dict[str, Any]


def _entity_facts_asked(tx: ReadTxn, request: Request) -> _EntityFactsAsked | None:
    """What ``recall_entity_facts`` reads, or None when it reads nothing."""
    who, options, record = request.who, request.options, request.conversation
    if record.temporary or options.entity_facts_k == 0 or not request.query.strip():
        return None
    if memory_gate(tx, who) is not None:
        return None
    keys = query_name_keys(request.query)
    if not keys:
        return None
    proposals_too = tx.tenant_policy(who.tenant).recall_unconfirmed_entity_facts
    return _EntityFactsAsked(
        (who.tenant, who.user, list(keys)),
        {"scopes": recall_scopes(record), "outside_conversation": record.id,
         "confirmed_only": not proposals_too, "limit": _ENTITY_FACTS_READ},
    )  # fmt: skip


def recall_memory_parts(tx: ReadTxn, request: Request, recent_user_turns: list[str]) -> FixedParts:
    """The memories part: ``recall_memories``, then ``recall_entity_facts``. The facts' reads
    are sent ahead, with the memories' read: one round trip for both on PostgreSQL."""
    asked = _entity_facts_asked(tx, request)
    if asked is not None:
        tx.read_named_entity_facts_ahead(*asked.args, **asked.kwargs)
    return recall_entity_facts(tx, request, recall_memories(tx, request, recent_user_turns))


def recall_entity_facts(tx: ReadTxn, request: Request, fixed: FixedParts) -> FixedParts:
    """``fixed`` with the statements the user's other conversations made about the people and
    things the new message names (``convmem.entities``; this conversation's own come back as
    turns, through retrieval). Under the consent of memories: only the statements the user
    confirmed, unless the tenant's policy recalls proposals too; none for a temporary
    conversation, or while the user's or tenant's memory is off. Filtered in the store's
    query: scope (the user's entities and the conversation's project's), status and the
    conversation."""
    asked = _entity_facts_asked(tx, request)
    if asked is None:
        return fixed
    # the entities the message names, and their statements made elsewhere: one unit of work
    named, elsewhere = tx.named_entity_facts(*asked.args, **asked.kwargs)
    if not elsewhere:
        return fixed
    options = request.options
    cap = int(request.profile.input_budget * options.entity_facts_share)
    text, ids = render_entity_facts(
        choose_facts(request.query, elsewhere), {e.id: e.name for e in named}, request.counter,
        cap, options.entity_facts_k,
    )  # fmt: skip
    return replace(fixed, entity_facts=text, entity_fact_ids=ids)


# --- 2. plan ------------------------------------------------------------------------------------


class Planner:
    """Chooses the window for given fixed parts. The branch is read from the store once, page by
    page as far as a plan needs it, however many times the request is planned."""

    def __init__(self, request: Request, branch: Iterator[ChainEntry]) -> None:
        self._request = request
        self._source = branch
        self._broken = False  # a read of the branch failed: no later plan may see it cut short
        self.seen: list[ChainEntry] = []  # the part of the branch read so far, newest first

    def newest_user_turns(self, count: int) -> list[str]:
        """The texts of the user's turns among the branch's ``count`` newest messages, newest
        first (read once: the plans replay them)."""
        newest = itertools.islice(self._replay(), count)
        return [entry.message.content for entry in newest if entry.message.role == "user"]

    def plan(self, fixed: FixedParts) -> HistoryPlan:
        r = self._request
        return plan_history(
            self._replay(), current=r.user_message, fixed=fixed, profile=r.profile,
            counter=r.counter, format=r.format, options=r.options,
        )  # fmt: skip

    def first(self, fixed: FixedParts) -> tuple[HistoryPlan, FixedParts]:
        """The first plan, and the fixed parts it was made with: the late memories and the
        entity facts are a bonus, so without room for them the request goes without. With
        documents, their section's room is held: the share's, else the floor's (before the
        bonus parts give way to it); below the floor the request is refused."""
        r = self._request
        if r.documents is None:
            return self._first(fixed)
        budget, options = r.profile.input_budget, r.options
        rooms = sorted(
            {documents_room(budget, options.documents_share),
             documents_room(budget, options.documents_floor)},
            reverse=True,
        )  # fmt: skip
        for room in rooms[:-1]:
            try:
                return self._first(self._with_documents(fixed, room))
            except BudgetExceeded:
                continue  # the floor's room next
        return self._first(self._with_documents(fixed, rooms[-1]))

    def _with_documents(self, fixed: FixedParts, room: int) -> FixedParts:
        r = self._request
        assert r.documents is not None
        text, uses = render_documents(
            r.documents, r.query, r.counter, room, r.options.document_max_tokens
        )
        return replace(fixed, documents=text, documents_reserve=room, document_uses=uses)

    def _first(self, fixed: FixedParts) -> tuple[HistoryPlan, FixedParts]:
        try:
            return self.plan(fixed), fixed
        except BudgetExceeded:
            if not (fixed.relevant_memories or fixed.entity_facts):
                raise
            fixed = replace(
                fixed, relevant_memories=None, relevant_memory_ids=(), entity_facts=None,
                entity_fact_ids=(),
            )  # fmt: skip
            return self.plan(fixed), fixed

    def _replay(self) -> Iterator[ChainEntry]:
        yield from list(self.seen)
        index = len(self.seen)
        while True:
            if index < len(self.seen):
                yield self.seen[index]
            else:
                if self._broken:
                    raise StoreError("the branch could not be read")
                try:
                    entry = next(self._source, None)
                except BaseException:
                    self._broken = True  # a generator that raised is spent: it would end early
                    raise
                if entry is None:
                    return
                self.seen.append(entry)
                yield entry
            index += 1


# --- 2b. tools from the registry ----------------------------------------------------------------

# how many of the window's newest turns (besides the new message) tell what the task is about
RECENT_TURNS = 4


def offer_registry_tools(
    tx: ReadTxn, request: Request, planner: Planner, chosen: HistoryPlan, fixed: FixedParts
) -> tuple[HistoryPlan, FixedParts]:
    """Add the registry's tools this request needs (``convmem.tools.select``), ranked for the new
    message and the window's recent turns, and plan again with their cost. Without room for
    them the request goes with the caller's tools only, and the report says why."""
    if not request.offer_tools:
        return chosen, fixed
    registry = tx.list_tools(request.who.tenant)
    if not registry:
        return chosen, fixed
    history = [item.message for item in chosen.history]
    in_window = _called_in_window(history)
    turns = [m.content for m in history if m.role in ("user", "assistant") and m.content.strip()]
    recent = "\n".join(turns[-RECENT_TURNS:])
    ranked = rank_tools(tx, request.who.tenant, request.query, recent, embedder=request.embedder)
    counter, format = request.counter, request.format
    selection = select_tools(
        registry, ranked, cost=lambda spec: tool_tokens(counter, format, spec),
        max_tools=request.options.tools_k,
        max_tokens=tools_cap(request.profile.input_budget, request.options.tools_share),
        allow_risky=request.allow_risky, in_window=in_window,
        given={spec.name for spec in request.tools},
    )  # fmt: skip
    offered = replace(
        fixed, tools=(*request.tools, *selection.offered), tools_suppressed=selection.suppressed
    )
    try:
        return planner.plan(offered), offered
    except BudgetExceeded:
        unfit = [(spec.name, "no room in the budget") for spec in selection.offered]
        kept = replace(fixed, tools_suppressed=sorted([*selection.suppressed, *unfit]))
        return planner.plan(kept), kept


def _called_in_window(history: list[Message]) -> list[str]:
    """Names of the tools called in the window whose results the window holds, newest first."""
    answered = {m.tool_call_id for m in history if m.role == "tool"}
    names: list[str] = []
    for message in reversed(history):
        for call in message.tool_calls:
            if call.id in answered and call.name not in names:
                names.append(call.name)
    return names


# --- 3. retrieve --------------------------------------------------------------------------------


def hold_retrieved_room(
    request: Request, planner: Planner, chosen: HistoryPlan, fixed: FixedParts
) -> tuple[HistoryPlan, FixedParts] | None:
    """When history was evicted: the plan with the retrieved section's room held, and the fixed
    parts it was made with (None when there is nothing to hold or no room to hold it). The
    room is held whatever retrieval then finds, or when it fails: the window does not depend
    on it."""
    options = request.options
    reserve = retrieved_reserve(
        request.profile.input_budget, options.retrieved_share, options.retrieved_max_tokens
    )
    if not (chosen.evicted_count and reserve and options.retrieved_k):
        return None
    held = replace(fixed, retrieved_reserve=reserve)
    try:
        return planner.plan(held), held
    except BudgetExceeded:  # no room to hold: the request stays as it was
        return None


def retrieve_evicted(
    tx: ReadTxn,
    request: Request,
    memory: Database,
    planner: Planner,
    probe: HistoryPlan,
    held: FixedParts,
) -> HistoryPlan:
    """Bring back the evicted turns that matter to this message (the ones ``probe``, the plan
    holding the room, leaves out) into the held room and the history room the window's block
    boundary left unused. Returns ``probe`` with the section added (unchanged when nothing is
    found): the window is the probe's, whatever the section costs."""
    included = [item.message.id for item in probe.history]
    room = held.retrieved_reserve + unused_history_room(probe)
    shown = [item.content for item in probe.history]
    text, ids = _older_turns(tx, request, memory, planner.seen, included, shown, room)
    if text is None:
        return probe
    return with_retrieved(probe, text, ids, room)


def _older_turns(
    tx: ReadTxn,
    request: Request,
    memory: Database,
    seen: list[ChainEntry],
    included_ids: list[str],
    shown: list[str],
    cap: int,
) -> tuple[str | None, list[str]]:
    """The retrieved section: the best-ranked turns of this branch older than the window that
    are no near-duplicate of a turn the request already carries (``shown``, the window's texts)
    or of one ranked above them."""
    leaf, query, k = request.leaf, request.query, request.options.retrieved_k
    if leaf is None or not query.strip():
        return None, []
    depths = {entry.message.id: entry.message.depth for entry in seen}
    if included_ids:
        start, window_depth = included_ids[0], depths[included_ids[0]]
    else:
        start, window_depth = leaf, depths.get(leaf, 0) + 1
    who, conversation_id = request.who, request.conversation.id
    ranker = Ranker(
        request.embedder, memory.vector_cache, memory.config.search,
        Window(max_depth=window_depth),
    )  # fmt: skip
    fused = rank_conversation(tx, who, conversation_id, query, ranker, limit=4 * k)
    if not fused:
        return None, []
    # the ranked turns of this branch (another branch's are not this request's history)
    found = tx.branch_messages(who.tenant, who.user, start, [f.key for f in fused])
    relevant = standing_out([f for f in fused if f.key in found], request.options.retrieved_bar)
    if request.reranker is not None and relevant:
        # what stands out is decided on fused scores (a reranker's are on no common scale);
        # the reranker then orders it, so the k that fit are the ones it rates best
        head = relevant[: max(k, memory.config.search.rerank_depth)]
        scores = request.reranker.score(query, [found[f.key].content for f in head])
        relevant = reorder(relevant, scores)
    ranked = [found[f.key] for f in relevant]
    asked = query_terms(query)
    distinct = novel(ranked, lambda m: m.content, shown, asked=asked, limit=k)
    return render_retrieved_block(distinct, request.counter, cap, k)


# --- 4. summary ---------------------------------------------------------------------------------


def find_summary(
    tx: ReadTxn, flow: SummaryFlow, request: Request, chosen: HistoryPlan
) -> Lookup | None:
    """The summary through the newest evicted message: found by key, built (inline), or queued
    while the newest ready ancestor stands in. What it builds or queues is written after the read
    by ``SummaryFlow.commit``."""
    if chosen.summary_through_id is None or request.options.summary_threshold is None:
        return None
    who = request.who
    return flow.find(tx, who.tenant, who.user, request.conversation.id, chosen.summary_through_id)


# --- 5. render ----------------------------------------------------------------------------------


def kept_media(tx: ReadTxn, tenant: str, chosen: HistoryPlan) -> dict[str, bytes]:
    """The kept bytes of the media the window sends whole (read only when there are some)."""
    ids = [
        item.message.id
        for item in chosen.history
        if any(not isinstance(part, TextPart) and part.ref.kept for part in item.parts)
    ]
    return tx.message_blobs(tenant, ids) if ids else {}


def render_request(
    chosen: HistoryPlan,
    lookup: Lookup | None,
    previous_prefix: Sequence[str] = (),
    blobs: Mapping[str, bytes] | None = None,
) -> AssembledContext:
    """The request in the plan's format, with the summary section when there is one to use;
    ``previous_prefix`` is the previous recorded request's digests (convmem.context.prompt_cache);
    ``blobs`` the kept media bytes of the window's messages."""
    return finish_request(chosen, _summary_use(chosen, lookup), previous_prefix, blobs)


def _summary_use(plan: HistoryPlan, lookup: Lookup | None) -> SummaryUse | None:
    if lookup is None or lookup.use is None or lookup.source is None:
        return None
    record = lookup.use
    text = render_snapshot(record.snapshot, plan.counter, plan.summary_room)
    if not text:
        return None
    built = record.created_at
    age = max(0.0, (datetime.now(UTC) - built).total_seconds()) if built is not None else None
    return SummaryUse(
        text, record.id, record.through_message_id, lookup.source, age, record.prompt_version
    )

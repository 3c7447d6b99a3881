"""The request pipeline of ``Conversation.assemble``: memories → plan → retrieve → summary → render.

Each step is a plain function (planning is a small object, since every later step plans again)
over a ``Request`` — the checked inputs of one assembly and what was read to start it — and the
read transaction the request runs in. ``Conversation.assemble`` composes them; the window itself
is chosen by the pure functions of ``convmem.assemble``, and the sections' rooms come from
``convmem.budget``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TypeVar

from convmem.assemble import (
    AssembledContext,
    AssemblyOptions,
    ChainEntry,
    FixedParts,
    HistoryPlan,
    SummaryUse,
    finish_request,
    plan_history,
)
from convmem.budget import memory_caps, retrieved_reserve, tools_cap
from convmem.engine.handles import Database
from convmem.errors import BudgetExceeded, StoreBusy
from convmem.formats import Format
from convmem.memories import memory_gate, recall_candidates
from convmem.memory.recall import (
    RELEVANT_MEMORY_HEADER,
    expired_ids,
    irrelevant_ids,
    render_memory_block,
)
from convmem.model.conversation import ConversationRecord
from convmem.model.messages import Message
from convmem.model.principal import Principal
from convmem.model.profile import ModelProfile
from convmem.model.tools import ToolSpec
from convmem.retrieval.lexical import query_terms
from convmem.retrieval.matrix import Matrix
from convmem.retrieval.novelty import novel
from convmem.retrieval.recall import render_retrieved_block
from convmem.retrieval.vector import Embedder
from convmem.search import Window, rank_conversation, rank_tools
from convmem.store.base import ReadTxn
from convmem.summaries import Lookup, SummaryFlow
from convmem.summarize.render import render_snapshot
from convmem.tokens import TokenCounter, message_tokens
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
    pinned: list[str]
    profile: ModelProfile
    counter: TokenCounter
    format: Format
    options: AssemblyOptions
    embedder: Embedder | None  # the request's own (it embeds the query once)
    tools: tuple[ToolSpec, ...] = ()  # the tool definitions the caller sends with the request
    offer_tools: bool = False  # add the relevant tools of the tenant's registry
    allow_risky: bool | frozenset[str] = False  # risky registry tools allowed for this request


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


# --- degradation --------------------------------------------------------------------------------

T = TypeVar("T")
_log = logging.getLogger(__name__)


class _EmbedderFailed(Exception):
    """Raised through a step when the request's embedder failed, so the step can run again
    without vectors (the embedder is one part; the step's lexical half still works)."""


class GuardedEmbedder:
    """The request's embedder, as a part that may fail: the first failure is kept and every
    later call fails at once, so one broken model costs the request one attempt, not one per
    step."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.failure: BaseException | None = None

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dimensions(self) -> int:
        return self._inner.dimensions

    def embed(self, texts: Sequence[str]) -> Matrix:
        if self.failure is None:
            try:
                return self._inner.embed(texts)
            except Exception as exc:
                self.failure = exc
        raise _EmbedderFailed from self.failure


class Degradation:
    """The parts of one request skipped because they failed, each as "part: reason".

    Memories, registry tools, retrieval and the summary are extras around the window: when one
    raises, the request goes on without it and the report says so. The reason names the error's
    class only (an error's message may quote content). The message store itself failing is not a
    part: the window's own reads are not attempted here, so their StoreError still fails the
    request; StoreBusy is let through too, since the caller's retry is the answer to it.
    """

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def attempt(self, part: str, request: Request, step: Callable[[Request], T], fallback: T) -> T:
        try:
            return step(request)
        except StoreBusy:
            raise
        except _EmbedderFailed as failed:
            self._note("embedder", failed.__cause__)
            if request.embedder is None:  # cannot happen: only a guarded embedder raises it
                return fallback
            return self.attempt(part, replace(request, embedder=None), step, fallback)
        except Exception as exc:
            self._note(part, exc)
            return fallback

    def _note(self, part: str, exc: BaseException | None) -> None:
        reason = f"{part}: error {type(exc).__name__}"
        if reason not in self.reasons:
            _log.warning("assembly went without a part: %s", reason)
            self.reasons.append(reason)

    def report(self, context: AssembledContext) -> AssembledContext:
        """``context`` with the skipped parts in its report."""
        if not self.reasons:
            return context
        return replace(context, report=replace(context.report, degraded=list(self.reasons)))


def branch_entries(
    tx: ReadTxn, tenant: str, leaf: str | None, counter: TokenCounter
) -> Iterator[ChainEntry]:
    """The branch ending at ``leaf``, newest first, with each message's cost in ``counter``."""
    if leaf is None:
        return
    for row in tx.branch(tenant, leaf, counter.name):
        tokens = row.tokens
        if tokens is None:  # a tokenizer not counted at write: count now
            m = row.message
            tokens = message_tokens(counter, m.role, m.content, m.tool_calls, m.tool_call_id)
        yield ChainEntry(row.message, tokens, row.estimate_before)


# --- 1. memories --------------------------------------------------------------------------------


def recall_memories(tx: ReadTxn, request: Request) -> FixedParts:
    """The fixed parts: system prompt, pins and the long-term memory of this request (the block,
    and the late memories for a large set). A temporary conversation, a user or tenant with
    memory off, or recall switched off read no memory at all."""
    fixed = FixedParts(system_prompt=request.system, pinned=request.pinned, tools=request.tools)
    who, options, record = request.who, request.options, request.conversation
    if record.temporary or options.memory_k == 0 or memory_gate(tx, who) is not None:
        return fixed
    scopes = ["user"]
    project = record.metadata.get("project")
    if isinstance(project, str) and project:
        scopes.append(f"project:{project}")
    block, ranked = recall_candidates(
        tx, who, request.query, k=options.memory_k, scopes=scopes, embedder=request.embedder
    )
    # the store leaves expired memories out; one that comes anyway stays out and is reported
    expired = set(expired_ids([*block, *ranked], datetime.now(UTC)))
    block = [m for m in block if m.id not in expired]
    ranked = [m for m in ranked if m.id not in expired]
    cap, late_cap = memory_caps(request.profile.input_budget, options.memory_share)
    text, ids = render_memory_block(block, request.counter, cap)
    shown = set(ids)
    extra = [m for m in ranked if m.id not in shown][: options.memory_relevant_k]
    late, late_ids = render_memory_block(extra, request.counter, late_cap, RELEVANT_MEMORY_HEADER)
    candidates = {m.id: m for m in (*block, *ranked)}
    recalled = [candidates[i] for i in (*ids, *late_ids)]
    return replace(
        fixed, memories=text, memory_ids=ids, relevant_memories=late, relevant_memory_ids=late_ids,
        memory_candidates=len(candidates), expired_memory_ids=sorted(expired),
        irrelevant_memory_ids=irrelevant_ids(request.query, recalled),
    )  # fmt: skip


# --- 2. plan ------------------------------------------------------------------------------------


class Planner:
    """Chooses the window for given fixed parts. The branch is read from the store once, page by
    page as far as a plan needs it, however many times the request is planned."""

    def __init__(self, request: Request, branch: Iterator[ChainEntry]) -> None:
        self._request = request
        self._source = branch
        self.seen: list[ChainEntry] = []  # the part of the branch read so far, newest first

    def plan(self, fixed: FixedParts) -> HistoryPlan:
        r = self._request
        return plan_history(
            self._replay(), current=r.user_message, fixed=fixed, profile=r.profile,
            counter=r.counter, format=r.format, options=r.options,
        )  # fmt: skip

    def first(self, fixed: FixedParts) -> tuple[HistoryPlan, FixedParts]:
        """The first plan, and the fixed parts it was made with: the late memories are a bonus,
        so without room for them the request goes without."""
        try:
            return self.plan(fixed), fixed
        except BudgetExceeded:
            if not fixed.relevant_memories:
                raise
            fixed = replace(fixed, relevant_memories=None, relevant_memory_ids=())
            return self.plan(fixed), fixed

    def _replay(self) -> Iterator[ChainEntry]:
        yield from list(self.seen)
        index = len(self.seen)
        while True:
            if index < len(self.seen):
                yield self.seen[index]
            else:
                entry = next(self._source, None)
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


def retrieve_evicted(
    tx: ReadTxn,
    request: Request,
    memory: Database,
    planner: Planner,
    chosen: HistoryPlan,
    fixed: FixedParts,
) -> HistoryPlan:
    """When history was evicted: hold the retrieved section's room, see which turns that leaves
    out of the window, and bring back the ones that matter to this message. Returns the plan
    (``chosen`` as it was when there is nothing to hold or no room to hold it)."""
    options = request.options
    reserve = retrieved_reserve(
        request.profile.input_budget, options.retrieved_share, options.retrieved_max_tokens
    )
    if not (chosen.evicted_count and reserve and options.retrieved_k):
        return chosen
    held = replace(fixed, retrieved_reserve=reserve)
    try:
        probe = planner.plan(held)
    except BudgetExceeded:  # no room to hold: the request stays as it was
        return chosen
    included = [item.message.id for item in probe.history]
    shown = [item.content for item in probe.history]
    text, ids = _older_turns(tx, request, memory, planner.seen, included, shown, reserve)
    if text is None:
        return probe
    return planner.plan(replace(held, retrieved=text, retrieved_ids=ids))


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
    fused = rank_conversation(
        tx, who, conversation_id, query, embedder=request.embedder,
        cache=memory.vector_cache, options=memory.config.search,
        window=Window(max_depth=window_depth),
    )[: 4 * k]  # fmt: skip
    found = tx.get_messages(who.tenant, who.user, [f.key for f in fused])
    candidates = [found[f.key] for f in fused]
    if not candidates:
        return None, []
    lowest = min(m.depth for m in candidates)
    on_branch = tx.on_branch(who.tenant, start, [m.id for m in candidates], lowest)
    ranked = [m for m in candidates if m.id in on_branch]
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


def render_request(
    chosen: HistoryPlan, lookup: Lookup | None, previous_prefix: Sequence[str] = ()
) -> AssembledContext:
    """The request in the plan's format, with the summary section when there is one to use;
    ``previous_prefix`` is the previous recorded request's digests (convmem.prompt_cache)."""
    return finish_request(chosen, _summary_use(chosen, lookup), previous_prefix)


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

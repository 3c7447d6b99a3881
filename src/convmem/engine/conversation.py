"""The conversation handle: one conversation of one principal.

Writing (append, edit, regenerate, branch switches, deletes — each message passes the tree's
rules, is counted and indexed, and carries out what it asks of memory), reading (branches,
siblings, search, summaries, pins) and ``assemble``, the next model request from stored state.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from convmem.content.documents import read_documents
from convmem.content.parts import Content, read_content
from convmem.content.parts_render import text_parts
from convmem.content.tokens import get_counter
from convmem.context.assemble import AssemblyOptions, FixedParts
from convmem.context.formats import Format
from convmem.context.prompt_cache import previous_prefix
from convmem.context.report import AssembledContext
from convmem.domain.idempotency import Keyed as _Keyed
from convmem.domain.idempotency import keep, kept_notices, notices_result, replayed
from convmem.domain.indexing import after_delete, prepare_turn, write_turn
from convmem.domain.memory_requests import act_on_intent
from convmem.domain.retention import delete_conversation
from convmem.domain.search import SearchOptions, Window, search_conversation
from convmem.domain.vector_fill import PendingTurn
from convmem.engine.conversation_reads import ConversationReading
from convmem.engine.message_rules import checked_message, tool_run
from convmem.engine.parts import GuardedEmbedder, Parts, guarded_reranker, without_failed_embedder
from convmem.engine.pins import pin_instruction
from convmem.engine.request import (
    CURRENT_TURNS,
    CountOnce,
    Planner,
    Request,
    branch_entries,
    find_summary,
    hold_retrieved_room,
    kept_media,
    offer_registry_tools,
    recall_memory_parts,
    render_request,
    retrieve_evicted,
)
from convmem.entities.derive import derive_turn, extract_turn
from convmem.errors import InvalidInput, InvalidMessage, InvalidQuery, StoreBusy
from convmem.ids import new_id
from convmem.memory.intent import detect_intent
from convmem.model.deadline import Deadline, TimeLimits
from convmem.model.documents import Document
from convmem.model.keys import AssemblyRecord
from convmem.model.memory import MemoryNotice
from convmem.model.messages import Message, NewMessage, Role, ToolCall
from convmem.model.profile import ModelProfile
from convmem.model.search import MessageHit, Ranked
from convmem.model.tools import ToolSpec
from convmem.model.tree import (
    aware_utc,
    check_identifier,
    check_text,
    check_tool_result,
)
from convmem.retrieval.vector import Embedder, RequestEmbedder
from convmem.store.base import BranchRow, KeptWrite, PinnedInstruction, ReadTxn, WriteTxn
from convmem.store.conversations import PinOrigin
from convmem.store.retry import conflicts_retried, write_retried
from convmem.tools.schema import check_tool_name, parse_tools

_ACTIVE_LEAF = object()  # "append under the active leaf"


class Conversation(ConversationReading):
    """A handle on one conversation of one principal. Cheap; holds only ids."""

    # --- writing --------------------------------------------------------------------------------

    def append(
        self,
        role: Role,
        content: Content,
        *,
        tool_calls: Sequence[ToolCall] | None = None,
        tool_call_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        created_at: datetime | None = None,
        parent_id: str | None = None,
        keep_bytes: bool = False,
        idempotency_key: str | None = None,
    ) -> Message:
        """Add a message under ``parent_id`` (default: the active leaf) and make it the leaf.

        ``content`` is a string or a list of content parts as OpenAI (chat or Responses) or
        Anthropic take them, or convmem's own (``convmem.content.parts``): media by URL or by the
        caller's blob id, images with their width and height. Inline media (data URLs, base64)
        is hashed and dropped unless ``keep_bytes``: then the bytes are kept with the message
        (and deleted with it).

        ``idempotency_key``: the caller's name for this write (see ``convmem.domain.idempotency``):
        the same call again with the same key returns the message stored the first time and
        stores nothing; the same key for a different call is ``IdempotencyConflict``."""
        call = {
            "conversation": self.id, "role": role, "content": content, "tool_calls": tool_calls,
            "tool_call_id": tool_call_id, "metadata": metadata, "created_at": created_at,
            "parent_id": parent_id, "keep_bytes": keep_bytes,
        }  # fmt: skip
        key = _Keyed.of(idempotency_key, "append", call)
        new = self._new_message(
            role, content, tool_calls, tool_call_id, metadata, created_at, keep_bytes
        )
        parent: object = _ACTIVE_LEAF if parent_id is None else parent_id
        return self._write_message(new, parent, revision_of=None, revision_kind=None, key=key)

    def edit(
        self,
        message_id: str,
        content: Content,
        *,
        metadata: Mapping[str, Any] | None = None,
        keep_bytes: bool = False,
        idempotency_key: str | None = None,
    ) -> Message:
        """A new version of a user, system or assistant message, as its sibling; the leaf moves.
        ``idempotency_key``: as ``append``'s."""
        call = {
            "conversation": self.id, "message": message_id, "content": content,
            "metadata": metadata, "keep_bytes": keep_bytes,
        }  # fmt: skip
        key = _Keyed.of(idempotency_key, "edit", call)
        original = self.message(message_id)
        if original.role == "tool" or original.tool_calls:
            raise InvalidMessage("tool calls and tool results cannot be edited")
        merged = dict(original.metadata) if metadata is None else metadata
        new = self._new_message(original.role, content, None, None, merged, None, keep_bytes)
        return self._write_message(new, original.parent_id, original.id, "edit", key=key)

    def regenerate(
        self,
        reply_id: str,
        content: Content | None = None,
        *,
        tool_calls: Sequence[ToolCall] | None = None,
        metadata: Mapping[str, Any] | None = None,
        keep_bytes: bool = False,
        idempotency_key: str | None = None,
    ) -> Message:
        """Start a new version of an assistant reply (``idempotency_key``: as ``append``'s, for
        a new reply given with it).

        With ``content`` (or tool calls) the new reply is stored as a sibling and becomes the leaf.
        Without, the active leaf moves back to the message the reply answered, which is returned:
        assemble with no new user message, then ``append("assistant", …)`` the model's new reply.
        """
        call = {
            "conversation": self.id, "message": reply_id, "content": content,
            "tool_calls": tool_calls, "metadata": metadata, "keep_bytes": keep_bytes,
        }  # fmt: skip
        key = _Keyed.of(idempotency_key, "regenerate", call)
        original = self.message(reply_id)
        if original.role != "assistant":
            raise InvalidMessage("only assistant replies can be regenerated")
        if content is None and not tool_calls:
            if original.parent_id is None:
                raise InvalidMessage("a reply at the root answers nothing to regenerate from")
            self.switch_branch(original.parent_id)
            return self.message(original.parent_id)
        new = self._new_message(
            "assistant", content or "", tool_calls, None, metadata, None, keep_bytes
        )
        return self._write_message(new, original.parent_id, original.id, "regenerate", key=key)

    @conflicts_retried
    def switch_branch(self, leaf_id: str) -> None:
        """Make ``leaf_id`` (any message of this conversation) the active leaf."""
        with self._store.write() as tx:
            self._own_message(tx, leaf_id)
            tx.set_active_leaf(self._tenant, self.id, leaf_id)

    @conflicts_retried
    def delete_message(self, message_id: str) -> list[str]:
        """Delete a message and its whole subtree, for real. Returns the deleted ids."""
        with self._store.write() as tx:
            record = tx.get_conversation(self._tenant, self.scope.user, self.id)
            message = self._own_message(tx, message_id)
            doomed = tx.subtree_ids(self._tenant, message_id)
            tx.delete_messages(self._tenant, doomed)  # and what was derived (the Protocol says)
            after_delete(tx, self._tenant, self.id, message.parent_id, self._session_gap)
            if record.active_leaf_id in set(doomed):
                tx.set_active_leaf(self._tenant, self.id, message.parent_id)
        return doomed

    @property
    def _session_gap(self) -> timedelta:
        return self.scope.memory.config.session_gap

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        options: SearchOptions | None = None,
    ) -> Ranked[MessageHit]:
        """The conversation's turns (every branch) ranked for ``query``: lexical, expansion and,
        with an embedder, vector rankings fused. ``since``/``until`` keep turns created in that
        range. Tool results are not searched. The list's ``unembedded`` counts the turns that
        had no vector yet (ranked by words only) and ``degraded`` names an embedder that failed
        or ran past its time limit (the search then ranked by words)."""
        memory = self.scope.memory
        limits = memory.config.time_limits
        window = Window(since=_aware(since, "since"), until=_aware(until, "until"))
        memory.settle_vectors(limits.embedder)  # a turn written just before, by meaning too
        serving = memory.embedder_for(self._tenant)  # (before the read: it may read itself)
        with self._store.read() as tx:
            tx.get_conversation(self._tenant, self.scope.user, self.id)
            reranker = guarded_reranker(memory.reranker, limits)
            hits, degraded = without_failed_embedder(
                serving, limits,
                lambda embedder: search_conversation(
                    tx, self.scope.principal, self.id, query, k, embedder=embedder,
                    cache=memory.vector_cache, options=options or memory.config.search,
                    window=window, reranker=reranker,
                ),
            )  # fmt: skip
            unembedded = 0
            if serving is not None:
                unembedded = tx.unembedded_turns(self._tenant, self.id, serving.name)
        return Ranked(hits, unembedded=unembedded, degraded=degraded)

    @conflicts_retried
    def delete(self) -> None:
        """Delete the conversation with every message, for real."""
        with self._store.write() as tx:
            tx.get_conversation(self._tenant, self.scope.user, self.id)
            delete_conversation(tx, self.scope.principal, self.id)

    def pin(self, text: str, *, origin: PinOrigin = "application") -> PinnedInstruction:
        """Pin an instruction for this conversation (``origin``: see ``Scope.pin``)."""
        return pin_instruction(self.scope.memory, self.scope.principal, self.id, text, origin)

    def _new_message(
        self,
        role: Role,
        content: Content,
        tool_calls: Sequence[ToolCall] | None,
        tool_call_id: str | None,
        metadata: Mapping[str, Any] | None,
        created_at: datetime | None,
        keep_bytes: bool = False,
    ) -> NewMessage:
        max_bytes = self.scope.memory.config.max_content_bytes
        text, parts, blobs = read_content(content, keep_bytes=keep_bytes, max_bytes=max_bytes)
        given = NewMessage(role, text, tuple(tool_calls or ()), tool_call_id,
                           {} if metadata is None else metadata,
                           created_at, parts, blobs)  # fmt: skip
        return checked_message(given, max_bytes)

    def _write_message(
        self,
        new: NewMessage,
        parent: object,
        revision_of: str | None,
        revision_kind: str | None,
        *,
        key: _Keyed | None = None,
    ) -> Message:
        cost = self.scope.memory.count_message(new)  # outside the write lock
        # what the user typed: a caption or a file's text is the application's, not a request
        said = text_parts(new.parts) if new.parts else new.content
        intent = detect_intent(said) if new.role == "user" and said.strip() else None
        tenant, user = self._tenant, self.scope.user
        assert new.created_at is not None
        message_id = new_id("msg")
        memory = self.scope.memory
        unplaced = Message(
            message_id, self.id, None, 0, new.role, new.content, new.tool_calls,
            new.tool_call_id, new.metadata, new.created_at, parts=new.parts,
        )  # fmt: skip
        # the turn's vector is filled after the commit (``convmem.domain.vector_fill``): the
        # write never waits on the embedder; reading the turn's entities runs outside the lock
        prepared = prepare_turn(unplaced, None, memory.vector_cache)
        mentions = extract_turn(unplaced) if memory.config.entities else None

        if parent is not _ACTIVE_LEAF and parent is not None:
            assert isinstance(parent, str)
            check_identifier(parent, "parent id")
        period = timedelta(hours=memory.config.idempotency_hours)
        now = datetime.now(UTC)
        fingerprint = None if key is None else key.fingerprint(tenant, user)

        def place(tx: WriteTxn) -> tuple[Message, tuple[MemoryNotice, ...], bool]:
            if key is not None and fingerprint is not None:
                tx.get_conversation(tenant, user, self.id)  # NotFound: not theirs
                kept = replayed(tx, tenant, user, key.key, key.kind, fingerprint, now=now,
                                period=period)  # fmt: skip
                if kept is not None and kept.message_id is not None:
                    again = tx.get_message(tenant, user, kept.message_id)
                    return again, kept_notices(tx, self.scope.principal, kept), True
            # one unit of work: the conversation, locked, and the row the message goes under
            at_leaf = parent is _ACTIVE_LEAF
            given = None if at_leaf else parent
            assert given is None or isinstance(given, str)
            state = tx.append_state(tenant, user, self.id, given, under_active_leaf=at_leaf)
            record, parent_row = state.conversation, state.parent
            parent_id = None if parent_row is None else parent_row.message.id
            if new.role == "tool":  # only a tool result needs the run of results above it
                check_tool_result(new, self._tool_run(tx, parent_row))
            depth = 0 if parent_row is None else parent_row.message.depth + 1
            before = (
                0 if parent_row is None else parent_row.estimate_before + parent_row.estimate_tokens
            )
            stored = replace(unplaced, parent_id=parent_id, depth=depth)
            row = cost.row(stored, revision_of, revision_kind, before, new.blobs)
            tx.insert_messages(tenant, user, [row])
            if prepared is not None:
                grandparent = None if parent_row is None else parent_row.message.parent_id
                write_turn(tx, tenant, user, stored, prepared, memory.config.session_gap,
                           grandparent_id=grandparent)  # fmt: skip
            derive_turn(tx, record, stored, mentions)
            tx.set_active_leaf(tenant, self.id, stored.id)
            notices: tuple[MemoryNotice, ...] = ()
            if intent is not None:
                notices = act_on_intent(
                    tx, self.scope.principal, intent, stored.id, temporary=record.temporary
                )
            if key is not None and fingerprint is not None:
                kept = KeptWrite(key.key, key.kind, fingerprint, now, message_id=stored.id,
                                 result=notices_result(notices))  # fmt: skip
                keep(tx, tenant, user, kept, period=period)
            return stored, notices, False

        stored, notices, again = write_retried(self._store, place)
        if again:  # the write was stored by an earlier call with this key: nothing new
            return replace(stored, notices=notices)
        if prepared is not None:
            memory.queue_vectors([PendingTurn(tenant, stored.id, prepared)])
        self.scope._embed_notices(notices)
        return replace(stored, notices=notices)

    def _tool_run(self, tx: ReadTxn, parent: BranchRow | None) -> list[Message]:
        tenant, user = self._tenant, self.scope.user
        return tool_run(
            parent.message if parent else None, lambda i: tx.get_message(tenant, user, i)
        )

    # --- assembly -------------------------------------------------------------------------------

    def assemble(
        self,
        user_message: str | None = None,
        *,
        model: ModelProfile | None = None,
        format: Format = "openai",
        system: str | None = None,
        leaf_id: str | None = None,
        options: AssemblyOptions | None = None,
        purposes: Sequence[str] | None = None,
        tools: Sequence[Mapping[str, Any] | ToolSpec] | None = None,
        offer_tools: bool = False,
        allow_risky: bool | Sequence[str] = False,
        documents: Sequence[Document | Mapping[str, Any]] | None = None,
    ) -> AssembledContext:
        """Build the next request from stored state.

        ``purposes``: recall only memories of these purposes (default: every purpose the scope
        may use; more than that is ``PurposeNotAllowed``).

        ``user_message`` is the new turn, not yet stored; leave it out when the turn being answered
        is already the branch's leaf (a stored user message, or tool results to continue from).

        ``tools`` are the application's tool definitions (OpenAI function schemas or Anthropic
        tool schemas): counted the way the provider charges them, taken off the budget before
        history, and returned in ``format``'s shape as ``AssembledContext.tools``.

        ``offer_tools`` adds the tenant's registered tools (``Memory.tools``) that this request
        needs: the ones relevant to the new message and the recent turns, at most
        ``options.tools_k`` within ``options.tools_share`` of the budget, and any tool called
        earlier whose result is still in the window. A tool registered with risk ``high`` is
        offered only when ``allow_risky`` is True or names it. The report lists what was offered
        and, for every other registered tool, why not.

        ``documents`` are the application's retrieved documents for this message (``Document``
        values or mappings with ``id``, ``text`` or ``content`` and optionally ``title``,
        ``source``, ``url``, ``date``, ``score``): sent after the recent turns, before the user's
        message, as one quoted block with a citation key ``[doc:ID]`` each, within
        ``options.documents_share`` of the budget (held whenever documents are passed, an empty
        list too, so the window does not depend on them); ordered by score, else by relevance to
        the message; long ones cut at a sentence end. ``report.documents`` says what became of
        each. They are never stored, and nothing in them acts on memory.

        No message is written. When turns were evicted, the summary through the newest evicted
        message fills the summary slot: found by key, or built inline by the extractive
        summarizer and stored, or — for a model summarizer — queued for the worker while the
        newest ready ancestor summary stands in.
        """
        memory = self.scope.memory
        if model is not None and not isinstance(model, ModelProfile):
            raise InvalidInput("model must be a convmem.ModelProfile (context_window, max_output, "
                               "tokenizer, name)")  # fmt: skip
        if options is not None and not isinstance(options, AssemblyOptions):
            raise InvalidInput("options must be a convmem.AssemblyOptions")
        profile = model or memory.config.default_model
        counter = CountOnce(get_counter(profile.tokenizer))
        if user_message is not None:
            check_text(user_message, max_bytes=memory.config.max_content_bytes)
            if not user_message.strip():
                raise InvalidMessage("the user message needs content")
        options = options or AssemblyOptions()
        who = self.scope.principal_for(purposes)
        tool_specs = tuple(parse_tools(tools))
        given = None
        if documents is not None:
            given = read_documents(documents, max_bytes=memory.config.max_content_bytes)
        risky_allowed = _allowed_risky(allow_risky)
        if system is None:  # the argument wins; the options' prompt is the default
            system = options.system_prompt
        if system is not None:
            check_text(system, max_bytes=memory.config.max_content_bytes, what="system")
        parts = Parts(options.time_limits or memory.config.time_limits)
        memory.settle_vectors(parts.limits.embedder)  # the turn just written, by meaning too
        if leaf_id is not None:
            check_identifier(leaf_id, "message id")
        serving = memory.embedder_for(self._tenant)  # (before the read: it may read itself)
        with self._store.read() as tx:
            # one unit of work: the conversation, pins, last request and the branch's first page
            state = tx.request_state(
                self._tenant, self.scope.user, self.id, leaf_id, counter.name,
                reach=_reach(profile),
            )  # fmt: skip
            record, leaf = state.conversation, state.leaf_id
            if state.session_problem is not None:  # Redis away: the database answered
                parts.reasons.append(f"session: {state.session_problem}")
            if leaf is None and user_message is None:
                raise InvalidInput("the conversation is empty: pass the user message to answer")
            pins = [pin.text for pin in state.pins if pin.origin == "application"]
            asked = [pin.text for pin in state.pins if pin.origin == "user"]
            sent = state.last_assembly
            previous = previous_prefix(
                sent.report if sent else None, sent.at if sent else None, datetime.now(UTC)
            )
            entries = branch_entries(state.branch, counter)
            query = user_message
            if query is None and leaf is not None:  # the leaf answered: the branch's first row
                newest = next(entries, None)
                if newest is not None:
                    query = newest.message.content
                    entries = itertools.chain([newest], entries)
            request = Request(
                who=who, conversation=record, leaf=leaf,
                user_message=user_message, query=query or "", system=system, pinned=pins,
                user_pinned=asked,
                profile=profile, counter=counter, format=format, options=options,
                embedder=guarded(serving, parts),
                reranker=guarded_reranker(memory.reranker, parts.limits, parts),
                tools=tool_specs, offer_tools=bool(offer_tools), allow_risky=risky_allowed,
                documents=given,
            )  # fmt: skip
            planner = Planner(request, entries)
            recent = planner.newest_user_turns(CURRENT_TURNS)
            # the steps: memories → plan → tools → retrieve → summary (→ render, after the read);
            # the memories, registry tools, retrieval and the summary are parts the request goes
            # without when they fail or run past their time limits (``engine.parts``)
            bare = FixedParts(
                system_prompt=system, pinned=pins, user_pinned=asked, tools=request.tools
            )
            fixed = parts.attempt(
                "memories", request,
                lambda r: recall_memory_parts(tx, r, recent), bare, tx,
            )  # fmt: skip
            chosen, fixed = planner.first(fixed)
            # registry tools: without them (the caller's own still go) when ranking fails
            chosen, fixed = parts.attempt(
                "tools", request,
                lambda r: offer_registry_tools(tx, r, planner, chosen, fixed), (chosen, fixed), tx,
            )  # fmt: skip
            held = hold_retrieved_room(request, planner, chosen, fixed)
            if held is not None:
                probe, room = held
                chosen = parts.attempt(
                    "retrieval", request,
                    lambda r: retrieve_evicted(tx, r, memory, planner, probe, room), probe, tx,
                )  # fmt: skip
            lookup = parts.attempt(
                "summary", request,
                lambda r: find_summary(tx, memory.summaries, r, chosen), None, tx,
            )  # fmt: skip
            blobs = kept_media(tx, self._tenant, chosen)
            unembedded = self._unembedded(tx, parts.limits, serving)
        if lookup is not None:  # what the summary step built or queued is written after the read
            found, flow, store, user = lookup, memory.summaries, self._store, self.scope.user
            lookup = parts.attempt(
                "summary", request, lambda r: flow.commit(store, self._tenant, user, found), None
            )
        context = parts.report(render_request(chosen, lookup, previous, blobs))
        if state.session is not None:
            context = replace(context, report=replace(context.report, session=state.session))
        if unembedded:
            context = replace(context, report=replace(context.report, unembedded=unembedded))
        memory.observer.assembled(context.report)
        return context

    def _unembedded(
        self, tx: ReadTxn, limits: TimeLimits, embedder: Embedder | None
    ) -> dict[str, int]:
        """The turns and memories a request's recall ranks by words only (no vector yet), each
        count within the time limit of the part it describes (retrieval, memories); a count
        that fails or runs past it is left out: it is a note of the report, not a part."""
        if embedder is None:
            return {}
        tenant, user, name = self._tenant, self.scope.user, embedder.name
        counts: list[tuple[str, float | None, Callable[[], int]]] = [
            ("turns", limits.retrieval, lambda: tx.unembedded_turns(tenant, self.id, name)),
            ("memories", limits.memories, lambda: tx.unembedded_memories(tenant, user, name)),
        ]
        out: dict[str, int] = {}
        for what, limit, count in counts:
            try:
                if limit is None:
                    out[what] = count()
                    continue
                with tx.time_limited(Deadline(limit)):
                    out[what] = count()
            except StoreBusy:
                raise
            except Exception:
                continue
        return out

    @conflicts_retried
    def record_assembly(self, context: AssembledContext, leaf_id: str | None = None) -> None:
        """Keep ``context``'s report as this conversation's last assembled request (token counts,
        ids and the digests of its parts, no content), for inspection and as the request the next
        ``assemble`` estimates its prompt-cache share against (convmem.context.prompt_cache): call
        it when the request is sent. Assembly itself writes nothing; a service calls this."""
        with self._store.write() as tx:
            record = tx.get_conversation(self._tenant, self.scope.user, self.id)
            kept = AssemblyRecord(
                conversation_id=self.id,
                leaf_id=leaf_id or record.active_leaf_id,
                at=datetime.now(UTC),
                report=context.report.to_dict(),
            )
            tx.put_last_assembly(self._tenant, self.scope.user, kept)


def _reach(profile: ModelProfile) -> int:
    """How far back (estimated tokens) a request's window reads: its input budget, and a quarter
    more for the turns the plan looks at past it (the window's block boundary)."""
    return profile.input_budget * 5 // 4


def _allowed_risky(allow_risky: object) -> bool | frozenset[str]:
    if isinstance(allow_risky, bool):
        return allow_risky
    if isinstance(allow_risky, str) or not isinstance(allow_risky, Sequence):
        raise InvalidInput("allow_risky must be True, False or a list of tool names")
    return frozenset(check_tool_name(name, i) for i, name in enumerate(allow_risky))


def guarded(embedder: Embedder | None, parts: Parts) -> GuardedEmbedder | None:
    """The request's view of the store's embedder: each text embedded once, within the
    embedder's time limit; its failure is a part's."""
    if embedder is None:
        return None
    return GuardedEmbedder(RequestEmbedder(embedder), parts.limits.embedder, parts)


def _aware(value: datetime | None, what: str) -> datetime | None:
    return None if value is None else aware_utc(value, what, error=InvalidQuery)

"""The bulk write path for imports: whole conversation trees, many messages per transaction.

``Conversation.append`` pays, per message, a transaction, the parent's row read back, the tool
run walked in the database, the neighbour's index context rewritten and the vocabulary merged.
An import knows the whole tree up front, so here all of that is computed in memory — depths,
running estimates, tool-result checks, each turn's index context with its final neighbours, the
conversation's vocabulary once — and a batch of conversations is written in one transaction:
each conversation is whole or absent, so a run stopped midway resumes where it stopped.

Embeddings are not computed: ``convmem worker --embedder …`` backfills them. Imported user
messages do not act on memory ("remember that …" in an old chat is history, not a request).
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TypeVar

from convmem.content.tokens import TokenCounter
from convmem.domain.indexing import index_entry
from convmem.engine import Memory, Scope
from convmem.engine.message_rules import checked_message, tool_run
from convmem.errors import ConvmemError
from convmem.ids import new_id
from convmem.importers.owners import by_owner
from convmem.model.conversation import ConversationRecord
from convmem.model.messages import Message, NewMessage
from convmem.model.tree import (
    check_count,
    check_text,
    check_tool_result,
    normalise_created_at,
)
from convmem.retrieval.index import (
    IndexedTurn,
    context_text,
    indexable,
    indexed_turn,
    vocabulary,
)
from convmem.store.base import IndexEntry, MessageRow
from convmem.store.retry import conflicts_retried

IMPORT_KEY = "import"  # conversation metadata: {"import": {"source": …, "id": …}}
MESSAGES_PER_TRANSACTION = 5000
T = TypeVar("T")


@dataclass(frozen=True)
class ImportNode:
    """One message of a source tree. ``key`` is the source's id for it (kept as ``ext_id``)."""

    key: str
    parent_key: str | None
    message: NewMessage


@dataclass(frozen=True)
class ImportTree:
    """One source conversation: its nodes in any order, and the leaf that was active."""

    source_id: str
    title: str | None
    created_at: datetime | None
    nodes: Sequence[ImportNode]
    active_key: str | None = None
    skipped: Mapping[str, int] = field(default_factory=dict)  # what the reader left out, why
    owner: object = None  # the user the source says it belongs to (None: it says nothing)


@dataclass
class ImportReport:
    """What a run did: conversations and messages written, trees already there, and each
    skipped message's reason (counts per reason; never content)."""

    conversations: int = 0
    messages: int = 0
    already_imported: int = 0
    skipped: dict[str, int] = field(default_factory=lambda: defaultdict(int))


@dataclass(frozen=True)
class _Planned:
    record: ConversationRecord
    rows: list[MessageRow]
    index: list[IndexEntry]
    words: set[str]
    speakers: set[str]


def imported_ids(scope: Scope, source: str) -> set[str]:
    """The source ids of the trees already imported for this user (a re-run skips them)."""
    found: set[str] = set()
    offset = 0
    while page := scope.conversations(limit=500, offset=offset):
        for record in page:
            mark = record.metadata.get(IMPORT_KEY)
            if isinstance(mark, Mapping) and mark.get("source") == source:
                found.add(str(mark.get("id")))
        offset += len(page)
    return found


def import_trees(
    scope: Scope,
    source: str,
    trees: Iterable[ImportTree],
    *,
    progress: Callable[[int], None] | None = None,
    batch_messages: int = MESSAGES_PER_TRANSACTION,
) -> ImportReport:
    """Write the trees this user does not have yet, about ``batch_messages`` messages per
    transaction (whole trees only); ``progress`` is told how many source conversations each
    batch settled."""
    check_count(batch_messages, "batch_messages")
    # the scope is the principal: a tree its source says is someone else's is refused — a list
    # whole, before anything is written; a stream (read as it is written, never held whole) as
    # it comes, the batches before it kept, as when a source fails midway
    if isinstance(trees, Sequence):
        by_owner(trees, _owner, _source_id, user=scope.user, as_named=False)
    else:
        trees = _owned_by(scope.user, trees)
    report = ImportReport()
    done = imported_ids(scope, source)
    counters = scope.memory.batch_counters()  # for this run only: no text outlives it
    batches = _batches(scope, source, trees, done, report, batch_messages, counters)
    with collector_paused():
        for batch, settled in planned_ahead(batches):
            _write(scope, batch, report)
            if progress is not None and settled:
                progress(settled)
    if report.messages:
        scope.memory.store.refresh_statistics()
    return report


def import_trees_as_named(
    memory: Memory,
    tenant: str,
    user: str,
    source: str,
    trees: Iterable[ImportTree],
    *,
    progress: Callable[[int], None] | None = None,
    batch_messages: int = MESSAGES_PER_TRANSACTION,
) -> ImportReport:
    """An administrator's import: each tree for the user its source names (``user`` for trees
    naming none), through ``import_trees`` per user. Every owner is checked before anything is
    written."""
    groups, _ = by_owner(list(trees), _owner, _source_id, user=user, as_named=True)
    total = ImportReport()
    for owner, owned in sorted(groups.items()):
        part = import_trees(
            memory.scope(tenant, owner), source, owned, progress=progress,
            batch_messages=batch_messages,
        )  # fmt: skip
        total.conversations += part.conversations
        total.messages += part.messages
        total.already_imported += part.already_imported
        for reason, count in part.skipped.items():
            total.skipped[reason] += count
    return total


def _owner(tree: ImportTree) -> object:
    return tree.owner


def _source_id(tree: ImportTree, position: int) -> str:
    return f"conversation {tree.source_id}"


def _owned_by(user: str, trees: Iterable[ImportTree]) -> Iterator[ImportTree]:
    for tree in trees:
        by_owner([tree], _owner, _source_id, user=user, as_named=False)
        yield tree


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off for the run, as it was after. A batch is thousands of
    rows alive at once, and each time the objects alive grow by a quarter the collector scans
    all of them (the export read in included): a sixth of an import's CPU, to find no cycles —
    the rows hold none, and reference counting frees each batch once written. Process-wide, so
    another thread's cyclic garbage waits for the end of the run."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def planned_ahead(items: Iterator[T]) -> Iterator[T]:
    """``items`` in order, each next one made in a thread while the caller works on the one
    before: planning a batch is Python, writing one is mostly the database's own code, which
    runs without the GIL, so on two cores the two overlap. The thread never touches the
    database (the caller writes, on its own connection); an error making an item is raised
    here, and leaving early waits for the item being made, then stops."""
    end = object()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="convmem-import") as planner:
        making = planner.submit(next, items, end)
        while (item := making.result()) is not end:
            making = planner.submit(next, items, end)
            yield item  # type: ignore[misc]


def _batches(
    scope: Scope,
    source: str,
    trees: Iterable[ImportTree],
    done: set[str],
    report: ImportReport,
    size: int,
    counters: Sequence[TokenCounter],
) -> Iterator[tuple[list[_Planned], int]]:
    """Planned batches of at least ``size`` messages (the last one smaller, maybe empty), each
    with how many source trees it settled (written, already there, or left with nothing);
    ``done`` holds the source ids already imported."""
    batch: list[_Planned] = []
    messages = settled = 0
    for tree in trees:
        settled += 1
        if tree.source_id in done:
            report.already_imported += 1
            continue
        done.add(tree.source_id)
        planned = _plan(scope, source, tree, report, counters)
        if planned is not None:
            batch.append(planned)
            messages += len(planned.rows)
        if messages >= size:
            yield batch, settled
            batch, messages, settled = [], 0, 0
    yield batch, settled


@conflicts_retried
def _write(scope: Scope, batch: list[_Planned], report: ImportReport) -> None:
    if not batch:
        return
    tenant, user = scope.tenant, scope.user
    rows = [row for planned in batch for row in planned.rows]
    with scope.memory.store.write() as tx:
        for planned in batch:
            tx.insert_conversation(tenant, planned.record)
        tx.insert_messages(tenant, user, rows)
        tx.index_messages(tenant, user, [entry for planned in batch for entry in planned.index])
        for planned in batch:
            conversation = planned.record.id
            if planned.words or planned.speakers:
                tx.add_terms(tenant, conversation, sorted(planned.words), sorted(planned.speakers))
    report.conversations += len(batch)
    report.messages += len(rows)


def _plan(
    scope: Scope,
    source: str,
    tree: ImportTree,
    report: ImportReport,
    counters: Sequence[TokenCounter],
) -> _Planned | None:
    """The rows of one tree: nodes that cannot be stored are skipped with their reason, and
    their children hang from the nearest stored ancestor."""
    memory = scope.memory
    for reason, count in tree.skipped.items():
        report.skipped[reason] += count
    title = tree.title
    if title is not None:
        try:
            check_text(title, max_bytes=1000, what="title")
        except ConvmemError:
            title = title.encode()[:1000].decode(errors="ignore")
    record = ConversationRecord(
        id=new_id("conv"), tenant_id=scope.tenant, user_id=scope.user, title=title,
        temporary=False, active_leaf_id=None,
        metadata={IMPORT_KEY: {"source": source, "id": tree.source_id}},
        created_at=normalise_created_at(tree.created_at),
    )  # fmt: skip
    by_key = {node.key: node for node in tree.nodes}
    children: dict[str | None, list[ImportNode]] = defaultdict(list)
    for node in tree.nodes:
        children[node.parent_key if node.parent_key in by_key else None].append(node)
    stored: dict[str, Message] = {}  # message id -> the message, parents before children
    placed: dict[str, str | None] = {}  # source key -> the stored message standing for it
    news: list[NewMessage] = []  # as checked, in the order of ``stored``

    def walk() -> Iterator[ImportNode]:  # parents before children, without recursion
        stack = list(reversed(children[None]))
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(children.get(node.key, [])))

    for node in walk():
        parent_id = placed.get(node.parent_key) if node.parent_key is not None else None
        parent = stored.get(parent_id) if parent_id is not None else None
        try:
            new = checked_message(
                node.message, memory.config.max_content_bytes, added={"ext_id": node.key}
            )
            if new.role == "tool":
                check_tool_result(new, tool_run(parent, stored.get))
        except ConvmemError as exc:
            report.skipped[type(exc).__name__] += 1
            placed[node.key] = parent_id
            continue
        assert new.created_at is not None
        message = Message(
            new_id("msg"), record.id, parent_id, 0 if parent is None else parent.depth + 1,
            new.role, new.content, new.tool_calls, new.tool_call_id, new.metadata, new.created_at,
            parts=new.parts,
        )  # fmt: skip
        stored[message.id] = message
        placed[node.key] = message.id
        news.append(new)
    if not news:
        report.skipped["empty_conversation"] += 1
        return None
    rows: list[MessageRow] = []
    before: dict[str, int] = {}  # message id -> the estimate of its branch down to it
    costs = memory.count_messages(news, counters)
    for message, new, cost in zip(stored.values(), news, costs, strict=True):
        start = 0 if message.parent_id is None else before[message.parent_id]
        before[message.id] = start + cost.estimate
        rows.append(cost.row(message, None, None, start, new.blobs))
    index, words, speakers = _index_rows(list(stored.values()), memory.config.session_gap)
    active = placed.get(tree.active_key) if tree.active_key is not None else None
    if active is None:  # the newest leaf
        active = max(rows, key=lambda r: (r.message.created_at, r.message.depth)).message.id
    record = replace(record, active_leaf_id=active)  # written with it: no update after
    return _Planned(record, rows, index, words, speakers)


def _index_rows(
    messages: list[Message], gap: timedelta
) -> tuple[list[IndexEntry], set[str], set[str]]:
    """The index rows of a tree's messages (parents before children), each with its final
    neighbours — its parent, and its newest indexed child, as appends one at a time leave
    them — and the tree's vocabulary and speakers."""
    turns: dict[str, IndexedTurn] = {}
    last_child: dict[str, str] = {}
    texts: dict[str, list[str]] = defaultdict(list)  # per speaker: the vocabulary excludes it
    for message in messages:
        if not indexable(message.role, message.content):
            continue
        turn = turns[message.id] = indexed_turn(message)
        texts[turn.speaker].append(message.content)
        if message.parent_id is not None:
            last_child[message.parent_id] = message.id
    index = []
    for message in messages:
        indexed = turns.get(message.id)
        if indexed is None:
            continue
        previous = turns.get(message.parent_id) if message.parent_id else None
        following = turns.get(last_child.get(message.id, ""))
        ctx = context_text(indexed, previous, following, gap)
        index.append(index_entry(message, indexed, ctx))
    words: set[str] = set()
    for speaker, said in texts.items():
        words |= vocabulary(said, exclude=speaker.lower().split())
    return index, words, set(texts)

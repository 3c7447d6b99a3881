"""What a conversation handle reads: its record, messages, branches and their versions, pins,
summaries and the last request kept. ``Conversation`` adds the writes and ``assemble``."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

from convmem.content.tokens import ESTIMATE
from convmem.engine.handles import Owner
from convmem.errors import NotFound
from convmem.model.conversation import ConversationRecord
from convmem.model.keys import AssemblyRecord
from convmem.model.messages import Message
from convmem.model.summary import SummaryRecord
from convmem.model.tree import check_count, check_identifier
from convmem.store.base import PinnedInstruction, ReadTxn, Store


@dataclass(frozen=True)
class Version:
    """A message of a branch window with its place among its versions (edits, regenerations):
    ``number`` of ``count``, counting from the oldest."""

    message: Message
    number: int
    count: int


class ConversationReading:
    """A handle on one conversation of one principal: its reads. Cheap; holds only ids."""

    def __init__(self, scope: Owner, conversation_id: str) -> None:
        self.scope = scope
        self.id = conversation_id

    def __repr__(self) -> str:
        return f"Conversation(id={self.id!r})"

    @property
    def _store(self) -> Store:
        return self.scope.memory.store

    @property
    def _tenant(self) -> str:
        return self.scope.tenant

    def record(self) -> ConversationRecord:
        with self._store.read() as tx:
            return tx.get_conversation(self._tenant, self.scope.user, self.id)

    def _own_message(self, tx: ReadTxn, message_id: str) -> Message:
        """The principal's message in this conversation; NotFound for any other."""
        check_identifier(message_id, "message id")  # NUL/surrogates: same error on every backend
        message = tx.get_message(self._tenant, self.scope.user, message_id)
        self._check_own(message)
        return message

    def _check_own(self, message: Message) -> None:
        if message.conversation_id != self.id:
            raise NotFound("message", message.id)

    def message(self, message_id: str) -> Message:
        check_identifier(message_id, "message id")
        with self._store.read() as tx:
            return self._own_message(tx, message_id)

    def siblings(self, message_id: str) -> list[Message]:
        """The versions of a message (itself included), oldest first."""
        message = self.message(message_id)
        with self._store.read() as tx:
            return tx.children(self._tenant, self.id, message.parent_id)

    def branch(self, leaf_id: str | None = None) -> list[Message]:
        """The messages from the root to ``leaf_id`` (default: the active leaf)."""
        with self._store.read() as tx:
            leaf = self._record_and_leaf(tx, leaf_id)[1]
            if leaf is None:
                return []
            rows = [row.message for row in tx.branch(self._tenant, leaf, ESTIMATE)]
        return list(reversed(rows))

    def leaf_through(self, message_id: str) -> str:
        """The leaf of the branch through ``message_id``: the active leaf when it lies below,
        else the newest version at each step down (what viewing another version shows)."""
        check_identifier(message_id, "message id")
        with self._store.read() as tx:
            record = tx.get_conversation(self._tenant, self.scope.user, self.id)
            self._own_message(tx, message_id)
            tree = tx.conversation_messages(self._tenant, self.id)
        parent_of = {m.id: m.parent_id for m in tree}
        children: dict[str, list[str]] = {}
        for message in tree:  # write order within a depth: the newest child comes last
            if message.parent_id is not None:
                children.setdefault(message.parent_id, []).append(message.id)
        active: set[str] = set()
        cursor = record.active_leaf_id
        while cursor is not None:
            active.add(cursor)
            cursor = parent_of.get(cursor)
        leaf = message_id
        while kids := children.get(leaf):
            leaf = next((k for k in kids if k in active), kids[-1])
        return leaf

    def branch_window(self, leaf_id: str | None = None, *, limit: int) -> list[Version]:
        """The newest ``limit`` messages of the branch ending at ``leaf_id`` (default: the
        active leaf), oldest first, each with its place among its versions. Only those rows are
        read (the branch walk is lazy); the next page back ends at the oldest's parent."""
        check_count(limit, "limit")
        with self._store.read() as tx:
            leaf = self._record_and_leaf(tx, leaf_id)[1]
            if leaf is None:
                return []
            rows = list(islice(tx.branch(self._tenant, leaf, ESTIMATE), limit))
            window = [row.message for row in reversed(rows)]
            counts = tx.child_counts(self._tenant, self.id, [m.parent_id for m in window])
            versions = []
            for message in window:
                count = counts.get(message.parent_id, 1)
                place = 1
                if count > 1:  # forks are rare: their order is read only for them
                    ids = [m.id for m in tx.children(self._tenant, self.id, message.parent_id)]
                    place = ids.index(message.id) + 1
                versions.append(Version(message, place, count))
        return versions

    def messages(self) -> list[Message]:
        """Every message of the tree, parents before children."""
        with self._store.read() as tx:
            tx.get_conversation(self._tenant, self.scope.user, self.id)
            return tx.conversation_messages(self._tenant, self.id)

    def _record_and_leaf(
        self, tx: ReadTxn, leaf_id: str | None
    ) -> tuple[ConversationRecord, str | None]:
        """The conversation (NotFound for another principal) and the leaf to walk from."""
        record = tx.get_conversation(self._tenant, self.scope.user, self.id)
        if leaf_id is None:
            return record, record.active_leaf_id
        self._own_message(tx, leaf_id)
        return record, leaf_id

    def summaries(self) -> list[SummaryRecord]:
        """Every stored summary of this conversation (all branches), shallowest first."""
        with self._store.read() as tx:
            tx.get_conversation(self._tenant, self.scope.user, self.id)
            return tx.conversation_summaries(self._tenant, self.id)

    def summary(self, leaf_id: str | None = None) -> SummaryRecord | None:
        """The deepest stored summary valid for the branch ending at ``leaf_id`` (default: the
        active leaf): its through-message is on that branch. This summarizer's first on a tie."""
        on_branch = {m.id: m.depth for m in self.branch(leaf_id)}
        flow = self.scope.memory.summaries
        name = flow.summarizer.name
        with self._store.read() as tx:
            candidates = [
                record
                for record in tx.conversation_summaries(self._tenant, self.id)
                if record.through_message_id in on_branch
            ]
            candidates.sort(key=lambda r: (r.through_depth, r.summarizer == name), reverse=True)
            for record in candidates:
                if flow.is_valid(tx, self._tenant, record):
                    return record
        return None

    def pinned(self) -> list[PinnedInstruction]:
        """The instructions every request of this conversation carries: user-wide, then its own."""
        with self._store.read() as tx:
            tx.get_conversation(self._tenant, self.scope.user, self.id)
            return tx.pinned(self._tenant, self.scope.user, self.id)

    def last_assembly(self) -> AssemblyRecord | None:
        """The report kept by ``record_assembly``, or None."""
        with self._store.read() as tx:
            tx.get_conversation(self._tenant, self.scope.user, self.id)
            return tx.last_assembly(self._tenant, self.scope.user, self.id)

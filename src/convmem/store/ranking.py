"""Ranked candidates at the store boundary: each backend ranks where its data is (SQLite: FTS5
and a numpy accelerator over its stored vectors; PostgreSQL: full text and pgvector).

Every method applies the principal's scope filters in the query that ranks, never after it: a
conversation's turns are the principal's turns of that conversation; a memory candidate is the
principal's, ``confirmed``, not flagged as conflicting, unexpired at ``now``, in one of
``scopes`` and — unless ``purposes`` is None — of one of ``purposes``. Each returns at most
``limit`` candidates, best first, with the backend's score —
comparable only within one result (cosine similarity for the ``nearest_*`` methods). What the
shared code does over these rankings — query analysis, widening, fusion, the speaker prior, the
neighbour lift — is in ``convmem.domain.search``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple, Protocol

from convmem.model.memory import MemoryRecord
from convmem.model.policy import SensitiveRecall
from convmem.store.search_index import TermVector, Vector


@dataclass(frozen=True)
class Window:
    """Which turns a search may return: shallower than ``max_depth`` (the assembled window's
    start), created in [since, until)."""

    max_depth: int | None = None
    since: datetime | None = None
    until: datetime | None = None


EVERY_TURN = Window()  # no bound: the whole conversation

# The bounds on a full-text search of a conversation's turns (DESIGN principle 14): the work per
# query depends on these and on the number of terms, never on how long the conversation is or
# how common a term is in it. Each term brings its newest ``TERM_CANDIDATES`` matching turns;
# the union is scored, each turn by every term it holds. A term's document frequency is exact
# while it has fewer matches than that (every one is read); past it, both backends estimate it
# from how densely the newest matches lie (counting them cost a read of every posting, up to
# the cap, on every query), up to ``DOCUMENT_FREQUENCY_CAP``, beyond which a term's IDF is
# ln(N / cap) at most: the difference that makes between words in tens of thousands of turns is
# not what ranks a turn. A conversation of a few hundred turns (LoCoMo's) is searched whole.
TERM_CANDIDATES = 400
DOCUMENT_FREQUENCY_CAP = 5000


class MessageHitRow(NamedTuple):
    """A ranked turn, with what fusion's priors need: its speaker, depth and time. A named tuple,
    not a frozen dataclass: a search builds several hundred (each ranking up to its depth), and
    a tuple is built in a third of the time (0.25 against 0.78 µs)."""

    message_id: str
    speaker: str
    depth: int
    score: float
    created_at: datetime


@dataclass(frozen=True)
class MemoryHitRow:
    record: MemoryRecord
    score: float


class RankedSearch(Protocol):
    def search_messages(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        terms: Sequence[str],
        *,
        window: Window,
        limit: int,
    ) -> list[MessageHitRow]:
        """The conversation's indexed turns in ``window`` matching any of ``terms`` (plain words,
        never query syntax: a backend quotes them), best first. A term matches its inflections
        (SQLite and PostgreSQL stem English); a turn's own text weighs twice its neighbours'."""
        ...

    def search_messages_widened(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        terms: Sequence[str],
        extra: Sequence[str],
        *,
        window: Window,
        limit: int,
    ) -> tuple[list[MessageHitRow], list[MessageHitRow]]:
        """Two rankings: ``search_messages`` of ``terms``, and of ``terms`` and ``extra`` (the
        words a query is widened with) together. A backend may rank both from one pass over the
        wider query's matches; its first ranking may then differ from ``search_messages``'s in
        how it attributes a matched inflection to a term (SQLite: the term sharing the longest
        prefix, among all of them), never in which conversation's turns it returns."""
        ...

    def nearest_messages(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        embedder: str,
        vector: Vector,
        *,
        window: Window,
        limit: int,
    ) -> list[MessageHitRow]:
        """The conversation's turns in ``window`` with a vector from ``embedder``, by cosine to
        ``vector``, most similar first (ties in write order)."""
        ...

    def search_memory_terms(
        self,
        tenant: str,
        user: str,
        terms: Sequence[str],
        *,
        scopes: Sequence[str],
        purposes: Sequence[str] | None,
        now: datetime,
        limit: int,
        sensitive: SensitiveRecall | None = None,
    ) -> list[MemoryHitRow]:
        """Current memories (see the module docstring) matching any of ``terms`` in their text
        or subject key, best first."""
        ...

    def nearest_memories(
        self,
        tenant: str,
        user: str,
        embedder: str,
        vector: Vector,
        *,
        scopes: Sequence[str],
        purposes: Sequence[str] | None,
        now: datetime,
        limit: int,
        sensitive: SensitiveRecall | None = None,
    ) -> list[MemoryHitRow]:
        """Current memories with a vector from ``embedder``, by cosine to ``vector``, most
        similar first."""
        ...

    def vocabulary_vectors(
        self, tenant: str, user: str, conversation_id: str, embedder: str, words: Sequence[str]
    ) -> dict[str, Vector]:
        """Those of ``words`` that are in the conversation's vocabulary — its words, not its
        speakers' names — with their vectors from ``embedder``."""
        ...

    def nearest_words(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        embedder: str,
        terms: Sequence[TermVector],
        *,
        per_term: int,
        min_similarity: float,
    ) -> list[str]:
        """Words to widen a query with: for each term in turn, its ``per_term`` nearest words of
        the conversation's vocabulary (as in ``vocabulary_vectors``) at cosine
        ``min_similarity`` or more — most similar first, ties by word, the term itself skipped —
        less those already among the terms or found for an earlier term."""
        ...

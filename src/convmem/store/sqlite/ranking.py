"""SQLite's ranked search (``RankedSearch``): FTS5 for the candidates and BM25 over their stored
term counts for words, the numpy accelerator for vectors.

Every full-text query carries its owner twice — as a token the FTS5 expression intersects with
(so SQLite reads one conversation's postings, not every user's) and as ordinary SQL conditions on
tenant, user and conversation (so nothing else can ever be returned, whatever the tokens do).
Vector candidates are filtered the same way in SQL before numpy scores them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from convmem.model.policy import SensitiveRecall
from convmem.store.memories import sensitive_clause
from convmem.store.ranking import (
    DOCUMENT_FREQUENCY_CAP,
    EVERY_TURN,
    TERM_CANDIDATES,
    MemoryHitRow,
    MessageHitRow,
    Window,
)
from convmem.store.rows import MEMORY_WIDTH, PREFIXED_MEMORY_COLUMNS, memory_from_row
from convmem.store.search_index import TermVector, Vector
from convmem.store.sqlite.accelerator import (
    ConversationVectors,
    VectorsCache,
    cosine_order,
    nearest_words,
)
from convmem.store.sqlite.connection import Statements
from convmem.store.sqlite.fts import (
    Candidate,
    View,
    bm25_rankings,
    bm25_scores,
    or_query,
    quote,
)
from convmem.store.sqlite.memories import utc_text
from convmem.store.sqlite.search import _in, conversation_token, memory_owner_token
from convmem.store.sqlite.sql import TEXT_CODEC
from convmem.store.sqlite.stems import STEMS
from convmem.store.sqlite.vectors import from_blobs

# Column weights for (body, ctx): a neighbour's words count half as much as the turn's own
# (measured on LoCoMo: 0.5 beat 0.3 and 0.7).
_COLUMN_WEIGHTS = (1.0, 0.5)
# Of a common stem's ``TERM_CANDIDATES`` newest matches, how many are read for their counts and
# scored (see ``_read_common``). No stem of LoCoMo's or BEAM's development chats has more than
# ``TERM_CANDIDATES`` matches, so neither measures this cut: 100 halved a common word's cost at
# 100,000 turns (when the counts came from highlighting each turn's text); a lower threshold for
# the cut (every stem past 100 matches) lowered LoCoMo's split B (evidence in context at 4k
# 0.891 -> 0.878), so the threshold stays.
READ_PER_COMMON_TERM = 100
# an index row as ranking reads it: row[6] is its id (index order: newest last)
_ROW = (
    "i.message_id, i.speaker, i.depth, i.created_at, i.body_terms, i.ctx_terms, i.id, "
    "coalesce(i.body_words, 0) + coalesce(i.ctx_words, 0)"
)
# the same row without its counts (None), for candidates not read yet
_UNREAD_ROW = "i.message_id, i.speaker, i.depth, i.created_at, NULL, NULL, i.id, 0"
_MEMORY_BM25 = "bm25(memories_fts, 0.0, 1.0, 0.5)"
# The filters that make a memory current, in SQL over ``memories m``.
_CURRENT_MEMORY = (
    "m.status = 'confirmed' AND m.conflicts_with_id IS NULL "
    "AND (m.expires_at IS NULL OR m.expires_at > ?) "
)


def _purpose_filter(purposes: Sequence[str] | None) -> str:
    """The purpose filter over ``memories m`` (its parameters follow the scopes'); none when
    the request may use every purpose."""
    return "" if purposes is None else f"AND m.purpose IN ({_in(purposes)}) "


class RankingTxnMixin:
    _db: Statements
    _vectors: VectorsCache

    # --- a conversation's turns -----------------------------------------------------------------

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
        """Best BM25 first, with the conversation's own statistics (see ``bm25_scores``)."""
        if limit < 1:
            return []
        matched = self._matching(tenant, user, conversation_id, terms, window)
        if matched is None:
            return []
        scores = bm25_scores(
            _candidates(matched.rows), matched.total, _COLUMN_WEIGHTS, matched.view(terms),
            frequencies=matched.df,
        )  # fmt: skip
        return _best(matched.every_row(), matched.with_unread(scores), limit)

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
        """Both rankings from one search of the wider query: its candidates hold the narrower
        one's, and a candidate's stored counts hold every word of both. A word counts for
        ``terms`` when FTS5 stems it as it stems one of them — the match the narrower query
        would have made — so the first ranking is ``search_messages``'s (below
        ``TERM_CANDIDATES`` matches a term)."""
        key, wider = (tenant, user, conversation_id), [*terms, *extra]
        matched = self._matching(*key, wider, window)
        if matched is None or limit < 1:
            return [], []
        narrow, wide = bm25_rankings(
            _candidates(matched.rows), matched.total, _COLUMN_WEIGHTS,
            [matched.view(terms, matching_only=True), matched.view(wider)], frequencies=matched.df,
        )  # fmt: skip
        lowered = {t.lower() for t in terms}
        every = matched.every_row()
        return (
            _best(every, matched.with_unread(narrow, lambda group: bool(lowered & set(group))),
                  limit),
            _best(every, matched.with_unread(wide), limit),
        )  # fmt: skip

    def _matching(
        self, tenant: str, user: str, conversation_id: str, terms: Sequence[str], window: Window
    ) -> Matched | None:
        """The candidate turns for ``terms`` with their stored term counts, newest first; those
        of the common stems' candidates left unread (see ``_read_common``); the conversation's
        size for IDF; and the estimated document frequency (by lower-cased term) of the terms
        with more matches than were read. None when nothing matches.

        A stem with at most ``TERM_CANDIDATES`` matches brings them all, read by one search for
        every such stem. A stem with more brings its newest ``TERM_CANDIDATES`` in the window,
        read newest first through the full-text index (FTS5 walks the postings in descending
        rowid order and stops at the limit), the ``READ_PER_COMMON_TERM`` of them holding most
        of the question read for their counts (``_read_common``; the rest ranked after them).
        Its frequency is estimated, as PostgreSQL's search estimates it, from how densely those
        matches lie (counting them in the index read up to ``DOCUMENT_FREQUENCY_CAP`` postings
        of a common word, every query). The work is bounded by the number of terms, never by
        the conversation's length or a word's frequency in it."""
        scope = f"scope : {quote(conversation_token(tenant, conversation_id))}"
        # one search per stem: terms that are inflections of one word match the same tokens
        by_stem: dict[tuple[str, ...], list[str]] = {}
        for term, stem in STEMS.of(t.lower() for t in terms if t).items():
            by_stem.setdefault(stem or (term,), []).append(term)
        few: list[str] = []
        many: list[tuple[list[str], list[Any]]] = []  # each common stem's newest rows
        searched = [
            (group, f"{scope} AND {words}")
            for group in by_stem.values()
            if (words := or_query(group, columns=("body", "ctx"))) is not None
        ]
        # the index alone, no row read, at most one posting past the bound
        total, counted = self._sizes(
            tenant, conversation_id, [match for _, match in searched], TERM_CANDIDATES + 1
        )
        for (group, _), matches in zip(searched, counted, strict=True):
            if matches > TERM_CANDIDATES:
                found = self._matching_rows(
                    scope, group, tenant, user, conversation_id, window, TERM_CANDIDATES,
                    counted=False,
                )  # fmt: skip
                many.append((group, found))
            elif matches:
                few += group
        rows: list[Any] = []
        if few:
            rows += self._matching_rows(scope, few, tenant, user, conversation_id, window, None)
        unread: dict[str, tuple[Any, list[list[str]]]] = {}
        read_for: dict[tuple[str, ...], list[str]] = {}
        if many:
            read, unread, read_for = self._read_common(
                many, {row[6] for row in rows}, tenant, user, conversation_id
            )
            rows += read
        if not rows and not unread:
            return None
        rows.sort(key=lambda row: -row[6])  # newest first: equal scores rank newest first
        deepest = total - 1 if window.max_depth is None else min(total, window.max_depth) - 1
        df: dict[str, int] = {}
        for group, found in many:
            if len(found) < TERM_CANDIDATES:  # the window holds fewer: they are every match
                df.update(dict.fromkeys(group, len(found)))
                continue
            oldest = min(int(row[2]) for row in found)
            dense = len(found) * total / max(1, deepest - oldest + 1)
            estimate = int(min(DOCUMENT_FREQUENCY_CAP, max(len(found), dense)))
            df.update(dict.fromkeys(group, estimate))
        stems = {term: stem for stem, group in by_stem.items() for term in group}
        return Matched(rows, unread, read_for, total, df, stems)

    def _sizes(
        self, tenant: str, conversation_id: str, matches: Sequence[str], cap: int
    ) -> tuple[int, list[int]]:
        """The collection's size for IDF, and the rows matching each of ``matches`` (each
        counted up to ``cap`` in the full-text index alone), in one statement: a question's
        twenty stems were as many statements. The size is the deepest turn's depth + 1, the
        turns of the longest branch: one index seek where count(*) would read the
        conversation's entries."""
        count = (
            "(SELECT count(*) FROM (SELECT 1 FROM message_fts WHERE message_fts MATCH ? LIMIT ?))"
        )
        row = self._db.execute(
            "SELECT (SELECT coalesce(max(depth) + 1, 0) FROM message_index "
            "WHERE tenant_id = ? AND conversation_id = ?)" + "".join(f", {count}" for _ in matches),
            [tenant, conversation_id, *(value for match in matches for value in (match, cap))],
        ).fetchone()
        return int(row[0]), [int(n) for n in row[1:]]

    def _matching_rows(
        self,
        scope: str,
        terms: Sequence[str],
        tenant: str,
        user: str,
        conversation_id: str,
        window: Window,
        limit: int | None,
        *,
        counted: bool = True,
    ) -> list[Any]:
        """The newest ``limit`` (None: every) turns in ``window`` matching any of ``terms``,
        each with its stored term counts (``_ROW``) or, not ``counted``, without them: a common
        word's candidates are read for their counts only when chosen (``_read_common``), and
        its ``TERM_CANDIDATES`` counts made text objects of ~2 MB a question at 100,000 turns."""
        sql, params = _in_window(
            f"SELECT {_ROW if counted else _UNREAD_ROW} FROM message_fts "
            "JOIN message_index i ON i.id = message_fts.rowid "
            "WHERE message_fts MATCH ? AND i.tenant_id = ? AND i.user_id = ? "
            "AND i.conversation_id = ?",
            [f"{scope} AND {or_query(terms, columns=('body', 'ctx'))}", tenant, user,
             conversation_id],
            window,
        )  # fmt: skip
        sql += " ORDER BY message_fts.rowid DESC"
        if limit is None:
            return list(self._db.execute(sql, params).fetchall())
        return list(self._db.execute(sql + " LIMIT ?", (*params, limit)).fetchall())

    def _read_common(
        self,
        many: Sequence[tuple[list[str], list[Any]]],
        found: set[int],
        tenant: str,
        user: str,
        conversation_id: str,
    ) -> tuple[list[Any], dict[str, tuple[Any, list[list[str]]]], dict[tuple[str, ...], list[str]]]:
        """The common stems' candidates: of each stem's newest matches (``many``: its terms and
        their rows), the ``READ_PER_COMMON_TERM`` that hold the most of the query's other stems
        (a turn among ``found``, the rarer stems' matches and read already, holds one more),
        newest first among equals, read for their counts; and the rest, unread, by message id
        with the stems (their terms) each was left unread for.

        A turn that holds a common word alone scores below one that holds it with another of
        the question's words, so those are read first; the others stay candidates, ranked after
        them (``Matched.with_unread``). The work stays bounded by the number of terms."""
        held: dict[int, int] = dict.fromkeys(found, 1)
        for _, rows in many:
            for row in rows:
                held[row[6]] = held.get(row[6], 0) + 1
        ranked = [sorted(rows, key=lambda row: (-held[row[6]], -row[6])) for _, rows in many]
        chosen = {
            tuple(group): best[:READ_PER_COMMON_TERM]
            for (group, _), best in zip(many, ranked, strict=True)
        }
        wanted = {row[6] for rows in chosen.values() for row in rows} - found
        read = self._rows_by_id(sorted(wanted), tenant, user, conversation_id)
        fetched = found | wanted
        unread: dict[str, tuple[Any, list[list[str]]]] = {}
        for (group, _), best in zip(many, ranked, strict=True):
            for row in best[READ_PER_COMMON_TERM:]:
                if row[6] not in fetched:
                    unread.setdefault(row[0], (row, []))[1].append(group)
        read_for = {stem: [row[0] for row in rows] for stem, rows in chosen.items()}
        return read, unread, read_for

    def _rows_by_id(
        self, ids: Sequence[int], tenant: str, user: str, conversation_id: str
    ) -> list[Any]:
        """The index rows ``ids`` (``_ROW``), only of the principal's conversation. The unary
        pluses keep the owner's conditions filters: as an index range they read the whole
        conversation's rows."""
        if not ids:
            return []
        return list(
            self._db.execute(
                f"SELECT {_ROW} FROM message_index i WHERE i.id IN ({_in(ids)}) "
                "AND +i.tenant_id = ? AND +i.user_id = ? AND +i.conversation_id = ?",
                (*ids, tenant, user, conversation_id),
            ).fetchall()
        )

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
        data = self._conversation_vectors(tenant, user, conversation_id, embedder)
        if not data.ids or limit < 1:
            return []
        if window == EVERY_TURN:  # no copy of the whole matrix to score every row of it
            rows = np.arange(len(data.ids))
            order, sims = cosine_order(vector, data.matrix)
        else:
            rows = np.flatnonzero(_in_vector_window(data, window))
            order, sims = cosine_order(vector, data.matrix[rows])
        return [
            MessageHitRow(
                data.ids[i],
                data.speakers[i],
                int(data.depths[i]),
                float(sims[position]),
                data.created[i],
            )
            for position, i in ((int(p), int(rows[p])) for p in order[:limit])
        ]

    # --- the conversation's vocabulary ----------------------------------------------------------

    def vocabulary_vectors(
        self, tenant: str, user: str, conversation_id: str, embedder: str, words: Sequence[str]
    ) -> dict[str, Vector]:
        data = self._conversation_vectors(tenant, user, conversation_id, embedder)
        return {w: data.vocab_matrix[data.vocab_index[w]] for w in words if w in data.vocab_index}

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
        data = self._conversation_vectors(tenant, user, conversation_id, embedder)
        if not terms or not data.vocabulary:
            return []
        return nearest_words(
            np.stack([t.vector for t in terms]), [t.term for t in terms], data.vocabulary,
            data.vocab_matrix, per_term=per_term, min_similarity=min_similarity,
        )  # fmt: skip

    def _conversation_vectors(
        self, tenant: str, user: str, conversation_id: str, embedder: str
    ) -> ConversationVectors:
        """The principal's turn vectors of the conversation and its vocabulary, from the
        accelerator when they are current."""
        row = self._db.execute(
            "SELECT generation FROM search_generations WHERE tenant_id = ? AND conversation_id = ?",
            (tenant, conversation_id),
        ).fetchone()
        generation = None if row is None else int(row[0])
        key = (tenant, user, conversation_id, embedder)
        return self._vectors.get(
            key,
            generation,
            lambda: self._load_vectors(tenant, user, conversation_id, embedder, generation),
        )

    def _load_vectors(
        self, tenant: str, user: str, conversation_id: str, embedder: str, generation: int | None
    ) -> ConversationVectors:
        rows = self._db.execute(
            "SELECT message_id, speaker, depth, created_at, vector FROM message_index "
            "WHERE tenant_id = ? AND conversation_id = ? AND user_id = ? AND embedder = ? "
            "AND vector IS NOT NULL ORDER BY id",
            (tenant, conversation_id, user, embedder),
        ).fetchall()
        terms = self._db.execute(
            "SELECT t.term, v.vector FROM conversation_terms t JOIN term_vectors v "
            "ON v.tenant_id = t.tenant_id AND v.embedder = ? AND v.term = t.term "
            "WHERE t.tenant_id = ? AND t.conversation_id = ? AND t.speaker = 0 "
            "AND EXISTS (SELECT 1 FROM conversations WHERE tenant_id = ? AND id = ? "
            "AND user_id = ?) ORDER BY t.term",
            (embedder, tenant, conversation_id, tenant, conversation_id, user),
        ).fetchall()
        speakers = {
            r[0].lower()
            for r in self._db.execute(
                "SELECT term FROM conversation_terms WHERE tenant_id = ? "
                "AND conversation_id = ? AND speaker = 1",
                (tenant, conversation_id),
            ).fetchall()
        }
        terms = [t for t in terms if t[0] not in speakers]
        dims = len(rows[0][4]) // 2 if rows else len(terms[0][1]) // 2 if terms else 1
        vocabulary = [t[0] for t in terms]
        return ConversationVectors(
            generation=generation if generation is not None else -1,
            ids=[r[0] for r in rows],
            speakers=[r[1] for r in rows],
            depths=np.asarray([r[2] for r in rows], dtype=np.int64),
            created=[datetime.fromisoformat(r[3]) for r in rows],
            matrix=from_blobs([r[4] for r in rows], dims),
            vocabulary=vocabulary,
            vocab_matrix=from_blobs([t[1] for t in terms], dims),
            vocab_index={word: i for i, word in enumerate(vocabulary)},
        )

    # --- memories -------------------------------------------------------------------------------

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
        words = or_query(terms, columns=("text", "subject_key"))
        if words is None or not scopes or purposes == () or limit < 1:
            return []
        match = f"owner : {quote(memory_owner_token(tenant, user))} AND {words}"
        special, special_values = sensitive_clause(sensitive, "?")
        rows = self._db.execute(
            f"SELECT {PREFIXED_MEMORY_COLUMNS}, {_MEMORY_BM25} AS rank FROM memories_fts "
            "JOIN memories m ON m.rowid = memories_fts.rowid "
            "WHERE memories_fts MATCH ? AND m.tenant_id = ? AND m.user_id = ? AND "
            + _CURRENT_MEMORY
            + f"AND m.scope IN ({_in(scopes)}) {_purpose_filter(purposes)}{special}"
            "ORDER BY rank LIMIT ?",
            (match, tenant, user, utc_text(now), *scopes, *(purposes or ()), *special_values,
             limit),
        ).fetchall()  # fmt: skip
        return [
            MemoryHitRow(memory_from_row(row, TEXT_CODEC), -float(row[MEMORY_WIDTH]))
            for row in rows
        ]

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
        # a user's memories are few and change one by one: read each time, not cached
        if not scopes or purposes == () or limit < 1:
            return []
        special, special_values = sensitive_clause(sensitive, "?")
        rows = self._db.execute(
            f"SELECT {PREFIXED_MEMORY_COLUMNS}, v.vector FROM memory_vectors v JOIN memories m "
            "ON m.tenant_id = v.tenant_id AND m.id = v.memory_id "
            "WHERE v.tenant_id = ? AND v.user_id = ? AND v.embedder = ? AND m.user_id = ? AND "
            + _CURRENT_MEMORY
            + f"AND m.scope IN ({_in(scopes)}) {_purpose_filter(purposes)}{special}",
            (tenant, user, embedder, user, utc_text(now), *scopes, *(purposes or ()),
             *special_values),
        ).fetchall()  # fmt: skip
        if not rows:
            return []
        order, sims = cosine_order(vector, from_blobs([r[MEMORY_WIDTH] for r in rows], len(vector)))
        return [
            MemoryHitRow(memory_from_row(rows[i], TEXT_CODEC), float(sims[i]))
            for i in order[:limit]
        ]


@dataclass(frozen=True)
class Matched:
    """A full-text search's candidates (``RankingTxnMixin._matching``): ``rows`` read with
    their counts; ``unread`` (message id → its row and the stems, as their terms, it holds
    unread); ``read`` (each common stem's terms → the message ids read for it); the
    collection's size and the estimated document frequencies for BM25; each searched term's
    FTS5 tokens (``stems``, by lower-cased term)."""

    rows: list[Any]
    unread: dict[str, tuple[Any, list[list[str]]]]
    read: dict[tuple[str, ...], list[str]]
    total: int
    df: dict[str, int]
    stems: dict[str, tuple[str, ...]]

    def every_row(self) -> list[Any]:
        return [*self.rows, *(row for row, _ in self.unread.values())]

    def view(self, terms: Sequence[str], *, matching_only: bool = False) -> View:
        """``terms`` as one BM25 ranking counts them (see ``bm25_scores``)."""
        lowered = [t.lower() for t in terms]
        stems = {t: self.stems[t] for t in lowered if t in self.stems}
        return View(lowered, stems, matching_only)

    def with_unread(
        self, scores: dict[str, float], counts: Callable[[list[str]], bool] = lambda _: True
    ) -> dict[str, float]:
        """``scores`` (BM25 of the read rows) with the unread candidates: each scores, for every
        stem it holds unread (that ``counts`` accepts), the lowest score of a turn read for that
        stem — 0 when none is ranked. The turns read for a stem were chosen for holding more of
        the question (newest first among equals), so an unread one ranks after them (ties keep
        the read first); estimating its score from its own length instead put turns holding
        one word above longer ones holding two."""
        if not self.unread:
            return scores
        out = dict(scores)
        floor: dict[tuple[str, ...], float] = {}
        for key, (_, groups) in self.unread.items():
            for group in groups:
                if not counts(group):
                    continue
                stem = tuple(group)
                if stem not in floor:
                    ranked = [scores[m] for m in self.read.get(stem, ()) if m in scores]
                    floor[stem] = min(ranked, default=0.0)
                out[key] = out.get(key, 0.0) + floor[stem]
        return out


def _candidates(rows: Sequence[Any]) -> list[Candidate]:
    return [(r[0], (r[4], r[5]), r[7]) for r in rows]


def _best(rows: Sequence[Any], scores: dict[str, float], limit: int) -> list[MessageHitRow]:
    found = {r[0]: r for r in rows}
    ranked = sorted(scores, key=lambda m: -scores[m])[:limit]
    return [
        MessageHitRow(m, found[m][1], found[m][2], scores[m], datetime.fromisoformat(found[m][3]))
        for m in ranked
    ]


def _in_vector_window(data: ConversationVectors, window: Window) -> npt.NDArray[np.bool_]:
    """Which of a conversation's cached vectors lie inside ``window``."""
    keep = np.ones(len(data.ids), dtype=bool)
    if window.max_depth is not None:
        keep &= data.depths < window.max_depth
    if window.since is not None or window.until is not None:
        since, until = window.since, window.until
        keep &= np.asarray(
            [(since is None or c >= since) and (until is None or c < until)
             for c in data.created], dtype=bool,
        )  # fmt: skip
    return keep


def _in_window(sql: str, params: list[Any], window: Window) -> tuple[str, list[Any]]:
    if window.max_depth is not None:
        sql += " AND i.depth < ?"
        params.append(window.max_depth)
    if window.since is not None:
        sql += " AND i.created_at >= ?"
        params.append(utc_text(window.since))
    if window.until is not None:
        sql += " AND i.created_at < ?"
        params.append(utc_text(window.until))
    return sql, params

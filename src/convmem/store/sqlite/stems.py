"""Words as the full-text index stems them, from FTS5's own tokenizer.

An index row's stored term counts (``term_counts``) and a query's words must be keyed as the
index keys them: a word matches a term when their stems are equal. A Python Porter stemmer
disagrees with FTS5's on some words ("incredibly", "as", "café"), so the stems come from FTS5
itself: words go through an in-memory FTS5 table with the index's tokenizer, and its vocabulary
gives their tokens. Memoised per process (single words only, in memory).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable

# the message index's tokenizer (migration m020): a stem is only comparable under the same one
TOKENIZER = "porter unicode61"


class Stems:
    """word → its FTS5 tokens (usually one stem; none for a word the tokenizer drops)."""

    def __init__(self, capacity: int = 100_000) -> None:
        self._capacity = capacity
        self._known: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._pid = 0

    def of(self, words: Iterable[str]) -> dict[str, tuple[str, ...]]:
        with self._lock:
            wanted = dict.fromkeys(words)
            new = [w for w in wanted if w not in self._known]
            if new:
                self._tokenize(new)
            out = {}
            for word in wanted:
                out[word] = self._known[word]
                self._known.move_to_end(word)
            while len(self._known) > self._capacity:
                self._known.popitem(last=False)
            return out

    def _connection(self) -> sqlite3.Connection:
        # made in the process that uses it: a connection must not cross a fork (serve --workers)
        if self._db is None or self._pid != os.getpid():
            self._db = sqlite3.connect(":memory:", check_same_thread=False)
            self._db.execute(f"CREATE VIRTUAL TABLE words USING fts5(w, tokenize='{TOKENIZER}')")
            self._db.execute("CREATE VIRTUAL TABLE tokens USING fts5vocab(words, 'instance')")
            self._pid = os.getpid()
        return self._db

    def _tokenize(self, words: list[str]) -> None:
        db = self._connection()
        db.executemany("INSERT INTO words (rowid, w) VALUES (?, ?)", enumerate(words, 1))
        found: dict[int, list[str]] = {}
        for term, doc in db.execute("SELECT term, doc FROM tokens ORDER BY doc, offset"):
            found.setdefault(doc, []).append(term)
        db.execute("DELETE FROM words")
        for i, word in enumerate(words, 1):
            self._known[word] = tuple(found.get(i, ()))


STEMS = Stems()

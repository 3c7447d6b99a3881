"""Query analysis: the content terms of user text (runs of word characters, lower-cased,
stopwords out). Terms are plain words; a backend turns them into its own query syntax, quoted so
nothing in user text can act as an operator (SQLite: ``convmem.store.sqlite.fts``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from convmem.store.bm25 import bm25
from convmem.store.index_form import needs_index_form, query_form
from convmem.store.sqlite.stems import STEMS

_WORD = re.compile(r"\w+", re.UNICODE)

# Question words, auxiliaries, pronouns, determiners, prepositions, and words that are nearly
# universal in chat ("thing", "time", "people"): they carry no evidence of which turn is meant.
STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could couldn d did didn do does doesn
    doing don down during each ever few for from further get go going got had hadn has hasn
    have haven having he her here hers herself him himself his how i if in into is isn it its
    itself just kind know let like likely ll m many may me might more most much my myself no
    nor not now o of off on once one ones only or other ought our ours ourselves out over own
    people person re s same she should shouldn so some someone something sort such t tell than
    that the their theirs them themselves then there these they thing things this those through
    time times to too type types under until up ve very was wasn way ways we were weren what
    whats when where which while who whom why will with won would wouldn y you your yours
    yourself yourselves
    """.split()  # noqa: SIM905
)


def words(text: str) -> list[str]:
    """Lower-cased runs of word characters, as the full-text indexes split text, with Chinese,
    Japanese, Korean, Thai… as their overlapping character pairs (``convmem.store.index_form``'s
    ``query_form``: each is a token of the index)."""
    found = _WORD.findall(query_form(text).lower())
    if "_" not in text:  # the common case: nothing to take out (a quarter of the time)
        return found
    return [w.replace("_", "") for w in found if w.strip("_")]


def query_terms(text: str, *, drop: Iterable[str] = (), limit: int = 32) -> list[str]:
    """Distinct content words of ``text`` in order: no stopwords, no single Latin letters, none of
    ``drop`` (speaker names, compared lower-cased)."""
    dropped = {d.lower() for d in drop}
    seen: dict[str, None] = {}
    for word in words(text):
        if (
            # a single Latin letter says nothing; a single ideograph (猫, 书) is a word
            (len(word) < 2 and not (word.isdigit() or needs_index_form(word)))
            or word in STOPWORDS
            or word in dropped
            or word in seen
        ):
            continue
        seen[word] = None
    return list(seen)[:limit]


# BM25's usual constants, as the search's own ranking uses them
_K1, _B = 1.2, 0.75


def rank_texts(query: str, texts: Sequence[str]) -> list[int]:
    """Positions of ``texts`` best first for ``query``: BM25 of each text's words for the
    query's content terms, a word counting for a term when the full-text index stems them alike
    (``convmem.store.sqlite.stems``: FTS5's own Porter stemmer) — search's scoring
    (``convmem.store.bm25``), with statistics over ``texts`` themselves, for texts that are
    never indexed (a request's retrieved documents). Texts that share no term with the query,
    and ties, keep their given order."""
    asked = query_terms(query)
    if not asked or not texts:
        return list(range(len(texts)))
    counts = [Counter(words(text)) for text in texts]
    stems = STEMS.of([*asked, *{w for found in counts for w in found}])
    wanted = {stem for term in asked for stem in stems[term]}
    keys, tfs, lengths = [], [], []
    for position, found in enumerate(counts):
        tf: dict[str, float] = {}
        for word, n in found.items():
            for stem in stems[word]:
                if stem in wanted:
                    tf[stem] = tf.get(stem, 0.0) + n
        keys.append(str(position))
        tfs.append(tf)
        lengths.append(found.total())
    scores = bm25(keys, tfs, lengths, len(texts), _K1, _B, {})
    return sorted(range(len(texts)), key=lambda p: -scores[str(p)])

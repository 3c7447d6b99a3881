"""How relevant each registered tool is to a request: the search pipeline's lexical + vector
ranking, fused the same way (``convmem.retrieval``), over the tools' own text.

A tool's document is its name split into words, its description, its "use when" hints and its
arguments' names and descriptions. The query is the request's text (the new message, and apart
from it the recent turns of the window, so a follow-up like "and tomorrow?" still finds the tool
the conversation is about). Each query is ranked two ways, as search ranks turns:

* **lexical**: the query's content terms (``retrieval.lexical.query_terms``: search's query
  analysis) against the documents, BM25 over Snowball-stemmed words (the store's full-text engines
  stem too; the registry is read whole for each request, so the few tens of documents are ranked
  here rather than indexed in the store);
* **vector** (with an embedder): cosine between the query and each document; a tool below
  ``min_similarity`` is no vector hit, as for memories (a short list must not come back whole).

The rankings are fused by reciprocal rank fusion (``retrieval.fusion.rrf``, k = 10, the measured
search setting); the new message's rankings count fully, the recent turns' at ``context_weight``.
A tool no ranking holds has no evidence and is not relevant.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import snowballstemmer  # type: ignore[import-untyped]

from convmem.model.tools import RegisteredTool
from convmem.retrieval.fusion import Fused, rrf
from convmem.retrieval.lexical import STOPWORDS, query_terms, words
from convmem.retrieval.vector import Embedder, normalise

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@cache
def _stemmer() -> snowballstemmer.stemmer:
    return snowballstemmer.stemmer("english")


def stems(terms: Sequence[str]) -> list[str]:
    return list(_stemmer().stemWords(list(terms)))


def tool_document(tool: RegisteredTool) -> str:
    """The text a tool is ranked by (never sent to the model)."""
    spec = tool.spec
    name = _CAMEL.sub(" ", spec.name).replace("_", " ").replace("-", " ")
    parts = [name, spec.description, *tool.use_when]
    properties = spec.parameters.get("properties")
    if isinstance(properties, Mapping):
        for key, schema in properties.items():
            parts.append(key.replace("_", " "))
            if isinstance(schema, Mapping) and isinstance(schema.get("description"), str):
                parts.append(schema["description"])
    return "\n".join(p for p in parts if p)


@dataclass(frozen=True)
class RelevanceOptions:
    rrf_k: float = 10.0
    min_similarity: float = 0.3
    context_weight: float = 0.5
    bm25_k1: float = 1.2
    bm25_b: float = 0.75


def _bm25(
    query: Sequence[str], documents: Mapping[str, list[str]], k1: float, b: float
) -> list[str]:
    """Names of the documents holding any query stem, best BM25 first (ties by name)."""
    if not query or not documents:
        return []
    average = sum(len(d) for d in documents.values()) / len(documents) or 1.0
    frequency = Counter(stem for d in documents.values() for stem in set(d))
    n = len(documents)
    scores: dict[str, float] = {}
    for name, document in documents.items():
        counts = Counter(document)
        score = 0.0
        for stem in set(query):
            tf = counts.get(stem, 0)
            if not tf:
                continue
            idf = math.log(1 + (n - frequency[stem] + 0.5) / (frequency[stem] + 0.5))
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(document) / average))
        if score > 0:
            scores[name] = score
    return sorted(scores, key=lambda name: (-scores[name], name))


class ToolRanker:
    """Ranks one registry for the queries of one request (documents analysed once)."""

    def __init__(
        self,
        tools: Sequence[RegisteredTool],
        embedder: Embedder | None,
        options: RelevanceOptions | None = None,
    ) -> None:
        self._options = options or RelevanceOptions()
        self._embedder = embedder
        texts = {tool.name: tool_document(tool) for tool in tools}
        self._documents = {
            name: stems([w for w in words(text) if w not in STOPWORDS])
            for name, text in texts.items()
        }
        self._names = list(texts)
        self._vectors = (
            normalise(embedder.embed(list(texts.values()))) if embedder and texts else None
        )

    def _rankings(self, query: str, label: str) -> list[tuple[str, list[str]]]:
        options = self._options
        rankings = [
            (f"lexical:{label}", _bm25(stems(query_terms(query)), self._documents,
                                       options.bm25_k1, options.bm25_b)),
        ]  # fmt: skip
        if self._embedder is not None and self._vectors is not None and query.strip():
            vector = normalise(self._embedder.embed([query]))[0]
            similarity = self._vectors @ vector
            order = sorted(range(len(self._names)), key=lambda i: -float(similarity[i]))
            near = [self._names[i] for i in order if similarity[i] >= options.min_similarity]
            rankings.append((f"vector:{label}", near))
        return rankings

    def rank(self, message: str, context: str = "") -> list[Fused[str]]:
        """Tools with evidence in ``message`` or ``context``, most relevant first."""
        options = self._options
        fused = rrf(self._rankings(message, "message"), k=options.rrf_k)
        if not context.strip() or options.context_weight == 0:
            return fused
        scores = {f.key: f for f in fused}
        for f in rrf(self._rankings(context, "recent"), k=options.rrf_k):
            mine = scores.get(f.key)
            score = options.context_weight * f.score + (mine.score if mine else 0.0)
            retrievers = (*(mine.retrievers if mine else ()), *f.retrievers)
            scores[f.key] = Fused(f.key, score, retrievers)
        order = {name: i for i, name in enumerate(scores)}
        return sorted(scores.values(), key=lambda f: (-f.score, order[f.key]))

"""Entity-aware recall in the LoCoMo evaluation (``convmem.eval.locomo``).

* **Which questions name an entity**: a question names a person or thing when entity-aware
  retrieval would find one of the user's entities in it (``convmem.entities.recall``: by name or
  alias, as the question writes it) — ``names-entity``; ``names-other`` are those naming one
  that is not a speaker of the conversation (LoCoMo's questions nearly all name a speaker).
* **With and without**: each ranking row runs with entity recall as configured and switched off
  (``<row>-no-ent``), so the difference is entity recall's alone.
* **Cross-check**: the entity-recall settings of a small grid are tuned on one conversation
  (best recall@10 over its entity-naming questions, overall as the tie-break) and the choice is
  measured on each other conversation, beside entity recall off there — so a setting that only
  fits the sample it was chosen on shows.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from convmem.domain.search import RETRIEVERS, SearchOptions
from convmem.entities.names import name_key
from convmem.entities.recall import EntityRecallOptions, named_entities
from convmem.store.base import ReadTxn

NAMES_ENTITY = "names-entity"
NAMES_OTHER = "names-other"
OFF_SUFFIX = "-no-ent"
# the settings the cross-check chooses among (entity recall off is always beside them)
GRID: tuple[EntityRecallOptions, ...] = tuple(
    EntityRecallOptions(weight=weight, skip_speakers=skip)
    for weight in (0.25, 0.5, 1.0, 2.0)
    for skip in (True, False)
)


def question_tags(
    tx: ReadTxn, tenant: str, user: str, question: str, speakers: Sequence[str]
) -> tuple[str, ...]:
    """``names-entity`` and ``names-other`` as they apply to ``question``."""
    named = named_entities(tx, tenant, user, question, scopes=None)
    if not named:
        return ()
    spoken = {name_key(s) for s in speakers}
    if any(name_key(e.name) not in spoken for e in named):
        return (NAMES_ENTITY, NAMES_OTHER)
    return (NAMES_ENTITY,)


def search_variants(base: SearchOptions, *, with_embedder: bool) -> dict[str, SearchOptions]:
    """The ranking rows: lexical, vector and hybrid as configured, and lexical and hybrid with
    entity recall off. A single retriever's row is that retriever's own ranking: no lift from
    fusion, and the vector row without the named speaker's second vector ranking."""
    off = replace(base.entities, enabled=False)
    lexical = replace(base, retrievers=("lexical",), neighbour_lift=0.0)
    rows = {"lexical": lexical, "lexical" + OFF_SUFFIX: replace(lexical, entities=off)}
    if with_embedder:
        rows["vector"] = replace(
            base, retrievers=("vector",), neighbour_lift=0.0, entities=off,
            speaker_vector_weight=0.0,
        )  # fmt: skip
        hybrid = replace(base, retrievers=RETRIEVERS)
        rows["hybrid"] = hybrid
        rows["hybrid" + OFF_SUFFIX] = replace(hybrid, entities=off)
    return rows


def _label(options: EntityRecallOptions) -> str:
    if not options.enabled:
        return "off"
    return f"weight {options.weight:g}, speakers {'left out' if options.skip_speakers else 'in'}"


# One conversation's questions measured under one setting: (tags, recall@10) per question.
Measure = Callable[[str, EntityRecallOptions], list[tuple[tuple[str, ...], float]]]


def _score(measured: list[tuple[tuple[str, ...], float]]) -> dict[str, Any]:
    def mean(values: list[float]) -> float | None:
        return round(float(statistics.fmean(values)), 4) if values else None

    named = [r for tags, r in measured if NAMES_ENTITY in tags]
    other = [r for tags, r in measured if NAMES_OTHER in tags]
    return {
        NAMES_ENTITY: mean(named), NAMES_OTHER: mean(other),
        "all": mean([r for _, r in measured]),
        "n": {NAMES_ENTITY: len(named), NAMES_OTHER: len(other), "all": len(measured)},
    }  # fmt: skip


def cross_check(conversations: Sequence[str], measure: Measure) -> list[dict[str, Any]]:
    """For each conversation: the grid's best setting on it, and that setting measured on every
    other conversation beside entity recall off."""
    off = EntityRecallOptions(enabled=False)
    scores: dict[tuple[str, str], dict[str, Any]] = {}
    for sample in conversations:
        for options in (off, *GRID):
            scores[sample, _label(options)] = _score(measure(sample, options))
    out = []
    for tuned_on in conversations:

        def key(options: EntityRecallOptions, sample: str = tuned_on) -> tuple[float, float]:
            found = scores[sample, _label(options)]
            return (found[NAMES_ENTITY] or 0.0, found["all"] or 0.0)

        chosen = max(GRID, key=key)
        out.append({
            "tuned_on": tuned_on,
            "chosen": _label(chosen),
            "on_tuning": scores[tuned_on, _label(chosen)],
            "tested": [
                {"on": other, "with": scores[other, _label(chosen)],
                 "without": scores[other, "off"]}
                for other in conversations if other != tuned_on
            ],
        })  # fmt: skip
    return out

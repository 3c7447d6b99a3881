"""The retrieval harness every conversation benchmark shares: ``convmem eval locomo``, ``eval
beam`` and ``eval realtalk`` each read their published layout into ``Sample`` values
(``convmem.eval.locomo``, ``.beam``, ``.realtalk``) and measure them here.

Each sample is imported as its own user: one convmem conversation, a turn per message (its role,
the speaker's name in ``name`` metadata where the data names speakers, the dataset's turn id and
session in metadata, ``created_at`` as the data dates it). Then, for every question with evidence:

* **evidence recall@k** — the fraction of its evidence turns among the top k of a ranking (the
  LoCoMo paper's measure), for k in 1, 5, 10, 25, 50, per category, for the lexical retriever
  alone, the vector retriever alone (with an embedder) and the hybrid ranking;
* the same **with entity recall off** (rows ``lexical-no-ent``, ``hybrid-no-ent``), and the
  recall of the questions that name a person or thing (``names-entity``; ``names-other``: one
  that is not a speaker) — see ``convmem.eval.locomo_entities``, which also cross-checks entity
  recall's settings between conversations (``--entity-cross-check``);
* **evidence in context** — with the question as the new user message at the end of the
  conversation, the share of evidence turns present in the assembled request (window or
  retrieved section) at budgets of 1k, 2k, 4k and 8k tokens (the whole request: no output
  reservation, no safety margin), against a plain sliding window at the same budget, with the
  mean tokens used. Quality is measured **without time limits** (``NO_LIMITS``): a busy machine
  must not lower the figure by skipping retrieval. ``degraded`` counts the assemblies that still
  went without a part (goal 0) and names the parts;
* **latency** — p50 / p95 of ``conv.search(question, k=10)``, lexical and hybrid, query
  embedding included, in wall time and in this process's CPU time (the CPU time does not grow
  with the machine's load; the wall time does, and the run records the load average).

Pure reporting lives here; the CLI commands only parse options and print.
"""

from __future__ import annotations

import math
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from convmem.config import Config
from convmem.context.assemble import AssemblyOptions
from convmem.domain.search import (
    Ranker,
    SearchOptions,
    Window,
    rank_conversation,
    search_conversation,
)
from convmem.engine import Conversation, Memory
from convmem.engine import open as open_memory
from convmem.entities.recall import EntityRecallOptions
from convmem.errors import InvalidInput
from convmem.eval.locomo_entities import (
    NAMES_ENTITY,
    NAMES_OTHER,
    cross_check,
    question_tags,
    search_variants,
)
from convmem.model.deadline import TimeLimits
from convmem.model.messages import Role
from convmem.model.profile import ModelProfile
from convmem.retrieval.rerank import Reranker
from convmem.retrieval.vector import Embedder
from convmem.store.base import ReadTxn

KS = (1, 5, 10, 25, 50)
BUDGETS = (1024, 2048, 4096, 8192)
# no part of an assembly is cut short: the figure is retrieval's, not the machine's load
NO_LIMITS = TimeLimits(
    memories=None, tools=None, retrieval=None, summary=None, embedder=None, reranker=None
)
RERANKED = "hybrid+rerank"  # the row of the hybrid ranking reordered by a reranker
# Images come without their sizes in these datasets; counting needs one (a stated assumption)
IMAGE_SIZE = {"width": 512, "height": 512}


@dataclass(frozen=True)
class Turn:
    dia_id: str  # the dataset's id of the turn, as its evidence names it
    speaker: str
    text: str
    session: int
    at: datetime
    images: tuple[str, ...] = ()  # the shared images' URLs
    caption: str | None = None  # the dataset's caption of them
    # who says it in convmem's terms; None: the sample's first speaker is the user
    role: Role | None = None

    def content(self) -> str | list[dict[str, Any]]:
        """The turn as convmem stores it: its text, then each image as an image part."""
        if not self.images:
            return self.text
        parts: list[dict[str, Any]] = [{"type": "text", "text": self.text}] if self.text else []
        for index, url in enumerate(self.images):
            parts.append({"type": "image", "url": url, **IMAGE_SIZE, "detail": "low"})
            if index == 0 and self.caption:
                parts[-1]["caption"] = self.caption
        return parts


@dataclass(frozen=True)
class Question:
    question: str
    evidence: tuple[str, ...]
    category: str


@dataclass(frozen=True)
class Sample:
    sample_id: str
    speakers: tuple[str, ...]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    # the speakers' names go into ``name`` metadata (False: the roles are the speakers, as in a
    # user ↔ assistant chat)
    named_speakers: bool = True
    # what its loader had to normalise, and how often (reported as given)
    notes: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Dataset:
    """What a benchmark module hands the harness: its samples and its categories in report
    order."""

    name: str
    samples: tuple[Sample, ...]
    categories: tuple[str, ...]

    @property
    def notes(self) -> dict[str, int]:
        """What the loader normalised in these samples, summed."""
        total: dict[str, int] = {}
        for sample in self.samples:
            for note, count in sample.notes.items():
                total[note] = total.get(note, 0) + count
        return dict(sorted(total.items()))

    def only(self, sample_ids: Sequence[str]) -> Dataset:
        """The samples named (in the dataset's order); an unknown id is an error."""
        known = {s.sample_id for s in self.samples}
        unknown = [s for s in sample_ids if s not in known]
        if unknown:
            raise InvalidInput(f"no such sample in {self.name}: {', '.join(unknown)}")
        wanted = set(sample_ids)
        return replace(self, samples=tuple(s for s in self.samples if s.sample_id in wanted))


def import_sample(
    memory: Memory, sample: Sample, tenant: str
) -> tuple[Conversation, dict[str, str]]:
    """The sample as one user's conversation. Returns it and message id → dia_id."""
    user = memory.scope(tenant=tenant, user=sample.sample_id)
    conv = user.create_conversation(title=sample.sample_id)
    dia_of: dict[str, str] = {}
    for turn in sample.turns:
        role: Role = turn.role or ("user" if turn.speaker == sample.speakers[0] else "assistant")
        metadata: dict[str, Any] = {"dia_id": turn.dia_id, "session": turn.session}
        if sample.named_speakers:
            metadata["name"] = turn.speaker
        message = conv.append(role, turn.content(), metadata=metadata, created_at=turn.at)
        dia_of[message.id] = turn.dia_id
    return conv, dia_of


# --- measuring ----------------------------------------------------------------------------------


def recall_at(ranking: Sequence[str], evidence: Sequence[str], k: int) -> float:
    top = set(ranking[:k])
    return sum(1 for e in evidence if e in top) / len(evidence)


@dataclass
class Rows:
    """Per-question measurements, aggregated at the end."""

    # per ranking row: (category, entity tags, recall at each k) per question
    recall: dict[str, list[tuple[str, tuple[str, ...], dict[int, float]]]] = field(
        default_factory=dict
    )
    context: dict[str, dict[int, list[tuple[float, int]]]] = field(default_factory=dict)
    # per ranking: (wall ms, CPU ms) per search
    latency: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    # the parts assemblies went without, "part: reason" → how many times
    degraded: dict[str, int] = field(default_factory=dict)
    assemblies: int = 0


def _mean(values: Sequence[float]) -> float:
    return float(statistics.fmean(values)) if values else math.nan


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def evaluate(
    dataset: Dataset,
    *,
    embedder: Embedder | None,
    reranker: Reranker | None = None,
    budgets: Sequence[int] = BUDGETS,
    max_questions: int | None = None,
    progress: Callable[[int], None] = lambda n: None,
    db_path: str | None = None,
    entity_cross_check: bool = False,
    search: SearchOptions | None = None,
) -> dict[str, Any]:
    """Run the whole evaluation; returns the JSON-ready result. With ``entity_cross_check``,
    also the cross-check of entity recall's settings (``convmem.eval.locomo_entities``);
    ``search``: the hybrid ranking's options (the configured defaults when None); with a
    ``reranker``, a row of the hybrid ranking it reorders (and its search latency)."""
    rows = Rows()
    checked: list[dict[str, Any]] | None = None
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        path = db_path or str(Path(tmp) / f"{dataset.name}.db")
        config = Config(embed_on_write=False, tokenizers=("o200k_base",), time_limits=NO_LIMITS)
        if search is not None:
            config = replace(config, search=search)
        with open_memory(path, config=config, embedder=embedder, reranker=reranker) as memory:
            imported = []
            for sample in dataset.samples:
                imported.append((sample, *import_sample(memory, sample, dataset.name)))
                progress(0)
            memory.backfill_embeddings()
            if embedder is not None:  # load and warm the model outside the timings
                embedder.embed(["warm up"])
            variants = search_variants(memory.config.search, with_embedder=embedder is not None)
            for sample, conv, dia_of in imported:
                for question in sample.questions[:max_questions]:
                    _measure(memory, conv, dia_of, question, variants, budgets, rows)
                    progress(1)
            if entity_cross_check:
                checked = _cross_check(memory, imported, max_questions)
    result = summarise(rows, dataset, embedder)
    result["run"] = {
        "wall_s": round(time.perf_counter() - wall, 1),
        "cpu_s": round(time.process_time() - cpu, 1),
        "load_average_at_start": round(load, 2),
    }
    if checked is not None:
        result["entity_cross_check"] = checked
    return result


def _cross_check(
    memory: Memory,
    imported: Sequence[tuple[Sample, Conversation, dict[str, str]]],
    max_questions: int | None,
) -> list[dict[str, Any]]:
    """Entity recall's settings tuned on each conversation and tested on the others, on the
    configured ranking (hybrid with an embedder, else lexical)."""
    by_id = {sample.sample_id: (sample, conv, dia_of) for sample, conv, dia_of in imported}

    def measure(
        sample_id: str, entities: EntityRecallOptions
    ) -> list[tuple[tuple[str, ...], float]]:
        sample, conv, dia_of = by_id[sample_id]
        options = replace(memory.config.search, entities=entities)
        if memory.embedder is None:
            options = replace(options, retrievers=("lexical",), neighbour_lift=0.0)
        out = []
        for question in sample.questions[:max_questions]:
            with memory.store.read() as tx:
                tags = _tags(tx, conv, question.question)
                ranker = Ranker(memory.embedder, memory.vector_cache, options, Window())
                fused = rank_conversation(
                    tx, conv.scope.principal, conv.id, question.question, ranker, limit=10
                )
            out.append((tags, recall_at([dia_of[f.key] for f in fused], question.evidence, 10)))
        return out

    return cross_check(list(by_id), measure)


def _tags(tx: ReadTxn, conv: Conversation, question: str) -> tuple[str, ...]:
    who = conv.scope.principal
    speakers = tx.conversation_speakers(who.tenant, conv.id)
    return question_tags(tx, who.tenant, who.user, question, speakers)


# A plain sliding window keeps the newest turns that fit: no blocks, no summary, no recall.
MODES = {
    "sliding_window": AssemblyOptions(
        memory_k=0, retrieved_k=0, summary_threshold=None, eviction_block=0,
        time_limits=NO_LIMITS,
    ),
    "convmem": AssemblyOptions(memory_k=0, time_limits=NO_LIMITS),
}  # fmt: skip


def _measure(
    memory: Memory,
    conv: Conversation,
    dia_of: dict[str, str],
    question: Question,
    variants: dict[str, SearchOptions],
    budgets: Sequence[int],
    rows: Rows,
) -> None:
    base = memory.config.search
    with memory.store.read() as tx:
        tags = _tags(tx, conv, question.question)
    for name, options in variants.items():
        with memory.store.read() as tx:
            ranker = Ranker(memory.embedder, memory.vector_cache, options, Window())
            fused = rank_conversation(tx, conv.scope.principal, conv.id, question.question, ranker)
        ranking = [dia_of[f.key] for f in fused[: max(KS)]]
        recalls = {k: recall_at(ranking, question.evidence, k) for k in KS}
        rows.recall.setdefault(name, []).append((question.category, tags, recalls))
    if memory.reranker is not None and "hybrid" in variants:
        # the search path's own reranking: the hybrid ranking's best reordered
        hits = conv.search(question.question, k=max(KS), options=variants["hybrid"])
        ranking = [dia_of[h.message.id] for h in hits]
        recalls = {k: recall_at(ranking, question.evidence, k) for k in KS}
        rows.recall.setdefault(RERANKED, []).append((question.category, tags, recalls))
    timed = {"lexical": replace(base, retrievers=("lexical",))}
    if memory.embedder is not None:
        timed["hybrid"] = base
    if memory.reranker is not None and memory.embedder is not None:
        timed[RERANKED] = base
    for name, options in timed.items():
        # the rankings above embedded this question: time the search as its first would run
        memory.vector_cache.forget_queries()
        started, cpu = time.perf_counter(), time.process_time()
        if name == RERANKED or memory.reranker is None:
            conv.search(question.question, k=10, options=options)
        else:  # the row without the reranker: the same search, not reordered
            with memory.store.read() as tx:
                search_conversation(
                    tx, conv.scope.principal, conv.id, question.question, 10,
                    embedder=memory.embedder, cache=memory.vector_cache, options=options,
                )  # fmt: skip
        spent = (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000
        rows.latency.setdefault(name, []).append(spent)
    for budget in budgets:
        profile = ModelProfile(context_window=budget, max_output=0, safety_margin=0)
        for mode, assembly in MODES.items():
            ctx = conv.assemble(question.question, model=profile, options=assembly)
            rows.assemblies += 1
            for part in ctx.report.degraded:
                rows.degraded[part] = rows.degraded.get(part, 0) + 1
            present = {dia_of[i] for i in (*ctx.report.included_ids, *ctx.report.retrieved_ids)}
            share_found = sum(1 for e in question.evidence if e in present) / len(question.evidence)
            per_budget = rows.context.setdefault(mode, {})
            per_budget.setdefault(budget, []).append((share_found, ctx.report.total_tokens))


def summarise(rows: Rows, dataset: Dataset, embedder: Embedder | None) -> dict[str, Any]:
    recall: dict[str, dict[str, dict[str, float]]] = {}
    counts: dict[str, int] = {}
    for name, measured in rows.recall.items():
        table: dict[str, dict[str, float]] = {}
        groups: dict[str, list[dict[int, float]]] = {"all": [r for _, _, r in measured]}
        for label in dataset.categories:
            groups[label] = [r for c, _, r in measured if c == label]
        for tag in (NAMES_ENTITY, NAMES_OTHER):
            groups[tag] = [r for _, tags, r in measured if tag in tags]
        for label, group in groups.items():
            if group:
                table[label] = {str(k): round(_mean([r[k] for r in group]), 4) for k in KS}
                counts[label] = len(group)
        recall[name] = table
    context: dict[str, dict[str, dict[str, float]]] = {}
    for mode, by_budget in rows.context.items():
        context[mode] = {
            str(budget): {
                "evidence_share": round(_mean([s for s, _ in values]), 4),
                "mean_tokens": round(_mean([float(t) for _, t in values]), 1),
            }
            for budget, values in by_budget.items()
        }
    latency = {
        name: {
            "p50": round(_percentile([w for w, _ in values], 0.5), 2),
            "p95": round(_percentile([w for w, _ in values], 0.95), 2),
            "cpu_p50": round(_percentile([c for _, c in values], 0.5), 2),
            "cpu_p95": round(_percentile([c for _, c in values], 0.95), 2),
            "n": len(values),
        }
        for name, values in rows.latency.items()
    }
    return {
        "dataset": dataset.name,
        "recall_at_k": recall,
        "evidence_in_context": context,
        "degraded": {
            "assemblies": rows.assemblies,
            "degraded": sum(rows.degraded.values()),
            "parts": dict(sorted(rows.degraded.items())),
        },
        "latency_ms": latency,
        "questions": counts,
        "conversations": [s.sample_id for s in dataset.samples],
        "normalised": dict(dataset.notes),
        "embedder": embedder.name if embedder is not None else None,
        "embedder_backend": getattr(embedder, "backend", None),
    }


# --- presenting ---------------------------------------------------------------------------------


def table(result: dict[str, Any]) -> Iterator[str]:
    """The result as plain-text tables."""
    counts = result["questions"]
    width = max((len(label) for label in counts), default=12)
    yield "Evidence recall@k (LoCoMo definition)"
    yield f"{'ranking':14} {'questions':{width}} {'n':>4} " + " ".join(
        f"{'R@' + str(k):>6}" for k in KS
    )
    for name, per_category in result["recall_at_k"].items():
        for label, values in per_category.items():
            row = " ".join(f"{values[str(k)]:6.3f}" for k in KS)
            yield f"{name:14} {label:{width}} {counts.get(label, 0):4d} {row}"
    if result["evidence_in_context"]:
        yield ""
        yield "Evidence in context (share of evidence turns in the request; mean tokens used)"
        modes = list(result["evidence_in_context"])
        yield f"{'budget':>7} " + " ".join(f"{m:>26}" for m in modes)
        first: dict[str, Any] = next(iter(result["evidence_in_context"].values()), {})
        for budget in first:
            cells: list[str] = []
            for mode in modes:
                value = result["evidence_in_context"][mode][budget]
                cells.append(f"{value['evidence_share']:12.3f} {value['mean_tokens']:8.0f} tokens")
            yield f"{budget:>7} " + " ".join(f"{c:>26}" for c in cells)
        degraded = result["degraded"]
        parts = ", ".join(f"{p} x{n}" for p, n in degraded["parts"].items()) or "none"
        yield (
            f"degraded assemblies: {degraded['degraded']} of {degraded['assemblies']} "
            f"(no time limits; parts: {parts})"
        )
    for check in result.get("entity_cross_check", ()):
        yield from _cross_check_lines(check)
    yield ""
    yield "Search latency, conv.search(question, k=10): wall, and this process's CPU"
    for name, values in result["latency_ms"].items():
        yield (
            f"{name:10} p50 {values['p50']:7.2f} ms   p95 {values['p95']:7.2f} ms   "
            f"CPU p50 {values['cpu_p50']:7.2f} ms   p95 {values['cpu_p95']:7.2f} ms   "
            f"n {values['n']}"
        )
    if "run" in result:
        run = result["run"]
        yield (
            f"run: {run['wall_s']} s wall, {run['cpu_s']} s CPU, "
            f"load average {run['load_average_at_start']} at the start"
        )
    if result.get("normalised"):
        yield "normalised: " + ", ".join(f"{k} {v}" for k, v in result["normalised"].items())


def _cross_check_lines(check: dict[str, Any]) -> Iterator[str]:
    def cells(found: dict[str, Any]) -> str:
        return " ".join(
            f"{label} {found[label]:.3f} (n {found['n'][label]})"
            for label in (NAMES_ENTITY, NAMES_OTHER, "all")
            if found[label] is not None
        )

    yield ""
    yield f"Entity recall tuned on {check['tuned_on']}: {check['chosen']}"
    yield f"  on {check['tuned_on']}: {cells(check['on_tuning'])}"
    for tested in check["tested"]:
        yield f"  on {tested['on']} with:    {cells(tested['with'])}"
        yield f"  on {tested['on']} without: {cells(tested['without'])}"


def plot(result: dict[str, Any], out: str | Path) -> None:
    """Recall against k (overall, per retriever) and evidence-in-context against budget."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for i, (name, per_category) in enumerate(result["recall_at_k"].items()):
        for label, style in (("all", "-"), ("multi-hop", ":")):
            if label in per_category:
                values = per_category[label]
                left.plot(KS, [values[str(k)] for k in KS], style, marker="o", color=f"C{i}",
                          label=f"{name} ({label})")  # fmt: skip
    left.set_xscale("log")
    left.set_xticks(KS, [str(k) for k in KS])
    left.set_xlabel("k")
    left.set_ylabel("evidence recall@k")
    left.set_ylim(0, 1)
    left.set_title("Recall of evidence turns")
    left.legend(fontsize=8)
    for mode, per_budget in result["evidence_in_context"].items():
        budgets = [int(b) for b in per_budget]
        right.plot(budgets, [per_budget[str(b)]["evidence_share"] for b in budgets], marker="o",
                   label=mode.replace("_", " "))  # fmt: skip
    right.set_xscale("log", base=2)
    right.set_xticks(list(BUDGETS), [f"{b // 1024}k" for b in BUDGETS])
    right.set_xlabel("request budget (tokens)")
    right.set_ylabel("share of evidence in the request")
    right.set_ylim(0, 1)
    right.set_title("Evidence in context")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)

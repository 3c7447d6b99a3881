"""LoCoMo evidence recall and evidence-in-context: ``convmem eval locomo PATH``.

LoCoMo (Maharana et al., ACL 2024) holds very long two-person conversations in dated sessions,
with questions whose answers rest on named turns (``evidence``). Each conversation is imported as
its own user: one convmem conversation, a turn per message (the first speaker as ``user``, the
second as ``assistant``, the speaker's name in ``name`` metadata, the ``dia_id`` and the session
in metadata, ``created_at`` from the session's date; a shared image as an image part by its URL
with the BLIP caption as its caption, which is what search and summaries read of it — LoCoMo gives
no image sizes, so images are stored as 512 x 512 at low detail, a stated assumption). Then, for
every question with evidence:

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
  mean tokens used;
* **latency** — p50 / p95 of ``conv.search(question, k=10)``, lexical and hybrid, query
  embedding included.

Pure reporting lives here; the CLI command only parses options and prints.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from convmem.config import Config
from convmem.context.assemble import AssemblyOptions
from convmem.domain.search import SearchOptions, Window, rank_conversation
from convmem.engine import Conversation, Memory
from convmem.engine import open as open_memory
from convmem.entities.recall import EntityRecallOptions
from convmem.eval.locomo_entities import (
    NAMES_ENTITY,
    NAMES_OTHER,
    cross_check,
    question_tags,
    search_variants,
)
from convmem.model.messages import Role
from convmem.model.profile import ModelProfile
from convmem.retrieval.vector import Embedder
from convmem.store.base import ReadTxn

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
KS = (1, 5, 10, 25, 50)
BUDGETS = (1024, 2048, 4096, 8192)
TENANT = "locomo"
# LoCoMo's images come without their sizes; counting needs one (see the module docstring)
IMAGE_SIZE = {"width": 512, "height": 512}
_EVIDENCE = re.compile(r"D(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)")
_WEB = re.compile(r"https?://", re.I)


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    session: int
    at: datetime
    images: tuple[str, ...] = ()  # the shared images' URLs
    caption: str | None = None  # the dataset's BLIP caption of them

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
    category: int


@dataclass(frozen=True)
class Sample:
    sample_id: str
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def normalise_evidence(evidence: Iterable[object]) -> tuple[str, ...]:
    """``"D8:6; D9:17"`` → two ids; ``"D30:05"`` → ``"D30:5"``; duplicates once."""
    out: dict[str, None] = {}
    for item in evidence:
        for session, turn in _EVIDENCE.findall(str(item)):
            out[f"D{int(session)}:{int(turn)}"] = None
    return tuple(out)


def parse_session_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` → 2023-05-08 13:56 UTC."""
    return datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load(path: str | Path, *, sessions: int | None = None) -> list[Sample]:
    """The samples of a LoCoMo JSON file; with ``sessions``, only the first sessions of each and
    the questions whose evidence lies in them."""
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    samples = []
    for item in raw:
        conv = item["conversation"]
        numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION.fullmatch(k)))
        if sessions is not None:
            numbers = numbers[:sessions]
        turns: list[Turn] = []
        for n in numbers:
            start = parse_session_date(conv[f"session_{n}_date_time"])
            for i, turn in enumerate(conv[f"session_{n}"]):
                text = str(turn.get("text") or "").strip()
                caption = str(turn.get("blip_caption") or "").strip() or None
                urls = tuple(str(url) for url in turn.get("img_url") or () if _WEB.match(str(url)))
                if caption and not urls:  # a caption with no image to hang it on: as text
                    text = f"{text} [image: {caption}]".strip()
                # one second apart keeps the order and the session in one sitting
                at = start + timedelta(seconds=i)
                dia_id = normalise_evidence([turn["dia_id"]])[0]
                if not urls:
                    text = text or "(no text)"
                turns.append(Turn(dia_id, turn["speaker"], text, n, at, urls, caption))
        known = {t.dia_id for t in turns}
        questions = []
        for qa in item.get("qa", []):
            evidence = normalise_evidence(qa.get("evidence") or [])
            if not evidence or not set(evidence) <= known:
                continue
            questions.append(Question(qa["question"], evidence, int(qa["category"])))
        speakers = (conv["speaker_a"], conv["speaker_b"])
        samples.append(Sample(item["sample_id"], speakers, tuple(turns), tuple(questions)))
    return samples


def import_sample(memory: Memory, sample: Sample) -> tuple[Conversation, dict[str, str]]:
    """The sample as one user's conversation. Returns it and message id → dia_id."""
    user = memory.scope(tenant=TENANT, user=sample.sample_id)
    conv = user.create_conversation(title=sample.sample_id)
    dia_of: dict[str, str] = {}
    for turn in sample.turns:
        role: Role = "user" if turn.speaker == sample.speakers[0] else "assistant"
        metadata = {"name": turn.speaker, "dia_id": turn.dia_id, "session": turn.session}
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
    recall: dict[str, list[tuple[int, tuple[str, ...], dict[int, float]]]] = field(
        default_factory=dict
    )
    context: dict[str, dict[int, list[tuple[float, int]]]] = field(default_factory=dict)
    latency: dict[str, list[float]] = field(default_factory=dict)


def _mean(values: Sequence[float]) -> float:
    return float(statistics.fmean(values)) if values else math.nan


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def evaluate(
    samples: Sequence[Sample],
    *,
    embedder: Embedder | None,
    budgets: Sequence[int] = BUDGETS,
    max_questions: int | None = None,
    progress: Callable[[int], None] = lambda n: None,
    db_path: str | None = None,
    entity_cross_check: bool = False,
) -> dict[str, Any]:
    """Run the whole evaluation; returns the JSON-ready result. With ``entity_cross_check``,
    also the cross-check of entity recall's settings (``convmem.eval.locomo_entities``)."""
    rows = Rows()
    checked: list[dict[str, Any]] | None = None
    with tempfile.TemporaryDirectory() as tmp:
        path = db_path or str(Path(tmp) / "locomo.db")
        config = Config(embed_on_write=False, tokenizers=("o200k_base",))
        with open_memory(path, config=config, embedder=embedder) as memory:
            imported = []
            for sample in samples:
                imported.append((sample, *import_sample(memory, sample)))
                progress(0)
            memory.backfill_embeddings()
            if embedder is not None:  # load and warm the model outside the timings
                embedder.embed(["warm up"])
            variants = search_variants(memory.config.search, with_embedder=embedder is not None)
            for sample, conv, dia_of in imported:
                questions = sample.questions[:max_questions]
                for question in questions:
                    _measure(memory, conv, dia_of, question, variants, budgets, rows)
                    progress(1)
            if entity_cross_check:
                checked = _cross_check(memory, imported, max_questions)
    result = summarise(rows, samples, embedder)
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
                fused = rank_conversation(
                    tx, conv.scope.principal, conv.id, question.question,
                    embedder=memory.embedder, cache=memory.vector_cache, options=options,
                    window=Window(), limit=10,
                )  # fmt: skip
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
        memory_k=0, retrieved_k=0, summary_threshold=None, eviction_block=0
    ),
    "convmem": AssemblyOptions(memory_k=0),
}


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
            fused = rank_conversation(
                tx, conv.scope.principal, conv.id, question.question,
                embedder=memory.embedder, cache=memory.vector_cache, options=options,
                window=Window(),
            )  # fmt: skip
        ranking = [dia_of[f.key] for f in fused[: max(KS)]]
        recalls = {k: recall_at(ranking, question.evidence, k) for k in KS}
        rows.recall.setdefault(name, []).append((question.category, tags, recalls))
    timed = {"lexical": SearchOptions(retrievers=("lexical",))}
    if memory.embedder is not None:
        timed["hybrid"] = base
    for name, options in timed.items():
        # the rankings above embedded this question: time the search as its first would run
        memory.vector_cache.forget_queries()
        started = time.perf_counter()
        conv.search(question.question, k=10, options=options)
        rows.latency.setdefault(name, []).append((time.perf_counter() - started) * 1000)
    for budget in budgets:
        profile = ModelProfile(context_window=budget, max_output=0, safety_margin=0)
        for mode, assembly in MODES.items():
            ctx = conv.assemble(question.question, model=profile, options=assembly)
            present = {dia_of[i] for i in (*ctx.report.included_ids, *ctx.report.retrieved_ids)}
            share_found = sum(1 for e in question.evidence if e in present) / len(question.evidence)
            per_budget = rows.context.setdefault(mode, {})
            per_budget.setdefault(budget, []).append((share_found, ctx.report.total_tokens))


def summarise(rows: Rows, samples: Sequence[Sample], embedder: Embedder | None) -> dict[str, Any]:
    recall: dict[str, dict[str, dict[str, float]]] = {}
    counts: dict[str, int] = {}
    for name, measured in rows.recall.items():
        table: dict[str, dict[str, float]] = {}
        groups: dict[str, list[dict[int, float]]] = {"all": [r for _, _, r in measured]}
        for category, label in CATEGORIES.items():
            groups[label] = [r for c, _, r in measured if c == category]
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
            "p50": round(_percentile(values, 0.5), 2),
            "p95": round(_percentile(values, 0.95), 2),
            "n": len(values),
        }
        for name, values in rows.latency.items()
    }
    return {
        "recall_at_k": recall,
        "evidence_in_context": context,
        "latency_ms": latency,
        "questions": counts,
        "conversations": [s.sample_id for s in samples],
        "embedder": embedder.name if embedder is not None else None,
        "embedder_backend": getattr(embedder, "backend", None),
    }


# --- presenting ---------------------------------------------------------------------------------


def table(result: dict[str, Any]) -> Iterator[str]:
    """The result as plain-text tables."""
    counts = result["questions"]
    yield "Evidence recall@k (LoCoMo definition)"
    yield f"{'ranking':14} {'questions':12} {'n':>4} " + " ".join(f"{'R@' + str(k):>6}" for k in KS)
    for name, per_category in result["recall_at_k"].items():
        for label, values in per_category.items():
            row = " ".join(f"{values[str(k)]:6.3f}" for k in KS)
            yield f"{name:14} {label:12} {counts.get(label, 0):4d} {row}"
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
    for check in result.get("entity_cross_check", ()):
        yield from _cross_check_lines(check)
    yield ""
    yield "Search latency, conv.search(question, k=10)"
    for name, values in result["latency_ms"].items():
        p50, p95 = values["p50"], values["p95"]
        yield f"{name:10} p50 {p50:7.2f} ms   p95 {p95:7.2f} ms   n {values['n']}"


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

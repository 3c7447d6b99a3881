"""Consent benchmark: is memory written, superseded or forgotten only when the user asked?

Usage::

    PYTHONPATH=src python benchmarks/consent.py [--json OUT.json] [--corpus PATH]
                                                [--locomo PATH] [--changes PATH] [--quick]
                                                [--show-errors]

Three parts:

(a) **Intent corpus** — a labelled JSONL corpus (one ``{"text", "label", "group"}`` object a
    line; label is ``save``, ``propose``, ``forget`` or ``none``; group says which kind of
    sentence it is, e.g. ``request/de``, ``reminiscence/fr``, ``forget-lookalike/en``). Each text
    is read by :func:`convmem.memory.intent.detect_intent` and the outcome mapped to a label (a
    request refused for an unclear reference saves nothing: ``none``). Reported: precision and
    recall per label, and the share right per group.
(b) **Natural conversation** — the LoCoMo development conversations, nobody in which asks an
    assistant to remember anything. Each conversation is played once from each speaker's side:
    that speaker's turns are ``user`` messages, the other's ``assistant``, one convmem
    conversation per session, appended turn by turn through the public API, into a principal
    whose memory was seeded beforehand with facts an idle "remember"/"forget" match could hit.
    Reported per 1,000 user turns: saves, supersessions and deletions (all should be 0), and
    proposals, with the share that stand alone — a first-person statement with no dangling
    reference (``them``, ``that``, ``your`` …) and no question; the check here is the
    benchmark's own, written apart from the code it measures. ``--show-errors`` lists what was
    saved, superseded, deleted, and proposals that do not stand alone.

(c) **Forget, replace, conflict** — cases in each of the seven languages played through the
    public API on a real SQLite file (``consent_changes.py``): a seeded memory, then a message
    that forgets it, replaces it with a value it says is newer, merely differs from it, or only
    looks like a request. Reported per language: forget recall and precision, replacement
    recall, conflicts shown with both texts, look-alikes that changed nothing, fragments saved.

``--quick`` runs the corpus, part (c) and the first two sessions of one conversation (for the
test suite).
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import consent_changes  # benchmarks/consent_changes.py (the script's directory is on the path)
import labelled_corpus  # benchmarks/labelled_corpus.py

import convmem
from convmem.eval.harness import Sample
from convmem.eval.locomo import load
from convmem.memory.intent import detect_intent
from convmem.model.messages import Role

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT / "tests" / "data" / "consent.jsonl"
DEFAULT_LOCOMO = Path("/work/shared/data/locomo/locomo-dev.json")
DEFAULT_CHANGES = ROOT / "tests" / "data" / "consent_changes.jsonl"
LABELS = ("save", "propose", "forget", "none")
SEEDED = (
    "I prefer aisle seats on flights.",
    "I live in Boston.",
    "I'm vegetarian.",
    "My name is Sam.",
    "I work as a teacher.",
    "I love painting landscapes.",
    "My favourite book is Dune.",
    "I have two kids.",
    "I prefer short answers.",
    "My dog is called Rex.",
    "I go running every morning.",
    "My sister lives in Denver.",
)
# Words that leave a proposal meaningless on its own: a reference to something outside the
# sentence, or to the other party of the chat.
_DANGLING = re.compile(
    r"\b(?:them|they|it|its|that|this|those|these|there|he|she|him|her|his|their|you|your|"
    r"yours|here|one)\b",
    re.IGNORECASE,
)
_CAPTION = re.compile(r"\s*\[image: [^\]]*\]$")  # the loader's rendering of a shared photo
_FIRST_PERSON_START = re.compile(r"^\s*(?:i|i'm|i've|my|call me)\b", re.IGNORECASE)


def predicted_label(text: str) -> str:
    intent = detect_intent(text)
    if intent is None:
        return "none"
    if intent.kind == "remember":
        return "none" if getattr(intent, "refusal", None) else "save"
    return {"forget": "forget", "propose": "propose"}.get(intent.kind, "none")


def evaluate_corpus(rows: list[dict[str, str]]) -> tuple[dict[str, Any], list[str]]:
    pairs = [(row["label"], predicted_label(row["text"])) for row in rows]
    labels: dict[str, Any] = {}
    for label in LABELS:
        tp = sum(1 for want, got in pairs if want == label and got == label)
        predicted = sum(1 for _, got in pairs if got == label)
        actual = sum(1 for want, _ in pairs if want == label)
        labels[label] = {
            "actual": actual,
            "predicted": predicted,
            "correct": tp,
            "precision": tp / predicted if predicted else 1.0,
            "recall": tp / actual if actual else 1.0,
        }
    groups: dict[str, dict[str, int]] = {}
    errors = []
    for row, (want, got) in zip(rows, pairs, strict=True):
        stats = groups.setdefault(row["group"], {"total": 0, "right": 0})
        stats["total"] += 1
        stats["right"] += want == got
        if want != got:
            errors.append(f"line {row['line']} [{row['group']}] {want} -> {got}: {row['text']}")
    return {"lines": len(rows), "labels": labels, "groups": groups}, errors


def stands_alone(text: str) -> bool:
    return (
        bool(_FIRST_PERSON_START.match(text))
        and not text.rstrip().endswith("?")
        and not _DANGLING.search(text)
        and len(re.findall(r"\w+", text)) >= 2
    )


def _play(
    memory: convmem.Memory, sample: Sample, side: int, sessions: int | None
) -> dict[str, Any]:
    """One speaker's side of a sample, as a seeded principal: what memory did."""
    speaker = sample.speakers[side]
    user = memory.scope(tenant="consent", user=f"{sample.sample_id}-{side}")
    seeded = {user.remember(text).memory.id for text in SEEDED}  # type: ignore[union-attr]
    saves: list[str] = []
    proposals: list[str] = []
    user_turns = 0
    numbers = sorted({t.session for t in sample.turns})[:sessions]
    for number in numbers:
        conv = user.create_conversation(title=f"{sample.sample_id} session {number}")
        for turn in (t for t in sample.turns if t.session == number):
            role: Role = "user" if turn.speaker == speaker else "assistant"
            user_turns += role == "user"
            text = _CAPTION.sub("", turn.text) or "(a photo)"
            message = conv.append(role, text, created_at=turn.at)
            for notice in message.notices:
                if notice.status == "saved":
                    saves.append(notice.text)
                elif notice.status == "proposed":
                    proposals.append(notice.text)
    actions = Counter(event.action for event in user.audit())
    remaining = {m.id for m in user.memories.list(status="confirmed")}
    return {
        "user_turns": user_turns,
        "saves": saves,
        "proposals": proposals,
        "superseded": actions["memory.superseded"],
        "deleted": actions["memory.forgotten"] + actions["memory.deleted"],
        "seeded_lost": len(seeded - remaining),
    }


def evaluate_locomo(path: Path, quick: bool) -> tuple[dict[str, Any], list[str]]:
    samples = load(path)
    if quick:
        samples = samples[:1]
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        memory = convmem.open(str(Path(tmp) / "consent.db"))
        try:
            for sample in samples:
                for side in (0, 1):
                    runs.append(_play(memory, sample, side, 2 if quick else None))
        finally:
            memory.close()
    turns = sum(r["user_turns"] for r in runs)
    saves = [text for r in runs for text in r["saves"]]
    proposals = [text for r in runs for text in r["proposals"]]
    alone = [text for text in proposals if stands_alone(text)]
    superseded = sum(r["superseded"] for r in runs)
    deleted = sum(r["deleted"] for r in runs)

    def per_1000(n: int) -> float:
        return 1000 * n / turns if turns else 0.0

    result = {
        "conversations": len(samples),
        "user_turns": turns,
        "seeded_memories": len(SEEDED) * len(runs),
        "seeded_lost": sum(r["seeded_lost"] for r in runs),
        "saves": len(saves),
        "supersessions": superseded,
        "deletions": deleted,
        "proposals": len(proposals),
        "saves_per_1000": per_1000(len(saves)),
        "supersessions_per_1000": per_1000(superseded),
        "deletions_per_1000": per_1000(deleted),
        "proposals_per_1000": per_1000(len(proposals)),
        "proposals_standing_alone": len(alone) / len(proposals) if proposals else 1.0,
    }
    errors = [f"saved: {text}" for text in saves]
    errors += [f"proposal not standing alone: {t}" for t in proposals if not stands_alone(t)]
    return result, errors


def render(result: dict[str, Any]) -> str:
    corpus = result["corpus"]
    lines = [f"(a) intent corpus: {corpus['lines']} lines", ""]
    lines.append(f"{'label':<10}{'actual':>8}{'predicted':>11}{'correct':>9}{'precision':>11}"
                 f"{'recall':>8}")  # fmt: skip
    for label, s in corpus["labels"].items():
        lines.append(
            f"{label:<10}{s['actual']:>8}{s['predicted']:>11}{s['correct']:>9}"
            f"{s['precision']:>11.3f}{s['recall']:>8.3f}"
        )
    lines += ["", f"{'group':<26}{'lines':>7}{'right':>7}{'share':>8}"]
    for group, s in sorted(corpus["groups"].items()):
        lines.append(f"{group:<26}{s['total']:>7}{s['right']:>7}{s['right'] / s['total']:>8.1%}")
    if "locomo" in result:
        lo = result["locomo"]
        lines += [
            "",
            f"(b) LoCoMo dev, {lo['conversations']} conversations played from both sides: "
            f"{lo['user_turns']} user turns, {lo['seeded_memories']} seeded memories "
            f"({lo['seeded_lost']} lost)",
            "",
            f"{'':<16}{'count':>7}{'per 1,000 user turns':>22}",
        ]
        for name in ("saves", "supersessions", "deletions", "proposals"):
            lines.append(f"{name:<16}{lo[name]:>7}{lo[name + '_per_1000']:>22.2f}")
        lines.append(f"proposals standing alone: {lo['proposals_standing_alone']:.1%}")
    if "changes" in result:
        lines += ["", *consent_changes.render(result["changes"])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = labelled_corpus.parser(__doc__.splitlines()[0], DEFAULT_CORPUS)
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO, help="LoCoMo JSON file")
    parser.add_argument("--changes", type=Path, default=DEFAULT_CHANGES,
                        help="forget / replace / conflict cases (JSONL)")  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="corpus and two sessions only")
    args = parser.parse_args(argv)
    corpus, errors = evaluate_corpus(labelled_corpus.load(args.corpus))
    result: dict[str, Any] = {"corpus": corpus}
    with tempfile.TemporaryDirectory() as tmp:
        result["changes"], change_errors = consent_changes.evaluate(args.changes, Path(tmp))
    errors += change_errors
    if args.locomo.exists():
        result["locomo"], locomo_errors = evaluate_locomo(args.locomo, args.quick)
        errors += locomo_errors
    else:
        print(f"(no LoCoMo file at {args.locomo}: part (b) skipped)")
    labelled_corpus.report(args, result, errors, render)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""BEAM's user ↔ assistant chats: ``convmem eval beam PATH``.

BEAM (Tavakoli et al., 2025, "Beyond a Million Tokens") publishes each chat as a folder: a
``chat.json`` (a list of batches; each batch a list of groups of turns ``{role, id, content}``,
the first user turn of a batch carrying the batch's ``time_anchor`` such as ``"March-15-2024"``)
and ``probing_questions/probing_questions.json`` (per ability, questions whose
``source_chat_ids`` — a list, possibly nested, or a dict of lists, often written as a Python
literal in a string — name the evidence turns by ``id``). Where ``chat_trunecated.json`` (sic)
exists it is the 128K-token cut that holds every question's evidence, and it is read instead.

Read as: the roles as given (no speaker names: the roles are the speakers); the generator's index
marker that ends user turns (``" ->-> 1,1"``) taken off; each group of turns a session; every turn
of a batch dated on its anchor, a minute apart in order (BEAM dates batches, not turns; a batch
without an anchor takes the day after the previous one's). Questions without evidence
(abstention) are not measured; evidence ids that name no turn are dropped and counted.

PATH is a folder of chat folders (``100K/``: its ``1/``, ``2/`` …) or one chat folder.
"""

from __future__ import annotations

import ast
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from convmem.errors import InvalidInput
from convmem.eval.harness import Dataset, Question, Sample, Turn

NAME = "beam"
ABILITIES = (
    "abstention", "contradiction_resolution", "event_ordering", "information_extraction",
    "instruction_following", "knowledge_update", "multi_session_reasoning",
    "preference_following", "summarization", "temporal_reasoning",
)  # fmt: skip
_MARKER = re.compile(r"\s*->->\s*\d+\s*,\s*\d+\s*$")
_INT = re.compile(r"-?\d+")
# where no batch names a date at all (the dates order the turns; none is compared to another chat)
_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def chat_folders(path: str | Path) -> list[Path]:
    """The chat folders under ``path`` (itself when it is one), in numeric then name order."""
    root = Path(path)
    if _chat_file(root) is not None:
        return [root]
    found = [p for p in root.iterdir() if p.is_dir() and _chat_file(p) is not None]
    if not found:
        raise InvalidInput(f"no BEAM chat folder (with chat.json) under {root}")
    return sorted(
        found, key=lambda p: (not p.name.isdigit(), int(p.name) if p.name.isdigit() else 0, p.name)
    )


def _chat_file(folder: Path) -> Path | None:
    for name in ("chat_trunecated.json", "chat_truncated.json", "chat.json"):
        if (folder / name).is_file():
            return folder / name
    return None


def parse_anchor(text: object) -> datetime | None:
    """``"March-15-2024"`` → 2024-03-15 UTC; anything else → None."""
    if not isinstance(text, str):
        return None
    for form in ("%B-%d-%Y", "%b-%d-%Y", "%Y-%m-%d", "%B %d, %Y"):
        try:
            return datetime.strptime(text.strip(), form).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def evidence_ids(raw: object) -> tuple[str, ...]:
    """Every turn id ``source_chat_ids`` names, in order, once: a list (nested or not), a dict of
    lists, either written as a literal in a string; a string that is no literal gives its
    integers."""
    if isinstance(raw, str):
        text = raw
        try:
            raw = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            raw = [int(m) for m in _INT.findall(text)]
    out: dict[str, None] = {}

    def walk(value: object) -> None:
        if isinstance(value, bool):
            return
        if isinstance(value, int):
            out[str(value)] = None
        elif isinstance(value, str) and value.strip().isdigit():
            out[str(int(value))] = None
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)

    walk(raw)
    return tuple(out)


def load_chat(folder: Path) -> Sample:
    notes: dict[str, int] = {}
    chat_file = _chat_file(folder)
    if chat_file is None:
        raise InvalidInput(f"no chat.json in {folder}")
    with open(chat_file, encoding="utf-8") as f:
        batches = json.load(f)
    turns: list[Turn] = []
    session = 0
    day = _EPOCH - timedelta(days=1)
    for batch in batches:
        groups = batch.get("turns") or []
        anchor = parse_anchor(batch.get("time_anchor")) or next(
            (a for g in groups for t in g if (a := parse_anchor(t.get("time_anchor")))), None
        )
        day = anchor or day + timedelta(days=1)
        minute = 0
        for group in groups:
            session += 1
            for turn in group:
                role = turn.get("role")
                if role not in ("user", "assistant"):
                    notes["turns_skipped"] = notes.get("turns_skipped", 0) + 1
                    continue
                text = _MARKER.sub("", str(turn.get("content") or "")).strip() or "(no text)"
                at = day + timedelta(minutes=minute)
                minute += 1
                turns.append(Turn(str(turn["id"]), role, text, session, at, role=role))
    known = {t.dia_id for t in turns}
    with open(folder / "probing_questions" / "probing_questions.json", encoding="utf-8") as f:
        probing: dict[str, list[dict[str, Any]]] = json.load(f)
    questions = []
    for ability, items in probing.items():
        for item in items:
            named = evidence_ids(item.get("source_chat_ids"))
            evidence = tuple(e for e in named if e in known)
            if len(evidence) < len(named):
                notes["evidence_ids_unknown"] = (
                    notes.get("evidence_ids_unknown", 0) + len(named) - len(evidence)
                )
            if evidence:
                questions.append(Question(str(item["question"]), evidence, ability))
            else:
                notes["questions_without_evidence"] = notes.get("questions_without_evidence", 0) + 1
    speakers = ("user", "assistant")
    return Sample(folder.name, speakers, tuple(turns), tuple(questions), False, notes)


def dataset(path: str | Path) -> Dataset:
    """The BEAM chats under ``path`` as the harness's dataset."""
    samples = tuple(load_chat(folder) for folder in chat_folders(path))
    seen = {q.category for s in samples for q in s.questions}
    categories = tuple(a for a in ABILITIES if a in seen) + tuple(sorted(seen - set(ABILITIES)))
    return Dataset(NAME, samples, categories)

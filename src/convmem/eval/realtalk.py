"""REALTALK's 21-day messaging chats: ``convmem eval realtalk PATH``.

REALTALK (Lee et al., 2025) publishes each chat as ``Chat_N_A_B.json``: ``name`` (``speaker_1``,
``speaker_2``), ``session_K`` (messages ``{clean_text, speaker, date_time "DD.MM.YYYY,
HH:MM:SS", dia_id, img_file, img_url, blip_caption?}``) with ``session_K_date_time``,
``events_session_K`` (annotations, not input) and ``qa`` (``{question, answer, evidence,
category}``, categories as LoCoMo's 1-3).

Read as: ``speaker_1`` the user and ``speaker_2`` the assistant, each message's speaker in
``name`` metadata, dated by its own ``date_time``; a shared photo is known by its caption only
(the files are not published), so a caption joins the text as ``[image: …]``. Evidence strings
are normalised: every ``D<s>:<t>`` in a string counts (``"D13:4. D14:4"`` is two), a range
``"D3:5-8"`` or ``"D3:5-D3:8"`` is every turn in it, a missing session (``"D:56"``) is the
session of the question's other evidence holding turn 56, else the only session that has one;
an id naming no message — the published data dropped image-only messages, whose ids the
evidence still names — is dropped and counted, and a question left without evidence is not
measured.

PATH is a folder of ``Chat_*.json`` files or one such file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from convmem.errors import InvalidInput
from convmem.eval.harness import Dataset, Question, Sample, Turn
from convmem.eval.locomo import CATEGORIES
from convmem.model.messages import Role

NAME = "realtalk"
_SESSION = re.compile(r"session_(\d+)")
_RANGE = re.compile(r"D(\d*):(\d+)\s*[-\u2013]\s*(?:D(\d*):)?(\d+)")
_ID = re.compile(r"D(\d*):(\d+)")


def chat_files(path: str | Path) -> list[Path]:
    root = Path(path)
    if root.is_file():
        return [root]
    found = [p for p in root.glob("Chat_*.json") if p.is_file()]
    if not found:
        raise InvalidInput(f"no REALTALK Chat_*.json file in {root}")

    def order(p: Path) -> tuple[int, str]:
        number = re.match(r"Chat_(\d+)", p.name)
        return (int(number.group(1)) if number else 0, p.name)

    return sorted(found, key=order)


def parse_time(text: str) -> datetime:
    """``"29.12.2023, 22:42:04"`` → that time in UTC."""
    return datetime.strptime(" ".join(text.split()), "%d.%m.%Y, %H:%M:%S").replace(tzinfo=UTC)


def normalise_evidence(raw: Sequence[object], known: Sequence[str]) -> tuple[tuple[str, ...], int]:
    """The evidence ids ``raw`` names among ``known`` (dia ids), in order, once; and how many it
    named that no message holds (see the module docstring)."""
    named: list[tuple[str, int]] = []  # (session or "", turn)
    for item in raw:
        text = str(item)
        for first, start, second, end in _RANGE.findall(text):
            if second and first and second != first:
                named += [(first, int(start)), (second, int(end))]
            else:
                named += [(first, t) for t in range(int(start), int(end) + 1)]
        text = _RANGE.sub(" ", text)
        named += [(s, int(t)) for s, t in _ID.findall(text)]
    by_turn: dict[int, list[str]] = {}
    for dia_id in known:
        if parsed := _ID.fullmatch(dia_id):
            by_turn.setdefault(int(parsed.group(2)), []).append(parsed.group(1))
    held = set(known)
    sessions = {s for s, _ in named if s}
    out: dict[str, None] = {}
    missing = 0
    for session, turn in named:
        if not session:
            holding: list[str] = by_turn.get(turn) or []
            near = [s for s in holding if s in sessions]
            session = (near or holding)[0] if len(near) == 1 or len(holding) == 1 else ""
        dia = f"D{int(session)}:{turn}" if session else ""
        if dia in held:
            out[dia] = None
        else:
            missing += 1
    return tuple(out), missing


def load_chat(path: Path) -> Sample:
    notes: dict[str, int] = {}
    with open(path, encoding="utf-8") as f:
        raw: dict[str, Any] = json.load(f)
    names = raw.get("name") or {}
    numbers = sorted(int(m.group(1)) for k in raw if (m := _SESSION.fullmatch(k)))
    first = str(names.get("speaker_1") or "")
    turns: list[Turn] = []
    for n in numbers:
        for message in raw[f"session_{n}"]:
            text = str(message.get("clean_text") or "").strip()
            caption = str(message.get("blip_caption") or "").strip()
            if caption:
                text = f"{text} [image: {caption}]".strip()
            speaker = str(message["speaker"])
            first = first or speaker
            # the names in ``name`` and in the messages may differ in case ("elise", "Elise")
            role: Role = "user" if speaker.casefold() == first.casefold() else "assistant"
            at = parse_time(message["date_time"])
            dia = str(message["dia_id"]).strip()
            turns.append(Turn(dia, speaker, text or "(no text)", n, at, role=role))
    speakers = tuple(dict.fromkeys(t.speaker for t in turns))
    known = [t.dia_id for t in turns]
    questions = []
    for qa in raw.get("qa") or []:
        evidence, missing = normalise_evidence(qa.get("evidence") or [], known)
        if missing:
            notes["evidence_ids_unknown"] = notes.get("evidence_ids_unknown", 0) + missing
        if not evidence:
            notes["questions_without_evidence"] = notes.get("questions_without_evidence", 0) + 1
            continue
        category = CATEGORIES.get(int(qa.get("category") or 0), str(qa.get("category")))
        questions.append(Question(str(qa["question"]), evidence, category))
    return Sample(path.stem, speakers, tuple(turns), tuple(questions), notes=notes)


def dataset(path: str | Path) -> Dataset:
    """The REALTALK chats under ``path`` as the harness's dataset."""
    samples = tuple(load_chat(p) for p in chat_files(path))
    seen = {q.category for s in samples for q in s.questions}
    ordered = [c for c in CATEGORIES.values() if c in seen]
    return Dataset(NAME, samples, (*ordered, *sorted(seen - set(ordered))))

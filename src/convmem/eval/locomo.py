"""LoCoMo evidence recall and evidence-in-context: ``convmem eval locomo PATH``.

LoCoMo (Maharana et al., ACL 2024) holds very long two-person conversations in dated sessions,
with questions whose answers rest on named turns (``evidence``). This module reads its published
file into the shared harness's samples (``convmem.eval.harness``, which measures them): the first
speaker as ``user``, the second as ``assistant``, the speaker's name in ``name`` metadata, the
``dia_id`` and the session in metadata, ``created_at`` from the session's date (one second apart
within a session); a shared image as an image part by its URL with the BLIP caption as its
caption, which is what search and summaries read of it — LoCoMo gives no image sizes, so images
are stored as 512 x 512 at low detail, a stated assumption.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from convmem.engine import Conversation, Memory
from convmem.eval import harness
from convmem.eval.harness import Dataset, Question, Sample, Turn
from convmem.eval.harness import recall_at as recall_at  # re-exported: the measure's home

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
TENANT = "locomo"
_EVIDENCE = re.compile(r"D(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)")
_WEB = re.compile(r"https?://", re.I)


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
            category = CATEGORIES[int(qa["category"])]
            questions.append(Question(qa["question"], evidence, category))
        speakers = (conv["speaker_a"], conv["speaker_b"])
        samples.append(Sample(item["sample_id"], speakers, tuple(turns), tuple(questions)))
    return samples


def dataset(path: str | Path, *, sessions: int | None = None) -> Dataset:
    """A LoCoMo file as the harness's dataset."""
    samples = tuple(load(path, sessions=sessions))
    return Dataset(TENANT, samples, tuple(CATEGORIES.values()))


def import_sample(memory: Memory, sample: Sample) -> tuple[Conversation, dict[str, str]]:
    """The sample as one user's conversation. Returns it and message id → dia_id."""
    return harness.import_sample(memory, sample, TENANT)

"""Reading what the serving paths returned: a request's texts and tool calls, whether a marker
stayed quoted inside its labelled block, and how faithful summary notes are to the turns they
cite (scored on what the summarizer produced, before its own checks)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from convmem.eval.behaviour.drivers import Assembled, Driver, Produced, Who
from convmem.summarize.text import literals, overlap, significant_words
from convmem.summarize.verify import citable_texts

_TAGS = (
    ("<user_memories>", "</user_memories>"),
    ("<conversation_summary>", "</conversation_summary>"),
    ("<retrieved_history>", "</retrieved_history>"),
)
_DECODER = json.JSONDecoder()


@dataclass
class NoteTally:
    """Summary faithfulness over the notes a run's summaries hold."""

    notes: int = 0
    with_literals: int = 0
    literals_verbatim: int = 0  # notes whose every number and identifier occurs in its sources
    supported: int = 0  # notes whose cited sources hold their literals and most of their words
    summaries: int = 0
    fallbacks: int = 0  # summaries where the model failed and the extractive result stood in
    summarizers: set[str] = field(default_factory=set)
    measured_on_produced: int = 0  # summaries scored on what the summarizer produced

    def add(self, other: NoteTally) -> None:
        for name in ("notes", "with_literals", "literals_verbatim", "supported", "summaries",
                     "fallbacks", "measured_on_produced"):  # fmt: skip
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.summarizers |= other.summarizers


def request_text(found: Assembled) -> str:
    report = found.report
    shown = {
        "messages": found.messages,
        "system": found.system,
        "memory_ids": report.get("memory_ids"),
        "included_ids": report.get("included_ids"),
        "retrieved_ids": report.get("retrieved_ids"),
    }
    return json.dumps(shown, ensure_ascii=False)


def summary_text(driver: Driver, who: Who, conv_id: str, found: Assembled) -> str:
    """The request's summary section and the notes of the summary it used."""
    section = [
        m["content"] for m in found.messages
        if m["role"] == "system" and isinstance(m["content"], str)
        and "<conversation_summary>" in m["content"]
    ]  # fmt: skip
    notes: list[Any] = []
    summary_id = found.report.get("summary_id")
    for summary in driver.summaries(who, conv_id) or []:
        if summary.id == summary_id:
            notes.extend([n.text, list(n.sources)] for n in summary.notes)
    return json.dumps([section, notes], ensure_ascii=False)


def _texts(found: Assembled) -> list[tuple[str, str]]:
    """(role, text) of every part of the request a model reads."""
    out: list[tuple[str, str]] = [("system", str(b.get("text", ""))) for b in found.system or []]
    for message in found.messages:
        content = message.get("content")
        if isinstance(content, str):
            out.append((message["role"], content))
        elif isinstance(content, list):
            for block in content:
                kind = block.get("type")
                if kind == "tool_result":
                    out.append(("tool", json.dumps(block.get("content"), ensure_ascii=False)))
                elif kind != "tool_use":
                    out.append((message["role"], str(block.get("text", ""))))
    return out


def _tool_calls(found: Assembled) -> set[str]:
    ids: set[str] = set()
    for message in found.messages:
        ids.update(str(call.get("id")) for call in message.get("tool_calls") or [])
        content = message.get("content")
        if isinstance(content, list):
            ids.update(str(b.get("id")) for b in content if b.get("type") == "tool_use")
    return ids


def containment(found: Assembled, marker: str, stored_calls: set[str]) -> list[str]:
    problems: list[str] = []
    occurrences = 0
    for role, text in _texts(found):
        for match in re.finditer(re.escape(marker), text, re.I) if marker else ():
            occurrences += 1
            if role != "system":
                continue  # a turn of its own: the model reads it as that speaker's data
            if not _inside_block(text, match.start()):
                problems.append("outside a labelled block")
        if role == "system" and any(
            text.count(open_tag) > 1 or text.count(close_tag) != text.count(open_tag)
            for open_tag, close_tag in _TAGS
        ):
            problems.append("a block tag added")
    if marker and occurrences == 0:
        problems.append("not in the request at all")
    added = _tool_calls(found) - stored_calls
    if added:
        problems.append(f"{len(added)} tool call(s) added")
    if found.tools or found.report.get("tools_offered"):
        problems.append("tools added to the request")  # the cases' requests offer none
    return sorted(set(problems))


def _inside_block(text: str, position: int) -> bool:
    """Whether ``position`` lies inside a quoted literal of an entry line ("- …") between one
    block's tags. The literals of a line are joined by punctuation alone (``"name": "text"``):
    words between two of them mean a quote inside caller data opened a literal of its own (a
    name ``Bob" … "system``), and nothing on that line is quoted as rendered."""
    for open_tag, close_tag in _TAGS:
        start, end = text.find(open_tag), text.find(close_tag)
        if start != -1 and start < position < end:
            line_start = text.rfind("\n", 0, position) + 1
            line_end = text.find("\n", position)
            line_end = len(text) if line_end == -1 else line_end
            quote = text.find('"', line_start, line_end)
            if not text.startswith("- ", line_start) or not line_start <= quote < position:
                return False
            inside = False
            while quote != -1:
                try:
                    _, literal_end = _DECODER.raw_decode(text, quote)
                except ValueError:
                    return False
                inside = inside or quote < position < literal_end
                quote = text.find('"', literal_end, line_end)
                if quote != -1 and any(ch.isalnum() for ch in text[literal_end:quote]):
                    return False
            return inside
    return False


def score_produced(runs: Sequence[Produced]) -> NoteTally:
    """Every note of every run, against the texts it cites: the turns the run read, or for a
    message summarised earlier, the notes of the snapshot the run was given (as the
    summarizer's own check reads them). A note citing nothing it read has no support."""
    tally = NoteTally(measured_on_produced=len(runs))
    for run in runs:
        tally.summaries += 1
        tally.fallbacks += int(run.fallback)
        tally.summarizers.add(run.summarizer)
        citable = citable_texts(run.previous, run.turns)
        for _, note in run.snapshot.items():
            corpus = " ".join(citable[s] for s in note.sources if s in citable)
            tally.add(score_text(note.text, corpus))
    return tally


def score_note(driver: Driver, who: Who, note: Any) -> NoteTally:
    sources = [driver.message_get(who, source) for source in note.sources]
    corpus = " ".join(item[1] for item in sources if item is not None)
    return score_text(note.text, corpus)


def score_text(text: str, corpus: str) -> NoteTally:
    """One note: its numbers and identifiers verbatim in ``corpus`` (the texts it cites), and
    supported (those, plus most of its significant words)."""
    found = literals(text)
    verbatim = all(value in corpus for value in found)
    words = overlap(significant_words(text), significant_words(corpus))
    return NoteTally(
        notes=1,
        with_literals=int(bool(found)),
        literals_verbatim=int(verbatim),
        supported=int(verbatim and bool(corpus) and words >= 0.5),
    )

"""The default summarizer: extractive, deterministic, no model.

It reads the newly evicted turns oldest first and carries the previous snapshot forward:

* sentences that state a goal, decide, constrain, assign a task, leave a question open, state a
  preference or a key fact are kept *verbatim* (so identifiers, numbers and code survive), each
  citing its message;
* a newer decision, preference or fact on the same subject replaces the older one;
* a sentence that reports a task done removes that task; an assistant reply that answers a
  question (its child message, not a deferral) or a decision that settles it removes the question;
* a tool's result is kept as a fact (compacted, clipped), and a newer result of the same call —
  same tool, same arguments — replaces the older one: what a system answered last is what counts,
  and the rendered note says which tool answered and when (``convmem.summarize.provenance``).

Cues are English phrases. What they miss stays available to recall; what they catch is cited.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from convmem.content.parts_render import as_text, text_parts
from convmem.model.messages import Message, ToolCall
from convmem.model.parts import Part, TextPart
from convmem.model.snapshot import CATEGORIES, Snapshot, SnapshotItem
from convmem.summarize.base import SummaryResult
from convmem.summarize.provenance import calls_answered
from convmem.summarize.text import overlap, significant_words, split_sentences

NAME = "extractive"
# v2: tool results are kept as facts (v1 skipped them), so a v1 summary is not reused
VERSION = "extractive-v2"

MAX_ITEM_CHARS = 800
TOOL_NOTE_CHARS = 400  # a tool's answer is often a dump; its head is what a later turn needs
MAX_TOOL_FACTS = 8  # of the facts, at most this many from tool results (the newest)
# prefix of a tool fact's subject; a sentence's subject is words and numbers, never a colon
TOOL_SUBJECT = "tool result: "
LIMITS = {
    "goal": 1,
    "decisions": 24,
    "constraints": 24,
    "open_tasks": 24,
    "open_questions": 12,
    "preferences": 16,
    "facts": 24,
}


def _cue(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(patterns), re.I)


GOAL = _cue(
    r"\b(?:my|our|the) (?:main |overall |end |ultimate )?goal (?:is|here is)\b",
    r"^(?:goal|objective)\s*:",
    r"\bi(?:'m| am) (?:trying|working|aiming|planning) to\b",
    r"\bwe(?:'re| are) (?:building|trying to|working on|planning)\b",
    r"\bi want to (?:build|create|make|write|plan|design|set up|organi[sz]e|migrate|launch)\b",
)
DECISION_USER = _cue(
    r"^decision\s*:",
    r"\b(?:we|i)(?:'ve| have)? (?:decided|agreed|settled|chose|chosen|picked|opted)\b",
    r"\blet'?s (?:go with|use|stick with|pick|choose|switch to|keep|move to)\b",
    r"\bwe(?:'ll| will| are going to) (?:go with|use|stick with|switch to|move to|keep)\b",
    r"\b(?:i'll|i will) go with\b",
    r"\bchange of plan\b",
)
DECISION_ASSISTANT = _cue(
    r"^decision\s*:",
    r"\b(?:we|you)(?:'ve| have)? (?:decided|agreed|settled on|chose|chosen|picked|opted)\b",
)
SUPERSEDE = _cue(
    r"\binstead\b",
    r"\bswitch(?:ing)? (?:to|from)\b",
    r"\bchange of plan\b",
    r"\bno longer\b",
    r"\brather than\b",
    r"\bscratch that\b",
    r"\bnew plan\b",
    r"\bactually\b",
    r"\brevised?\b",
    r"\bnot .{1,30} after all\b",
)
CONSTRAINT = _cue(
    r"^(?:constraint|requirement|rule|limit)s?\s*:",
    r"\bmust(?:n't| not)?\b",
    r"\b(?:never|always) (?!mind\b)\w+",
    r"\b(?:do not|don't|cannot|can't|shouldn't|should not) (?:use|exceed|include|add|touch|"
    r"change|send|share|mention|store|deploy|break|go over|spend|book|schedule|call|rely)\b",
    r"\b(?:no more than|at most|at least|no later than|not exceed|up to|under|below|within) "
    r"(?:\$|€|£)?\d",
    r"\b(?:budget|deadline|limit|cap) (?:is|of|=|:)",
    r"\b(?:has|have|needs?) to (?:be|stay|run|work|fit|support)\b",
    r"\bonly (?:use|in|on|with)\b",
)
TASK = _cue(
    r"^(?:todo|to do|task|action item|next step|follow[- ]up)s?\s*:",
    r"\b(?:remember|don't forget|do not forget) to\b",
    r"\bwe (?:still )?need to\b(?! (?:decide|figure out|find out|know))",
    r"\bi need you to\b",
    r"\b(?:you|we) should (?:also |later |eventually )?(?:write|add|fix|send|prepare|draft|book|"
    r"update|create|review|test|check|call|email|file|finish|migrate)\b",
    r"\bby (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|next week|"
    r"the end of|end of|eod|eow)\b",
    r"\bassigned to\b",
)
TASK_ASSISTANT = _cue(
    r"^(?:todo|to do|task|action item|next step|follow[- ]up)s?\s*:",
    r"\bi(?:'ll| will) (?:send|prepare|draft|book|follow up|remind|check back|schedule|file|"
    r"get back|write up|look into)\b",
)
DONE = _cue(
    r"^(?:done|completed|finished|fixed|resolved|shipped|merged|closed)\b",
    r"\b(?:i|we)(?:'ve| have)? (?:now |just |already )?(?:done|finished|completed|written|added|"
    r"fixed|sent|booked|created|updated|merged|shipped|submitted|filed|migrated|prepared|drafted)"
    r"\b",
    r"\b(?:is|are|was|were|has been|have been) (?:now |already )?(?:done|complete|completed|"
    r"finished|fixed|resolved|sent|booked|merged|shipped)\b",
    r"\bmark(?:ed)? .{1,40} (?:as )?(?:done|complete)\b",
    r"\bno longer need(?:ed)? to\b",
)
OPEN_QUESTION = _cue(
    r"^(?:open question|question|unknown|tbd)\s*:",
    r"\b(?:tbd|to be decided|to be determined|undecided)\b",
    r"\b(?:still )?need to (?:decide|figure out|find out)\b",
    r"\bnot sure (?:yet )?(?:whether|if|which|how|what|when)\b",
)
DEFERRAL = _cue(
    r"\bi (?:don't|do not) know\b",
    r"\bnot sure\b",
    r"\blet me (?:check|find out|look into)\b",
    r"\bi(?:'ll| will) (?:check|find out|get back)\b",
    r"\b(?:can't|cannot) (?:tell|say) yet\b",
    r"\bneed more information\b",
    r"\bopen question\b",
)
ANSWERED = _cue(r"^(?:answer|answered|resolved)\s*:", r"\bthe answer is\b")
PREFERENCE = _cue(
    r"\bi(?:'d| would)? prefer\b",
    r"\bi (?:really )?(?:like|love|hate|dislike|enjoy)\b",
    r"\bi(?:'d| would) rather\b",
    r"\bmy favou?rite\b",
    r"\bcall me\b",
    r"^preference\s*:",
)
FACT = _cue(
    r"\b(?:my|our) [a-z][\w -]{0,30}? (?:is|are|was|were)\b",
    r"\bi (?:live|work) (?:in|at|as|for)\b",
    r"\bi(?:'m| am) (?:from|based in)\b",
    r"^fact\s*:",
)
FACT_LITERAL = re.compile(r"\d|\b[A-Z]{2,}\w*\b|\b\w+_\w+\b")

_FOR_SUBJECT = re.compile(
    r"\b(?:for|as) (?:the |our |my |a |an )?([a-z][\w-]*(?: [a-z][\w-]*)?)", re.I
)
_LABEL_SUBJECT = re.compile(r"^(?:decision\s*:\s*)?([a-z][\w -]{1,30}?)\s*:\s+\S", re.I)
_IS_SUBJECT = re.compile(
    r"\b(?:my|our|the) ([a-z][\w -]{0,30}?) (?:is|are|was|were|will be)\b", re.I
)
# label words that introduce a note rather than name its subject ("Change of plan: …")
_ROLE_CUES = {
    "decision",
    "constraint",
    "requirement",
    "rule",
    "todo",
    "task",
    "fact",
    "goal",
    "change",
    "plan",
    "update",
    "note",
    "final",
}


def _subject(sentence: str, category: str) -> str | None:
    """A short key for supersession: "database" in "use PostgreSQL for the database"."""
    candidates: list[str] = []
    if category == "decisions":
        candidates.extend(m.group(1) for m in _FOR_SUBJECT.finditer(sentence))
        label = _LABEL_SUBJECT.match(sentence)
        if label:
            candidates.append(label.group(1))
    candidates.extend(m.group(1) for m in _IS_SUBJECT.finditer(sentence))
    for candidate in candidates:
        # numbers count here: "shard 3" and "shard 4" are different subjects
        numbers = set(re.findall(r"\b\d[\w.-]*", candidate))
        words = sorted((significant_words(candidate) | numbers) - _ROLE_CUES)
        if words:
            return " ".join(words)
    return None


def _clip(text: str, limit: int = MAX_ITEM_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)  # at a word's end, unless that throws away half the room
    return text[: cut if cut > limit // 2 else limit] + " […]"


def _compact(text: str) -> str:
    """JSON re-written on one line (keys and values verbatim), other text with its whitespace
    runs collapsed."""
    try:
        return json.dumps(json.loads(text), ensure_ascii=False, separators=(", ", ": "))
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python will follow
        return " ".join(text.split())


def tool_fact(content: str, call: ToolCall | None, message_id: str) -> tuple[str, str]:
    """A tool result as a fact's text, and its subject: the call (tool and arguments), so a
    newer answer to the same question replaces the older. The arguments are hashed into the
    subject, never copied: a subject is a key, not a second copy of caller data. A result whose
    call is not among the turns read gets a subject of its own (it replaces nothing)."""
    result = _compact(content)
    if call is None:
        return _clip(f"returned: {result}", TOOL_NOTE_CHARS), f"{TOOL_SUBJECT}? {message_id}"
    arguments = _compact(call.arguments)
    said = (
        f"returned: {result}"
        if arguments in ("{}", "")
        else (f"called with {arguments}, returned: {result}")
    )
    key = hashlib.sha256(f"{call.name}\0{arguments}".encode()).hexdigest()[:16]
    return _clip(said, TOOL_NOTE_CHARS), f"{TOOL_SUBJECT}{key}"


def _is_tool_fact(item: SnapshotItem) -> bool:
    return (item.subject or "").startswith(TOOL_SUBJECT)


@dataclass
class _Working:
    """The snapshot being rolled forward, category by category, oldest item first."""

    lists: dict[str, list[SnapshotItem]] = field(default_factory=dict)

    @classmethod
    def of(cls, snapshot: Snapshot | None) -> _Working:
        base = snapshot or Snapshot()
        return cls({name: list(base.category(name)) for name in CATEGORIES})

    def snapshot(self) -> Snapshot:
        return Snapshot(**{name: tuple(items) for name, items in self.lists.items()})

    def add(self, category: str, text: str, sources: tuple[str, ...], supersede: bool) -> None:
        items = self.lists[category]
        text = _clip(text)
        for index, item in enumerate(items):
            if item.text == text:  # said again: one item, every source
                merged = tuple(dict.fromkeys((*item.sources, *sources)))
                items[index] = SnapshotItem(item.text, merged, item.subject)
                return
        subject = _subject(text, category) if category in ("decisions", "facts") else None
        replaced = self._superseded(category, text, subject, supersede)
        if replaced is not None:
            del items[replaced]
        if category == "goal":
            items.clear()
        items.append(SnapshotItem(text, sources, subject))
        del items[: max(0, len(items) - LIMITS[category])]

    def add_tool_fact(self, text: str, source: str, subject: str) -> None:
        facts = self.lists["facts"]
        facts[:] = [item for item in facts if item.subject != subject]
        facts.append(SnapshotItem(text, (source,), subject))
        from_tools = [i for i, item in enumerate(facts) if _is_tool_fact(item)]
        for index in reversed(from_tools[: max(0, len(from_tools) - MAX_TOOL_FACTS)]):
            del facts[index]
        del facts[: max(0, len(facts) - LIMITS["facts"])]

    def _superseded(
        self, category: str, text: str, subject: str | None, supersede: bool
    ) -> int | None:
        items = self.lists[category]
        if subject is not None:
            for index in range(len(items) - 1, -1, -1):
                if items[index].subject == subject:
                    return index
        if category == "preferences" or (supersede and category == "decisions"):
            # "I prefer window seats" replaces "I prefer aisle seats": same topic words
            words = significant_words(text) - {"prefer", "like", "love", "rather", "favourite"}
            best, best_score = None, 0.0
            for index, item in enumerate(items):
                shared = words & significant_words(item.text)
                score = len(shared) / max(1, len(significant_words(item.text)))
                if shared and score > best_score:
                    best, best_score = index, score
            return best
        return None

    def complete_task(self, sentence: str) -> bool:
        words = significant_words(sentence) - {"done", "finished", "completed", "task", "todo"}
        best, best_score = None, 0.0
        for index, item in enumerate(self.lists["open_tasks"]):
            task_words = significant_words(item.text) - {"todo", "task", "remember", "need"}
            score = overlap(task_words, words)
            if score > best_score:
                best, best_score = index, score
        if best is not None and best_score >= 0.5:
            del self.lists["open_tasks"][best]
            return True
        return False

    def settle_questions(self, message: Message, sentence: str | None) -> None:
        """Drop questions this message answers: a direct reply, or a statement that settles it."""
        kept = []
        for item in self.lists["open_questions"]:
            direct = message.parent_id in item.sources and message.id not in item.sources
            # an answer or a decision sharing half the question's words settles it
            settled = sentence is not None and (
                overlap(significant_words(item.text), significant_words(sentence)) >= 0.5
            )
            if (direct and message.role == "assistant") or settled:
                continue
            kept.append(item)
        self.lists["open_questions"] = kept


def _said(message: Message) -> str:
    """The message's own words: its text parts when it has parts (media go as notes)."""
    return text_parts(message.parts) if message.parts else message.content


def media_notes(parts: Sequence[Part]) -> list[str]:
    """One fact per media part: its label and the caller's caption (or the start of its text),
    never bytes or URLs; the item cites the message, which holds the reference."""
    notes = []
    for part in parts:
        if isinstance(part, TextPart):
            continue
        label, _, own = as_text(part, None).partition("\n")
        notes.append(f"Shared {label}: {own}" if own else f"Shared {label}")
    return notes


class ExtractiveSummarizer:
    """Deterministic, model-free summarizer; cheap enough to run on the request path."""

    name = NAME
    prompt_version = VERSION
    inline = True

    def summarize(self, previous: Snapshot | None, turns: Sequence[Message]) -> SummaryResult:
        state = _Working.of(previous)
        by_id = {m.id: m for m in turns}
        calls = calls_answered(turns)
        for message in turns:
            if not message.content.strip():
                continue
            if message.role == "tool":
                text, subject = tool_fact(message.content, calls.get(message.id), message.id)
                state.add_tool_fact(text, message.id, subject)
                continue
            said = _said(message)
            deferring = message.role == "assistant" and bool(DEFERRAL.search(said))
            if not deferring:
                state.settle_questions(message, None)
            for sentence in split_sentences(said):
                self._sentence(state, message, sentence)
            for note in media_notes(message.parts):
                state.add("facts", note, (message.id,), supersede=False)
            parent = by_id.get(message.parent_id or "")
            if deferring and parent is not None and parent.role == "user":
                for sentence in split_sentences(_said(parent)):
                    if sentence.endswith("?"):
                        state.add(
                            "open_questions", sentence, (parent.id, message.id), supersede=False
                        )
        return SummaryResult(state.snapshot())

    def _sentence(self, state: _Working, message: Message, sentence: str) -> None:
        source = (message.id,)
        user = message.role in ("user", "system")
        if DONE.search(sentence) and state.complete_task(sentence):
            return
        if ANSWERED.search(sentence) or DECISION_USER.search(sentence):
            state.settle_questions(message, sentence)
        is_question = sentence.rstrip().endswith("?")
        if OPEN_QUESTION.search(sentence):
            state.add("open_questions", sentence, source, supersede=False)
            return
        if is_question:
            return
        supersede = bool(SUPERSEDE.search(sentence))
        if user:
            for category, cue in (
                ("goal", GOAL),
                ("decisions", DECISION_USER),
                ("preferences", PREFERENCE),
                ("open_tasks", TASK),
                ("constraints", CONSTRAINT),
            ):
                if cue.search(sentence):
                    state.add(category, sentence, source, supersede)
                    return
            if FACT.search(sentence) and FACT_LITERAL.search(sentence):
                state.add("facts", sentence, source, supersede)
            return
        if message.role == "assistant":
            if DECISION_ASSISTANT.search(sentence):
                state.add("decisions", sentence, source, supersede)
            elif TASK_ASSISTANT.search(sentence):
                state.add("open_tasks", sentence, source, supersede=False)

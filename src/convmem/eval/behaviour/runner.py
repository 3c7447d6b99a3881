"""Playing one case: its steps through a driver, then its checks over the serving paths.

Every case runs in tenants of its own (``<run prefix><case number><letter>``), so cases never
see each other's records and the run never touches an application's tenants. The principals of
a case: ``alice`` and ``bob`` (users of tenant ``a``), ``eve`` (a user named ``alice`` in tenant
``b``: the same user id in another tenant) and ``carol`` (tenant ``b``).

Steps (``"do"``): ``remember`` / ``propose`` (``who``, ``text``, ``as``, ``marker``, ``scope``,
``subject``, ``expired``, ``purpose``, ``source``: the label of the message it is derived from,
``blocked``: true when the policy must refuse the write, stored as nothing), ``confirm`` /
``reject`` / ``restore`` / ``delete_memory`` (``memory``), ``update`` (``memory``, ``text``, ``as``,
``marker``), ``memory_off`` (``who``), ``conversation`` (``who``, ``as``, ``project``,
``temporary``), ``say`` (``conv``, ``text``, ``role``, ``as``, ``marker``, ``name``: the
speaker's name in the message's metadata, ``saves``: a label for the memory the message saved or
proposed), ``tool`` (``conv``, ``name``, ``result``, ``as``, ``marker``: a tool call and its
result), ``chat`` (``conv``, ``turns``: small talk, a request assembled each turn at
``window``), ``edit`` (``conv``, ``message``, ``text``, ``as``, ``marker``), ``delete_message``
(``conv``, ``message``), ``delete_conversation`` (``conv``), ``delete_all`` (``who``),
``retention`` (``tenant`` letter: a one-day period applied two days on), ``has_vector``
(``memory``: its vector row exists, when the database writes vectors — so a later ``absent``
check on the ``memory_vectors`` path means something).

A failure names the check, the label, the record's id and the path: never the text. A case that
crashes (an error of the suite, the surface or convmem that is not a refusal) is that case's
failure, naming the step or check and the error's type; the run goes on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from convmem.errors import ConvmemError, NotFound
from convmem.eval.behaviour.cases import Case, Check
from convmem.eval.behaviour.drivers import Driver, Produced, Who, profile
from convmem.eval.behaviour.reading import (
    NoteTally,
    containment,
    request_text,
    score_note,
    score_produced,
    summary_text,
)
from convmem.model.messages import ToolCall
from convmem.model.purpose import DEFAULT_PURPOSE

PRINCIPALS: Mapping[str, tuple[str, str]] = {
    "alice": ("a", "alice"),
    "bob": ("a", "bob"),
    "eve": ("b", "alice"),
    "carol": ("b", "carol"),
}
WINDOW = 8192  # what the request paths assemble at, unless the case says
SMALL_WINDOW = 1500  # where history is evicted and summarised after a few dozen turns
QUESTION = "What should you keep in mind about me for this conversation?"  # a check's default
_SMALL_TALK = ("tea", "jazz", "rivers", "chess", "clouds", "bicycles", "owls", "bread", "maps")


@dataclass
class Label:
    name: str
    kind: str  # memory | message | conversation | marker
    id: str | None
    marker: str | None
    owner: str | None = None  # the principal that wrote it


@dataclass
class CaseResult:
    id: str
    kind: str
    name: str
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems


class StepFailed(Exception):
    """A step could not be played (the surface refused it): the case fails, naming the step."""


class CaseRun:
    def __init__(
        self, driver: Driver, case: Case, tenant_prefix: str,
        fatal: tuple[type[BaseException], ...] = (),
    ) -> None:  # fmt: skip
        self.driver = driver
        self.fatal = fatal  # errors that end the run, not the case (the service unreachable)
        self.case = case
        self.prefix = tenant_prefix
        self.labels: dict[str, Label] = {}
        self.conversations: dict[str, tuple[str, str]] = {}  # label -> (owner, id)
        self.tool_call_ids: set[str] = set()
        self.used: set[str] = set()
        self.window = next(
            (int(s.get("tokens", WINDOW)) for s in case.steps if s.get("do") == "window"), WINDOW
        )
        self.tally = NoteTally()
        for name, literal in case_markers(case).items():
            self.labels[name] = Label(name, "marker", None, literal)

    def who(self, name: str) -> Who:
        if name not in PRINCIPALS:
            raise StepFailed(f"unknown principal {name!r}")
        self.used.add(name)
        letter, user = PRINCIPALS[name]
        return f"{self.prefix}{letter}", user

    # --- steps ----------------------------------------------------------------------------------

    def play(self) -> list[str]:
        for index, step in enumerate(self.case.steps):
            action = str(step["do"])
            handler = _STEPS.get(action)
            if handler is None:
                return [f"step {index} ({action}): unknown step"]
            refused = bool(step.get("refused"))  # another principal's write: must be NotFound
            try:
                handler(self, step)
            except StepFailed as exc:
                return [f"step {index} ({action}): {exc}"]
            except NotFound:
                if not refused:
                    return [f"step {index} ({action}): refused with NotFound"]
            except ConvmemError as exc:
                return [f"step {index} ({action}): refused with {type(exc).__name__}"]
            except self.fatal:
                raise
            except Exception as exc:  # a crash is this case's failure, named
                return [f"step {index} ({action}): crashed with {type(exc).__name__}"]
            else:
                if refused:
                    return [f"step {index} ({action}): allowed, not refused"]
        return []

    def bind(self, step: Mapping[str, Any], kind: str, record_id: str, owner: str) -> None:
        name = step.get("as")
        if name:
            self.labels[str(name)] = Label(str(name), kind, record_id, step.get("marker"), owner)

    def label(self, name: object, kind: str) -> Label:
        found = self.labels.get(str(name))
        if found is None or found.kind != kind or found.id is None:
            raise StepFailed(f"no {kind} labelled {name!r}")
        return found

    def conv(self, name: object, actor: object = None) -> tuple[Who, str, str]:
        """The conversation's (acting principal, id, owner): its owner acts unless ``actor``."""
        if str(name) not in self.conversations:
            raise StepFailed(f"no conversation labelled {name!r}")
        owner, conv_id = self.conversations[str(name)]
        return self.who(str(actor) if actor else owner), conv_id, owner

    def remember(self, step: Mapping[str, Any], *, proposed: bool) -> None:
        owner = str(step.get("who", "alice"))
        expires = datetime.now(UTC) - timedelta(days=1) if step.get("expired") else None
        source = self.label(step["source"], "message").id if step.get("source") else None
        memory_id = self.driver.remember(
            self.who(owner), str(step["text"]), proposed=proposed,
            scope=str(step.get("scope", "user")), subject=step.get("subject"), expires_at=expires,
            purpose=str(step.get("purpose", DEFAULT_PURPOSE)), source_message_id=source,
        )  # fmt: skip
        if step.get("blocked"):  # the policy must refuse it: stored, it is this case's failure
            if memory_id is not None:
                self.bind(step, "memory", memory_id, owner)
                raise StepFailed(f"stored as {memory_id}, not refused")
            return
        if memory_id is None:
            raise StepFailed("the memory was not stored")
        self.bind(step, "memory", memory_id, owner)

    def say(self, step: Mapping[str, Any]) -> None:
        who, conv_id, owner = self.conv(step["conv"], step.get("who"))
        metadata = {"name": str(step["name"])} if step.get("name") else None
        message_id, saved = self.driver.append(
            who, conv_id, str(step.get("role", "user")), str(step["text"]), metadata=metadata
        )
        self.bind(step, "message", message_id, owner)
        if step.get("saves"):
            if not saved:
                raise StepFailed("the message saved no memory")
            self.bind(
                {"as": step["saves"], "marker": step.get("marker")}, "memory", saved[0], owner
            )

    def tool(self, step: Mapping[str, Any]) -> None:
        who, conv_id, owner = self.conv(step["conv"])
        call_id = f"call_{len(self.tool_call_ids) + 1}"
        call = ToolCall(id=call_id, name=str(step.get("name", "lookup")), arguments="{}")
        self.driver.append(who, conv_id, "assistant", "", tool_calls=[call])
        self.tool_call_ids.add(call_id)
        result_id, _ = self.driver.append(
            who, conv_id, "tool", str(step["result"]), tool_call_id=call_id
        )
        self.bind(step, "message", result_id, owner)

    def chat(self, step: Mapping[str, Any]) -> None:
        who, conv_id, _ = self.conv(step["conv"])
        start = int(step.get("start", 0))
        for i in range(start, start + int(step.get("turns", 30))):
            subject = _SMALL_TALK[i % len(_SMALL_TALK)]
            self.driver.append(
                who, conv_id, "user", f"Turn {i}: tell me something about {subject}."
            )
            self.driver.assemble(who, conv_id, None, window=SMALL_WINDOW, format="openai")
            self.driver.append(
                who, conv_id, "assistant",
                f"Here is a thought about {subject}: people have enjoyed them for ages, and "
                f"there is always more to discover about {subject} on a quiet afternoon.",
            )  # fmt: skip
            self.driver.settle()  # a model summarizer's jobs run between turns, as a worker's

    # --- checks ---------------------------------------------------------------------------------

    def verify(self) -> list[str]:
        problems: list[str] = []
        for index, check in enumerate(self.case.checks):
            try:
                problems.extend(f"check {index}: {p}" for p in self._verify(check))
            except StepFailed as exc:
                problems.append(f"check {index}: {exc}")
            except ConvmemError as exc:
                problems.append(f"check {index}: refused with {type(exc).__name__}")
            except self.fatal:
                raise
            except Exception as exc:  # a crash is this case's failure, named
                problems.append(f"check {index}: crashed with {type(exc).__name__}")
        return problems

    def _labels(self, check: Check) -> list[Label]:
        missing = [name for name in check.labels if name not in self.labels]
        if missing:
            raise StepFailed(f"unknown label(s) {', '.join(missing)}")
        return [self.labels[name] for name in check.labels]

    def _verify(self, check: Check) -> list[str]:
        labels = self._labels(check)
        if check.check == "not_found":
            return self._not_found(check, labels)
        if check.check == "contained":
            return self._contained(check, labels)
        problems: list[str] = []
        for path in check.paths:
            seen = self.observe(path, check, labels).casefold()
            for label in labels:
                by_id = check.match != "text" and bool(label.id and label.id.casefold() in seen)
                by_text = check.match != "id" and bool(
                    label.marker and label.marker.casefold() in seen
                )
                if check.check == "present" and not (by_id or by_text):
                    problems.append(f"missing {describe(label)} via {path}")
                elif check.check == "absent" and (by_id or by_text):
                    how = " and ".join(w for w, hit in (("id", by_id), ("text", by_text)) if hit)
                    problems.append(f"leaked {describe(label)} via {path} (by {how})")
        return problems

    def _query(self, check: Check, labels: list[Label]) -> str:
        return check.query or " ".join(label.marker for label in labels if label.marker) or "x"

    def _conv_for(self, check: Check, who: Who, reader: str) -> str:
        """The check's conversation, or a new one of the reader's (a fresh request)."""
        if check.conv is not None:
            return self.conv(check.conv)[1]
        fresh = f"_fresh_{reader}"
        if fresh not in self.conversations:
            conv_id = self.driver.create_conversation(who, project=None, temporary=False)
            self.conversations[fresh] = (reader, conv_id)
        return self.conversations[fresh][1]

    def observe(self, path: str, check: Check, labels: list[Label]) -> str:
        """What ``path`` returns to the check's reader, as text (ids included)."""
        who, d = self.who(check.who), self.driver
        query = self._query(check, labels)
        if path in ("assemble", "summary"):
            conv_id = self._conv_for(check, who, check.who)
            window = SMALL_WINDOW if path == "summary" else self.window
            found = d.assemble(
                who, conv_id, check.query or QUESTION, window=window, format="openai",
                purposes=check.purposes,
            )  # fmt: skip
            if path == "summary" and d.settle():  # a model's summary was queued: now it is built
                found = d.assemble(
                    who, conv_id, check.query or QUESTION, window=window, format="openai",
                    purposes=check.purposes,
                )  # fmt: skip
            if found is None:
                return ""
            return (
                summary_text(d, who, conv_id, found) if path == "summary" else request_text(found)
            )
        items: Any
        if path == "memory_search":
            items = d.memory_search(who, query, check.purposes)
        elif path == "memory_list":
            items = d.memory_list(who)
        elif path == "memory_get":
            items = [d.memory_get(who, x.id) for x in labels if x.kind == "memory" and x.id]
        elif path == "message_get":
            items = [d.message_get(who, x.id) for x in labels if x.kind == "message" and x.id]
        elif path == "conversation_search":
            items = d.conversation_search(who, self._conv_for(check, who, check.who), query)
        elif path == "conversation_messages":
            items = d.conversation_messages(who, self._conv_for(check, who, check.who))
        elif path == "conversation_list":
            items = d.conversation_list(who)
        elif path == "last_assembly":
            items = d.last_assembly(who, self._conv_for(check, who, check.who))
        elif path == "memory_vectors":
            items = d.memory_vectors(who) or []  # None: the database writes no vectors
        else:  # export, without its audit: that keeps, by design, the ids of what was deleted
            exported = json.loads(d.export(who))
            exported.get("data", {}).pop("audit_events", None)
            return json.dumps(exported, ensure_ascii=False)
        return json.dumps(items, ensure_ascii=False)

    def _not_found(self, check: Check, labels: list[Label]) -> list[str]:
        who, problems = self.who(check.who), []
        for label in labels:
            assert label.id is not None  # markers name no record; the loader's labels do
            if label.kind == "memory":
                found: object = self.driver.memory_get(who, label.id)
                path = "memory_get"
            elif label.kind == "message":
                found, path = self.driver.message_get(who, label.id), "message_get"
            else:
                found = self.driver.conversation_messages(who, label.id)
                path = "conversation_messages"
            if found is not None:
                problems.append(f"{describe(label)} readable via {path}")
        return problems

    def _contained(self, check: Check, labels: list[Label]) -> list[str]:
        """Stored instructions stay data: in the request, each marker occurs only inside a turn
        of its own (user, assistant, tool) or on a quoted line of a labelled block, the blocks'
        tags are convmem's alone, and every tool call is one the conversation stored."""
        who, problems = self.who(check.who), []
        conv_id = self._conv_for(check, who, check.who)
        for fmt in ("openai", "anthropic"):
            found = self.driver.assemble(
                who, conv_id, check.query or QUESTION, window=self.window, format=fmt,
                purposes=check.purposes,
            )  # fmt: skip
            if found is None:
                problems.append(f"no request ({fmt})")
                continue
            for label in labels:
                problems.extend(
                    f"{describe(label)} {p} ({fmt})"
                    for p in containment(found, label.marker or "", self.tool_call_ids)
                )
        return problems

    def faithfulness(self, produced: Sequence[Produced] = ()) -> NoteTally:
        """The notes the summarizer produced for this case (``produced``: before its checks
        dropped any), each against the turns it cites; without a record of them (a service in
        another process built the summaries), the notes of the stored summaries."""
        if produced:
            return score_produced(produced)
        tally = NoteTally()
        for owner, conv_id in self.conversations.values():
            who = self.who(owner)
            for summary in self.driver.summaries(who, conv_id) or []:
                tally.summaries += 1
                tally.fallbacks += int(summary.fallback)
                tally.summarizers.add(summary.summarizer)
                for note in summary.notes:
                    tally.add(score_note(self.driver, who, note))
        return tally

    def clean_up(self) -> None:
        for name in sorted(self.used):
            try:
                self.driver.delete_all(self.who(name))
            except ConvmemError:
                continue


def case_markers(case: Case) -> dict[str, str]:
    """Literal-only labels a case declares in a ``markers`` step."""
    found: dict[str, str] = {}
    for step in case.steps:
        if step.get("do") == "markers":
            found.update({str(k): str(v) for k, v in dict(step.get("markers", {})).items()})
    return found


def describe(label: Label) -> str:
    return f"{label.name} ({label.id})" if label.id else label.name


def _step_conversation(run: CaseRun, step: Mapping[str, Any]) -> None:
    owner = str(step.get("who", "alice"))
    project = step.get("project")
    conv_id = run.driver.create_conversation(
        run.who(owner), project=str(project) if project else None,
        temporary=bool(step.get("temporary", False)),
    )  # fmt: skip
    run.conversations[str(step["as"])] = (owner, conv_id)
    run.labels[str(step["as"])] = Label(str(step["as"]), "conversation", conv_id, None, owner)


def _step_memory(action: Callable[[Driver, Who, str], None]) -> Callable[[CaseRun, Any], None]:
    def play(run: CaseRun, step: Mapping[str, Any]) -> None:
        label = run.label(step["memory"], "memory")
        assert label.id is not None
        assert label.owner is not None
        action(run.driver, run.who(str(step.get("who", label.owner))), label.id)

    return play


def _step_update(run: CaseRun, step: Mapping[str, Any]) -> None:
    label = run.label(step["memory"], "memory")
    assert label.id is not None
    assert label.owner is not None
    new_id = run.driver.update_memory(run.who(label.owner), label.id, str(step["text"]))
    if new_id is None:
        raise StepFailed("the update was not stored")
    run.bind(step, "memory", new_id, label.owner)


def _step_edit(run: CaseRun, step: Mapping[str, Any]) -> None:
    who, conv_id, owner = run.conv(step["conv"])
    original = run.label(step["message"], "message")
    assert original.id is not None
    run.bind(step, "message", run.driver.edit(who, conv_id, original.id, str(step["text"])), owner)


def _step_delete_message(run: CaseRun, step: Mapping[str, Any]) -> None:
    who, conv_id, _ = run.conv(step["conv"], step.get("who"))
    doomed = run.label(step["message"], "message")
    assert doomed.id is not None
    run.driver.delete_message(who, conv_id, doomed.id)


# vectors are filled after the write that queued them (by a background filler or the worker):
# how long a case waits for one before it says the memory has none
VECTOR_WAIT_SECONDS = 10.0


def _step_has_vector(run: CaseRun, step: Mapping[str, Any]) -> None:
    label = run.label(step["memory"], "memory")
    assert label.owner is not None
    deadline = time.monotonic() + VECTOR_WAIT_SECONDS
    while True:
        held = run.driver.memory_vectors(run.who(label.owner))
        if held is None or label.id in {memory_id for memory_id, _ in held}:
            return
        if time.monotonic() > deadline:
            raise StepFailed(f"{describe(label)} has no vector row")
        time.sleep(0.05)


def _step_delete_conversation(run: CaseRun, step: Mapping[str, Any]) -> None:
    who, conv_id, _ = run.conv(step["conv"], step.get("who"))
    run.driver.delete_conversation(who, conv_id)


_STEPS: dict[str, Callable[[CaseRun, Mapping[str, Any]], None]] = {
    "remember": lambda run, step: run.remember(step, proposed=False),
    "propose": lambda run, step: run.remember(step, proposed=True),
    "confirm": _step_memory(lambda d, who, memory_id: d.confirm(who, memory_id)),
    "reject": _step_memory(lambda d, who, memory_id: d.reject(who, memory_id)),
    "restore": _step_memory(lambda d, who, memory_id: d.restore(who, memory_id)),
    "delete_memory": _step_memory(lambda d, who, memory_id: d.delete_memory(who, memory_id)),
    "update": _step_update,
    "memory_off": lambda run, step: run.driver.set_memory_enabled(
        run.who(str(step.get("who", "alice"))), False
    ),
    "conversation": _step_conversation,
    "say": CaseRun.say,
    "tool": CaseRun.tool,
    "chat": CaseRun.chat,
    "edit": _step_edit,
    "delete_message": _step_delete_message,
    "delete_conversation": _step_delete_conversation,
    "delete_all": lambda run, step: run.driver.delete_all(run.who(str(step.get("who", "alice")))),
    "retention": lambda run, step: run.driver.expire_conversations(
        f"{run.prefix}{step.get('tenant', 'a')}"
    ),
    "has_vector": _step_has_vector,
    "markers": lambda run, step: None,  # read when the run starts (case_markers)
    "window": lambda run, step: None,  # read when the run starts
}


def run_case(
    driver: Driver, case: Case, tenant_prefix: str, *, clean: bool = True,
    produced: Callable[[], Sequence[Produced]] | None = None,
    fatal: tuple[type[BaseException], ...] = (),
) -> tuple[CaseResult, NoteTally]:  # fmt: skip
    """Play ``case``; its result (one failure, naming where, if anything in it crashed) and,
    for a compaction case, its summaries' faithfulness. ``produced`` hands over what the
    summarizer produced while the case ran; ``fatal`` errors end the run instead."""
    result = CaseResult(case.id, case.kind, case.name)
    tally = NoteTally()
    run = CaseRun(driver, case, tenant_prefix, fatal)
    try:
        result.problems = run.play()
        if not result.problems:
            result.problems = run.verify()
        if case.kind == "compaction":
            tally = run.faithfulness(produced() if produced is not None else ())
    except fatal:
        raise
    except Exception as exc:  # one broken case is one failure; the run goes on
        result.problems = [*result.problems, f"crashed with {type(exc).__name__}"]
    finally:
        if clean:
            try:
                run.clean_up()
            except fatal:
                raise
            except Exception as exc:
                crashed = f"clean-up crashed with {type(exc).__name__}"
                result.problems = [*result.problems, crashed]
    return result, tally


__all__ = ["CaseResult", "NoteTally", "WINDOW", "profile", "run_case"]

"""The behaviour suite's case files: scripted conversations and what their requests must hold.

A case file is JSON: ``{"format": "convmem-behaviour", "version": N, "cases": [...]}``. The
package ships ``cases/behaviour-v1.json``; users add files of their own (``--cases``), whose ids
must not repeat the shipped ones. Each case has an ``id``, a ``kind`` (one of ``KINDS``), a
``name``, ``steps`` (what is written, by whom — see ``convmem.eval.behaviour.runner``) and
``checks`` (what each serving path must or must not return). A step that writes a record binds it
to a label (``"as"``) and may name a ``marker``: a word of its text that the checks look for in
what a path returns, beside the record's id. Failures name labels and ids, never the text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from convmem.errors import InvalidInput
from convmem.model.purpose import PURPOSES

FORMAT = "convmem-behaviour"
VERSION = 1
KINDS: tuple[str, ...] = (
    "recall",
    "non_recall",
    "isolation",
    "correction",
    "compaction",
    "deletion",
    "injection",
    "never_store",
)
CHECKS = ("present", "absent", "not_found", "contained")
PATHS = (
    "assemble",
    "memory_search",
    "memory_list",
    "memory_get",
    "message_get",
    "conversation_search",
    "conversation_messages",
    "conversation_list",
    "export",
    "summary",
    "last_assembly",
    "memory_vectors",
)
MATCHES = ("any", "id", "text")
SHIPPED = "behaviour-v1.json"


@dataclass(frozen=True)
class Check:
    """One expectation: ``present`` / ``absent`` (labels in / out of what each path returns),
    ``not_found`` (each label's id answers not-found to ``who``), ``contained`` (each label's
    marker stays inside its labelled block of the request and adds no tool call)."""

    check: str
    labels: tuple[str, ...]
    who: str
    paths: tuple[str, ...]
    conv: str | None
    query: str
    match: str = "any"  # what counts as a record seen: its id, its marker (text), or either
    # the memory purposes the check's requests declare (assemble, memory_search); None: none
    # declared, so every purpose the principal may use
    purposes: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Case:
    id: str
    kind: str
    name: str
    steps: tuple[Mapping[str, Any], ...]
    checks: tuple[Check, ...]
    source: str  # the file it came from (its name only)


def _fail(where: str, why: str) -> InvalidInput:
    return InvalidInput(f"behaviour cases, {where}: {why}")


def _check(raw: object, where: str) -> Check:
    if not isinstance(raw, Mapping):
        raise _fail(where, "a check is an object")
    kind = raw.get("check")
    if kind not in CHECKS:
        raise _fail(where, f"check must be one of {', '.join(CHECKS)}")
    labels = raw.get("labels")
    if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
        raise _fail(where, "labels must be a non-empty list of strings")
    paths = raw.get("paths", [])
    if not isinstance(paths, list) or not set(paths) <= set(PATHS):
        raise _fail(where, f"paths must be among {', '.join(PATHS)}")
    if kind in ("present", "absent") and not paths:
        raise _fail(where, f"a {kind} check names its paths")
    who, conv, query = raw.get("who", "alice"), raw.get("conv"), raw.get("query", "")
    if not isinstance(who, str) or not isinstance(query, str):
        raise _fail(where, "who and query are strings")
    if conv is not None and not isinstance(conv, str):
        raise _fail(where, "conv is a label")
    match = raw.get("match", "any")
    if match not in MATCHES:
        raise _fail(where, f"match must be one of {', '.join(MATCHES)}")
    purposes = raw.get("purposes")
    if purposes is not None and (
        not isinstance(purposes, list) or not set(purposes) <= set(PURPOSES)
    ):
        raise _fail(where, f"purposes is a list of {', '.join(PURPOSES)}")
    return Check(
        kind, tuple(labels), who, tuple(paths), conv, query, match,
        None if purposes is None else tuple(purposes),
    )  # fmt: skip


def _case(raw: object, source: str, index: int) -> Case:
    where = f"{source} case {index}"
    if not isinstance(raw, Mapping):
        raise _fail(where, "a case is an object")
    case_id, kind, name = raw.get("id"), raw.get("kind"), raw.get("name")
    if not isinstance(case_id, str) or not case_id:
        raise _fail(where, "id is a non-empty string")
    where = f"{source} case {case_id}"
    if kind not in KINDS:
        raise _fail(where, f"kind must be one of {', '.join(KINDS)}")
    if not isinstance(name, str) or not name:
        raise _fail(where, "name is a non-empty string")
    steps, checks = raw.get("steps"), raw.get("checks")
    if not isinstance(steps, list) or not all(isinstance(s, Mapping) and "do" in s for s in steps):
        raise _fail(where, 'steps is a list of objects with "do"')
    if not isinstance(checks, list) or not checks:
        raise _fail(where, "checks is a non-empty list")
    return Case(
        case_id, kind, name, tuple(steps),
        tuple(_check(c, f"{where} check {i}") for i, c in enumerate(checks)), source,
    )  # fmt: skip


def parse(document: object, source: str) -> list[Case]:
    if not isinstance(document, Mapping) or document.get("format") != FORMAT:
        raise _fail(source, f'not a case file (its "format" must be "{FORMAT}")')
    if document.get("version") != VERSION:
        raise _fail(source, f"version {document.get('version')!r} is not {VERSION}")
    raw_cases = document.get("cases")
    if not isinstance(raw_cases, list):
        raise _fail(source, '"cases" is a list')
    return [_case(raw, source, i) for i, raw in enumerate(raw_cases)]


def shipped_text() -> str:
    return resources.files("convmem.eval.behaviour").joinpath("cases", SHIPPED).read_text("utf-8")


def load(extra: Iterable[str | Path] = (), *, shipped: bool = True) -> list[Case]:
    """The shipped cases (unless ``shipped=False``) followed by each extra file's. Ids are unique
    across all of them."""
    cases = parse(json.loads(shipped_text()), SHIPPED) if shipped else []
    for path in extra:
        try:
            document = json.loads(Path(path).read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise _fail(Path(path).name, f"cannot read it as JSON ({type(exc).__name__})") from exc
        cases.extend(parse(document, Path(path).name))
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise _fail(case.source, f"case id {case.id!r} is used twice")
        seen.add(case.id)
    return cases

"""The never-store gate: the one function every durable write of user-derived text passes
(DESIGN.md principles 9 and 13).

:func:`admit` takes the value a store method keeps — a memory (remembered, proposed by the
heuristics, by consolidation or by a model, imported), a summary with its notes, an entity with
its names, entity facts, a pinned instruction, a tool's definition — and returns it wrapped in
:class:`~convmem.model.admitted.Admitted` (the only way to make one: the store's text-writing
methods take nothing else) or the refusal. It reads the value's text itself, by type, so a
caller cannot leave a field out, and judges:

1. **its own text** with the never-store policy (``convmem.memory.policy``: provenance for a
   memory's source kind, then content);
2. **the turns it cites** (a memory's source message and evidence, a note's sources, a fact's
   message): a text derived from a turn the policy refuses is refused with that turn's reason,
   whatever its own words — "I log in to the bank with Falcon!9921." drawn from "My password for
   the bank is Falcon!9921" is a credential. A turn is judged on its text and every caller
   string of its parts (captions, file names, extracted text). For a memory the turn's
   provenance counts too: a tool's result or a temporary conversation is never a memory's source;
3. **the turns the derivation read** (``read``: what a model or a summarizer was shown): a text
   carrying a secret-looking value (a token with a digit) of a refused turn is refused with
   that turn's reason, even when it cites another turn.

**Special categories a tenant opened** (``TenantPolicy.sensitive_categories``, issue 36): a
memory the user asked for themselves (source kind ``user_explicit``: saved, or waiting on a
conflict with a kept one) may
hold a statement of an opened category ("Remember that I am allergic to peanuts": ``health``)
— and its source turn may too — while every other rule holds (a credential, a card, an id or an
inferred trait beside it is refused as ever). The gate marks the admitted record with the
categories it let through (``MemoryRecord.sensitivity``; ``none`` otherwise): the mark is
the gate's, never the caller's. Nothing else is waived: a proposal, an import, an entity fact,
a summary note or a consolidation's candidate of such a statement is refused as before.

Decisions on texts are cached by digest (texts are immutable, and the same turn is judged by
every value derived from it), so a caller that filters parts of a value first (``decide``)
and then admits the rest pays for each text once.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final, Protocol, TypeVar, cast

from convmem.errors import NotFound
from convmem.memory.policy import (
    WAIVABLE,
    PolicyDecision,
    check_fields,
    check_memory_write,
    check_text,
    merged_waivers,
)
from convmem.model.admitted import Admitted
from convmem.model.conversation import ConversationRecord
from convmem.model.entities import EntityFact
from convmem.model.gate_seal import GATE_SEAL
from convmem.model.memory import MemoryRecord
from convmem.model.messages import Message
from convmem.model.parts import part_strings
from convmem.model.policy import TenantPolicy, sensitivity_label
from convmem.model.snapshot import SnapshotItem
from convmem.model.summary import SummaryRecord
from convmem.model.tools import RegisteredTool
from convmem.store.conversations import PinnedInstruction
from convmem.store.entities import EntityRow

__all__ = [
    "Gated",
    "SourceReader",
    "admit",
    "decide",
    "judge_source",
    "withheld_note",
    "withheld_reason",
]

Gated = TypeVar(
    "Gated",
    MemoryRecord,
    SummaryRecord,
    EntityRow,
    tuple[EntityFact, ...],
    PinnedInstruction,
    RegisteredTool,
)


class SourceReader(Protocol):
    """What the gate reads of the store: the turns a value cites (a ``ReadTxn`` is one)."""

    def get_messages(
        self, tenant: str, user: str, message_ids: Sequence[str]
    ) -> dict[str, Message]: ...

    def get_conversation(
        self, tenant: str, user: str, conversation_id: str
    ) -> ConversationRecord: ...

    def tenant_policy(self, tenant: str) -> TenantPolicy: ...


_ALLOWED: Final = PolicyDecision(True, None, "no never-store rule applies")

# --- the decision cache ----------------------------------------------------------------------

_CACHE_SIZE: Final = 8192
_cache: OrderedDict[bytes, PolicyDecision] = OrderedDict()
_cache_lock = threading.Lock()
_NO_WAIVER: Final[frozenset[str]] = frozenset()


def _text_decision(text: str, waive: frozenset[str] = _NO_WAIVER) -> PolicyDecision:
    """``check_text``, remembered by the text's digest and the waiver (the text itself is not
    kept)."""
    if not text or not text.strip():
        return _ALLOWED
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16)
    digest.update(",".join(sorted(waive)).encode())
    key = digest.digest()
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    decision = check_text(text, waive)
    with _cache_lock:
        _cache[key] = decision
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return decision


def _fields_decision(
    fields: Mapping[str, str | None], waive: frozenset[str] = _NO_WAIVER
) -> PolicyDecision:
    return check_fields(fields, lambda text: _text_decision(text, waive))


# --- sources ---------------------------------------------------------------------------------


def _turn_strings(turn: Message) -> Iterator[str]:
    yield turn.content
    for part in turn.parts:
        for _, value in part_strings(part):
            yield value


def judge_source(turn: Message, waive: frozenset[str] = _NO_WAIVER) -> PolicyDecision:
    """Whether a turn may be the source of derived text: its content and every caller string of
    its parts pass the never-store content checks (``waive``: special categories opened)."""
    waived: set[str] = set()
    for said in _turn_strings(turn):
        decision = _text_decision(said, waive)
        if not decision.allowed:
            return decision
        waived.update(decision.waived)
    return merged_waivers(_ALLOWED, waived)


def _cited(decision: PolicyDecision) -> PolicyDecision:
    return PolicyDecision(False, decision.reason, f"{decision.detail} (in a turn it cites)")


# a token of a refused turn that a derived text must not carry: a value with a digit in it
# (a PIN, a password like "tulip-rain-44", a card or account number), edge punctuation aside
_TOKEN: Final = re.compile("[^\\s\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb()\\[\\]{}<>,;]+")
_EDGES: Final = ".,;:!?*_~"


def _values(text: str) -> set[str]:
    found = set()
    for raw in _TOKEN.findall(text):
        token = raw.strip(_EDGES)
        if len(token) >= 4 and any(c.isdigit() for c in token):
            found.add(token.casefold())
    return found


def _carried(texts: Iterable[str], read: Sequence[Message]) -> PolicyDecision:
    """Refused when a text carries a secret-looking value of a refused turn it was read from.
    Only a turn holding one of the text's values is judged (most derived texts carry none)."""
    said = set().union(*(_values(t) for t in texts))
    if not said:
        return _ALLOWED
    for turn in read:
        strings = list(_turn_strings(turn))
        if not said & set().union(*(_values(s) for s in strings)):
            continue
        decision = judge_source(turn)
        if not decision.allowed:
            return PolicyDecision(
                False, decision.reason,
                f"{decision.detail} (a value of a turn it was derived from)",
            )  # fmt: skip
    return _ALLOWED


def decide(
    texts: Mapping[str, str | None],
    *,
    sources: Sequence[Message] = (),
    read: Sequence[Message] = (),
    waive: frozenset[str] = _NO_WAIVER,
) -> PolicyDecision:
    """The gate's judgement of derived ``texts`` (field name → value) citing ``sources`` and
    drawn from ``read``: what ``admit`` decides for each part of a value, for a caller that
    drops refused parts (a summary's notes, an entity's facts) before admitting the rest.
    ``waive``: the special categories opened to this value (only ``admit`` passes any)."""
    decision = _fields_decision(texts, waive)
    if not decision.allowed:
        return decision
    waived = set(decision.waived)
    for turn in sources:
        decision = judge_source(turn, waive)
        if not decision.allowed:
            return _cited(decision)
        waived.update(decision.waived)
    return merged_waivers(_carried([t for t in texts.values() if t], read), waived)


# --- summaries' withheld notes ---------------------------------------------------------------

_WITHHELD: Final = re.compile(r"\(withheld: never-store ([a-z_]+)\)")


def withheld_note(reason: str) -> str:
    """The placeholder a refused summary note is replaced by (its sources stay)."""
    return f"(withheld: never-store {reason})"


def withheld_reason(text: str) -> str | None:
    """The reason code of a placeholder note, or None for any other text."""
    found = _WITHHELD.fullmatch(text)
    return found.group(1) if found else None


# --- the gate --------------------------------------------------------------------------------


def _schema_strings(value: Any) -> Iterator[str]:
    """Every string of a tool's JSON Schema (descriptions, enum values, defaults, titles)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _schema_strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _schema_strings(item)


def _read_sources(
    reader: SourceReader | None, tenant: str, user: str, ids: Sequence[str],
    known: Sequence[Message],
) -> dict[str, Message]:  # fmt: skip
    """The cited turns: the ones given, the rest read (another principal's id: ``NotFound``
    from the caller's own read; an id the store no longer holds is not judged)."""
    by_id = {m.id: m for m in known if m.id in ids}
    missing = [i for i in dict.fromkeys(ids) if i not in by_id]
    if missing and reader is not None:
        by_id.update(reader.get_messages(tenant, user, missing))
    return by_id


def _read_together(subject: str | None, text: str, prefix: str = "") -> dict[str, str]:
    """A subject and its text as a reader reads them, one after the other: a secret split
    across the two ("bank password" / "Falcon!9921", "my password" / "is Falcon!9921") is a
    secret, though neither half is one."""
    if not subject or not text:
        return {}
    return {f"{prefix}subject with text": f"{subject}: {text}",
            f"{prefix}subject before text": f"{subject} {text}"}  # fmt: skip


def _memory_decision(
    record: MemoryRecord, turns: Sequence[Message], reader: SourceReader | None, tenant: str,
    user: str, waive: frozenset[str],
) -> PolicyDecision:  # fmt: skip
    tool = any(t.role == "tool" for t in turns)
    temporary = False
    if reader is not None:
        for conversation_id in dict.fromkeys(t.conversation_id for t in turns):
            try:
                if reader.get_conversation(tenant, user, conversation_id).temporary:
                    temporary = True
            except NotFound:
                continue
    # provenance first (the source kind, a tool's result, a temporary conversation) ...
    decision = check_memory_write(
        "", source_kind=record.source_kind, from_tool_output=tool,
        temporary_conversation=temporary,
    )  # fmt: skip
    if not decision.allowed:
        return decision
    # ... then the content of every stored field (cached: a record is admitted again after
    # supersession links change), and the subject read with the text
    return _fields_decision({
        "text": record.text, "subject": record.subject_key, "scope": record.scope,
        "purpose": record.purpose, **_read_together(record.subject_key, record.text),
    }, waive)  # fmt: skip


def _opened(record: MemoryRecord, reader: SourceReader | None, tenant: str) -> frozenset[str]:
    """The special categories the tenant opened to this record: only a statement the user
    asked to keep themselves may use them — saved, or waiting while it disagrees with a kept
    memory (never a proposal, an inference, an import or an admin's)."""
    if reader is None or record.source_kind != "user_explicit":
        return _NO_WAIVER
    return frozenset(reader.tenant_policy(tenant).sensitive_categories) & WAIVABLE


def _memory_verdict(
    record: MemoryRecord, reader: SourceReader | None, tenant: str, user: str,
    cites: Sequence[str], known: Sequence[Message], read: Sequence[Message],
) -> PolicyDecision:  # fmt: skip
    ids = [*([record.source_message_id] if record.source_message_id else []), *cites]
    turns = list(_read_sources(reader, tenant, user, ids, known).values())

    def judged(waive: frozenset[str]) -> PolicyDecision:
        decision = _memory_decision(record, turns, reader, tenant, user, waive)
        if decision.allowed:
            waived = decision.waived
            decision = merged_waivers(
                decide({"text": record.text}, sources=turns, read=read, waive=waive), waived
            )
        return decision

    decision = judged(_NO_WAIVER)
    if decision.allowed or decision.reason not in WAIVABLE:
        return decision
    # the tenant's policy is read only for a refusal it could lift
    waive = _opened(record, reader, tenant)
    return judged(waive) if waive else decision


def _note_decision(
    name: str, item: SnapshotItem, by_id: Mapping[str, Message], read: Sequence[Message]
) -> PolicyDecision:
    if withheld_reason(item.text) is not None:
        return _ALLOWED  # its sources are what was refused; the placeholder says nothing
    cited = [by_id[s] for s in item.sources if s in by_id]
    fields = {f"{name} note": item.text, f"{name} subject": item.subject,
              **_read_together(item.subject, item.text, f"{name} ")}  # fmt: skip
    decision = decide(fields, sources=cited, read=read)
    return decision


def admit(
    value: Gated,
    *,
    reader: SourceReader | None = None,
    tenant: str = "",
    user: str = "",
    cites: Sequence[str] = (),
    known: Sequence[Message] = (),
    read: Sequence[Message] = (),
) -> Admitted[Gated] | PolicyDecision:
    """``value`` admitted for the store, or the refusal (``allowed`` False, a reason code and a
    detail that never quotes the text).

    ``cites``: turns the value is drawn from beyond the ones it names itself (a memory's
    evidence, an entity's turn); ``known``: cited turns the caller holds already (the rest are
    read through ``reader``, a transaction of ``tenant``/``user``); ``read``: the turns the
    derivation was shown (see the module docstring).
    """
    decision = _verdict(value, reader, tenant, user, cites, known, read)
    if not decision.allowed:
        return decision
    if isinstance(value, MemoryRecord):
        # the mark is the gate's: the categories it let through, or none
        marked = _marked(value, decision.waived)
        return cast("Admitted[Gated]", Admitted(marked, GATE_SEAL))
    return Admitted(value, GATE_SEAL)


def _marked(record: MemoryRecord, waived: Sequence[str]) -> MemoryRecord:
    return replace(record, sensitivity=sensitivity_label(tuple(waived)))


def _verdict(
    value: MemoryRecord | SummaryRecord | EntityRow | tuple[EntityFact, ...] | PinnedInstruction
    | RegisteredTool,
    reader: SourceReader | None, tenant: str, user: str, cites: Sequence[str],
    known: Sequence[Message], read: Sequence[Message],
) -> PolicyDecision:  # fmt: skip
    """What ``admit`` decides: the value's texts, read by type, and the turns behind them."""
    decision: PolicyDecision
    if isinstance(value, MemoryRecord):
        decision = _memory_verdict(value, reader, tenant, user, cites, known, read)
    elif isinstance(value, SummaryRecord):
        items = list(value.snapshot.items())
        ids = [s for _, item in items if withheld_reason(item.text) is None for s in item.sources]
        by_id = _read_sources(reader, tenant, user, ids, known)
        decision = _ALLOWED
        for name, item in items:
            decision = _note_decision(name, item, by_id, read)
            if not decision.allowed:
                break
    elif isinstance(value, EntityRow):
        names = {"name": value.name, **{f"alias {i}": a for i, (a, _) in enumerate(value.aliases)}}
        turns = list(_read_sources(reader, tenant, user, cites, known).values())
        decision = decide(names, sources=turns, read=read)
    elif isinstance(value, tuple):
        ids = [*(fact.message_id for fact in value), *cites]
        turns = list(_read_sources(reader, tenant, user, ids, known).values())
        fields: dict[str, str | None] = {f"fact {i}": f.text for i, f in enumerate(value)}
        fields |= {f"fact {i} speaker": f.speaker_name for i, f in enumerate(value)}
        decision = decide(fields, sources=turns, read=read)
    elif isinstance(value, PinnedInstruction):
        decision = decide({"instruction": value.text})
    elif isinstance(value, RegisteredTool):
        # each string on its own, as the caller wrote it: joined, the hints of many languages
        # ("password, dimenticata") read as a password with its value
        spec = value.spec
        strings = [spec.name, spec.description, *value.use_when,
                   *_schema_strings(dict(spec.parameters))]  # fmt: skip
        decision = decide({f"tool definition {i}": s for i, s in enumerate(strings)})
    else:  # pragma: no cover - the TypeVar's constraints make this unreachable for mypy
        raise TypeError(f"the gate does not know {type(value).__name__}")
    return decision

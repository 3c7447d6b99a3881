"""One user's consolidation pass, as the worker runs it (job ``memory.consolidate``).

1. **Stale proposals expire**: a proposal nobody confirmed within ``proposal_ttl_days`` of its
   last change is deleted (audited ``memory.proposal_expired``, reason ``stale``).
2. **Repeated statements become one proposal.** The user's own turns of the last
   ``lookback_days`` (not temporary conversations) are read as the request grammar reads them
   sentence by sentence (``detect_intent``: a plain first-person statement of a standing fact
   — never a question, a request, or small talk such as "Remember when we…?"). Statements
   that say the same thing (``near_duplicates``) in at least ``min_conversations``
   conversations are one proposal citing every turn it came from (its evidence). A proposal
   already saying it takes the evidence (and the other proposals saying it are merged into it,
   audited ``memory.proposal_merged``); a confirmed memory already saying it takes the
   evidence and nothing new is proposed. Turns cited by any memory (a rejected one too) or
   that sourced a rejected proposal are not read again, so a declined statement is not
   proposed again.
3. **Candidates from a model** (``LLMExtractor``, when configured): the turns stored since the
   last pass are sent, and every candidate is checked against the turns it cites
   (``convmem.consolidate.extract``) and the never-store policy (``save_memory``) before it
   becomes a proposal citing them.
4. **A cap**: the user keeps at most ``max_proposals`` proposals — no new one is made beyond it,
   and the least evidenced, oldest ones beyond it expire (reason ``cap``).

Every write goes through ``convmem.domain.memories`` (``save_memory``, ``delete_with_history``): one
implementation of consent, policy and the audit. Everything written is a proposal: nothing here
can confirm a memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from convmem.consolidate.extract import Candidate, is_small_talk, refusal
from convmem.consolidate.llm import LLMExtractor
from convmem.content.parts_render import text_parts
from convmem.domain.memories import delete_with_history, memory_gate, save_memory
from convmem.ids import floor_id
from convmem.memory.confidence import model_confidence, repeated_confidence
from convmem.memory.duplicates import near_duplicates
from convmem.memory.intent import Intent, detect_intent, statements
from convmem.memory.slots import classify, subject_slot
from convmem.model.memory import MemoryRecord
from convmem.model.messages import Message
from convmem.model.principal import Principal
from convmem.store.base import MemoryUpdate, Store, WriteTxn
from convmem.store.retry import write_retried

CONSOLIDATION_ACTOR = "consolidation"


@dataclass(frozen=True)
class ConsolidationSettings:
    lookback_days: float = 30.0  # how far back statements are gathered
    proposal_ttl_days: float = 30.0  # a proposal nobody confirmed within this expires
    max_proposals: int = 20  # per user: the memory page stays usable
    min_conversations: int = 2  # a statement repeated in this many conversations is proposed
    max_turns: int = 2000  # user turns read per pass
    max_extracted_turns: int = 50  # per conversation, sent to the model

    def __post_init__(self) -> None:
        if (
            min(self.lookback_days, self.proposal_ttl_days) <= 0
            or min(
                self.max_proposals, self.min_conversations, self.max_turns, self.max_extracted_turns
            )
            < 1
        ):
            raise ValueError("consolidation settings must be positive")


@dataclass
class ConsolidationReport:
    """What a pass did (counts only: the job's note)."""

    proposed: int = 0
    evidenced: int = 0  # existing memories that took new evidence
    merged: int = 0
    expired: int = 0
    capped: int = 0
    extracted: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    closed: str | None = None
    extractor: str | None = None  # why the model proposed nothing, if it failed

    def to_dict(self) -> dict[str, object]:
        return {k: v for k, v in vars(self).items() if v not in (None, 0, {})}


@dataclass(frozen=True)
class _Statement:
    message: Message
    intent: Intent


def _said(message: Message) -> str:
    return text_parts(message.parts) if message.parts else message.content


def statements_of(turns: Sequence[Message]) -> list[_Statement]:
    """The sentences of the turns that are plain first-person statements of a standing fact
    (a turn asking to remember or forget is no statement: it was acted on as sent)."""
    found = []
    for turn in turns:
        said = _said(turn)
        if not said.strip() or _asks_of_memory(said) or is_small_talk(turn):
            continue  # a request is carried out as sent; small talk states no standing fact
        for sentence in statements(said):
            # each sentence on its own: a repeated fact need not open the message
            intent = detect_intent(sentence)
            if intent is not None and intent.kind == "propose" and intent.refusal is None:
                found.append(_Statement(turn, intent))
    return found


def _asks_of_memory(said: str) -> bool:
    intent = detect_intent(said)
    return intent is not None and intent.kind != "propose"


def _clusters(statements: Sequence[_Statement]) -> list[list[_Statement]]:
    groups: list[list[_Statement]] = []
    for statement in statements:
        for group in groups:
            if near_duplicates(group[0].intent.text, statement.intent.text):
                group.append(statement)
                break
        else:
            groups.append([statement])
    return groups


def consolidate_user(
    store: Store,
    who: Principal,
    now: datetime,
    settings: ConsolidationSettings | None = None,
    *,
    extractor: LLMExtractor | None = None,
    extract_after: str | None = None,
) -> ConsolidationReport:
    """Run one pass for ``who`` (see the module docstring); ``extract_after``: the id after
    which turns are new to the model (default: the whole lookback)."""
    settings = settings or ConsolidationSettings()
    report = ConsolidationReport()
    since = floor_id("msg", int((now - timedelta(days=settings.lookback_days)).timestamp() * 1000))
    with store.read() as tx:
        report.closed = memory_gate(tx, who)
        if report.closed is not None:
            return report
        turns = tx.user_turns_after(who.tenant, who.user, since, settings.max_turns)
        cited = tx.evidenced_messages(who.tenant, who.user, [t.id for t in turns])
        declined = {
            m.source_message_id
            for m in tx.list_memories(who.tenant, who.user, statuses=("rejected",))
        }
    fresh = [t for t in turns if t.id not in cited and t.id not in declined]
    statements = statements_of(fresh)
    candidates: list[tuple[Candidate, tuple[Message, ...]]] = []
    by_id = {t.id: t for t in fresh}
    if extractor is not None:
        new = [t for t in fresh if extract_after is None or t.id > extract_after]
        candidates = _extract(extractor, new, settings, report)

    def unit(tx: WriteTxn) -> ConsolidationReport:
        result = ConsolidationReport(extractor=report.extractor)
        _expire_stale(tx, who, now, settings, result)
        for group in _clusters(statements):
            conversations = len({s.message.conversation_id for s in group})
            if conversations >= settings.min_conversations:
                _propose(tx, who, now, settings, group[-1].intent, [s.message.id for s in group],
                         result, basis="repeated",
                         confidence=repeated_confidence(conversations))  # fmt: skip
        for candidate, shown in candidates:
            reason = refusal(candidate, by_id)
            if reason is None:
                intent = _as_intent(candidate.text)
                if _propose(tx, who, now, settings, intent, list(candidate.sources), result,
                            read=shown, basis="model",
                            confidence=model_confidence(slot=intent.slot)):  # fmt: skip
                    result.extracted += 1
                    continue
                reason = "not_kept"  # the policy refused it, or the cap was reached
            result.refused[reason] = result.refused.get(reason, 0) + 1
        _cap(tx, who, settings, result)
        return result

    return write_retried(store, unit)


def _extract(
    extractor: LLMExtractor,
    turns: Sequence[Message],
    settings: ConsolidationSettings,
    report: ConsolidationReport,
) -> list[tuple[Candidate, tuple[Message, ...]]]:
    """Each conversation's candidates, with the turns the model was shown for them."""
    by_conversation: dict[str, list[Message]] = {}
    for turn in turns:
        by_conversation.setdefault(turn.conversation_id, []).append(turn)
    found: list[tuple[Candidate, tuple[Message, ...]]] = []
    for conversation_turns in by_conversation.values():
        shown = tuple(conversation_turns[-settings.max_extracted_turns :])
        extraction = extractor.extract(shown)
        if extraction.reason is not None:
            report.extractor = extraction.reason
        found.extend((candidate, shown) for candidate in extraction.candidates)
    return found


def _as_intent(text: str) -> Intent:
    """A model's candidate read as the grammar would read the statement (category, subject)."""
    category, subject = classify(text)
    return Intent("propose", text, category, subject, subject_slot(text) is not None, None)


def _current(tx: WriteTxn, who: Principal, now: datetime) -> list[MemoryRecord]:
    return tx.list_memories(who.tenant, who.user, statuses=("confirmed", "proposed"),
                            scopes=("user",), unexpired_at=now)  # fmt: skip


def _propose(
    tx: WriteTxn,
    who: Principal,
    now: datetime,
    settings: ConsolidationSettings,
    intent: Intent,
    evidence: list[str],
    result: ConsolidationReport,
    *,
    read: Sequence[Message] = (),
    basis: str,
    confidence: float,
) -> bool:
    """Make sure one current memory says the statement and cites ``evidence``; False when
    nothing could say it (the never-store gate, the cap). ``read``: the turns a model was shown
    to propose it (the gate refuses a value of a refused one among them)."""
    said = intent.text
    current = _current(tx, who, now)
    same = [m for m in current if near_duplicates(m.text, said)]
    known = [m for m in same if m.status == "confirmed"]
    pending = [m for m in same if m.status == "proposed"]
    if same:  # one memory says it already: it takes every turn; the proposals saying it merge in
        keep = known[-1] if known else pending[0]
        others = [m for m in pending if m.id != keep.id]
        cited = tx.memory_evidence(who.tenant, who.user, [m.id for m in others])
        moved = [i for m in others for i in (m.source_message_id, *cited.get(m.id, ())) if i]
        own = [keep.source_message_id] if keep.source_message_id else []
        tx.add_memory_evidence(who.tenant, who.user, keep.id, [*own, *moved, *evidence])
        if keep.status == "proposed" and confidence > (keep.confidence or 0.0):
            # said again elsewhere: the proposal is surer, and says why
            tx.set_memory_fields(who.tenant, keep.id, MemoryUpdate(
                updated_at=now, confidence=confidence, basis=basis,
            ))  # fmt: skip
        if others:
            delete_with_history(tx, who, [m.id for m in others],
                                action="memory.proposal_merged", into=keep.id)  # fmt: skip
            result.merged += len(others)
        result.evidenced += 1
        return True
    if sum(m.status == "proposed" for m in current) >= settings.max_proposals:
        result.capped += 1
        return False
    notice = save_memory(
        tx, who, said, source_kind="inference", status="proposed", category=intent.category,
        subject=intent.subject_key if intent.slot else None, source_message_id=evidence[-1],
        cites=evidence, read=read, basis=basis, confidence=confidence,
    )  # fmt: skip
    if notice.status != "proposed" or notice.memory is None:
        return False
    tx.add_memory_evidence(who.tenant, who.user, notice.memory.id, evidence)
    result.proposed += 1
    return True


def _expire_stale(
    tx: WriteTxn, who: Principal, now: datetime, settings: ConsolidationSettings,
    result: ConsolidationReport,
) -> None:  # fmt: skip
    cutoff = now - timedelta(days=settings.proposal_ttl_days)
    proposals = tx.list_memories(who.tenant, who.user, statuses=("proposed",))
    stale = [m.id for m in proposals if m.updated_at < cutoff]
    if stale:
        result.expired += len(delete_with_history(
            tx, who, stale, action="memory.proposal_expired", reason="stale"
        ))  # fmt: skip


def _cap(
    tx: WriteTxn, who: Principal, settings: ConsolidationSettings, result: ConsolidationReport
) -> None:
    proposals = tx.list_memories(who.tenant, who.user, statuses=("proposed",))
    excess = len(proposals) - settings.max_proposals
    if excess <= 0:
        return
    cited = tx.memory_evidence(who.tenant, who.user, [m.id for m in proposals])
    weakest = sorted(proposals, key=lambda m: (len(cited.get(m.id, ())), m.updated_at, m.id))
    doomed = [m.id for m in weakest[:excess]]
    result.expired += len(delete_with_history(
        tx, who, doomed, action="memory.proposal_expired", reason="cap"
    ))  # fmt: skip

"""The never-store policy (DESIGN.md, principle 9): what convmem refuses to keep as a memory.

Pure functions, no I/O. :func:`check_memory_write` is the gate every durable write passes; it looks
at *provenance* first (a tool result, a retrieved document or a temporary conversation is never
stored, whatever it says) and then at *content* (:func:`check_text`). A refusal carries a stable
:class:`BlockReason` and a ``detail`` sentence that explains the kind of thing found and never
quotes the input, so it can go into logs, audit events and error messages as it is.

Every check reads the text as written *and* each reading of it (``readings.py``): JSON,
percent-encoding and HTML entities undone, markup stripped (tags, emphasis, code spans, tables,
form fields), leetspeak and look-alikes undone, digits spelled out in words or spaced apart
closed up, words chained by ``_``/``-`` split, and readable text hidden in base64 or hex. A
reading only adds evidence: if any one discloses, the text is refused, so a wrapping never
hides a disclosure and undoing one never hides another.

Content checks, in this order (the first hit decides the reason):

``credential``
    Provider key formats (OpenAI, Anthropic, AWS, GitHub, GitLab, Slack, Stripe, Google, Twilio,
    SendGrid, npm, PyPI, Hugging Face, ...), JWTs, PEM private-key blocks, connection strings with a
    password, bearer/basic auth, "password is X" / "PIN: 1234" / "API_KEY=X" with a value, and
    long random tokens next to a credential word.
``payment_card``
    13-19 digits that pass Luhn *and* start with a real issuer prefix for that length; CVV/CVC;
    expiry dates when the text is about a card.
``bank_account``
    IBANs with a valid mod-97 checksum and the registry length for their country; "account
    number", routing number, sort code, BSB, IFSC followed by a value.
``government_id``
    US SSNs (never-issued ranges excluded), UK NI numbers, and passport, driver's licence,
    national id, tax id, NHS, Aadhaar ... numbers when the kind of id is named next to them.
``inferred_sensitive_trait``
    A hedged statement about someone else ("the user seems depressed", "likely has ADHD",
    "probably gay"): these are the model's guesses, which principle 8 already forbids storing as
    facts and which principle 9 forbids storing at all when the trait is sensitive.
``health`` and ``sensitive_category``
    Personal statements binding a subject (I, the user, a bare memory line, a person close to
    the user) to a condition, diagnosis, medication, treatment, pregnancy (health), or to sexual
    orientation / gender identity, religion, political opinion, trade-union membership, racial
    or ethnic origin, criminal record, genetic or biometric data (sensitive_category).

Decisions on borderline cases (each is pinned by lines of the labelled corpus in
``tests/data/never_store.jsonl``):

* Talking *about* a sensitive subject passes; disclosing it does not. "The password reset page is
  broken", "my password is expired", "I like reading about health policy", "I work in cancer
  research", "I'm taking a course on diabetes" pass; "my password is swordfish", "I have
  diabetes" are blocked. A password is any word after "password is" that does not describe the
  password (a stop-list plus words ending in -ed/-ing/-ly); a PIN or door code must be digits; an
  API key, token or secret must look machine-made (mixed letters and digits, or high entropy).
* Pets and organisations are not people: "my dog has diabetes" passes. Health or beliefs of a
  person close to the user ("my mom has Alzheimer's", "my brother is gay") are blocked, because
  art. 9 protects every person, not only the speaker.
* Who is speaking: "I ...", "we are ...", a bare memory line ("Has type 2 diabetes"), "the user
  has ..." and "he/she is ..." are statements (health / sensitive_category). A *hedged* statement
  about someone else ("the user seems ...", "you might be ...", "likely has ...") is an
  inference (inferred_sensitive_trait). A hedged statement about oneself ("I think I might have
  ADHD") is a disclosure, so it is health, not an inference.
* Placeholders are documentation: ``postgresql://user:password@localhost/db`` and
  ``API_KEY=<your key>`` pass; a real-looking password in the same place is blocked. Published
  test values (card 4111 1111 1111 1111, AWS's ``AKIAIOSFODNN7EXAMPLE``) are blocked: they have the
  shape of the real thing, and telling them apart is not worth a leak.
* Cards: 15/16-digit numbers need Luhn + an issuer prefix; other lengths (13, 14, 17-19) also
  need a card word nearby or card-style grouping, because EAN barcodes and IMEIs pass Luhn too.
  Only the last four digits ("card ending in 4242") pass: PCI DSS does not treat a truncated
  number as cardholder data. A partial SSN ("ends in 6789") passes for the same reason. Any
  "account number" followed by 6+ digits is treated as a bank account, even a utility one.
* Identifiers that are not personal secrets pass: AWS account ids, order/tracking/invoice
  numbers, ISBNs, UUIDs, git SHAs, checksums, VAT numbers, flight numbers, phone numbers.
* Nationality ("I'm German") and languages spoken pass; ethnic origin ("I'm of Korean descent",
  "I'm Black") is blocked. Diet without a stated reason ("I'm vegetarian", "I don't eat pork")
  passes; "I keep kosher" or "I eat halal" state a religious practice and are blocked.
  Celebrating Christmas passes.
* Allergies and intolerances ("I'm allergic to peanuts") are health data and are blocked, even
  though an assistant would find them useful; pronouns ("my pronouns are they/them") pass as a
  form of address. Glasses, gym habits, diets, sleep, height and weighing oneself pass. "A cold"
  passes because "cold" is too ambiguous to detect; "the flu" and "covid" are blocked. "MS"
  counts as multiple sclerosis only in capitals and not before a product name ("MS Office").
* Colloquial or figurative uses of clinical words about oneself ("I'm so depressed the match
  was cancelled", "my OCD about tabs", "I'm allergic to bad UX", "my religion is tabs over
  spaces") are blocked: the detector cannot tell hyperbole from disclosure, and a missed
  disclosure costs more than a refused joke. These are the known false positives in the corpus.
* Account states are not disabilities: "the user is disabled" (an account flag) passes; "I am
  disabled" is blocked. Employment probation passes; "on parole" and a probation officer do not.
* A word that is also an ordinary adjective ("straight", "conservative", "liberal", "black",
  "white", "bi", "ace", "Roma") only counts at the end of a clause or before a person noun, so
  "straight out of college", "conservative with estimates" and "a white belt" pass.
* The language rules read English, German, French, Spanish, Italian, Portuguese and Dutch
  (every class: credentials, card and account labels, id labels, health, orientation, religion,
  political opinion in any tense of "vote" and as an ideology, union membership, criminal
  record, ethnic origin); health and sensitive categories also Chinese, Japanese, Korean and
  Russian; credentials in words also those four, Ukrainian, Arabic, Hindi, Turkish and Polish.
  Spelled-out digits are read in English, German, French, Spanish, Italian, Portuguese, Dutch,
  Turkish, Polish, Russian and Ukrainian. Other languages pass unless they contain a structured
  secret (keys, cards, IBANs and checksummed ids are language-independent, and digits of any
  script are read as digits).
* A secret noun's value in a Latin-script language without spaces to tell it from the next word
  (Turkish suffixes: "şifremi unuttum" is "I forgot my password") counts only when it is made
  up (a digit, a symbol or an inner capital) or follows a label's colon.
* A made-up value used to log in counts without a secret noun ("I log in to the bank with
  Falcon!9921", "I use tulip-rain-44 for gmail"), but only when it has letters, digits and a
  symbol: "I use Python3 for work" passes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from convmem.memory.detectors import Finding, Prepared

__all__ = [
    "WAIVABLE",
    "BlockReason",
    "PolicyDecision",
    "check_fields",
    "check_memory_write",
    "check_text",
    "merged_waivers",
]


class BlockReason(StrEnum):
    """Stable codes for why a write was refused; stored in audit events and error payloads."""

    CREDENTIAL = "credential"
    PAYMENT_CARD = "payment_card"
    BANK_ACCOUNT = "bank_account"
    GOVERNMENT_ID = "government_id"
    HEALTH = "health"
    SENSITIVE_CATEGORY = "sensitive_category"
    INFERRED_SENSITIVE_TRAIT = "inferred_sensitive_trait"
    TOOL_OUTPUT = "tool_output"
    RETRIEVED_DOCUMENT = "retrieved_document"
    TEMPORARY_CONVERSATION = "temporary_conversation"


@dataclass(frozen=True, slots=True)
class PolicyDecision:
    """The outcome of a check. ``detail`` explains the decision and never quotes the input.
    ``waived``: the special categories found that the caller's waiver let through (an allowed
    text the tenant's policy opened to an explicit request; empty otherwise)."""

    allowed: bool
    reason: BlockReason | None
    detail: str
    waived: tuple[str, ...] = ()


# The categories a waiver may open (``TenantPolicy.sensitive_categories``): never a secret, a
# payment or bank detail, a government id or an inferred trait.
WAIVABLE: Final = frozenset({BlockReason.HEALTH.value, BlockReason.SENSITIVE_CATEGORY.value})


_ALLOWED: Final = PolicyDecision(True, None, "no never-store rule applies")


@cache
def _detectors() -> tuple[Callable[[Prepared], Finding | None], ...]:
    """The detectors in the order they run, loaded on the first check: their patterns take
    ~0.2 s to compile, which every `import convmem` and CLI start would otherwise pay.

    Most specific first: a key or a number with a checksum is certain, language is a judgement,
    and an inference must be caught before the health rules read "the user has X" as a plain
    statement.
    """
    from convmem.memory import detectors

    return (
        detectors.detect_credential,
        detectors.detect_payment_card,
        detectors.detect_bank_account,
        detectors.detect_government_id,
        detectors.detect_inferred_trait,
        detectors.detect_health,
        detectors.detect_sensitive_category,
    )


# Source kinds that name a provenance principle 9 forbids. The engine normally passes the flags;
# recognising the kinds as well means a caller that only sets ``source_kind`` is still covered.
_TOOL_KINDS: Final = frozenset(
    {"tool", "tool_output", "tool_result", "tool_call", "function", "function_result"}
)
_RETRIEVED_KINDS: Final = frozenset(
    {"retrieved", "retrieved_document", "retrieval", "document", "search_result", "rag"}
)


def _findings(prepared: Prepared, waive: frozenset[str]) -> Iterator[Finding]:
    """The findings in detector order: only the first, unless it is waived (then the next
    detectors run too, so a waived category never hides another)."""
    if not prepared.text:
        return
    for detect in _detectors():
        finding = detect(prepared)
        if finding is not None:
            yield finding
            if finding.category not in waive:
                return


def check_text(text: str, waive: frozenset[str] = frozenset()) -> PolicyDecision:
    """Content checks only: may ``text`` be stored as a durable memory?

    Every reading of the text is checked (``readings.py``: as written, unwrapped from JSON,
    percent-encoding, entities and markup, with leetspeak, spelled and spaced digits undone,
    and the text hidden in base64 or hex runs); each is normalised first (``normalize.py``).
    A reading only adds evidence: the first one that discloses decides.

    ``waive``: special categories (of ``WAIVABLE``) that do not refuse the text; the decision
    names those found in ``waived``. Every reading is then read whole, so a category outside
    the waiver is found wherever it hides.
    """
    from convmem.memory.detectors import prepare  # loaded on the first check, as the detectors
    from convmem.memory.readings import other_readings

    waive = waive & WAIVABLE
    waived: set[str] = set()
    # the text as written first: most texts are plain, and a disclosure found there needs no
    # other reading
    prepared = prepare(text)
    refused = None
    for finding in _findings(prepared, waive):
        if finding.category in waive:
            waived.add(finding.category)
        else:
            refused = finding
    if refused is None:
        for reading in other_readings(text, prepared.text):
            for finding in _findings(prepare(reading), waive):
                if finding.category in waive:
                    waived.add(finding.category)
                else:
                    refused = finding
            if refused is not None:
                break
    if refused is not None:
        return PolicyDecision(
            allowed=False,
            reason=BlockReason(refused.category),
            detail=f"never-store ({refused.category}): {refused.detail}",
        )
    return merged_waivers(_ALLOWED, waived)


def check_fields(
    fields: Mapping[str, str | None], check: Callable[[str], PolicyDecision] = check_text
) -> PolicyDecision:
    """Content checks over a memory's other caller-supplied values (subject, scope, purpose ...):
    each is stored, returned, exported and indexed like the text, so each passes the same rules.
    The detail names the field, never its value. ``check``: ``check_text`` or a cache of it
    (the gate's)."""
    waived: set[str] = set()
    for name, value in fields.items():
        if value:
            decision = check(value)
            if not decision.allowed:
                return PolicyDecision(False, decision.reason, f"{decision.detail} (in the {name})")
            waived.update(decision.waived)
    return merged_waivers(_ALLOWED, waived)


def merged_waivers(decision: PolicyDecision, waived: Iterable[str]) -> PolicyDecision:
    """An allowed ``decision`` that names ``waived`` beside its own waived categories."""
    found = tuple(sorted({*decision.waived, *waived}))
    if not decision.allowed or found == decision.waived:
        return decision
    return PolicyDecision(True, None, f"special categories opened by the tenant: "
                          f"{', '.join(found)}", found)  # fmt: skip


def check_memory_write(
    text: str,
    *,
    source_kind: str,
    from_tool_output: bool = False,
    from_retrieved: bool = False,
    temporary_conversation: bool = False,
) -> PolicyDecision:
    """Provenance checks, then :func:`check_text`. The first rule that applies decides.

    ``source_kind`` is the memory's source kind (``user_explicit``, ``confirmed_inference``,
    ``admin``, ``import``, ...); tool and retrieval kinds are refused like the matching flags.
    """
    kind = source_kind.strip().lower()
    if temporary_conversation:
        return PolicyDecision(
            False,
            BlockReason.TEMPORARY_CONVERSATION,
            "never-store (temporary_conversation): the conversation is marked temporary",
        )
    if from_tool_output or kind in _TOOL_KINDS:
        return PolicyDecision(
            False,
            BlockReason.TOOL_OUTPUT,
            "never-store (tool_output): text that came from a tool result is not user intent",
        )
    if from_retrieved or kind in _RETRIEVED_KINDS:
        return PolicyDecision(
            False,
            BlockReason.RETRIEVED_DOCUMENT,
            "never-store (retrieved_document): text from a retrieved document is not user intent",
        )
    return check_text(text)

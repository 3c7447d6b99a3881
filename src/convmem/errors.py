"""The error tree. Every error convmem raises on purpose derives from ``ConvmemError``.

::

    ConvmemError
    ├── UserError                  the caller used the API wrongly; nothing was written
    │   ├── InvalidInput           a malformed argument (bad role, bad id, bad option …)
    │   │   ├── InvalidMessage     a message the tree refuses (empty, orphan tool result …)
    │   │   │   └── ContentTooLarge
    │   │   ├── InvalidIdentifier  an id no backend could store: empty, too long, control chars
    │   │   ├── InvalidDocument    a retrieved document the request cannot carry (no id, no text …)
    │   │   ├── InvalidQuery
    │   │   └── InvalidConfig      a setting (file, environment, flag, model name) is wrong
    │   ├── NotFound               no such id *for this principal* (another principal's ids too)
    │   ├── BudgetExceeded         the fixed parts and the user message do not fit the window
    │   ├── PurposeNotAllowed      a call asked for memory purposes its key or route does not allow
    │   ├── NeverStoreViolation    the text may not be stored (secrets, sensitive data …)
    │   └── IdempotencyConflict    an idempotency key already stored a different write
    ├── StoreError                 the database failed in a way the caller cannot fix
    │   ├── StoreBusy              the database stayed locked past every retry
    │   │   └── WriteConflict      a deadlock or serialisation failure, after every re-run
    │   └── TimeLimitExceeded      a part of a request ran past its time limit and was stopped
    └── BackendUnavailable         an optional backend (ONNX Runtime …) cannot run here

Messages never quote message or memory content: they name ids, roles, sizes and reasons.
"""

from __future__ import annotations


class ConvmemError(Exception):
    """Base of every error convmem raises on purpose."""


class UserError(ConvmemError):
    """The caller used the API wrongly. Nothing was written."""


class InvalidInput(UserError, ValueError):
    """An argument is malformed."""


class InvalidMessage(InvalidInput):
    """The message tree refuses this message."""


class ContentTooLarge(InvalidMessage):
    """Content above the configured size limit."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"message content is {size} bytes; the limit is {limit} bytes")
        self.size = size
        self.limit = limit


class InvalidIdentifier(InvalidInput):
    """An id (tenant, user, conversation, memory …) that is empty, longer than the documented
    limit (``convmem.model.tree.MAX_IDENTIFIER_BYTES`` bytes of UTF-8) or holds control
    characters."""


class InvalidDocument(InvalidInput):
    """A retrieved document given to ``assemble`` that the request cannot carry: no id or one
    that cannot be a citation key, no text, a bad date, URL or score, a duplicate id, too many
    documents. The message names the document by its position, never its text."""


class InvalidQuery(InvalidInput):
    """A search query that cannot be run."""


class InvalidConfig(InvalidInput):
    """A setting is wrong: ``key`` names it (``embedder``, ``time_limits.retrieval`` …) and the
    message says where it came from and what is expected, never a secret's value."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key = key


class NotFound(UserError, LookupError):
    """No such object for this principal. Another principal's ids raise this too, by design."""

    def __init__(self, kind: str, object_id: str) -> None:
        super().__init__(f"{kind} {object_id!r} not found")
        self.kind = kind
        self.object_id = object_id


class BudgetExceeded(UserError):
    """Even the fixed parts and the current user message do not fit the token budget."""

    def __init__(self, needed: int, available: int, detail: str = "") -> None:
        extra = f" ({detail})" if detail else ""
        super().__init__(
            f"the fixed parts of the request need {needed} tokens but only {available} are "
            f"available after reserving output and the safety margin{extra}"
        )
        self.needed = needed
        self.available = available


class PurposeNotAllowed(UserError):
    """A call declared memory purposes beyond what its principal (an API key, a route) allows."""

    def __init__(self, purposes: list[str]) -> None:
        super().__init__(f"purpose(s) not allowed here: {', '.join(purposes)}")
        self.purposes = purposes


class NeverStoreViolation(UserError):
    """The text falls under the never-store policy; ``reason`` is a stable code."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"refused to store: {reason}" + (f" ({detail})" if detail else ""))
        self.reason = reason
        self.detail = detail


class IdempotencyConflict(UserError):
    """The idempotency key was already used, within its period, for a different write (another
    body, route or conversation). Nothing was written; use a new key for a new write."""

    def __init__(self) -> None:
        super().__init__("this idempotency key was already used for a different write")


class StoreError(ConvmemError):
    """The database failed in a way the caller cannot fix."""


class MigrationChanged(StoreError):
    """A migration the database recorded as applied reads differently now (its text changed
    since): the schema it made may not be the one the code expects, so the database is refused
    until the migration's text is put back (applied migrations are never edited; a change is
    a new migration)."""


class StoreBusy(StoreError):
    """The database stayed locked past every retry."""


class WriteConflict(StoreBusy):
    """The database ended a write transaction because it conflicted with another one (a deadlock
    or a serialisation failure). Nothing of it was kept; the whole unit of work may run again,
    which ``convmem.store.retry.conflicts_retried`` does before a caller sees this."""


class ConnectionLost(StoreError):
    """The database connection broke before the transaction's commit was sent: nothing of it was
    kept (the server rolls back a transaction whose connection ends), so the whole unit of work
    may run again on another connection, which ``convmem.store.retry.conflicts_retried`` does
    before a caller sees this."""


class TimeLimitExceeded(StoreError):
    """A part of a request (a recall, a search, a summary lookup, an embedding) ran past its
    time limit and was stopped; what it had read is dropped and it wrote nothing."""

    def __init__(self, limit: float) -> None:
        super().__init__(f"stopped after its time limit of {round(limit * 1000)} ms")
        self.limit = limit


class BackendUnavailable(ConvmemError, RuntimeError):
    """An optional backend asked for by name cannot run here (not installed, or it failed its
    check); ``"auto"`` choices fall back instead of raising this."""

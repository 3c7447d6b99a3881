"""``TimeLimitedReads``: a stretch of a read transaction that stops at a deadline.

Assembly runs its optional parts (memory recall, retrieval, the summary lookup) inside one read
transaction beside the window's own reads. Each part runs in ``time_limited(deadline)``, and the
backend keeps two promises there:

* **It stops.** A statement still running when the deadline passes is interrupted by the
  database itself (SQLite: a progress handler; PostgreSQL: ``statement_timeout``), no statement
  starts after it, and a stretch that finished late counts as late: each raises
  ``TimeLimitExceeded``.
* **It leaves the transaction as it found it.** A statement that failed or was interrupted in the
  stretch does not poison the rest of the transaction (PostgreSQL aborts a transaction on any
  failed statement, so the stretch is a savepoint rolled back to on failure), and the limit is
  gone after it. Driver errors come out as ``StoreError``.

Stretches run in read transactions only: an interrupted write would take more than its own
statement with it (SQLite rolls back the whole transaction), so PostgreSQL refuses a stretch in a
write transaction and the engine never asks for one there.

Nothing here waits on anything but the database, so the caller's thread runs the stretch itself:
no connection is shared with a helper thread, and nothing is left running when it returns.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from convmem.model.deadline import Deadline


class TimeLimitedReads(Protocol):
    def time_limited(self, deadline: Deadline) -> AbstractContextManager[None]:
        """The reads inside stop at ``deadline`` (``TimeLimitExceeded``); a failure inside
        leaves the transaction usable. Not nested: the engine runs one part at a time."""
        ...

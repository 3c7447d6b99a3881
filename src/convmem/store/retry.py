"""A unit of work run again when the database ended its write transaction over a conflict.

A deadlock or a serialisation failure aborts the whole transaction, so only the whole unit can
run again — what it read, decided and wrote: the decorated function opens exactly one write
transaction, everything before it only reads or computes, and nothing after it writes
(a function that writes twice has each transaction in its own decorated unit, else a re-run
would repeat the first one's committed work). Attempts are bounded and spaced by a random,
growing wait, so two units that deadlocked do not meet again in step; when they run out the
caller gets the last ``WriteConflict`` (a ``StoreBusy``). ``write_retried(store, unit)`` is the
same for a unit given as a function of the transaction and its arguments (a call site turns its
``with store.write() as tx:`` block into ``def unit(tx)`` and returns what it assigned). SQLite
never raises it (one writer at a time), so there the retry only passes through. A unit whose
connection broke before its commit was sent (``ConnectionLost``: a server restart, a connection
it dropped) kept nothing either, and runs again the same way, on another connection.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from tenacity import (
    RetryCallState,
    retry,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)

from convmem.errors import ConnectionLost, WriteConflict

if TYPE_CHECKING:
    from convmem.store.base import Store, WriteTxn

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

# PostgreSQL detects a deadlock after deadlock_timeout (1 s by default) and a serialisation
# failure at once; five attempts ride out a burst of either without hiding a hot spot for long.
ATTEMPTS = 5
_FIRST_WAIT_SECONDS = 0.01
_MAX_WAIT_SECONDS = 0.5


def _note(state: RetryCallState) -> None:
    failed = state.outcome.exception() if state.outcome else None
    log.info(
        "%s in %s; running it again (attempt %d of %d)",
        failed,
        getattr(state.fn, "__qualname__", "a unit of work"),
        state.attempt_number + 1,
        ATTEMPTS,
    )


def conflicts_retried(unit: Callable[P, T]) -> Callable[P, T]:
    """``unit`` (one write transaction and the reads that decide it) run again on a conflict."""
    retried: Callable[P, T] = retry(
        # a connection that broke before the commit was sent committed nothing either
        retry=retry_if_exception_type((WriteConflict, ConnectionLost)),
        stop=stop_after_attempt(ATTEMPTS),
        wait=wait_random_exponential(multiplier=_FIRST_WAIT_SECONDS, max=_MAX_WAIT_SECONDS),
        before_sleep=_note,
        reraise=True,
    )(unit)
    return retried


def write_retried(
    store: Store, unit: Callable[Concatenate[WriteTxn, P], T], *args: P.args, **kwargs: P.kwargs
) -> T:
    """``unit(tx, *args, **kwargs)`` in one write transaction of ``store``; the transaction and
    ``unit`` run again on a conflict."""

    @conflicts_retried
    @functools.wraps(unit)  # the log names the unit
    def attempt() -> T:
        with store.write() as tx:
            return unit(tx, *args, **kwargs)

    return attempt()

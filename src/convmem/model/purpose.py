"""What a memory may be used for, and which of those uses a request may make.

Every memory carries one purpose:

- ``personalization`` (the default): shaping answers to the user — preferences, profile, style;
- ``task_automation``: carrying out tasks for the user — accounts, addresses, standing orders;
- ``project_only``: work in the one project the memory is scoped to (it needs a
  ``project:<id>`` scope).

A request declares the purposes it may use — per call (``assemble``, ``search_memories``,
``memories.search`` and the HTTP routes' ``purposes``), and as a ceiling per principal (an API
key's purposes, a service route's). Recall and search read only memories of the declared
purposes: the store filters in the query that ranks, never after it. A request that declares
nothing may use every purpose its ceiling allows — by default all of them, so an application
that never names a purpose recalls what it always did.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, get_args

from convmem.errors import InvalidInput, PurposeNotAllowed

Purpose = Literal["personalization", "task_automation", "project_only"]
PURPOSES: tuple[str, ...] = get_args(Purpose)
DEFAULT_PURPOSE: Purpose = "personalization"

# None: no restriction (every purpose, and the labels of memories written before purposes were
# a fixed set); a tuple: only these (empty: no memory at all).
Allowed = tuple[str, ...] | None


def check_purpose(value: object, scope: str = "user") -> str:
    """A memory's purpose: one of ``PURPOSES``; ``project_only`` only in a project scope."""
    if value not in PURPOSES:
        raise InvalidInput(f"a memory's purpose must be one of {', '.join(PURPOSES)}")
    assert isinstance(value, str)
    if value == "project_only" and not scope.startswith("project:"):
        raise InvalidInput("a project_only memory needs a 'project:<id>' scope")
    return value


def check_purposes(values: object, what: str = "purposes") -> tuple[str, ...]:
    """A declared set of purposes: a list of ``PURPOSES`` (not one string), sorted, unique."""
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise InvalidInput(f"{what} is a list of purposes, each one of {', '.join(PURPOSES)}")
    found = list(values)
    if len(found) > len(PURPOSES) * 4 or not set(found) <= set(PURPOSES):
        raise InvalidInput(f"{what} is a list of purposes, each one of {', '.join(PURPOSES)}")
    return tuple(sorted(set(found)))


def narrow(ceiling: Allowed, requested: Iterable[str] | None) -> Allowed:
    """The purposes a call may use: what it asks for (``None``: the whole ceiling), which must
    lie within the ceiling — asking for more is ``PurposeNotAllowed``, not a silent cut."""
    if requested is None:
        return ceiling
    wanted = check_purposes(requested)
    if ceiling is not None:
        beyond = sorted(set(wanted) - set(ceiling))
        if beyond:
            raise PurposeNotAllowed(beyond)
    return wanted


def meet(first: Allowed, second: Allowed) -> Allowed:
    """Two ceilings at once (a key's and a route's): the purposes both allow."""
    if first is None:
        return second
    if second is None:
        return first
    return tuple(p for p in first if p in second)

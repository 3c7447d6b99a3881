"""Whose records an import writes: the principal the caller names, never one the file names.

An export may say whose each record was (Mem0's ``user_id``; a workspace export's owner on each
conversation). The caller's principal decides where an import writes: a file naming any other
user is refused whole, before anything is written, unless an administrator asks to import each
record as the user it names (``as_named``; records naming nobody then go to the caller's user).
Errors name record ids and counts, never the users a file names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from convmem.errors import InvalidInput
from convmem.model.tree import check_identifier

T = TypeVar("T")
# where export formats name a record's owner (snake_case: Mem0's API and Python SDK; camelCase:
# its TypeScript SDK)
OWNER_FIELDS = ("user_id", "userId")


def named_owner(record: Mapping[str, Any]) -> object:
    """The owner a record names (any JSON value), or None when it names none."""
    for name in OWNER_FIELDS:
        value = record.get(name)
        if value is not None and value != "":
            return value
    return None


def by_owner(
    items: Sequence[T],
    owner_of: Callable[[T], object],
    ident: Callable[[T, int], str],
    *,
    user: str | None,
    as_named: bool,
) -> tuple[dict[str, list[T]], list[str]]:
    """``items`` grouped by the user each is written for, and the ids of those that have none
    (they name no owner and no ``user`` was given). Without ``as_named`` every item is the
    caller's ``user``'s: ``InvalidInput`` when one names anyone else, or when no user is given."""
    if user is not None:
        check_identifier(user, "user")
    if not as_named:
        if user is None:
            raise InvalidInput("name the user to import into (an import writes only for them)")
        foreign = [
            ident(item, n) for n, item in enumerate(items) if owner_of(item) not in (None, user)
        ]
        if foreign:
            raise InvalidInput(
                f"{len(foreign)} record(s) of the file (first: {foreign[0]}) name another user "
                "than the one imported into; nothing was imported. An administrator imports "
                "each record as the user it names with --as-named."
            )
        return ({user: list(items)} if items else {}), []
    groups: dict[str, list[T]] = {}
    orphans: list[str] = []
    for n, item in enumerate(items):
        owner = owner_of(item)
        if owner is None:
            owner = user
        if owner is None:
            orphans.append(ident(item, n))
            continue
        if not isinstance(owner, str):
            raise InvalidInput(f"record {ident(item, n)} names its user with a non-string value")
        groups.setdefault(
            check_identifier(owner, f"the user of record {ident(item, n)}"), []
        ).append(item)
    return groups, orphans

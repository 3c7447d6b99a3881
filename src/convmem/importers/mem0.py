"""A Mem0 export (the results of ``get_all``) as confirmed memories with source kind ``import``.

The memories are the caller's user's: a file whose records name another ``user_id`` is refused
whole unless an administrator imports each record as the user it names (``as_named``; see
``convmem.importers.owners``).

Each record keeps its ``created_at`` and ``updated_at`` (ISO 8601; naive times are taken as UTC;
a missing or unreadable one is the time of the import). Each record passes the never-store policy
like any other write: a blocked one is reported with the record's id and the reason, and nothing
of it is stored. A record whose text the user already has (same subject, same words) is not
written again, so a run can be repeated. Where an imported statement disagrees with one the user
gave convmem, both are kept and flagged as a conflict for the user to settle (an import never
overrides the user's own word).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from convmem.domain.memories import save_memory
from convmem.engine import Memory
from convmem.errors import ConvmemError, InvalidInput
from convmem.importers.files import read_json
from convmem.importers.owners import by_owner, named_owner
from convmem.model.tree import check_identifier
from convmem.store.retry import conflicts_retried

ACTOR = "import:mem0"


@dataclass
class Mem0Report:
    saved: int = 0
    already_present: int = 0
    blocked: list[tuple[str, str]] = field(default_factory=list)  # (mem0 id, reason)
    invalid: list[tuple[str, str]] = field(default_factory=list)  # (mem0 id, error)


def read(path: str | Path) -> list[Mapping[str, Any]]:
    """The records of an export: ``{"results": [...]}``, a list, or ``{"memories": [...]}``."""
    data = read_json(path, "a Mem0 export")
    if isinstance(data, Mapping):
        data = data.get("results", data.get("memories"))
    if not isinstance(data, list) or not all(isinstance(r, Mapping) for r in data):
        raise InvalidInput("a Mem0 export is a list of memory records (get_all's results)")
    return data


def import_mem0(
    memory: Memory,
    tenant: str,
    records: Sequence[Mapping[str, Any]],
    *,
    user: str | None = None,
    as_named: bool = False,
) -> Mem0Report:
    """Import ``records`` into ``user`` of ``tenant``. A file whose records name another user
    (``user_id``) is refused whole, nothing written (``InvalidInput``). With ``as_named`` (an
    administrator's import of a whole Mem0 project) each record goes to the user it names,
    records naming none to ``user``; one write transaction per user."""
    check_identifier(tenant, "tenant")
    report = Mem0Report()
    by_user, orphans = by_owner(
        records, named_owner, lambda record, n: str(record.get("id", n)),
        user=user, as_named=as_named,
    )  # fmt: skip
    report.invalid += [(ident, "no user_id (pass --user)") for ident in orphans]
    for owner, owned in sorted(by_user.items()):
        part = _import_user(memory, tenant, owner, owned)
        report.saved += part.saved
        report.already_present += part.already_present
        report.blocked += part.blocked
        report.invalid += part.invalid
    return report


@conflicts_retried  # counted afresh on a re-run: only a committed transaction's part is added
def _import_user(
    memory: Memory, tenant: str, owner: str, owned: list[Mapping[str, Any]]
) -> Mem0Report:
    part = Mem0Report()
    who = memory.scope(tenant, owner, actor=ACTOR).principal
    with memory.store.read() as tx:
        before = {m.id for m in tx.list_memories(tenant, owner)}
    with memory.store.write() as tx:
        for n, record in enumerate(owned):
            ident = str(record.get("id", n))
            try:
                notice = save_memory(
                    tx, who, str(record.get("memory") or record.get("text") or ""),
                    source_kind="import", status="confirmed",
                    expires_at=_when(record.get("expiration_date")),
                    created_at=_when(record.get("created_at")),
                    updated_at=_when(record.get("updated_at")),
                )  # fmt: skip
            except ConvmemError as exc:
                part.invalid.append((ident, type(exc).__name__))
                continue
            if notice.status == "blocked":
                part.blocked.append((ident, str(notice.reason)))
            elif notice.memory is not None and notice.memory.id in before:
                part.already_present += 1
            else:
                part.saved += 1
    return part


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None

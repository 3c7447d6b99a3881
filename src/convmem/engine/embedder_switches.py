"""``Memory.embedder_switch``: change a tenant's embedder while its searches go on (the steps
are ``convmem.domain.embedder_switch``'s; this adds the process's side: the new embedder is
known here from ``begin`` on, so searches of a switched tenant embed with it)."""

from __future__ import annotations

from collections.abc import Callable

from convmem.domain import embedder_switch as steps
from convmem.domain.embedder_switch import SwitchStatus
from convmem.domain.indexing import Progress
from convmem.model.tree import check_identifier
from convmem.retrieval.vector import Embedder
from convmem.store.base import Store

# build passes before a switch finishes (the first does the work; the others take the rows
# written meanwhile, fewer each time while writes are slower than the embedder)
_PASSES = 3


class EmbedderSwitches:
    """Each tenant's embedder switch on one database."""

    def __init__(
        self, store: Store, current: Embedder | None, know: Callable[[Embedder], None],
        forget: Callable[[str], None], settle: Callable[[], object],
    ) -> None:  # fmt: skip
        """``current``: the database's embedder; ``know``: makes an embedder known to the
        process (``Memory.know_embedder``); ``forget``: drops a tenant's cached serving one;
        ``settle``: waits (briefly) for the vectors queued in this process
        (``Memory.settle_vectors``)."""
        self._store = store
        self._current = current
        self._know = know
        self._forget = forget
        self._settle = settle

    def serve_with(self, embedder: Embedder) -> None:
        """Let this process embed queries (and fill vectors) with ``embedder`` for the tenants
        it serves: a service that runs during switches knows the old embedder and the new."""
        self._know(embedder)

    def begin(self, tenant: str, embedder: Embedder) -> None:
        """Start building ``embedder``'s vectors for ``tenant`` (the current ones keep serving)."""
        tenant = check_identifier(tenant, "tenant")
        self.serve_with(embedder)
        steps.begin(self._store, tenant, embedder, self._current)

    def build(
        self, tenant: str, embedder: Embedder, *, batch_size: int = 256,
        max_batches: int | None = None, progress: Progress | None = None,
    ) -> dict[str, int]:  # fmt: skip
        """Embed, in batches, what ``tenant`` lacks from ``embedder`` (rows per kind)."""
        tenant = check_identifier(tenant, "tenant")
        return steps.build(self._store, tenant, embedder, batch_size=batch_size,
                           max_batches=max_batches, progress=progress)  # fmt: skip

    def finish(self, tenant: str, embedder: Embedder) -> dict[str, int]:
        """Switch ``tenant`` to ``embedder`` at once and erase the old vectors (rows per table);
        then the turns and memories written since the build's last batch get theirs."""
        tenant = check_identifier(tenant, "tenant")
        self.serve_with(embedder)
        try:
            changed = steps.finish(self._store, tenant, embedder)
        finally:
            self._forget(tenant)
        # vectors this process's filler embedded with the old one before it learnt of the
        # switch are refused by the store: let it finish them, then fill what is left
        self._settle()
        steps.build(self._store, tenant, embedder)
        return changed

    def switch(
        self, tenant: str, embedder: Embedder, *, batch_size: int = 256,
        progress: Progress | None = None,
    ) -> dict[str, int]:  # fmt: skip
        """``begin`` (unless this switch is under way), ``build`` passes until one finds
        nothing (at most ``_PASSES``: under a steady stream of writes each pass catches up with
        what was written during the one before), then ``finish``: the whole switch, searches
        answering throughout; what is written after the last pass gets the new embedder's
        vectors after the switch. Rows changed per table."""
        if self.status(tenant).target != embedder.name:
            self.begin(tenant, embedder)
        self.serve_with(embedder)
        for _ in range(_PASSES):
            if not sum(self.build(tenant, embedder, batch_size=batch_size,
                                  progress=progress).values()):  # fmt: skip
                break
        return self.finish(tenant, embedder)

    def cancel(self, tenant: str) -> int:
        """Drop the build under way (the active embedder stays). Staged rows dropped."""
        return steps.cancel(self._store, check_identifier(tenant, "tenant"))

    def status(self, tenant: str) -> SwitchStatus:
        return steps.status(self._store, check_identifier(tenant, "tenant"))

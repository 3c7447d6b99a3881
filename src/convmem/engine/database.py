"""The database handle: ``Memory``, and ``open`` that makes one.

A ``Memory`` holds what every request shares — the store, the configuration, the summary flow,
the embedder and its caches — and the operator's calls that act on the whole database (reindex,
backfill, retention, tenant policy, keys, jobs). A principal's calls go through ``scope()``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields, replace
from datetime import UTC, datetime

from convmem.config import Config
from convmem.content.parts import message_costs
from convmem.content.tokens import ESTIMATE, TokenCounter, batch_counter, get_counter
from convmem.domain.indexing import Progress, backfill, reindex
from convmem.domain.keys import ApiKeys, KeyCache
from convmem.domain.retention import apply_retention, erase_tenant, sweep_all, sweep_tenant
from convmem.domain.summaries import SummaryFlow
from convmem.domain.vector_fill import Pending, PendingMemory, VectorFiller
from convmem.engine.embedder_switches import EmbedderSwitches
from convmem.engine.observer import NoObserver, Observer
from convmem.engine.scope import Scope
from convmem.errors import InvalidInput
from convmem.model.memory import MemoryRecord
from convmem.model.messages import NewMessage
from convmem.model.policy import (
    DEFAULT_SENSITIVE_PURPOSES,
    RETENTION_LAYERS,
    SPECIAL_CATEGORIES,
    RetentionPeriods,
    TenantPolicy,
)
from convmem.model.purpose import check_purposes
from convmem.model.summary import Job
from convmem.model.tree import check_count, check_identifier
from convmem.retrieval.caches import VectorCache
from convmem.retrieval.rerank import Reranker
from convmem.retrieval.vector import Embedder
from convmem.settings import load_settings
from convmem.store.base import MessageCost, Store
from convmem.store.registry import open_store, scheme_of
from convmem.store.retry import conflicts_retried
from convmem.store.session import SessionTier
from convmem.summarize.base import Summarizer
from convmem.summarize.extractive import ExtractiveSummarizer
from convmem.summarize.llm import LLMSummarizer
from convmem.tools.registry import ToolRegistry

# how long a process trusts the serving embedder it read for a tenant (a switch made by another
# process is seen within this; meanwhile its searches rank the switched rows by words)
_SERVING_SECONDS = 2.0


class Memory:
    """One convmem database. Open it with ``convmem.open``."""

    def __init__(
        self,
        store: Store,
        config: Config | None = None,
        summarizer: Summarizer | None = None,
        *,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
    ) -> None:
        """``summarizer`` overrides the one ``config`` names (the extension point); ``embedder``
        adds vectors to search (none: full text only); ``reranker`` reorders the fused best of
        search and recall (``convmem.retrieval.rerank``)."""
        self.store = store
        self.config = config or Config()
        if summarizer is None:
            llm = self.config.summarizer
            summarizer = ExtractiveSummarizer() if llm is None else LLMSummarizer(llm)
        self.summaries = SummaryFlow(
            summarizer,
            max_inline=self.config.max_inline_summary_messages,
            segment=self.config.summary_segment_messages,
            job_attempts=self.config.summary_job_attempts,
        )
        self.embedder = embedder
        self.reranker = reranker
        self.vector_cache = VectorCache()
        self._filler: VectorFiller | None = None
        self._filler_lock = threading.Lock()
        # embedders a switch made known here besides ``embedder``, and each tenant's serving
        # one as last read (``embedder_for``)
        self._known_embedders: dict[str, Embedder] = {}
        self._serving: dict[str, tuple[str | None, float]] = {}
        # the key records this process read (``Memory.keys``: authenticating skips the store)
        self._key_cache = KeyCache()
        # what the program driving the engine counts (the service and the worker install one)
        self.observer: Observer = NoObserver()
        self._write_counters: list[TokenCounter] = [get_counter(ESTIMATE)]
        for name in self.config.tokenizers:
            counter = get_counter(name)
            if counter.name != ESTIMATE:
                self._write_counters.append(counter)
        if store.reindex_needed:
            self.reindex()

    @property
    def write_embedder(self) -> Embedder | None:
        """The embedder that fills the vectors of rows as they are written, in the background
        (none when ``embed_on_write`` is off: the worker or ``backfill_embeddings`` does)."""
        return self.embedder if self.config.embed_on_write else None

    def embedder_for(self, tenant: str) -> Embedder | None:
        """The embedder whose vectors serve ``tenant``'s searches: ``embedder``, unless a
        switch (``embedder_switch``) made another active there — then that one if this process
        knows it, else None (words only, until it does). A process that knows one embedder
        reads nothing: where another serves, the store finds none of its vectors anyway."""
        if not self._known_embedders:
            return self.embedder
        cached = self._serving.get(tenant)
        if cached is None or time.monotonic() - cached[1] > _SERVING_SECONDS:
            with self.store.read() as tx:
                record = tx.embedder_switch(tenant)
            cached = (None if record is None else record.active, time.monotonic())
            self._serving[tenant] = cached
        if cached[0] is None or (self.embedder is not None and cached[0] == self.embedder.name):
            return self.embedder
        return self._known_embedders.get(cached[0])

    def know_embedder(self, embedder: Embedder) -> None:
        """Serve with ``embedder`` too the tenants switched to it (see ``embedder_for``)."""
        if self.embedder is None or embedder.name != self.embedder.name:
            self._known_embedders[embedder.name] = embedder

    def forget_serving(self, tenant: str) -> None:
        """Read ``tenant``'s serving embedder again at its next search (after a switch)."""
        self._serving.pop(tenant, None)

    @property
    def embedder_switch(self) -> EmbedderSwitches:
        """Change a tenant's embedder while its searches go on: begin, build, finish (or
        ``switch`` for all three), status, cancel (``convmem.engine.embedder_switches``)."""
        return EmbedderSwitches(
            self.store, self.embedder, self.know_embedder, self.forget_serving,
            lambda: self.settle_vectors(None),
        )  # fmt: skip

    @property
    def vector_filler(self) -> VectorFiller | None:
        """This database's background embedding (``convmem.domain.vector_fill``): made at the
        first use, its thread started at the first row handed over; None without a
        ``write_embedder``."""
        embedder = self.write_embedder
        if embedder is None:
            return None
        with self._filler_lock:
            if self._filler is None:
                self._filler = VectorFiller(
                    self.store, embedder, self.vector_cache, embedder_for=self.embedder_for
                )
            return self._filler

    def queue_vectors(self, items: Sequence[Pending]) -> None:
        """Hand rows just committed without vectors to the background embedding (nothing
        happens without a ``write_embedder``: the worker fills them). Never waits or raises
        because of the embedder."""
        filler = self.vector_filler
        if filler is not None and items:
            filler.queue(items)

    def settle_vectors(self, timeout: float | None) -> None:
        """Let a reader wait at most ``timeout`` seconds for the rows queued before it to get
        their vectors (so a search right after a write ranks them by meaning too); returns at
        once while the embedder is failing: the rows are then ranked by words, and the search
        says how many."""
        filler = self._filler
        if filler is not None and filler.pending:
            # no limit on the embedder is still no unbounded wait here: at most one call's
            filler.settle(filler.call_seconds if timeout is None else timeout)

    def wait_for_vectors(self, timeout: float | None = None) -> bool:
        """Wait until every row this process queued (and any it had to leave to the store's
        pending marks) has its vector, riding out the embedder's failures; False when
        ``timeout`` seconds passed first. Returns at once without background embedding."""
        filler = self._filler
        return True if filler is None else filler.drain(timeout)

    def reindex(self, *, batch_size: int = 500, progress: Progress | None = None) -> int:
        """Index every message the search index lacks (a database from before the index, or one
        whose index was dropped: it is derived and rebuildable), then derive again the people
        and things of every user whose messages it indexed (entities are derived from the same
        turns). Returns how many messages. ``progress`` is called after each batch with
        ``("messages", done so far)``."""
        done = reindex(
            self.store, self.write_embedder, self.vector_cache, self.config.session_gap,
            batch_size=batch_size, progress=progress,
        )  # fmt: skip
        for tenant, user in sorted(done.owners):
            self.scope(tenant, user).entities.rebuild()
        return done.messages

    def rebuild_entities(
        self, tenant: str, user: str | None = None, *, progress: Progress | None = None
    ) -> int:
        """Derive again, with the deterministic extractor, the people and things of one user of
        ``tenant`` or, without ``user``, of every user who owns a conversation there (after an
        import, or an upgrade of the extractor). Statements a user confirmed stay confirmed.
        Returns how many statements were stored; ``progress`` is called after each user with
        ``("users", done so far)``."""
        if user is not None:
            return self.scope(tenant, user).entities.rebuild()
        tenant = check_identifier(tenant, "tenant")
        facts, done, after = 0, 0, None
        while True:
            with self.store.read() as tx:
                users = tx.tenant_users(tenant, after, 200)
            if not users:
                return facts
            for each in users:
                facts += self.scope(tenant, each).entities.rebuild()
                done += 1
                if progress is not None:
                    progress("users", done)
            after = users[-1]

    def backfill_embeddings(
        self,
        *,
        batch_size: int = 256,
        max_batches: int | None = None,
        progress: Progress | None = None,
        refresh: bool = False,
    ) -> dict[str, int]:
        """Embed, in batches, every indexed turn, vocabulary word and memory that has no vector
        from this database's embedder (rows written with ``embed_on_write`` off, or rows of an
        older model); with ``max_batches``, at most that many batches of each. Returns how many
        of each were embedded. ``progress`` is called after each batch with the kind
        (``"messages"``, ``"terms"``, ``"memories"``) and how many of it are done so far.

        ``refresh`` embeds again the turns that already have a vector from this embedder: once,
        after an upgrade that changed what a turn's vector is made of (since 0.1.0: its
        statements weigh twice, ``convmem.domain.indexing.vector_text``); searches use the old
        vectors until each batch is replaced."""
        if self.embedder is None:
            return {"messages": 0, "terms": 0, "memories": 0}
        return backfill(
            self.store, self.embedder, self.vector_cache, batch_size=batch_size,
            max_batches=max_batches, progress=progress, refresh=refresh,
        )  # fmt: skip

    def embed_memories(self, tenant: str, user: str, records: Iterable[MemoryRecord]) -> None:
        """Queue vectors for new memory records (after their write; see ``queue_vectors``). A
        record deleted meanwhile gets none."""
        self.queue_vectors([
            PendingMemory(tenant, user, r.id, r.text)
            for r in records if r.status in ("confirmed", "proposed")
        ])  # fmt: skip

    def scope(
        self, tenant: str, user: str, *, actor: str | None = None,
        purposes: Iterable[str] | None = None,
    ) -> Scope:  # fmt: skip
        """Act as one authenticated principal. Every call through the scope sees only its data.

        ``actor`` names who acts, for the audit (default ``user:<user>``; a service passes its
        key's identity). ``purposes`` caps the memory purposes its recall and search may use
        (default: every purpose; see ``convmem.PURPOSES``)."""
        tenant = check_identifier(tenant, "tenant")
        user = check_identifier(user, "user")
        ceiling = None if purposes is None else check_purposes(purposes)
        return Scope(self, tenant, user, actor or f"user:{user}", ceiling)

    @conflicts_retried
    def set_tenant_policy(
        self,
        tenant: str,
        *,
        memory_disabled: bool = False,
        retention_days: int | None = None,
        retention: RetentionPeriods | Mapping[str, int | None] | None = None,
        recall_unconfirmed_entity_facts: bool = False,
        sensitive_categories: Iterable[str] = (),
        sensitive_purposes: Iterable[str] = DEFAULT_SENSITIVE_PURPOSES,
        max_pending_proposals: int | None = None,
    ) -> TenantPolicy:
        """An administrator's switches, replacing the tenant's whole policy: long-term memory
        off for every user of the tenant, and retention periods in days per layer
        (``RetentionPeriods``; a mapping of layer → days is taken too). ``retention_days`` is
        the transcripts' period under its old name — conversations nothing was written to for
        that long are deleted — and may be given instead of ``retention.transcripts`` (both
        given, they must agree). ``apply_retention`` applies them (the worker runs it).
        ``recall_unconfirmed_entity_facts``: recall what the users' conversations said about
        the people and things a message names in their other conversations without each
        statement's confirmation (off: only the statements a user confirmed travel).

        ``sensitive_categories``: the special categories (``convmem.SPECIAL_CATEGORIES``:
        ``health``, ``sensitive_category``) a user may have kept on their explicit request only
        (none by default); ``sensitive_purposes``: the purposes such memories are recalled for
        (default ``personalization``; a request that may use none of them recalls none).
        Credentials, payment and bank details, government ids and inferred traits are no
        category a tenant can open. ``max_pending_proposals``: at most this many proposals
        wait per user (None: no cap); the retention layer ``proposals`` expires the ones nobody
        confirmed (see ``TenantPolicy``)."""
        check_identifier(tenant, "tenant")
        if not isinstance(memory_disabled, bool):
            raise InvalidInput("memory_disabled must be true or false")
        if not isinstance(recall_unconfirmed_entity_facts, bool):
            raise InvalidInput("recall_unconfirmed_entity_facts must be true or false")
        periods = _periods(retention)
        if retention_days is not None:
            check_count(retention_days, "retention_days")
            if periods.transcripts not in (None, retention_days):
                raise InvalidInput("retention_days and retention.transcripts disagree")
            periods = replace(periods, transcripts=retention_days)
        policy = TenantPolicy(
            tenant, memory_disabled, periods, recall_unconfirmed_entity_facts,
            sensitive_categories=_special_categories(sensitive_categories),
            sensitive_purposes=check_purposes(sensitive_purposes, "sensitive_purposes"),
            max_pending_proposals=None if max_pending_proposals is None
            else check_count(max_pending_proposals, "max_pending_proposals"),
        )  # fmt: skip
        with self.store.write() as tx:
            tx.set_tenant_policy(policy, datetime.now(UTC))
        return policy

    def tenant_policy(self, tenant: str) -> TenantPolicy:
        """The tenant's policy (the defaults for a tenant that never set one)."""
        check_identifier(tenant, "tenant")
        with self.store.read() as tx:
            return tx.tenant_policy(tenant)

    def apply_retention(self, now: datetime | None = None) -> dict[str, int]:
        """Apply every tenant's retention periods (see ``convmem.domain.retention``). Returns the
        conversations deleted per tenant with a transcripts period (``sweep_retention`` gives
        every layer's count); ``convmem worker`` runs the sweeps hourly."""
        return apply_retention(self.store, now)

    def sweep_retention(
        self, tenant: str | None = None, now: datetime | None = None
    ) -> dict[str, dict[str, int]]:
        """Apply the retention periods of one tenant (default: every tenant with one) now:
        the rows deleted per tenant and layer."""
        if tenant is None:
            return sweep_all(self.store, now)
        policy = self.tenant_policy(tenant)
        return {tenant: sweep_tenant(self.store, policy, now)} if policy.retention.set() else {}

    @conflicts_retried
    def erase_tenant(self, tenant: str, *, actor: str = "admin") -> dict[str, int]:
        """Delete every row of ``tenant`` — its users' conversations, memories, entities, the
        tool registry, keys, policy, jobs and audit — in one transaction, through the store's
        lineage cascade. The audit keeps one ``tenant.erased`` event (who, when, how many rows).
        Returns the rows deleted per table."""
        check_identifier(tenant, "tenant")
        self._key_cache.drop_tenant(tenant)
        try:
            with self.store.write() as tx:
                return erase_tenant(tx, tenant, actor)
        finally:  # its keys are gone: none of them authenticates from this process again
            self._key_cache.drop_tenant(tenant)

    @property
    def keys(self) -> ApiKeys:
        """The API keys of this database: create, authenticate, list, revoke."""
        return ApiKeys(self, self._key_cache)

    @property
    def tools(self) -> ToolRegistry:
        """Each tenant's tool registry: register, list, delete (``convmem.tools.registry``)."""
        return ToolRegistry(self)

    def close(self) -> None:
        if self._filler is not None:
            self._filler.close()
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def summarizer(self) -> Summarizer:
        return self.summaries.summarizer

    def jobs(self, status: str | None = None, *, limit: int = 100) -> list[Job]:
        """Background jobs of every tenant, newest first (an operator's view: ids, no content)."""
        with self.store.read() as tx:
            return tx.list_jobs(status, limit)

    @conflicts_retried
    def retry_job(self, job_id: str) -> None:
        """Put a failed (or finished) job back in the queue with fresh attempts."""
        import time

        with self.store.write() as tx:
            tx.retry_job(job_id, time.time())

    def count_message(
        self, message: NewMessage, counters: Sequence[TokenCounter] | None = None
    ) -> MessageCost:
        """Per-tokenizer costs of a message (media's share apart) and its estimate, computed
        once at write; ``counters`` from ``batch_counters`` when counting many."""
        return self.count_messages([message], counters)[0]

    def count_messages(
        self, messages: Sequence[NewMessage], counters: Sequence[TokenCounter] | None = None
    ) -> list[MessageCost]:
        """``count_message`` of each message, each tokenizer's counting done for all of them
        in one pass."""
        counters = self._write_counters if counters is None else counters
        names = [counter.name for counter in counters]
        counted = [message_costs(counter, messages) for counter in counters]
        shares = [(name, media) for name, (_, media) in zip(names, counted, strict=True) if media]
        costs = []
        for at, totals in enumerate(zip(*(totals for totals, _ in counted), strict=True)):
            tokens = dict(zip(names, totals, strict=True))
            media = {name: by_at[at] for name, by_at in shares if at in by_at}
            costs.append(MessageCost(tokens, tokens[ESTIMATE], media))
        return costs

    def batch_counters(self) -> list[TokenCounter]:
        """The tokenizers ``count_message`` counts with, for one batch of many messages (an
        import): the same counts, what repeats from message to message worked out once."""
        return [batch_counter(counter) for counter in self._write_counters]


def default_path() -> str:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return os.path.join(base, "convmem", "convmem.db")


def open(
    target: str | os.PathLike[str] | None = None,
    *,
    config: Config | None = None,
    embedder: Embedder | str | None = None,
    reranker: Reranker | str | None = None,
    settings: str | os.PathLike[str] | None = None,
    session: str | None = None,
) -> Memory:
    """Open a convmem database: a file path, ``sqlite:///path``, a URL of another registered
    backend (``convmem.store.register``), or nothing for the one the configuration names (else
    the default file).

    With an ``embedder`` (e.g. ``convmem.SentenceTransformerEmbedder()``, or a name such as
    ``"minilm"``, ``"st:/models/bge-small"`` or ``"openai:text-embedding-3-small"``), search and
    recall rank by meaning as well as by words; without one they are lexical. A ``reranker``
    (an object or a name: ``"cross-encoder:/models/ms-marco"``, ``"cohere:rerank-v3.5"``)
    reorders the fused best of search and recall.

    What the arguments leave unset comes from the configuration (``convmem.settings``): the
    environment (``CONVMEM_DB``, ``CONVMEM_EMBEDDER``, ``CONVMEM_RERANKER``, …), then the TOML
    file ``settings`` names (default: ``CONVMEM_CONFIG``, else none). A ``config`` given here
    is used whole; without one the file's summarizer and time limits apply.

    ``session`` (``"redis://host:6379/0"``; else ``CONVMEM_SESSION`` or the file's ``session``;
    ``"none"``: without) puts the session tier in front of the database: each active
    conversation's request state, shared by every process through Redis
    (``convmem.store.session``)."""
    flags = {
        "database": None if target is None else os.fspath(target),
        "embedder": embedder if isinstance(embedder, str) else None,
        "reranker": reranker if isinstance(reranker, str) else None,
        "session": session,
    }
    chosen = load_settings(flags=flags, path=settings)
    if embedder is None or isinstance(embedder, str):
        embedder = chosen.embedder()
    if reranker is None or isinstance(reranker, str):
        reranker = chosen.reranker()
    if config is None:
        config = chosen.config()
    where = chosen.database or default_path()
    store = open_store(where)
    if chosen.session is not None:
        try:
            store = SessionTier.open(store, chosen.session)
        except BaseException:
            store.close()
            raise
    return Memory(store, config, embedder=embedder, reranker=reranker)


def migrate_database(target: str) -> list[str]:
    """Apply the schema migrations a database lacks; returns their names (``convmem migrate``).
    PostgreSQL is migrated through its own list; an SQLite file through SQLite's (which every
    open applies anyway)."""
    scheme = scheme_of(target)
    if scheme in ("postgresql", "postgres"):
        from convmem.store.postgres import migrate

        return migrate(target)
    if scheme not in ("", "sqlite"):
        raise InvalidInput(f"no migrations for database URL scheme {scheme!r}")
    from convmem.store.sqlite.connection import connect
    from convmem.store.sqlite.migrations import apply_migrations

    db = connect(target.removeprefix("sqlite:///"))
    try:
        return apply_migrations(db)
    finally:
        db.close()


def _special_categories(value: object) -> tuple[str, ...]:
    """The special categories a tenant opens: a list of ``SPECIAL_CATEGORIES``, sorted, unique
    (a secret, a card or an id is none of them: those stay refused whatever the policy)."""
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise InvalidInput("sensitive_categories is a list of special categories")
    found = list(value)
    if not set(found) <= set(SPECIAL_CATEGORIES):
        raise InvalidInput(
            f"sensitive_categories may name only {', '.join(SPECIAL_CATEGORIES)}: credentials, "
            "payment and bank details, government ids and inferred traits are never kept"
        )
    return tuple(sorted(set(found)))


def _periods(value: RetentionPeriods | Mapping[str, int | None] | None) -> RetentionPeriods:
    """Retention periods checked: known layers only, each a whole number of days or None."""
    if value is None:
        return RetentionPeriods()
    if isinstance(value, RetentionPeriods):
        given: Mapping[str, object] = {f.name: getattr(value, f.name) for f in fields(value)}
    elif isinstance(value, Mapping):
        given = value
    else:
        raise InvalidInput("retention is a mapping of layer to days")
    unknown = sorted(str(k) for k in given if k not in RETENTION_LAYERS)
    if unknown:
        raise InvalidInput(f"retention layers are {', '.join(RETENTION_LAYERS)}")
    days: dict[str, int | None] = {}
    for layer, period in given.items():
        days[layer] = None if period is None else check_count(period, f"retention.{layer}")
    return RetentionPeriods(**days)

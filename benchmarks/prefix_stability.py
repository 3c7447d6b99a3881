"""Prefix stability: how much of each request a provider's prompt cache can serve.

A scripted 300-turn conversation (a team planning a service: questions, answers with code,
decisions, constraints, tasks) is assembled turn after turn at an 8k budget, twice over the same
turns: by convmem (rolling summary, eviction in blocks at the 70 % threshold) and by a plain
sliding window (the newest turns that fit, no summary, no blocks). Each request is recorded as
sent (``Conversation.record_assembly``, as the service does), and its report's ``cached_tokens``
— the tokens of the leading parts identical to the previous request's
(``convmem.context.prompt_cache``, the estimate the metrics use) — divided by the request's tokens
is the share a provider's prompt cache can serve.

    python benchmarks/prefix_stability.py --json OUT.json      # --quick for a short smoke run

``--memories N`` gives the team N long-term memories first (all three runs recall them).

A fourth run sends retrieved documents with every request (``assemble(documents=...)``, recall
off): three documents that change from turn to turn, in number of sentences and in text. Their
section sits after the window and its room is held whatever they cost, so the prefix before it
(``convmem_with_documents_cached_tokens_per_turn``) holds as it does without them; the section
itself is new on every turn and lowers the cached share of the whole request.

JSON keys: ``convmem_cached_fraction`` and ``sliding_window_cached_fraction`` (means over the
turns once the history exceeds the budget), ``convmem_tokens_per_turn`` and
``sliding_window_tokens_per_turn`` (mean request tokens over the same turns), and details.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import convmem
from convmem.content.tokens import get_counter, message_tokens

PROFILE = convmem.ModelProfile(context_window=8192, max_output=1024, tokenizer="o200k_base")
SYSTEM = (
    "You are a senior engineer helping a small team design and ship a booking service. Answer "
    "precisely, show code when it helps, and keep track of what the team decided."
)
COMPONENTS = ["orders API", "payment webhook", "search index", "email queue", "admin page"]
CONCERNS = ["latency", "retries", "schema", "tests", "logging", "caching", "auth", "rollout"]
STACK = ["PostgreSQL 16", "Redis 7.2", "FastAPI 0.115", "Celery 5.4", "nginx 1.27"]


def user_turn(turn: int) -> str:
    component = COMPONENTS[turn % len(COMPONENTS)]
    concern = CONCERNS[(turn // len(COMPONENTS)) % len(CONCERNS)]
    tool = STACK[turn % len(STACK)]
    if turn % 23 == 5:
        return f"Decision: we'll use {tool} for the {component}. Please remember that."
    if turn % 29 == 7:
        return f"Constraint: the {component} must answer within {150 + turn} ms at p95."
    if turn % 31 == 3:
        return f"TODO: add {concern} checks to the {component} before release 2.{turn % 9}."
    return (
        f"Turn {turn}: how should we handle {concern} in the {component}? We run {tool} and "
        f"expect about {1000 + 37 * turn} requests per minute at peak, ticket BK-{4000 + turn}."
    )


def assistant_turn(turn: int) -> str:
    component = COMPONENTS[turn % len(COMPONENTS)]
    concern = CONCERNS[(turn // len(COMPONENTS)) % len(CONCERNS)]
    code = (
        f"```python\ndef handle_{concern}(request, attempt={turn % 5}):\n"
        f"    if attempt > 3:\n        raise TooManyAttempts(request.id)\n"
        f"    return backoff(base=0.{turn % 9 + 1}, cap=30)\n```"
    )
    return (
        f"For {concern} in the {component}, keep the hot path small: validate early, make the "
        f"write idempotent with a request key, and push slow work to a queue. Measure p95 and "
        f"p99 separately, alert on the error budget rather than single failures, and write a "
        f"regression test that replays a recorded burst. A sketch:\n{code}\n"
        f"This keeps turn {turn}'s change reviewable in one pull request."
    )


def team_facts(count: int) -> list[str]:
    """``count`` distinct long-term memories of the team (tools, owners, limits)."""
    return [
        f"Fact {i}: the {COMPONENTS[i % len(COMPONENTS)]} team prefers {STACK[i % len(STACK)]} "
        f"and reviews {CONCERNS[i % len(CONCERNS)]} every {i + 2} weeks."
        for i in range(count)
    ]


def turn_documents(turn: int) -> list[dict[str, Any]]:
    """What a retriever might return for a turn: three runbook pages, different every turn."""
    return [
        {"id": f"runbook-{turn}-{n}", "title": f"Runbook: {COMPONENTS[(turn + n) % 5]}",
         "text": " ".join(f"Step {s}: check {CONCERNS[(turn + s) % 8]} of the "
                          f"{COMPONENTS[(turn + n) % 5]} on {STACK[s % 5]}." for s in range(
                              3 + (turn * 7 + n) % 25))}
        for n in range(3)
    ]  # fmt: skip


def play(
    memory: convmem.Memory,
    turns: int,
    options: convmem.AssemblyOptions,
    memories: int = 0,
    with_documents: bool = False,
) -> dict[str, Any]:
    counter = get_counter(PROFILE.tokenizer)
    team = memory.scope("bench", "team")
    for fact in team_facts(memories):
        team.remember(fact, strict=True)
    conv = team.create_conversation(title="booking service")
    fractions: list[float] = []
    totals: list[int] = []
    evicting: list[bool] = []
    summary_tokens: list[int] = []
    retrieved_tokens: list[int] = []
    document_tokens: list[int] = []
    degraded: list[bool] = []
    started, cpu = time.perf_counter(), time.process_time()
    for turn in range(turns):
        conv.append("user", user_turn(turn))
        documents = turn_documents(turn) if with_documents else None
        ctx = conv.assemble(None, model=PROFILE, system=SYSTEM, options=options,
                            documents=documents)  # fmt: skip
        conv.record_assembly(ctx)  # sent: the next request's estimate compares with it
        fractions.append(ctx.report.cached_tokens / ctx.report.total_tokens)
        totals.append(ctx.report.total_tokens)
        evicting.append(ctx.report.evicted_count > 0)
        summary_tokens.append(ctx.report.sections["summary"])
        retrieved_tokens.append(ctx.report.sections["retrieved"])
        document_tokens.append(ctx.report.sections["documents"])
        degraded.append(bool(ctx.report.degraded))  # a part skipped (e.g. timed out under load)
        conv.append("assistant", assistant_turn(turn))
    return {
        "fractions": fractions,
        "totals": totals,
        "evicting": evicting,
        "summary_tokens": summary_tokens,
        "retrieved_tokens": retrieved_tokens,
        "document_tokens": document_tokens,
        "degraded": degraded,
        "seconds": time.perf_counter() - started,
        "cpu_seconds": time.process_time() - cpu,
        "system_tokens": message_tokens(counter, "system", SYSTEM),
        "summaries_stored": len(conv.summaries()),
    }


def run(turns: int, memories: int = 0) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        with convmem.open(Path(folder) / "convmem.db") as memory:
            # The prefix (system, memories, summary, window) with recall off; recall adds a
            # per-turn section after the window, measured apart below: it never moves the prefix
            # but is itself never cached, so it lowers the cached share of the whole request.
            ours = play(memory, turns, convmem.AssemblyOptions(retrieved_k=0), memories)
        with convmem.open(Path(folder) / "recall.db") as memory:
            recall = play(memory, turns, convmem.AssemblyOptions(), memories)
        with convmem.open(Path(folder) / "documents.db") as memory:
            cited = play(memory, turns, convmem.AssemblyOptions(retrieved_k=0), memories, True)
        with convmem.open(Path(folder) / "sliding.db") as memory:
            plain = convmem.AssemblyOptions(eviction_block=0, summary_threshold=None)
            sliding = play(memory, turns, plain, memories)
    # "once the history exceeds the budget": from the first turn the plain window must evict
    start = sliding["evicting"].index(True) if True in sliding["evicting"] else turns
    measured = range(start, turns)
    if not measured:
        raise SystemExit("the conversation never outgrew the budget; play more turns")

    def mean(values: list[float] | list[int]) -> float:
        return round(statistics.fmean(values[i] for i in measured), 4)

    misses = sum(1 for i in measured if ours["fractions"][i] < 0.5)
    return {
        "turns": turns,
        "memories": memories,
        "context_window": PROFILE.context_window,
        "max_output": PROFILE.max_output,
        "input_budget": PROFILE.input_budget,
        "tokenizer": PROFILE.tokenizer,
        "history_exceeds_budget_from_turn": start,
        "measured_turns": len(measured),
        "convmem_cached_fraction": mean(ours["fractions"]),
        "convmem_with_recall_cached_fraction": mean(recall["fractions"]),
        "convmem_with_recall_cached_tokens_per_turn": round(
            statistics.fmean(recall["fractions"][i] * recall["totals"][i] for i in measured), 1
        ),
        "convmem_cached_tokens_per_turn": round(
            statistics.fmean(ours["fractions"][i] * ours["totals"][i] for i in measured), 1
        ),
        "convmem_with_recall_retrieved_tokens_per_turn": mean(recall["retrieved_tokens"]),
        "convmem_with_recall_degraded_turns": sum(1 for i in measured if recall["degraded"][i]),
        "convmem_with_documents_cached_fraction": mean(cited["fractions"]),
        "convmem_with_documents_cached_tokens_per_turn": round(
            statistics.fmean(cited["fractions"][i] * cited["totals"][i] for i in measured), 1
        ),
        "convmem_with_documents_tokens_per_turn": mean(cited["totals"]),
        "convmem_with_documents_document_tokens_per_turn": mean(cited["document_tokens"]),
        # the share of the request besides the documents that the cache serves: what the
        # documents leave of the prefix's stability (compare convmem_cached_fraction)
        "convmem_with_documents_cached_fraction_besides_documents": round(
            statistics.fmean(
                cited["fractions"][i]
                * cited["totals"][i]
                / (cited["totals"][i] - cited["document_tokens"][i])
                for i in measured
            ),
            4,
        ),
        "sliding_window_cached_fraction": mean(sliding["fractions"]),
        "convmem_tokens_per_turn": mean(ours["totals"]),
        "convmem_with_recall_tokens_per_turn": mean(recall["totals"]),
        "sliding_window_tokens_per_turn": mean(sliding["totals"]),
        "system_prompt_share": round(
            statistics.fmean(sliding["system_tokens"] / sliding["totals"][i] for i in measured), 4
        ),
        "convmem_cache_miss_turns": misses,
        "convmem_summary_tokens_per_turn": mean(ours["summary_tokens"]),
        "convmem_summaries_stored": ours["summaries_stored"],
        "convmem_seconds": round(ours["seconds"], 2),
        "sliding_window_seconds": round(sliding["seconds"], 2),
        # CPU time beside wall time: a busy machine changes the one, hardly the other
        "convmem_cpu_seconds": round(ours["cpu_seconds"], 2),
        "sliding_window_cpu_seconds": round(sliding["cpu_seconds"], 2),
        "goal_convmem_cached_fraction_at_least": 0.8,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", dest="json_path", help="Write the figures to this file.")
    parser.add_argument("--turns", type=int, default=300, help="Turns to play (default 300).")
    parser.add_argument("--quick", action="store_true", help="A short smoke run (90 turns).")
    parser.add_argument("--memories", type=int, default=0,
                        help="Long-term memories the team holds (default 0).")  # fmt: skip
    args = parser.parse_args(argv)
    result = run(90 if args.quick else args.turns, args.memories)
    width = max(len(key) for key in result)
    for key, value in result.items():
        print(f"{key:<{width}}  {value}")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

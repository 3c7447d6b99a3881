"""The ``convmem`` command line: thin, it calls the engine and prints."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

import click

from convmem.cli.common import (
    db_option,
    device_option,
    echo_rows,
    fail,
    llm_options,
    opened,
    placed,
)
from convmem.cli.config import config_group, flags_of, settings_options, setup
from convmem.cli.embedder import embedder_group
from convmem.cli.entities import entities_group
from convmem.cli.eval import behaviour_command
from convmem.cli.eval_benchmarks import beam_command, locomo_command, realtalk_command
from convmem.cli.imports import import_group
from convmem.cli.index import backfill, reindex
from convmem.cli.mcp import mcp_command
from convmem.cli.retention import retention
from convmem.cli.service import keys, serve
from convmem.cli.tools import tools
from convmem.errors import ConvmemError

if TYPE_CHECKING:
    pass


@click.group()
@click.version_option(package_name="convmem")
def main() -> None:
    """convmem: conversation memory for LLM applications."""


main.add_command(serve)
main.add_command(keys)
main.add_command(tools)
main.add_command(retention)
main.add_command(mcp_command)
main.add_command(import_group)
main.add_command(reindex)
main.add_command(backfill)
main.add_command(entities_group)
main.add_command(embedder_group)
main.add_command(config_group)


@main.command()
@click.option("--turns", default=60, show_default=True, help="How many scripted turns to play.")
@click.option("--db", default=None, help="Write the demo to this new file and keep it "
              "(default: a temporary folder, removed at the end).")  # fmt: skip
def demo(turns: int, db: str | None) -> None:
    """Play a scripted conversation at a small budget and show what each request holds."""
    from convmem.cli.demo import run_demo

    try:
        run_demo(click.echo, turns=turns, db=db)
    except ConvmemError as exc:
        fail(exc)


@main.group()
def conversations() -> None:
    """Inspect the conversations in a database file."""


_db = db_option()
_tenant = click.option("--tenant", required=True, help="Tenant id.")
_user = click.option("--user", required=True, help="User id.")


@conversations.command("list")
@_db
@_tenant
@_user
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def conversations_list(db: str, tenant: str, user: str, as_json: bool) -> None:
    """List a user's conversations."""
    with opened(db) as memory:
        records = memory.scope(tenant, user).conversations(limit=1000)
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in records], indent=2))
        return
    echo_rows(
        f"{r.id}  {r.created_at:%Y-%m-%d %H:%M}  {r.title or ''}"
        f"{' (temporary)' if r.temporary else ''}"
        for r in records
    )


@conversations.command("show")
@_db
@_tenant
@_user
@click.argument("conversation_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def conversations_show(
    db: str, tenant: str, user: str, conversation_id: str, as_json: bool
) -> None:
    """Show a conversation's message tree; '*' marks the active branch."""
    with opened(db) as memory:
        conv = memory.scope(tenant, user).conversation(conversation_id)
        messages = conv.messages()
        active = {m.id for m in conv.branch()}
    if as_json:
        click.echo(json.dumps([m.to_dict() for m in messages], indent=2))
        return
    children: dict[str | None, list[str]] = {}
    by_id = {m.id: m for m in messages}
    for m in messages:
        children.setdefault(m.parent_id, []).append(m.id)
    stack = [(mid, 0) for mid in reversed(children.get(None, []))]
    while stack:
        mid, indent = stack.pop()
        m = by_id[mid]
        mark = "*" if mid in active else " "
        calls = f" calls {','.join(c.name for c in m.tool_calls)}" if m.tool_calls else ""
        text = m.content.replace("\n", " ")
        text = text if len(text) <= 70 else text[:67] + "..."
        click.echo(f"{mark} {'  ' * indent}{m.id} [{m.role}]{calls} {text}")
        kids = children.get(mid, [])
        # a linear run keeps its indent; a fork indents each branch
        step = 1 if len(kids) > 1 else 0
        stack.extend((kid, indent + step) for kid in reversed(kids))


# --- summaries -----------------------------------------------------------------------------------


@main.group()
def summaries() -> None:
    """Inspect the rolling summaries of a conversation."""


@summaries.command("show")
@_db
@_tenant
@_user
@click.argument("conversation_id")
@click.option("--leaf", "leaf_id", help="Branch ending at this message (default: active leaf).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def summaries_show(
    db: str, tenant: str, user: str, conversation_id: str, leaf_id: str | None, as_json: bool
) -> None:
    """Print the branch's newest snapshot; every note with the message(s) it points to."""
    from convmem.model.snapshot import CATEGORY_TITLES
    from convmem.summarize.render import tool_label

    with opened(db) as memory:
        conv = memory.scope(tenant, user).conversation(conversation_id)
        record = conv.summary(leaf_id)
        sources = {}
        if record is not None:
            for source in sorted(record.snapshot.source_ids()):
                try:
                    sources[source] = conv.message(source)
                except ConvmemError:
                    continue
    if record is None:
        if as_json:
            click.echo("null")
        else:
            click.echo("no summary on this branch yet (nothing has been evicted)")
        return
    if as_json:
        value = record.to_dict()
        value["sources"] = {key: m.to_dict() for key, m in sources.items()}
        click.echo(json.dumps(value, indent=2, ensure_ascii=False))
        return
    cost = record.cost
    click.echo(
        f"summary {record.id} through {record.through_message_id} (depth {record.through_depth})"
    )
    click.echo(
        f"summarizer {record.summarizer} {record.prompt_version}; {record.tokens} tokens; "
        f"cost {cost.calls} calls, {cost.input_tokens} in, {cost.output_tokens} out"
        + (f"; fell back: {record.fallback_reason}" if record.fallback_reason else "")
    )
    current = None
    for category, item in record.snapshot.items():
        if category != current:
            click.echo(f"\n{CATEGORY_TITLES[category]}:")
            current = category
        click.echo(f"  - {item.text}")
        for source in item.sources:
            message = sources.get(source)
            if message is None:
                click.echo(f"      <- {source} (not found)")
                continue
            text = message.content.replace("\n", " ")
            text = text if len(text) <= 90 else text[:87] + "..."
            tool = item.tool_source(source)
            role = message.role if tool is None else f"tool, {tool_label(tool)}"
            click.echo(f"      <- {source} [{role}] {text}")


@summaries.command("list")
@_db
@_tenant
@_user
@click.argument("conversation_id")
def summaries_list(db: str, tenant: str, user: str, conversation_id: str) -> None:
    """List every stored summary of a conversation, on every branch."""
    with opened(db) as memory:
        records = memory.scope(tenant, user).conversation(conversation_id).summaries()
    echo_rows(
        f"{r.id}  through {r.through_message_id} depth {r.through_depth:>5}  {r.summarizer}  "
        f"{sum(1 for _ in r.snapshot.items())} notes  {r.tokens} tokens"
        f"{'  fell back' if r.fallback_reason else ''}"
        for r in records
    )


# --- the worker and its jobs ---------------------------------------------------------------------


@main.command()
@settings_options
@llm_options
@click.option("--lease-seconds", default=120.0, show_default=True, help="Job lease length.")
@click.option("--poll-seconds", default=1.0, show_default=True, help="Idle wait between polls.")
@click.option("--once", is_flag=True, help="Exit when no job is ready.")
@click.option("--max-jobs", type=int, help="Exit after this many jobs.")
@click.option(
    "--metrics-port",
    type=click.IntRange(0, 65535),
    help="Serve Prometheus metrics (jobs, failures, queue, retention) on this port.",
)
@click.option("--metrics-host", default="127.0.0.1", show_default=True,
              help="The address --metrics-port listens on.")  # fmt: skip
@click.option("--extract-memories", is_flag=True,
              help="Let the --llm-base-url model propose candidate memories from new turns (only "
              "as proposals, each checked against the turns it cites).")  # fmt: skip
@device_option
def worker(
    config_path: str | None,
    db: str | None,
    embedder: str | None,
    reranker: str | None,
    llm_base_url: str | None,
    llm_model: str | None,
    llm_api_key_env: str | None,
    llm_timeout: float | None,
    lease_seconds: float,
    poll_seconds: float,
    once: bool,
    max_jobs: int | None,
    metrics_port: int | None,
    metrics_host: str,
    extract_memories: bool,
    device: str,
) -> None:
    """Build queued summaries off the request path (run one or more beside the app), sweep the
    tenants' retention periods and consolidate memory proposals (with --extract-memories, the
    summarizer's model also proposes candidates, checked against the turns they cite); with
    --embedder, also embed what was written without vectors. The --llm-* flags set the
    configuration's summarizer keys (convmem config show)."""
    from prometheus_client import start_http_server

    from convmem.consolidate.llm import LLMExtractor
    from convmem.ops.metrics import ProcessMetrics
    from convmem.ops.worker import Worker
    from convmem.summarize.llm import LLMSummarizer

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    summarizer = {
        "summarizer.base_url": llm_base_url, "summarizer.model": llm_model,
        "summarizer.api_key_env": llm_api_key_env, "summarizer.timeout": llm_timeout,
    }  # fmt: skip
    opens = setup(config_path, flags_of(db, embedder, reranker, **summarizer), creates=False)
    on_device = placed(opens.embedder, device)
    try:
        with opened(
            opens.db, config=opens.config, embedder=on_device, session=opens.session
        ) as memory:
            metrics = ProcessMetrics()
            # the summarizer's endpoint may propose candidate memories (checked, proposals only)
            llm = memory.summarizer if isinstance(memory.summarizer, LLMSummarizer) else None
            if extract_memories and llm is None:
                fail("--extract-memories needs the model: --llm-base-url and --llm-model")
            extractor = LLMExtractor(llm.config) if llm is not None and extract_memories else None
            runner = Worker(memory, lease_seconds=lease_seconds, metrics=metrics,
                            extractor=extractor)  # fmt: skip
            if metrics_port is not None:
                start_http_server(metrics_port, metrics_host, registry=metrics.registry)
                click.echo(f"metrics on http://{metrics_host}:{metrics_port}/metrics", err=True)
            click.echo(f"worker {runner.owner} serving {', '.join(runner.kinds)}", err=True)
            count = runner.run(poll_seconds=poll_seconds, max_jobs=max_jobs, exit_when_idle=once)
    except KeyboardInterrupt:
        return
    click.echo(f"ran {count} jobs", err=True)


@main.command()
@_db
def migrate(db: str) -> None:
    """Bring a database's schema up to date (run it once before starting processes on a
    PostgreSQL database; a SQLite file is migrated whenever it is opened)."""
    from convmem.engine import migrate_database

    try:
        applied = migrate_database(db)
    except ConvmemError as exc:
        fail(exc)
    for name in applied:
        click.echo(f"applied {name}")
    click.echo(f"{len(applied)} migration(s) applied; the schema is up to date")


@main.group()
def jobs() -> None:
    """Inspect and retry background jobs."""


@jobs.command("list")
@_db
@click.option("--status", type=click.Choice(["pending", "running", "done", "failed"]))
@click.option("--limit", default=100, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def jobs_list(db: str, status: str | None, limit: int, as_json: bool) -> None:
    """List jobs, newest first: status, attempts, lease and last error."""
    with opened(db) as memory:
        found = memory.jobs(status, limit=limit)
    if as_json:
        click.echo(json.dumps([job.to_dict() for job in found], indent=2))
        return
    echo_rows(
        f"{job.id}  {job.status:<7}  attempts {job.attempts}/{job.max_attempts}  "
        f"{job.tenant_id}  {job.kind}  {job.conversation_id or ''}"
        f"{f'  last: {job.last_error}' if job.last_error else ''}"
        for job in found
    )


@jobs.command("retry")
@_db
@click.argument("job_id")
def jobs_retry(db: str, job_id: str) -> None:
    """Queue a failed or finished job again, with fresh attempts."""
    with opened(db) as memory:
        memory.retry_job(job_id)
    click.echo(f"queued {job_id} again")


# --- long-term memory ---------------------------------------------------------------------------


@main.group()
def memory() -> None:
    """See, export and delete what is remembered about a user."""


@memory.command("list")
@_db
@_tenant
@_user
@click.option("--all", "show_all", is_flag=True, help="Include superseded and rejected records.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def memory_list(db: str, tenant: str, user: str, show_all: bool, as_json: bool) -> None:
    """List a user's memories (current and proposed by default)."""
    with opened(db) as mem:
        scope = mem.scope(tenant, user, actor="cli")
        records = scope.memories.list(status=None if show_all else ("confirmed", "proposed"))
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in records], indent=2))
        return
    echo_rows(
        f"{r.id}  {r.status:<10} {r.category:<10} {r.updated_at:%Y-%m-%d}  {r.text}"
        f"{' CONFLICT' if r.conflicts_with_id else ''}"
        for r in records
    )


@memory.command("export")
@_db
@_tenant
@_user
@click.option("--out", type=click.Path(dir_okay=False), help="Write to a file, not stdout.")
def memory_export(db: str, tenant: str, user: str, out: str | None) -> None:
    """Export all of a user's data as JSON."""
    with opened(db) as mem:
        data = mem.scope(tenant, user, actor="cli").export()
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    if out:
        with click.open_file(out, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    else:
        click.echo(text)


@memory.command("delete")
@_db
@_tenant
@_user
@click.argument("memory_id", required=False)
@click.option("--everything", is_flag=True, help="Delete ALL of the user's data.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def memory_delete(
    db: str, tenant: str, user: str, memory_id: str | None, everything: bool, yes: bool
) -> None:
    """Delete one memory, or with --everything all of the user's data."""
    if memory_id and everything:
        raise click.UsageError("give a MEMORY_ID or --everything, not both")
    if not memory_id and not everything:
        raise click.UsageError(
            "give the MEMORY_ID to delete (or --everything for all of the user's data)"
        )
    if everything and not yes:
        click.confirm(f"Delete every conversation and memory of {user} in {tenant}?", abort=True)
    with opened(db) as mem:
        scope = mem.scope(tenant, user, actor="cli")
        if everything:
            counts = scope.delete_all()
            click.echo(f"deleted {sum(counts.values())} rows")
        else:
            assert memory_id is not None
            deleted = scope.memories.delete(memory_id)
            click.echo(f"deleted {len(deleted)} record(s): {' '.join(deleted)}")


# --- evaluation -------------------------------------------------------------------------------


@main.group("eval")
def eval_group() -> None:
    """Measure retrieval and assembly on public benchmarks, and the memory's behaviour."""


eval_group.add_command(behaviour_command)
for _command in (locomo_command, beam_command, realtalk_command):
    eval_group.add_command(_command)


if __name__ == "__main__":
    main()

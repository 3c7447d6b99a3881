"""The ``convmem`` command line: thin, it calls the engine and prints."""

from __future__ import annotations

import json
import sys

import click

from convmem.engine import open as open_memory
from convmem.errors import ConvmemError


def _fail(exc: ConvmemError) -> None:
    click.echo(f"error: {exc}", err=True)
    sys.exit(2)


@click.group()
@click.version_option(package_name="convmem")
def main() -> None:
    """convmem: conversation memory for LLM applications."""


@main.command()
@click.option("--turns", default=60, show_default=True, help="How many scripted turns to play.")
def demo(turns: int) -> None:
    """Play a scripted conversation at a small budget and show what each request holds."""
    from convmem.demo import run_demo

    run_demo(click.echo, turns=turns)


@main.group()
def conversations() -> None:
    """Inspect the conversations in a database file."""


_db = click.option("--db", required=True, help="Database path or sqlite:///path.")
_tenant = click.option("--tenant", required=True, help="Tenant id.")
_user = click.option("--user", required=True, help="User id.")


@conversations.command("list")
@_db
@_tenant
@_user
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def conversations_list(db: str, tenant: str, user: str, as_json: bool) -> None:
    """List a user's conversations."""
    try:
        with open_memory(db) as memory:
            records = memory.scope(tenant, user).conversations(limit=1000)
    except ConvmemError as exc:
        _fail(exc)
        return
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in records], indent=2))
        return
    for record in records:
        flag = " (temporary)" if record.temporary else ""
        click.echo(f"{record.id}  {record.created_at:%Y-%m-%d %H:%M}  {record.title or ''}{flag}")


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
    try:
        with open_memory(db) as memory:
            conv = memory.scope(tenant, user).conversation(conversation_id)
            messages = conv.messages()
            active = {m.id for m in conv.branch()}
    except ConvmemError as exc:
        _fail(exc)
        return
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


@main.group("eval")
def eval_group() -> None:
    """Measure retrieval and assembly on public benchmarks."""


@eval_group.command("locomo")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Write the result here.")
@click.option("--plot", "plot_out", type=click.Path(dir_okay=False), help="Write a PNG plot here.")
@click.option(
    "--embedder",
    type=click.Choice(["auto", "minilm", "minilm-int8", "hashing", "none"]),
    default="auto",
    show_default=True,
    help="auto: all-MiniLM-L6-v2 when the embeddings extra is installed, else none (lexical "
    "only); minilm-int8: the same model quantized (faster queries); hashing: the "
    "dependency-free test embedder.",
)
@click.option("--sessions", type=int, help="Import only the first N sessions of each sample.")
@click.option("--questions", type=int, help="Evaluate at most N questions per sample.")
@click.option("--samples", help="Comma-separated sample ids to evaluate (default: all).")
def eval_locomo(
    path: str,
    json_out: str | None,
    plot_out: str | None,
    embedder: str,
    sessions: int | None,
    questions: int | None,
    samples: str | None,
) -> None:
    """Evidence recall@k, evidence in context and search latency on a LoCoMo file."""
    from convmem.eval import locomo
    from convmem.retrieval.vector import (
        Embedder,
        HashingEmbedder,
        SentenceTransformerEmbedder,
        sentence_transformers_available,
    )

    chosen: Embedder | None = None
    if embedder == "hashing":
        chosen = HashingEmbedder()
    elif embedder.startswith("minilm") or (
        embedder == "auto" and sentence_transformers_available()
    ):
        if not sentence_transformers_available():
            raise click.UsageError(f"--embedder {embedder} needs: pip install convmem[embeddings]")
        # one torch thread: a query's forward pass is fastest so on a shared machine
        chosen = SentenceTransformerEmbedder(threads=1, quantize=embedder == "minilm-int8")
    if plot_out is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            click.echo(
                "note: matplotlib is not installed (pip install convmem[eval]); no plot", err=True
            )
            plot_out = None
    data = locomo.load(path, sessions=sessions)
    if samples:
        wanted = {s.strip() for s in samples.split(",")}
        data = [s for s in data if s.sample_id in wanted]
    total = sum(len(s.questions[:questions]) for s in data) + len(data)
    with click.progressbar(length=total, label="LoCoMo", file=sys.stderr) as bar:
        result = locomo.evaluate(
            data, embedder=chosen, max_questions=questions, progress=lambda n: bar.update(n or 1)
        )
    for line in locomo.table(result):
        click.echo(line)
    if json_out is not None:
        with open(json_out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
    if plot_out is not None:
        locomo.plot(result, plot_out)


if __name__ == "__main__":
    main()

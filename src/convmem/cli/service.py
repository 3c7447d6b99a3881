"""``convmem serve`` and ``convmem keys``: the service's commands, thin over the engine."""

from __future__ import annotations

import json

import click

from convmem.cli.common import db_option, echo_rows, fail, opened
from convmem.cli.config import flags_of, settings_options, setup
from convmem.errors import ConvmemError, InvalidInput
from convmem.model.keys import KEY_ROLES, ApiKey
from convmem.model.purpose import PURPOSES

_tenant = click.option("--tenant", required=True, help="Tenant id.")


@click.command()
@settings_options
@click.option("--host", envvar="CONVMEM_HOST", default="127.0.0.1", show_default=True,
              help="Interface to listen on [CONVMEM_HOST].")  # fmt: skip
@click.option("--port", envvar="CONVMEM_PORT", default=8000, show_default=True, type=int,
              help="Port to listen on [CONVMEM_PORT].")  # fmt: skip
@click.option("--max-body-bytes", envvar="CONVMEM_MAX_BODY_BYTES", type=int, default=None,
              help="Refuse larger request bodies with 413 [default: 4 MB].")  # fmt: skip
@click.option("--graceful-timeout", default=30, show_default=True, type=click.IntRange(0, 3600),
              help="Seconds in-flight requests get to finish on shutdown.")  # fmt: skip
@click.option("--keep-alive-timeout", default=75, show_default=True, type=click.IntRange(1, 3600),
              help="Seconds an idle connection is kept open (above your proxy's).")  # fmt: skip
@click.option("--workers", envvar="CONVMEM_WORKERS", default=1, show_default=True,
              type=click.IntRange(1, 64),
              help="Service processes sharing the port, each with its own database connections "
                   "(for PostgreSQL) [CONVMEM_WORKERS].")  # fmt: skip
@click.option("--threads", envvar="CONVMEM_THREADS", default=None, type=click.IntRange(1, 256),
              help="Threads running request handlers in each process; more requests wait their "
                   "turn [CONVMEM_THREADS; default: 2 on SQLite, 4 on PostgreSQL].")  # fmt: skip
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"]))  # fmt: skip
def serve(
    config_path: str | None,
    db: str | None,
    embedder: str | None,
    reranker: str | None,
    host: str,
    port: int,
    max_body_bytes: int | None,
    graceful_timeout: int,
    keep_alive_timeout: int,
    workers: int,
    threads: int | None,
    log_level: str,
) -> None:
    """Run the HTTP service and the memory page (JSON logs on stderr)."""
    from convmem.service.app import ServiceSettings, default_handler_threads
    from convmem.service.run import serve as run

    opens = setup(config_path, flags_of(db, embedder, reranker), creates=True)
    settings = ServiceSettings(
        max_body_bytes=max_body_bytes or ServiceSettings.max_body_bytes,
        handler_threads=threads or default_handler_threads(opens.db),
    )
    try:
        run(opens.db, host=host, port=port, settings=settings, log_level=log_level,
            graceful_timeout=graceful_timeout, keep_alive_timeout=keep_alive_timeout,
            embedder=opens.embedder, reranker=opens.reranker, config=opens.config,
            workers=workers, session=opens.session)  # fmt: skip
    except ConvmemError as exc:
        fail(exc)
    except OSError as exc:  # binding the port: in use, not allowed, no such address
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")


@click.group()
def keys() -> None:
    """Create, list and revoke API keys."""


@keys.command("create")
@db_option(creates=True)
@_tenant
@click.option("--role", required=True, type=click.Choice(KEY_ROLES),
              help="app: any user of the tenant; user: one user; admin: manages keys.")  # fmt: skip
@click.option("--user", default=None, help="The user a 'user' key acts for.")
@click.option("--name", default=None, help="A label to recognise the key by.")
@click.option(
    "--purpose", "purposes", multiple=True, type=click.Choice(PURPOSES),
    help="A memory purpose the key's requests may use (repeatable; default: every purpose).",
)  # fmt: skip
def keys_create(
    db: str, tenant: str, role: str, user: str | None, name: str | None, purposes: tuple[str, ...]
) -> None:
    """Create a key; the key itself is the last line of the output, shown only this once."""
    if role == "user" and not user:
        raise click.UsageError("--user is required for a user key")
    with opened(db) as memory:
        try:
            issued = memory.keys.create(
                tenant, role, user=user, name=name, created_by="cli", purposes=purposes or None
            )
        except InvalidInput as exc:
            fail(exc)
    bound = f" for user {issued.key.user_id}" if issued.key.user_id else ""
    click.echo(f"created {role} key {issued.key.id} in tenant {tenant}{bound}")
    click.echo("store it now: convmem keeps only its hash")
    click.echo(issued.token)


@keys.command("list")
@db_option()
@_tenant
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def keys_list(db: str, tenant: str, as_json: bool) -> None:
    """List a tenant's keys (never their secrets)."""
    with opened(db) as memory:
        found = memory.keys.list(tenant)
    if as_json:
        click.echo(json.dumps([k.to_dict() for k in found], indent=2))
        return
    echo_rows(_key_row(key) for key in found)


def _key_row(key: ApiKey) -> str:
    state = f"revoked {key.revoked_at:%Y-%m-%d %H:%M}" if key.revoked_at else "active"
    who = f" user={key.user_id}" if key.user_id else ""
    label = f" {key.name!r}" if key.name else ""
    return f"{key.id}  {key.role:<5}  {state}{who}{label}"


@keys.command("revoke")
@db_option()
@_tenant
@click.argument("key_id")
def keys_revoke(db: str, tenant: str, key_id: str) -> None:
    """Revoke a key; it stops working at once."""
    with opened(db) as memory:
        key = memory.keys.revoke(tenant, key_id)
    click.echo(f"revoked {key.id}")

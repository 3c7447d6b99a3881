"""``convmem retention``: a tenant's policy — retention periods per layer, the special categories
a user may have kept on explicit request, the cap on pending proposals — shown, set and applied
from the command line, thin over ``Memory.tenant_policy``, ``set_tenant_policy`` and
``sweep_retention``."""

from __future__ import annotations

import json

import click

from convmem.cli.common import db_option, fail, opened
from convmem.errors import ConvmemError
from convmem.model.policy import RETENTION_LAYERS, SPECIAL_CATEGORIES, TenantPolicy
from convmem.model.purpose import PURPOSES


@click.group()
def retention() -> None:
    """Tenants' policies: retention periods per layer (transcripts, summaries, entities,
    memories, proposals, audit, indexes), special categories, the proposal cap."""


def _describe(policy: TenantPolicy) -> list[str]:
    periods = policy.retention.to_dict()
    lines = [f"tenant {policy.tenant_id}  memory {'off' if policy.memory_disabled else 'on'}"]
    for layer in RETENTION_LAYERS:
        days = periods[layer]
        lines.append(f"  {layer:<12} {'kept until deleted' if days is None else f'{days} days'}")
    opened = ", ".join(policy.sensitive_categories) or "none"
    lines.append(
        f"  special categories on explicit request: {opened}"
        f" (recalled for {', '.join(policy.sensitive_purposes) or 'no purpose'})"
    )
    cap = policy.max_pending_proposals
    lines.append(f"  pending proposals per user: {'no cap' if cap is None else f'at most {cap}'}")
    return lines


@retention.command("show")
@db_option()
@click.option("--tenant", help="One tenant (default: every tenant with a period).")
@click.option("--json", "as_json", is_flag=True, help="JSON instead of text.")
def retention_show(db: str, tenant: str | None, as_json: bool) -> None:
    """Show the retention periods of a tenant, or of every tenant that set one."""
    try:
        with opened(db) as memory:
            if tenant is not None:
                policies = [memory.tenant_policy(tenant)]
            else:
                with memory.store.read() as tx:
                    policies = tx.tenant_policies()
    except ConvmemError as exc:
        fail(exc)
    if as_json:
        click.echo(json.dumps([p.to_dict() for p in policies], indent=2))
        return
    if not policies:
        click.echo("no tenant has a retention period")
    for policy in policies:
        click.echo("\n".join(_describe(policy)))


_DAYS = click.IntRange(0, None)


@retention.command("set")
@db_option()
@click.option("--tenant", required=True, help="Tenant id.")
@click.option(
    "--memory-disabled/--memory-enabled",
    default=None,
    help="Switch long-term memory off (or on) for the tenant (default: as it is).",
)
@click.option(
    "--days", "days", multiple=True, metavar="LAYER=DAYS",
    help="A layer's period, e.g. transcripts=30 (0: kept until deleted). Repeat per layer; "
    "layers not named keep their period.",
)  # fmt: skip
@click.option(
    "--sensitive", "sensitive", multiple=True, type=click.Choice(["none", *SPECIAL_CATEGORIES]),
    help="A special category users may have kept on their explicit request only (repeat; "
    "'none' closes them all; default: as it is).",
)  # fmt: skip
@click.option(
    "--sensitive-purpose", "sensitive_purposes", multiple=True, type=click.Choice(PURPOSES),
    help="A purpose memories of those categories are recalled for (repeat; default: as it is).",
)  # fmt: skip
@click.option(
    "--max-pending-proposals", type=click.IntRange(0, None), default=None,
    help="At most this many proposals wait per user (0: no cap; default: as it is).",
)  # fmt: skip
def retention_set(
    db: str, tenant: str, memory_disabled: bool | None, days: tuple[str, ...],
    sensitive: tuple[str, ...], sensitive_purposes: tuple[str, ...],
    max_pending_proposals: int | None,
) -> None:  # fmt: skip
    """Change a tenant's policy (what the admin route PUT /v1/tenant/policy does)."""
    changes: dict[str, int | None] = {}
    for item in days:
        layer, _, value = item.partition("=")
        if layer not in RETENTION_LAYERS or not value.isdigit():
            fail(f"--days takes LAYER=DAYS with LAYER one of {', '.join(RETENTION_LAYERS)}")
        changes[layer] = int(value) or None
    try:
        with opened(db) as memory:
            current = memory.tenant_policy(tenant)
            policy = memory.set_tenant_policy(
                tenant,
                memory_disabled=current.memory_disabled if memory_disabled is None
                else memory_disabled,
                retention=current.retention.to_dict() | changes,
                recall_unconfirmed_entity_facts=current.recall_unconfirmed_entity_facts,
                sensitive_categories=[c for c in sensitive if c != "none"] if sensitive
                else current.sensitive_categories,
                sensitive_purposes=sensitive_purposes or current.sensitive_purposes,
                max_pending_proposals=current.max_pending_proposals
                if max_pending_proposals is None else max_pending_proposals or None,
            )  # fmt: skip
    except ConvmemError as exc:
        fail(exc)
    click.echo("\n".join(_describe(policy)))


@retention.command("apply")
@db_option()
@click.option("--tenant", help="One tenant (default: every tenant with a period).")
def retention_apply(db: str, tenant: str | None) -> None:
    """Delete what is older than its tenant's period, layer by layer, now (the worker does this
    hourly, as jobs)."""
    try:
        with opened(db) as memory:
            swept = memory.sweep_retention(tenant)
    except ConvmemError as exc:
        fail(exc)
    for name, counts in swept.items():
        if "transcripts" in counts:
            click.echo(f"{name}: {counts['transcripts']} conversations deleted")
        others = [f"{counts[layer]} {layer}" for layer in RETENTION_LAYERS[1:] if layer in counts]
        if others:
            click.echo(f"{name}: {', '.join(others)} deleted")
    if not swept:
        click.echo("no tenant has a retention period")

"""Admin routes: an admin key manages the keys and the memory policy of its own tenant."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request

from convmem.service.auth import AdminKey, memory_of
from convmem.service.schemas import (
    KeyCreate,
    KeyCreatedOut,
    KeyOut,
    TenantPolicyIn,
    TenantPolicyOut,
)

router = APIRouter(prefix="/v1", tags=["admin"])


@router.get("/keys", response_model=list[KeyOut])
def list_keys(request: Request, admin: AdminKey) -> list[dict[str, Any]]:
    """Every key of the tenant, revoked ones too; never secrets."""
    return [key.to_dict() for key in memory_of(request).keys.list(admin.tenant_id)]


@router.post("/keys", status_code=201, response_model=KeyCreatedOut)
def create_key(request: Request, body: KeyCreate, admin: AdminKey) -> dict[str, Any]:
    """Issue a key for the admin's tenant. The token is in this answer and nowhere else."""
    issued = memory_of(request).keys.create(
        admin.tenant_id, body.role, user=body.user, name=body.name, created_by=f"key:{admin.id}",
        purposes=body.purposes,
    )  # fmt: skip
    return {"key": issued.key.to_dict(), "token": issued.token}


@router.delete("/keys/{key_id}", response_model=KeyOut)
def revoke_key(
    request: Request, key_id: Annotated[str, Path(min_length=1, max_length=256)], admin: AdminKey
) -> dict[str, Any]:
    """Revoke a key of the tenant; it stops working at once."""
    return memory_of(request).keys.revoke(admin.tenant_id, key_id).to_dict()


@router.get("/tenant/policy", response_model=TenantPolicyOut)
def get_policy(request: Request, admin: AdminKey) -> dict[str, Any]:
    """The tenant's memory switch and retention periods per layer."""
    return memory_of(request).tenant_policy(admin.tenant_id).to_dict()


@router.put("/tenant/policy", response_model=TenantPolicyOut)
def set_policy(request: Request, body: TenantPolicyIn, admin: AdminKey) -> dict[str, Any]:
    """Replace the tenant's policy: long-term memory off (or on) for every user, the
    retention periods per layer (``retention_days`` is the transcripts' period; the worker's
    sweeps apply them; ``proposals`` expires suggestions nobody confirmed), the special
    categories a user may have kept on their explicit request and the purposes they are
    recalled for, and the cap on proposals waiting per user."""
    policy = memory_of(request).set_tenant_policy(
        admin.tenant_id, memory_disabled=body.memory_disabled, retention_days=body.retention_days,
        retention=body.retention.model_dump() if body.retention else None,
        recall_unconfirmed_entity_facts=body.recall_unconfirmed_entity_facts,
        sensitive_categories=body.sensitive_categories,
        sensitive_purposes=body.sensitive_purposes,
        max_pending_proposals=body.max_pending_proposals,
    )  # fmt: skip
    return policy.to_dict()

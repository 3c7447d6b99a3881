"""Every route of the service, what kind of key it takes, and a concrete request for it."""

from __future__ import annotations

from typing import Any

from .world import World

# (method, path template) -> who may call it:
#   "user"   acts for one user: a user key, or an app key naming the user; an admin key may not
#   "admin"  an admin key of the tenant only
#   "app"    the tenant's application or admin key (the tool registry), never a user key
#   "any"    any valid key
#   "public" no key (operations, the page)
#   "app-user" an application key naming the user (minting a page's sign-in link)
#   "page"   no key: a sign-in link's token or the page's session cookie (test_page_sessions.py)
ROUTES: dict[tuple[str, str], str] = {
    ("POST", "/v1/conversations"): "user",
    ("GET", "/v1/conversations"): "user",
    ("GET", "/v1/conversations/{conversation_id}"): "user",
    ("DELETE", "/v1/conversations/{conversation_id}"): "user",
    ("GET", "/v1/conversations/{conversation_id}/messages"): "user",
    ("POST", "/v1/conversations/{conversation_id}/messages"): "user",
    ("GET", "/v1/conversations/{conversation_id}/branch"): "user",
    ("GET", "/v1/conversations/{conversation_id}/messages/{message_id}"): "user",
    ("GET", "/v1/conversations/{conversation_id}/messages/{message_id}/siblings"): "user",
    ("POST", "/v1/conversations/{conversation_id}/messages/{message_id}/edit"): "user",
    ("POST", "/v1/conversations/{conversation_id}/messages/{message_id}/regenerate"): "user",
    ("DELETE", "/v1/conversations/{conversation_id}/messages/{message_id}"): "user",
    ("PUT", "/v1/conversations/{conversation_id}/active-leaf"): "user",
    ("POST", "/v1/conversations/{conversation_id}/assemble"): "user",
    ("GET", "/v1/conversations/{conversation_id}/last-assembly"): "user",
    ("GET", "/v1/conversations/{conversation_id}/pins"): "user",
    ("POST", "/v1/conversations/{conversation_id}/pins"): "user",
    ("GET", "/v1/conversations/{conversation_id}/search"): "user",  # with conv.search
    ("GET", "/v1/conversations/{conversation_id}/summaries"): "user",  # with conv.summaries
    ("GET", "/v1/memories"): "user",
    ("POST", "/v1/memories"): "user",
    ("POST", "/v1/memories/proposals"): "user",
    ("GET", "/v1/memories/search"): "user",
    ("GET", "/v1/memories/{memory_id}/evidence"): "user",
    ("GET", "/v1/memories/{memory_id}"): "user",
    ("PATCH", "/v1/memories/{memory_id}"): "user",
    ("DELETE", "/v1/memories/{memory_id}"): "user",
    ("POST", "/v1/memories/{memory_id}/confirm"): "user",
    ("POST", "/v1/memories/{memory_id}/reject"): "user",
    ("POST", "/v1/memories/{memory_id}/resolve"): "user",
    ("POST", "/v1/memories/{memory_id}/restore"): "user",
    ("POST", "/v1/memories/{memory_id}/replaces"): "user",
    ("POST", "/v1/memories/{memory_id}/undo"): "user",
    ("GET", "/v1/entities"): "user",
    ("GET", "/v1/entities/{entity_id}"): "user",
    ("GET", "/v1/entities/{entity_id}/facts"): "user",
    ("DELETE", "/v1/entities/{entity_id}"): "user",
    ("POST", "/v1/entities/{entity_id}/facts/{fact_id}/promote"): "user",
    ("POST", "/v1/entities/{entity_id}/facts/{fact_id}/confirm"): "user",
    ("DELETE", "/v1/entities/{entity_id}/facts/{fact_id}"): "user",
    ("GET", "/v1/me"): "any",
    ("GET", "/v1/settings"): "user",
    ("PUT", "/v1/settings"): "user",
    ("GET", "/v1/messages/{message_id}"): "user",
    ("GET", "/v1/pins"): "user",
    ("POST", "/v1/pins"): "user",
    ("DELETE", "/v1/pins/{pin_id}"): "user",
    ("GET", "/v1/export"): "user",
    ("DELETE", "/v1/data"): "user",
    ("GET", "/v1/audit"): "user",
    ("GET", "/v1/keys"): "admin",
    ("POST", "/v1/keys"): "admin",
    ("DELETE", "/v1/keys/{key_id}"): "admin",
    ("GET", "/v1/tenant/policy"): "admin",
    ("PUT", "/v1/tenant/policy"): "admin",
    ("GET", "/v1/tools"): "app",
    ("POST", "/v1/tools"): "app",
    ("DELETE", "/v1/tools/{name}"): "app",
    ("POST", "/v1/page-sessions"): "app-user",
    ("POST", "/v1/page-sessions/exchange"): "page",
    ("DELETE", "/v1/page-sessions/current"): "page",
    ("GET", "/healthz"): "public",
    ("GET", "/metrics"): "public",
    ("GET", "/openapi.json"): "public",
    ("GET", "/docs"): "public",
    ("GET", "/"): "public",
}
# Routes registered only when the engine has the feature behind them (other work in flight).
OPTIONAL = {
    ("GET", "/v1/conversations/{conversation_id}/search"),
    ("GET", "/v1/conversations/{conversation_id}/summaries"),
}

BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/v1/conversations"): {"title": "New"},
    ("POST", "/v1/conversations/{conversation_id}/messages"): {"role": "user", "content": "hi"},
    ("POST", "/v1/conversations/{conversation_id}/messages/{message_id}/edit"): {
        "content": "edited"
    },
    ("POST", "/v1/conversations/{conversation_id}/messages/{message_id}/regenerate"): {
        "content": "again"
    },
    ("POST", "/v1/conversations/{conversation_id}/assemble"): {"user_message": "and now?"},
    ("POST", "/v1/conversations/{conversation_id}/pins"): {"text": "Be kind."},
    ("POST", "/v1/memories"): {"text": "I like green tea"},
    ("POST", "/v1/memories/proposals"): {"text": "Likes museums"},
    ("PATCH", "/v1/memories/{memory_id}"): {"text": "I prefer window seats."},
    ("PUT", "/v1/settings"): {"memory_enabled": True},
    ("POST", "/v1/pins"): {"text": "Use metric units."},
    ("POST", "/v1/keys"): {"role": "app"},
    ("PUT", "/v1/tenant/policy"): {"memory_disabled": False},
    ("POST", "/v1/page-sessions/exchange"): {"token": "cmp_not-a-link"},
    ("POST", "/v1/tools"): {
        "definition": {"name": "find_train", "description": "Find trains between two stations."},
        "use_when": ["user asks about trains"],
    },
}
QUERIES: dict[tuple[str, str], dict[str, str]] = {
    ("GET", "/v1/memories/search"): {"q": "aisle"},
    ("GET", "/v1/conversations/{conversation_id}/search"): {"q": "aisle"},
}


def concrete(route: tuple[str, str], world: World, key_id: str = "key_none") -> str:
    """The route's path with ids from the world."""
    template = route[1]
    memory = world.proposal if template.endswith(("/confirm", "/reject")) else world.memory
    path = (
        template.replace("{conversation_id}", world.conversation)
        .replace("{message_id}", world.reply)
        .replace("{memory_id}", memory)
        .replace("{pin_id}", world.user_pin)
        .replace("{key_id}", key_id)
        .replace("{name}", world.tool)
        .replace("{entity_id}", world.entity)
        .replace("{fact_id}", world.fact)
    )
    return path


def request_kwargs(route: tuple[str, str], world: World) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    if route in BODIES:
        body = dict(BODIES[route])
        kwargs["json"] = body
    if route == ("PUT", "/v1/conversations/{conversation_id}/active-leaf"):
        kwargs["json"] = {"leaf_id": world.first}
    if route in QUERIES:
        kwargs["params"] = QUERIES[route]
    return kwargs

"""Store backends by URL scheme: the plug-in point ``convmem.open(url)`` dispatches through.

A backend registers a factory — a callable from the URL (or path) to a ``Store`` — for each
scheme it serves::

    from convmem.store.registry import register
    register("mydb", MyStore.from_url)        # convmem.open("mydb://…") now opens it

A plain path (no ``scheme://``) is the empty scheme. The backends that ship with convmem register
themselves when their module is imported, which happens on the first URL of their scheme:
``sqlite`` (and plain paths) and ``postgresql`` / ``postgres``. A backend in another package can
also be found without an import through the entry-point group ``convmem.stores`` (entry-point name:
the scheme; value: the factory).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from importlib.metadata import entry_points

from convmem.errors import InvalidInput
from convmem.store.base import Store

StoreFactory = Callable[[str], Store]
ENTRY_POINT_GROUP = "convmem.stores"

# scheme → the module that registers it, imported on first use (a driver loads only if needed)
_BUILT_IN = {
    "": "convmem.store.sqlite",
    "sqlite": "convmem.store.sqlite",
    "postgresql": "convmem.store.postgres",
    "postgres": "convmem.store.postgres",
}
_factories: dict[str, StoreFactory] = {}
_lock = threading.Lock()


def register(scheme: str, factory: StoreFactory) -> None:
    """Open URLs of ``scheme`` (case-insensitive; ``""``: plain paths) with ``factory``; a later
    registration for the same scheme replaces an earlier one."""
    with _lock:
        _factories[scheme.lower()] = factory


def scheme_of(url: str) -> str:
    """``"sqlite"`` for ``sqlite:///x.db``; ``""`` for a plain path."""
    return url.split("://", 1)[0].lower() if "://" in url else ""


def open_store(url: str) -> Store:
    """The store ``url`` names, from the factory registered for its scheme."""
    scheme = scheme_of(url)
    return _factory(scheme)(url)


def _factory(scheme: str) -> StoreFactory:
    with _lock:
        factory = _factories.get(scheme)
    if factory is not None:
        return factory
    module = _BUILT_IN.get(scheme)
    if module is not None:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            raise InvalidInput(f"the {scheme} backend is not available in this version") from None
    else:
        for point in entry_points(group=ENTRY_POINT_GROUP, name=scheme):
            register(scheme, point.load())
    with _lock:
        factory = _factories.get(scheme)
    if factory is None:
        raise InvalidInput(
            f"unsupported database URL scheme {scheme!r}; use a path or sqlite:///path"
        )
    return factory

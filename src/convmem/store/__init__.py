"""The storage extension point: a backend implements ``Store`` — transactions whose methods are
the capability Protocols below — and registers a factory for its URL scheme with ``register``.
The map of the Protocols is in ``convmem.store.base``; the store contract suite,
``convmem.testing.contract`` (``pytest --pyargs convmem.testing.contract``), is what a backend
must pass.
"""

# Everything convmem.store.base exports (the Protocols and the values they pass), listed once
# there, and the registry.
from convmem.store import base
from convmem.store.base import *  # noqa: F403
from convmem.store.registry import StoreFactory, open_store, register

__all__ = [*base.__all__, "StoreFactory", "open_store", "register"]

"""The contract suite's fixtures: ``harness`` (one per chosen backend, for the session),
``backend`` (a fresh database of it for one test), ``memory`` opened on that database, and the
shared principals ``alice`` and ``bob``.

They are imported into a conftest (``convmem.testing.contract``'s, and convmem's own
``tests/store/``), never into the plugin: a fixture is visible only under the folder of the
conftest that names it, so installing convmem gives nobody else's tests a ``memory`` fixture.
``pytest_generate_tests`` runs each test once per harness the run chose (``--convmem-backend``,
the ``convmem_backends`` ini key, else convmem's built-in SQLite and PostgreSQL).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import convmem
from convmem.testing.harness import Backend, Harness, Unavailable

# the harnesses a run may name by a word instead of "module:Class"
BUILT_IN = {
    "sqlite": "convmem.testing.sqlite:SQLiteHarness",
    "postgresql": "convmem.testing.postgres:PostgresHarness",
}
_CHOSEN = pytest.StashKey[list[type[Harness]]]()


def load_harness(spec: str) -> type[Harness]:
    """The ``Harness`` subclass ``spec`` names: a built-in's name or ``package.module:Class``."""
    target = BUILT_IN.get(spec, spec)
    module_name, _, class_name = target.partition(":")
    if not module_name or not class_name:
        raise pytest.UsageError(
            f"convmem backend {spec!r}: expected module:Class or one of {sorted(BUILT_IN)}"
        )
    try:
        found = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise pytest.UsageError(f"convmem backend {spec!r} cannot be loaded: {exc}") from exc
    if not (isinstance(found, type) and issubclass(found, Harness)):
        raise pytest.UsageError(
            f"convmem backend {spec!r} is not a subclass of convmem.testing.Harness"
        )
    return found


def requested(config: pytest.Config) -> list[str]:
    """The specs the run names: the option, else the ini key; empty when neither is set (or
    when the plugin that defines them is not loaded)."""
    try:
        given: Sequence[str] | None = config.getoption("convmem_backend")
    except ValueError:  # the plugin is not registered: nothing was asked for
        return []
    if given:
        return list(given)
    return list(config.getini("convmem_backends"))


def chosen_harnesses(config: pytest.Config) -> list[type[Harness]]:
    """The harness classes this run's tests are parametrised over (resolved once a run)."""
    if _CHOSEN not in config.stash:
        classes = [load_harness(spec) for spec in requested(config) or list(BUILT_IN)]
        names = [cls.name for cls in classes]
        if len(set(names)) != len(names):
            raise pytest.UsageError(f"convmem backends with the same name: {names}")
        config.stash[_CHOSEN] = classes
    return config.stash[_CHOSEN]


@pytest.hookimpl(tryfirst=True)  # the backend leads each test id: test_x[sqlite-...]
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "harness" in metafunc.fixturenames:
        classes = chosen_harnesses(metafunc.config)
        metafunc.parametrize(
            "harness", classes, indirect=True, scope="session", ids=[c.name for c in classes]
        )


def start_or_skip(harness: Harness, workdir: Path) -> None:
    """Start the backend; if it is unavailable, skip its tests — or fail them when required."""
    try:
        harness.start(workdir)
    except Unavailable as exc:
        if harness.required():
            pytest.fail(f"the {harness.name} backend is required ({harness.require_env}=1): {exc}")
        pytest.skip(f"the {harness.name} backend is unavailable: {exc}")


@pytest.fixture(scope="session")
def harness(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Harness]:
    chosen: Harness = request.param()
    start_or_skip(chosen, tmp_path_factory.mktemp(chosen.name))
    try:
        yield chosen
    finally:
        chosen.stop()


@pytest.fixture
def backend(harness: Harness, tmp_path: Path) -> Iterator[Backend]:
    yield Backend(harness, harness.fresh_url(tmp_path))
    harness.after_test()


@pytest.fixture
def memory(backend: Backend) -> Iterator[convmem.Memory]:
    with backend.open() as mem:
        yield mem


@pytest.fixture
def alice(memory: convmem.Memory) -> convmem.Scope:
    return memory.scope(tenant="acme", user="alice")


@pytest.fixture
def bob(memory: convmem.Memory) -> convmem.Scope:
    return memory.scope(tenant="acme", user="bob")

"""The pytest plugin that points convmem's store contract suite at a backend.

Installed with convmem under the ``pytest11`` entry point, it is inert: it adds the option below
and nothing else — no fixture, no hook that touches anyone's collection (the suite's fixtures
live in its own conftest). A backend package runs the suite on its harness with::

    pytest --pyargs convmem.testing.contract --convmem-backend=mypkg.harness:MyHarness

(or ``convmem_backends = ["mypkg.harness:MyHarness"]`` under ``[tool.pytest.ini_options]``).
Where plugin autoloading is off, ``-p convmem.testing.plugin`` or
``pytest_plugins = ["convmem.testing.plugin"]`` in the top-level conftest loads it. Without a
choice the suite runs on convmem's built-in backends, ``sqlite`` and ``postgresql``.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("convmem", "convmem store contract suite")
    group.addoption(
        "--convmem-backend",
        action="append",
        dest="convmem_backend",
        metavar="MODULE:CLASS",
        help="a convmem.testing.Harness subclass (or a built-in: sqlite, postgresql) to run "
        "convmem.testing.contract against; repeat for several",
    )
    parser.addini(
        "convmem_backends",
        type="args",
        help="the harnesses convmem.testing.contract runs against when --convmem-backend is "
        "not given (module:Class or a built-in name)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """A harness the run names explicitly is loaded now, so a typo fails before collection."""
    if config.getoption("convmem_backend"):
        from convmem.testing.fixtures import chosen_harnesses

        chosen_harnesses(config)

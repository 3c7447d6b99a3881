"""`import convmem` and the CLI start stay cheap: the engine, the never-store policy's patterns,
detect-secrets and numpy load on first use, and every public name still resolves.

Each check runs in a fresh interpreter, since this one has long imported everything."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import convmem

SRC = Path(__file__).resolve().parents[1] / "src"
INIT = Path(convmem.__file__)

# What `import convmem` and `convmem --help` must not load: each costs tens of milliseconds.
HEAVY = (
    "convmem.engine",
    "convmem.memory.detectors",
    "convmem.store",
    "detect_secrets",
    "numpy",
)


def loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running ``code``."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    env = {"PYTHONPATH": str(SRC), "PATH": ""}
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_import_convmem_loads_none_of_the_heavy_modules() -> None:
    loaded = loaded_after("import convmem")
    assert "convmem.errors" in loaded  # the error tree is there from the start
    assert not {m for m in loaded for h in HEAVY if m == h or m.startswith(h + ".")}


def test_the_cli_help_loads_neither_the_policy_nor_detect_secrets() -> None:
    loaded = loaded_after(
        "import sys\nsys.argv = ['convmem', '--help']\nfrom convmem.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    )
    assert "convmem.memory.detectors" not in loaded
    assert "detect_secrets" not in loaded


def test_a_public_name_loads_its_module_on_first_use() -> None:
    loaded = loaded_after("import convmem\nconvmem.ToolCall")
    assert "convmem.model.messages" in loaded
    assert "convmem.engine" not in loaded
    assert "convmem.engine" in loaded_after("from convmem import open")


def test_the_policy_compiles_its_detectors_on_the_first_check() -> None:
    assert "convmem.memory.detectors" not in loaded_after("import convmem.memory.policy")
    loaded = loaded_after(
        "from convmem.memory.policy import check_text\n"
        "assert not check_text('my api key is sk-proj-4fG7hJ2kL9mN3pQ8rS5tV1wX6yZ0aB').allowed"
    )
    assert "convmem.memory.detectors" in loaded


def test_detect_secrets_waits_for_a_text_that_could_hold_a_secret() -> None:
    # no run of ten token characters with a digit: the scanner has nothing to look at
    loaded = loaded_after(
        "from convmem.memory.policy import check_text\n"
        "assert check_text('I prefer aisle seats').allowed"
    )
    assert "convmem.memory.detectors" in loaded
    assert "detect_secrets" not in loaded
    # an order number is such a run: the scanner reads it (and lets it pass)
    loaded = loaded_after(
        "from convmem.memory.policy import check_text\n"
        "assert check_text('my order ORD-2024-99881234 shipped').allowed"
    )
    assert "detect_secrets" in loaded


def test_every_public_name_is_the_object_its_module_defines() -> None:
    for name in convmem.__all__:
        value = getattr(convmem, name)
        module = convmem._LAZY.get(name, "convmem.errors")
        assert value is getattr(importlib.import_module(module), name), name
    assert set(convmem.__all__) <= set(dir(convmem))
    from convmem import ModelProfile, ToolCall, open

    assert open is convmem.open
    assert ToolCall(id="c1", name="search", arguments="{}").name == "search"
    assert ModelProfile(context_window=8192).context_window == 8192


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = convmem.no_such_name  # type: ignore[attr-defined]
    with pytest.raises(ImportError):
        from convmem import no_such_name  # type: ignore[attr-defined]  # noqa: F401


def test_the_lazy_table_matches_the_imports_type_checkers_read() -> None:
    """The names under TYPE_CHECKING (what mypy and editors see) are the names loaded lazily,
    from the same modules, and with the error tree they are exactly ``__all__``."""
    tree = ast.parse(INIT.read_text())
    typed: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module
                typed.update({alias.name: stmt.module for alias in stmt.names})
    assert typed == convmem._LAZY
    errors = {n for n in convmem.__all__ if n not in typed}
    assert all(issubclass(getattr(convmem, n), convmem.ConvmemError) for n in errors)

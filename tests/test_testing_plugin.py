"""The published contract suite (convmem.testing) as a backend package outside this repository
uses it: a package in a temp folder registers a URL scheme of its own (SQLite files under
``acme:///``), hands the suite a harness, and runs ``pytest --pyargs convmem.testing.contract``
in a fresh process — once with the option, once with the conftest and ini key. A backend that
loses what it acknowledged fails it. Installing the plugin changes nobody else's run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import convmem

# the convmem this run imports (the source tree or site-packages), for the child processes
PACKAGE_ROOT = Path(convmem.__file__).resolve().parents[1]

BACKEND_PACKAGE = {
    "acme_store/__init__.py": '''
        """A backend: convmem's SQLite store under a scheme of its own."""
        import shutil
        import tempfile
        from pathlib import Path

        from convmem.store import register
        from convmem.store.sqlite import SQLiteStore


        def open_acme(url: str) -> SQLiteStore:
            return SQLiteStore(url.removeprefix("acme:///"))


        def open_forgetful(url: str) -> SQLiteStore:
            """Broken on purpose: every open works on a copy, so a reopen finds nothing that
            was written before."""
            copy = Path(tempfile.mkdtemp()) / "copy.db"
            shutil.copyfile(url.removeprefix("forgetful:///"), copy)
            return SQLiteStore(str(copy))


        register("acme", open_acme)
        register("forgetful", open_forgetful)
    ''',
    "acme_store/harness.py": """
        import acme_store  # registers the schemes
        from convmem.testing import SQLiteHarness


        class AcmeHarness(SQLiteHarness):
            name = "acme"
            url_scheme = "acme"


        class ForgetfulHarness(SQLiteHarness):
            name = "forgetful"
            url_scheme = "forgetful"
    """,
}


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest in ``folder`` as another project runs it: its own rootdir, no entry-point plugins
    (so only what the arguments or its conftest load), this convmem on the path."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(folder), str(PACKAGE_ROOT)]),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _counts(run: subprocess.CompletedProcess[str]) -> dict[str, int]:
    summary = run.stdout.strip().splitlines()[-1]
    found = re.findall(r"(\d+) (passed|failed|errors?|skipped)", summary)
    return {word: int(n) for n, word in found}


def test_a_backend_package_runs_the_contract_suite_on_its_harness(tmp_path: Path) -> None:
    _write(tmp_path, BACKEND_PACKAGE)
    run = _pytest(
        tmp_path,
        "-p", "convmem.testing.plugin",
        "--convmem-backend=acme_store.harness:AcmeHarness",
        "--pyargs", "convmem.testing.contract.test_tree", "convmem.testing.contract.test_export",
    )  # fmt: skip
    counts = _counts(run)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert counts.get("passed", 0) >= 20 and set(counts) == {"passed"}, counts
    passed = [line for line in run.stdout.splitlines() if line.startswith("PASSED")]
    assert len(passed) == counts["passed"]
    assert all("[acme]" in line or "[acme-" in line for line in passed), passed[:3]


def test_a_backend_that_loses_acknowledged_writes_fails_it(tmp_path: Path) -> None:
    """The conftest and ini route: ``pytest_plugins`` and ``convmem_backends``."""
    _write(
        tmp_path,
        {
            **BACKEND_PACKAGE,
            "conftest.py": 'pytest_plugins = ["convmem.testing.plugin"]\n',
            "pytest.ini": """
                [pytest]
                convmem_backends =
                    acme_store.harness:AcmeHarness
                    acme_store.harness:ForgetfulHarness
            """,
        },
    )
    run = _pytest(
        tmp_path,
        "--pyargs", "convmem.testing.contract.test_tree",
        "-k", "test_a_reopened_database_keeps_everything",
    )  # fmt: skip
    assert _counts(run) == {"passed": 1, "failed": 1}, run.stdout[-3000:] + run.stderr[-3000:]
    assert "PASSED" in run.stdout and "[acme]" in run.stdout
    assert re.search(r"^FAILED \S+\[forgetful\]", run.stdout, flags=re.M), run.stdout[-3000:]


def test_a_harness_that_is_not_one_is_a_usage_error(tmp_path: Path) -> None:
    _write(tmp_path, BACKEND_PACKAGE)
    for spec, words in (
        ("acme_store.harness:Nowhere", "cannot be loaded"),
        ("acme_store:open_acme", "not a subclass of convmem.testing.Harness"),
        ("acme", "expected module:Class"),
    ):
        run = _pytest(
            tmp_path,
            "-p", "convmem.testing.plugin", f"--convmem-backend={spec}",
            "--pyargs", "convmem.testing.contract.test_export",
        )  # fmt: skip
        assert run.returncode == 4, (spec, run.stdout[-2000:], run.stderr[-2000:])  # usage error
        assert words in run.stderr, (spec, run.stderr[-2000:])


def test_the_plugin_leaves_other_projects_tests_alone(tmp_path: Path) -> None:
    """Loaded, it defines no fixture and parametrises nothing outside the contract suite."""
    _write(
        tmp_path,
        {
            "test_theirs.py": """
                import pytest


                @pytest.fixture
                def harness():
                    return "theirs"


                def test_their_harness(harness):
                    assert harness == "theirs"


                def test_no_memory_from_convmem(memory):
                    pass
            """,
        },
    )
    run = _pytest(tmp_path, "-p", "convmem.testing.plugin", "test_theirs.py")
    assert _counts(run) == {"passed": 1, "error": 1}, run.stdout[-3000:]
    assert "PASSED test_theirs.py::test_their_harness\n" in run.stdout
    assert "fixture 'memory' not found" in run.stdout


def test_importing_convmem_does_not_import_the_suite_or_pytest() -> None:
    probe = (
        "import sys, convmem\n"
        "convmem.Memory, convmem.open\n"
        "assert 'convmem.testing' not in sys.modules\n"
        "import convmem.testing\n"
        "assert convmem.testing.Harness and convmem.testing.SQLiteHarness\n"
        "heavy = ('pytest', '_pytest', 'hypothesis', 'psycopg')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"

"""The manual (docs/, MkDocs) builds offline with no broken link or missing page, and the README
stays a first read that points into it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.extras import module_of_extra

ROOT = Path(__file__).resolve().parents[1]


def test_the_manual_builds_with_no_broken_links(tmp_path: Path) -> None:
    module_of_extra("mkdocs", "docs")
    module_of_extra("mkdocstrings", "docs")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-3000:]
    assert "WARNING" not in build.stderr
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text()
    assert "def assemble" in api or "assemble" in api  # the reference was generated from docstrings
    for page in (ROOT / "docs").rglob("*.md"):
        html = page.relative_to(ROOT / "docs").with_suffix("")
        target = tmp_path / "site" / (html.parent if html.name == "index" else html) / "index.html"
        assert target.exists(), page


def test_every_page_is_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in (ROOT / "docs").rglob("*.md"):
        assert page.relative_to(ROOT / "docs").as_posix() in nav, page


def test_the_readme_is_a_first_read_whose_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    links = re.findall(r"\]\(([^)#]+?)\)", readme)
    local = [link for link in links if "://" not in link]
    assert len(local) >= 20
    for link in local:
        assert (ROOT / link).exists(), link


def test_ci_runs_the_readme_commands_as_written() -> None:
    """The README's set-up and test commands (its first two `sh` blocks) are lines of .ci/run,
    word for word, so CI sees what a newcomer sees."""
    readme = (ROOT / "README.md").read_text()
    setup, tests = re.findall(r"^```sh\n(.*?)\n```", readme, flags=re.M | re.S)[:2]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert "pip install -e . &&" in setup and "convmem demo" in setup
    assert "'.[test]'" in tests and "pytest" in tests
    assert ci.index(setup) < ci.index(tests)

"""The package a user installs: built from this checkout as the Dockerfile builds it, it carries
the tokenizer files, the web page and the license, and counts exactly from what it carries."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_carries_the_tokenizers_the_page_and_the_license(tmp_path: Path) -> None:
    source = tmp_path / "src-copy"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("*.egg-info"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path), "."],
        cwd=source,
        check=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("convmem-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for packaged in (
        "convmem/content/tokenizers/o200k_base.tiktoken",
        "convmem/content/tokenizers/cl100k_base.tiktoken",
        "convmem/content/tokenizers/LICENSE-tiktoken",
        "convmem/web/index.html",
        "convmem/web/app.js",
        "convmem/web/app.css",
        "convmem/py.typed",
        "convmem/eval/behaviour/cases/behaviour-v1.json",
    ):
        assert packaged in names, packaged
    assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith("/LICENSE") for n in names)

    # installed alone in a fresh folder (no source tree on the path), it counts exactly
    target = tmp_path / "installed"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    code = (
        "import convmem; from convmem.content.tokens import get_counter; print(convmem.__file__); "
        "print(get_counter('o200k_base').count('What seat do I like?'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    location, count = result.stdout.split()
    assert Path(location).is_relative_to(target)
    assert count == "6"


def test_the_license_matches_pyproject() -> None:
    assert 'license = { text = "Apache-2.0" }' in (ROOT / "pyproject.toml").read_text()
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text

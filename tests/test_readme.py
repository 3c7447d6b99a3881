"""Every Python block of the README and of the manual (docs/) runs on its own, as a reader would
paste it."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.extras import module_of_extra

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]


def _blocks(page: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", page.read_text(), flags=re.M | re.S)


BLOCKS = _blocks(README)
# (page, its n-th block, the block) for every page
ALL_BLOCKS = [
    (page.relative_to(ROOT).as_posix(), n, block)
    for page in PAGES
    for n, block in enumerate(_blocks(page), start=1)
]


def _uses_the_embeddings_extra(block: str) -> bool:
    return "SentenceTransformerEmbedder" in block


# an integration's block needs its extra's library (CI installs every extra)
_EXTRA_LIBRARIES = {"langchain": "langchain_core", "langgraph": "langgraph", "agents": "agents"}


def _needs_a_missing_extra(block: str) -> bool:
    return any(
        f"convmem.integrations.{module}" in block and not importlib.util.find_spec(library)
        for module, library in _EXTRA_LIBRARIES.items()
    )


def test_the_readme_and_the_manual_have_python_blocks() -> None:
    assert len(BLOCKS) >= 2  # the README's quick start: a conversation, long-term memory
    assert len(ALL_BLOCKS) >= 18  # the 13 the README held before the manual, and more


def run_block(block: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """The block in a fresh interpreter in ``folder`` (the blocks open "convmem.db" there), with
    no tiktoken cache and no network."""
    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}
    env.update(HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9")
    return subprocess.run(
        [sys.executable, "-c", block],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(
    "block",
    [
        pytest.param(block, marks=[pytest.mark.embeddings] * _uses_the_embeddings_extra(block))
        for _, _, block in ALL_BLOCKS
    ],
    ids=[f"{page}:block{n}" for page, n, _ in ALL_BLOCKS],
)
def test_a_readme_block_runs_on_its_own(block: str, tmp_path: Path) -> None:
    if _uses_the_embeddings_extra(block):
        module_of_extra("sentence_transformers", "embeddings")
    if _needs_a_missing_extra(block):
        pytest.skip("needs an integration's extra")
    result = run_block(block, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert result.stdout.strip()  # every block shows something
    assert (tmp_path / "convmem.db").exists()


def test_the_memory_block_saves_blocks_a_secret_and_recalls(tmp_path: Path) -> None:
    (memory_block,) = [b for b in BLOCKS if "Remember that I prefer aisle seats." in b]
    result = run_block(memory_block, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    saved, blocked, listed, recalled = result.stdout.splitlines()
    assert saved.startswith("saved mem_")
    assert blocked == "credential"
    assert "I prefer aisle seats." in listed
    assert saved.split()[1] in recalled  # the saved memory's id is among those recalled

"""Every example in examples/ runs as a reader would run it, and shows what it promises."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# example -> (the library it needs, lines its output must hold)
EXPECTED: dict[str, tuple[str, list[str]]] = {
    "agents_session.py": ("agents", ["final output: The forecast says: sunny in Lisbon, 24 °C",
                                     "items in convmem: ['user', 'function_call', "
                                     "'function_call_output', 'assistant']",
                                     "popped: message | still in the tree: 4 messages"]),
    "langchain_history.py": ("langchain_core", ["you said: Which seat should I book?",
                              "memories: ['I prefer aisle seats.']"]),
    "langgraph_store.py": ("langgraph", ["put 'openai' -> blocked: credential",
                                         "memory page: [('proposed', 'I prefer aisle seats.')]",
                                         "search after: [('seat', 'I prefer aisle seats.')]"]),
    "mcp_client.py": ("mcp", ["tools: remember, list_memories", "remember -> blocked credential",
                              'list_memories -> ["I prefer aisle seats."]']),
}  # fmt: skip


def test_every_example_is_checked() -> None:
    assert {p.name for p in EXAMPLES.glob("*.py")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs(name: str, tmp_path: Path) -> None:
    library, lines = EXPECTED[name]
    if importlib.util.find_spec(library) is None:
        pytest.skip(f"needs {library}")
    env = dict(os.environ, HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9")
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], cwd=tmp_path, env=env, capture_output=True,
        text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    for line in lines:
        assert line in done.stdout, done.stdout

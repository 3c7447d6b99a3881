"""Without its extra, an integration or an example says which extra to install instead of
dying on a bare ModuleNotFoundError."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# each example, the extra it needs, and a library of that extra
CASES = [
    ("agents_session.py", "agents", "agents"),
    ("langchain_history.py", "langchain", "langchain_core"),
    ("langgraph_store.py", "langgraph", "langgraph"),
    ("mcp_client.py", "mcp", "mcp"),
]

# a library made unimportable in the child, as when its extra is not installed
_HIDE = (
    "import sys; sys.modules[{lib!r}] = None; "
    "import runpy; runpy.run_path({path!r}, run_name='__main__')"
)


@pytest.mark.parametrize(("example", "extra", "library"), CASES)
def test_an_example_names_its_missing_extra(example: str, extra: str, library: str) -> None:
    code = _HIDE.format(lib=library, path=str(EXAMPLES / example))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    assert f"this example needs the {extra} extra: pip install -e '.[{extra}]'" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize(
    ("module", "library"), [("langchain", "langchain_core"), ("langgraph", "langgraph")]
)
def test_an_integration_names_its_missing_extra(module: str, library: str) -> None:
    code = f"import sys; sys.modules[{library!r}] = None; import convmem.integrations.{module}"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    assert (
        f"BackendUnavailable: convmem.integrations.{module} needs the {module} extra" in run.stderr
    )

"""The public surface: a curated, sorted ``__all__``, the error tree, and the README's example."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import convmem

README = Path(__file__).resolve().parents[1] / "README.md"


def test_all_is_sorted_and_complete() -> None:
    assert list(convmem.__all__) == sorted(convmem.__all__)
    for name in convmem.__all__:
        assert hasattr(convmem, name), name


def test_every_error_derives_from_convmem_error() -> None:
    errors = [
        getattr(convmem, n)
        for n in convmem.__all__
        if n.endswith(
            (
                "Error",
                "Exceeded",
                "NotFound",
                "Violation",
                "Busy",
                "Input",
                "Message",
                "Query",
                "Large",
            )
        )
    ]
    errors = [e for e in errors if isinstance(e, type) and issubclass(e, BaseException)]
    assert len(errors) >= 10
    for error in errors:
        assert issubclass(error, convmem.ConvmemError)


def test_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    ctx = namespace["ctx"]
    assert isinstance(ctx, convmem.AssembledContext)
    contents = [m["content"] for m in ctx.messages]
    assert "I prefer window seats." in contents
    assert "I prefer aisle seats." not in contents
    assert os.path.exists(tmp_path / "convmem.db")
    exec(compile(blocks[1], "README.md", "exec"), namespace)  # continues the first, as pasted
    ctx = namespace["ctx"]
    assert isinstance(ctx, convmem.AssembledContext)
    assert len(ctx.report.memory_ids) == 1
    scope = namespace["user"]
    assert isinstance(scope, convmem.Scope)
    assert scope.memories.list(status=None) == []  # the guesses were settled, the fact deleted

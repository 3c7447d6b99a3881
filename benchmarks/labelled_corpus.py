"""What the labelled-corpus benchmarks (never_store.py, consent.py) share: reading a JSONL corpus
with its line numbers, the common command-line options, and printing / writing the figures."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def load(path: Path) -> list[dict[str, str]]:
    """One object per non-blank line, each with ``line`` (its 1-based line number) added."""
    rows = []
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                row = json.loads(line)
                row["line"] = str(n)
                rows.append(row)
    return rows


def parser(description: str, corpus: Path) -> argparse.ArgumentParser:
    """``--json``, ``--corpus`` and ``--show-errors``; a benchmark adds its own options."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--json", type=Path, help="write the figures as JSON to this path")
    p.add_argument("--corpus", type=Path, default=corpus, help="labelled JSONL corpus")
    p.add_argument("--show-errors", action="store_true", help="list what went wrong")
    return p


def report(
    args: argparse.Namespace,
    result: dict[str, Any],
    errors: list[str],
    render: Callable[[dict[str, Any]], str],
) -> None:
    """Print the table (and the errors when asked); write the JSON when asked."""
    print(render(result))
    if args.show_errors and errors:
        print("\n" + "\n".join(errors))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")

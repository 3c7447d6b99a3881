"""Reading a JSON file the user names (an export, a tools file): every way it can fail is one
``InvalidInput`` that says what is wrong and where, never what the file holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from convmem.errors import InvalidInput


def read_json(path: str | Path, what: str) -> Any:
    """The parsed contents of ``path``; ``what`` names the file in the error ("a Mem0 export")."""
    where = Path(path)
    try:
        return json.loads(where.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InvalidInput(f"cannot read {what} from {where}: no such file") from exc
    except OSError as exc:
        raise InvalidInput(f"cannot read {what} from {where}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"cannot read {what} from {where}: not UTF-8 text (byte {exc.start})"
        ) from exc
    except json.JSONDecodeError as exc:
        # the parser's message names the syntax expected, never the text found
        raise InvalidInput(
            f"cannot read {what} from {where}: not valid JSON "
            f"(line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from exc

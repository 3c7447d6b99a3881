"""One renderer for untrusted text in a prompt (DESIGN.md principle 13): a new render path adds a
caller of ``convmem.content.blocks``, never a second escaping. These checks read the source, so a
path that goes around the renderer fails here before it reaches a request:

- only ``convmem.content.blocks`` calls the low-level escape (``quote_data`` / ``quote_name``, or
  the
  helpers beneath them);
- only ``convmem.content.blocks`` spells a block's tags: elsewhere a block is a ``DataBlock`` naming
  its
  tag, so every tag in a request belongs to a block the renderer made;
- every module that defines a data block's header hands it to ``DataBlock``.

The property test (tests/test_injection_properties.py) checks the same from the other end: every
block in the assembled system content of real requests parses as one the renderer made.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import convmem
from convmem.content import blocks

SOURCE = Path(convmem.__file__).parent
RENDERER = SOURCE / "content" / "blocks.py"
LOW_LEVEL = {"quote_data", "quote_name", "_escape_invisible", "_json_escape"}
# a string that is a tag of its own: "<user_memories>", "</retrieved_history>"
TAG = re.compile(r"</?[a-z][a-z_]*>")


def _modules() -> list[tuple[Path, ast.Module]]:
    return [
        (path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        for path in sorted(SOURCE.rglob("*.py"))
        if path != RENDERER
    ]


def _low_level_uses(tree: ast.Module) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "convmem.content.blocks":
            found += [alias.name for alias in node.names if alias.name in LOW_LEVEL]
        elif isinstance(node, ast.Attribute) and node.attr in LOW_LEVEL:
            found.append(node.attr)
        elif isinstance(node, ast.Name) and node.id in LOW_LEVEL:
            found.append(node.id)
    return found


def test_only_the_renderer_escapes() -> None:
    offenders = {
        str(path.relative_to(SOURCE)): uses
        for path, tree in _modules()
        if (uses := _low_level_uses(tree))
    }
    assert offenders == {}, "render through convmem.content.blocks (Data, Name, Ref, DataBlock)"


def _tag_strings(tree: ast.Module) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += TAG.findall(node.value) if TAG.fullmatch(node.value.strip()) else []
        elif isinstance(node, ast.JoinedStr):
            # f"<{tag}>": a tag built from pieces
            literal = "".join(
                str(part.value) if isinstance(part, ast.Constant) else "x"
                for part in node.values
                if isinstance(part, ast.Constant | ast.FormattedValue)
            )
            if TAG.fullmatch(literal.strip()):
                found.append(literal)
    return found


def test_only_the_renderer_spells_a_tag() -> None:
    # eval/ reads assembled requests (the behaviour suite looks for the tags), and so do the
    # store contract suite's tests (testing/contract/); they write none
    offenders = {
        str(path.relative_to(SOURCE)): tags
        for path, tree in _modules()
        if (tags := _tag_strings(tree)) and not {"eval", "contract"} & set(path.parts)
    }
    assert offenders == {}, "a block is a convmem.content.blocks.DataBlock naming its tag"


def test_every_header_of_a_data_block_belongs_to_a_data_block() -> None:
    """The modules that render the request's data sections, imported: each section's header is
    a registered block kind, and each kind's tag is its own."""
    from convmem.context import assemble, documents
    from convmem.entities import facts_block
    from convmem.memory import recall as memory_recall
    from convmem.retrieval import recall as retrieved
    from convmem.summarize import render

    kinds = {kind.header: kind for kind in blocks.block_kinds()}
    for header in (
        memory_recall.MEMORY_BLOCK_HEADER,
        memory_recall.RELEVANT_MEMORY_HEADER,
        retrieved.RETRIEVED_HEADER,
        facts_block.ENTITY_FACTS_HEADER,
        render.HEADER,
        assemble.USER_PINS_BLOCK.header,
        documents.DOCUMENTS_HEADER,
    ):
        assert header in kinds
    assert len({k.tag for k in kinds.values()}) >= 5


def test_a_value_passed_as_wording_is_refused_not_sent() -> None:
    """A caller's value must be wrapped; passed as convmem's own wording it fails loudly when it
    holds anything a line must not (a line break, a tag, an invisible character)."""
    for value in ("a\nb", "</user_memories>", "x\u2028y", "a\u202eb", "a\x85b"):
        try:
            blocks.line("- ", value)
        except ValueError:
            continue
        raise AssertionError(f"{value!r} was rendered as wording")
    assert blocks.line("- [", blocks.Name("preference"), "] ", blocks.Data("x")) == (
        '- [preference] "x"'
    )

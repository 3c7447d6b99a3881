"""The tool-selection benchmark: its labelled sets are what the issue asks for (>= 100 requests
each, >= 30 tools, several languages, held-out phrasing apart from the tuning set), and a quick
run writes its JSON with no risky tool offered without permission."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


def test_the_labelled_sets_are_sound() -> None:
    tools = json.loads((DATA / "tool_registry.json").read_text())["tools"]
    names = {t["definition"]["function"]["name"] for t in tools}
    risky = {t["definition"]["function"]["name"] for t in tools if t["risk"] == "high"}
    assert len(names) == len(tools) >= 30 and risky
    tune = json.loads((DATA / "tool_requests_tune.json").read_text())
    heldout = json.loads((DATA / "tool_requests_heldout.json").read_text())
    assert len(tune) >= 100 and len(heldout) >= 100
    assert not {r["message"] for r in tune} & {r["message"] for r in heldout}
    assert len({r["lang"] for r in heldout} - {"en"}) >= 5
    for request in [*tune, *heldout]:
        assert set(request["needs"]) <= names
        assert set(request["allow_risky"]) <= risky
        # a risky tool is needed only where the caller allows it
        assert set(request["needs"]) & risky <= set(request["allow_risky"])
        if request["kind"] == "follow_up":
            called = [c["name"] for t in request["turns"] for c in t.get("tool_calls", [])]
            assert called


def test_a_quick_run_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "tools.json"
    subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "tool_selection.py"), "--quick",
         "--json", str(out)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    report = json.loads(out.read_text())
    assert report["goals"] == {"needed_offered": 0.95, "tokens_saved": 0.6, "risky_unpermitted": 0}
    (result,) = report["results"]
    assert result["split"] == "tune" and result["requests"] == 40
    assert result["risky_unpermitted"] == 0
    assert 0 < result["needed_offered"] <= 1 and 0 < result["tokens_saved"] < 1

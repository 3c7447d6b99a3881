"""Tool selection: does a request get offered the tools it needs, and only those?

    PYTHONPATH=src python benchmarks/tool_selection.py [--quick] [--json OUT.json]
        [--embedder auto|none|minilm] [--split tune|heldout|both] [--hints all|english]

A registry of 34 tools written for this benchmark (``tests/data/tool_registry.json``: travel,
shopping, banking, mail, calendar, maps, support; four at risk ``high``). Each tool has English
"use when" hints and, as an application serving Spanish, French, German, Italian and Portuguese
users would register, one line of keywords per language ("es: vuelo, vuelos, billete de avión").

Two sets of requests, each labelled with the tools it needs:

* **tune** (``tests/data/tool_requests_tune.json``, 120): what the ranking's settings were chosen
  on (``convmem.domain.search.ToolRankOptions``: the vector cut 0.1 was picked here from
  0.1/0.15/0.2/ 0.25). 100 English, 20 in es/fr/de/pt/it/ja; 12 need two tools, 19 follow-ups, 6
  need none, 4 ask for a risky tool the caller does not allow.
* **heldout** (``tests/data/tool_requests_heldout.json``, 115): written afterwards with other
  phrasing and run with the settings frozen: 80 English, 7 each in es/fr/de/it/pt; 8 need two
  tools, 15 follow-ups (5 of them not in English), 5 need none, 4 risky denied, 3 risky allowed.

A request that needs a risky tool and is allowed it names it in ``allow_risky``, as the caller
would; a risky-denied request needs nothing (the tool must not be offered).

Each request is assembled (``offer_tools=True``, default options: at most 8 tools within 15 % of
the input budget) in a fresh conversation holding its earlier turns, and the report's offered
tools are compared with the labels. Figures:

* **needed offered**: share of the needed tools that were offered (goal >= 0.95);
* **tokens saved**: 1 - (tool tokens offered) / (tool tokens of offering the whole registry), over
  all requests, in the OpenAI format with o200k_base (goal >= 60 %);
* **risky unpermitted**: offers of a risky tool the request did not allow (goal 0);
* **tools offered** (mean per request), and the needed-offered share per kind and per language.

``--embedder auto`` ranks with MiniLM when the embeddings extra is installed (lexical + vector,
as search does), else lexically only; both runs are printed when MiniLM is there.
``--hints english`` registers the tools without the per-language keyword lines (what the
multilingual hints are worth: MiniLM is an English model). ``--quick`` runs every third request
of the tune set, lexically (for the test suite).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import convmem
from convmem.content.tokens import get_counter
from convmem.model.tools import RISKY
from convmem.retrieval.vector import Embedder
from convmem.tools.cost import tools_tokens
from convmem.tools.schema import parse_tool

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = ROOT / "tests" / "data" / "tool_registry.json"
SPLITS = {
    "tune": ROOT / "tests" / "data" / "tool_requests_tune.json",
    "heldout": ROOT / "tests" / "data" / "tool_requests_heldout.json",
}
_LANGUAGE_LINE = re.compile(r"^[a-z]{2}: ")
PROFILE = convmem.ModelProfile(context_window=32_768, max_output=1024, name="gpt-4o")
GOALS = {"needed_offered": 0.95, "tokens_saved": 0.60, "risky_unpermitted": 0}


def load_registry(hints: str = "all") -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads(REGISTRY.read_text())["tools"]
    if hints == "english":
        for tool in tools:
            tool["use_when"] = [h for h in tool["use_when"] if not _LANGUAGE_LINE.match(h)]
    return tools


def load_requests(split: str) -> list[dict[str, Any]]:
    requests: list[dict[str, Any]] = json.loads(SPLITS[split].read_text())
    return requests


def _replay(conv: convmem.Conversation, turns: list[dict[str, Any]], index: int) -> None:
    last_call: str | None = None
    for step, turn in enumerate(turns):
        if turn["role"] == "assistant" and turn.get("tool_calls"):
            calls = [
                convmem.ToolCall(f"call_{index}_{step}_{i}", c["name"], c["arguments"])
                for i, c in enumerate(turn["tool_calls"])
            ]
            conv.append("assistant", turn["content"], tool_calls=calls)
            last_call = calls[0].id
        elif turn["role"] == "tool":
            conv.append("tool", turn["content"], tool_call_id=last_call)
        else:
            conv.append(turn["role"], turn["content"])


def run(
    split: str,
    requests: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    embedder: Embedder | None,
) -> dict[str, Any]:
    counter = get_counter(PROFILE.tokenizer)
    specs = {t["definition"]["function"]["name"]: parse_tool(t["definition"]) for t in tools}
    risky = {name for name, t in zip(specs, tools, strict=True) if t["risk"] == RISKY}
    everything = tools_tokens(counter, "openai", list(specs.values()), PROFILE.name)
    needed = offered_needed = offered_total = risky_unpermitted = 0
    spent = 0
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_lang: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory() as folder,
        convmem.open(Path(folder) / "tools.db", embedder=embedder) as memory,
    ):
        for tool in tools:
            memory.tools.register(
                "bench", tool["definition"], use_when=tool["use_when"], risk=tool["risk"]
            )
        user = memory.scope("bench", "user")
        for index, request in enumerate(requests):
            conv = user.create_conversation()
            _replay(conv, request["turns"], index)
            ctx = conv.assemble(
                request["message"], model=PROFILE, offer_tools=True,
                allow_risky=request["allow_risky"],
            )  # fmt: skip
            offered = set(ctx.report.tools_offered)
            wanted = set(request["needs"])
            hit = len(wanted & offered)
            needed += len(wanted)
            offered_needed += hit
            offered_total += len(offered)
            spent += ctx.report.sections["tools"]
            risky_unpermitted += len((offered & risky) - set(request["allow_risky"]))
            for bucket in (by_kind[request["kind"]], by_lang[request["lang"]]):
                bucket[0] += len(wanted)
                bucket[1] += hit
            if wanted - offered:
                misses.append({"index": index, "missed": sorted(wanted - offered),
                               "offered": sorted(offered)})  # fmt: skip
    return {
        "split": split,
        "embedder": embedder.name if embedder else None,
        "requests": len(requests),
        "registry_tools": len(tools),
        "needed_offered": offered_needed / needed if needed else 1.0,
        "tokens_saved": 1 - spent / (everything * len(requests)),
        "risky_unpermitted": risky_unpermitted,
        "mean_tools_offered": offered_total / len(requests),
        "tool_tokens_all": everything,
        "by_kind": {k: v[1] / v[0] if v[0] else None for k, v in sorted(by_kind.items())},
        "by_language": {k: v[1] / v[0] if v[0] else None for k, v in sorted(by_lang.items())},
        "misses": misses,
    }


def _embedders(choice: str) -> list[Embedder | None]:
    if choice == "none":
        return [None]
    try:
        minilm = convmem.SentenceTransformerEmbedder()
        minilm.embed(["warm up"])
    except convmem.BackendUnavailable:
        if choice == "minilm":
            raise
        return [None]
    return [None, minilm] if choice == "auto" else [minilm]


def table(results: list[dict[str, Any]]) -> str:
    rows = [
        f"{'split':<8} {'ranking':<24} {'needed offered':>14} {'tokens saved':>12} "
        f"{'risky unpermitted':>17} {'mean offered':>12}"
    ]
    for r in results:
        name = f"lexical + {r['embedder']}" if r["embedder"] else "lexical only"
        rows.append(
            f"{r['split']:<8} {name[:24]:<24} {r['needed_offered']:>14.3f} "
            f"{r['tokens_saved']:>11.1%} {r['risky_unpermitted']:>17} "
            f"{r['mean_tools_offered']:>12.2f}"
        )
    rows.append(f"goals: needed offered >= {GOALS['needed_offered']}, tokens saved >= "
                f"{GOALS['tokens_saved']:.0%}, risky unpermitted = 0")  # fmt: skip
    for r in results:
        name = r["embedder"] or "lexical only"
        kinds = ", ".join(f"{k} {v:.2f}" for k, v in r["by_kind"].items() if v is not None)
        langs = ", ".join(f"{k} {v:.2f}" for k, v in r["by_language"].items() if v is not None)
        rows.append(f"{r['split']} / {name}: by kind: {kinds}; by language: {langs}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="every third tune request, lexical")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--embedder", choices=["auto", "none", "minilm"], default="auto")
    parser.add_argument("--split", choices=["tune", "heldout", "both"], default="both")
    parser.add_argument("--hints", choices=["all", "english"], default="all")
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args(argv)
    tools = load_registry(args.hints)
    splits = ["tune", "heldout"] if args.split == "both" else [args.split]
    sets = {split: load_requests(split) for split in splits}
    choice = args.embedder
    if args.quick:
        sets, choice = {"tune": load_requests("tune")[::3]}, "none"
    embedders = _embedders(choice)
    results = [
        run(split, requests, tools, embedder)
        for split, requests in sets.items()
        for embedder in embedders
    ]
    print(table(results))
    if args.show_misses:
        for r in results:
            for miss in r["misses"]:
                request = sets[r["split"]][miss["index"]]
                print(r["split"], r["embedder"], request["message"], miss)
    if args.json:
        args.json.write_text(json.dumps({"goals": GOALS, "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

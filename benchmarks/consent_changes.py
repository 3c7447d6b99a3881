"""Consent benchmark, part (c): forgetting, replacing and disagreeing, as users say them.

Each case of a JSONL file (``tests/data/consent_changes.jsonl``) is played through the public
API on a real SQLite file, in a principal of its own: its ``seed`` memories are saved with
``remember``, then ``say`` is appended as a user message, and what memory holds afterwards is
compared with what the case expects:

* ``forget`` — exactly the seeds listed in ``gone`` are deleted (the others stay), and the
  message is answered with a notice naming what was forgotten;
* ``lookalike`` — a sentence that looks like a request and is none: nothing is deleted,
  superseded or saved;
* ``replace`` — a statement that says it is newer ("I moved to", "now"): the seed is superseded
  and a current memory holds the new value (``new``);
* ``conflict`` — a statement that merely differs: the seed stays current, and the notice is a
  proposal naming both texts (its own and the seed's).

Every text saved or proposed is checked for a verb-final fragment (a German or Dutch clause cut
from after "dass"/"dat": "ich in Köln wohne."), with this benchmark's own word list.

Reported per language: forget recall and precision (deletions asked for / all deletions,
look-alikes included), replacement recall, conflicts shown, look-alikes that changed memory,
fragments saved, and the forget requests that were asked about (a slot holding a value the
request names differently, such as a city named in another language) instead of carried out.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import convmem

# Finite verbs a German or Dutch subordinate clause ends with; a memory ending with one is a
# fragment ("ich in Köln wohne."). The benchmark's own list, apart from the code it measures.
_CLAUSE_FINAL = frozenset(
    re.findall(
        r"\w+",
        "wohne wohnt lebe bin ist sind habe hat arbeite trinke esse heiße heißt mag spiele fahre "
        "woon woont ben is zijn heb heeft werk drink eet heet speel rijd",
    )
)


def _bare(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in folded if not unicodedata.combining(c))


def is_fragment(text: str) -> bool:
    words = re.findall(r"[^\W\d_]+", text)
    return bool(words) and words[-1].lower() in _CLAUSE_FINAL


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _play(user: convmem.Scope, case: dict[str, Any]) -> dict[str, Any]:
    seeds = []
    for text in case["seed"]:
        notice = user.remember(text)
        assert notice.memory is not None, f"seed not saved ({notice.reason})"
        seeds.append(notice.memory.id)
    message = user.create_conversation().append("user", case["say"])
    every = {m.id: m for m in user.memories.list(status=None, include_expired=True)}
    deleted = [i for i, mid in enumerate(seeds) if mid not in every]
    superseded = [i for i, mid in enumerate(seeds) if mid in every and every[mid].status ==
                  "superseded"]  # fmt: skip
    new = [m for m in every.values() if m.id not in seeds]
    kind = case["kind"]
    notices = message.notices
    ok: bool
    if kind == "forget":
        named = {r.id for n in notices if n.status == "forgotten"
                 for r in getattr(n, "records", ())}  # fmt: skip
        ok = deleted == case["gone"] and named >= {seeds[i] for i in case["gone"]} and not new
    elif kind == "lookalike":
        ok = not deleted and not superseded and not [m for m in new if m.status == "confirmed"]
    elif kind == "replace":
        value = _bare(case["new"])
        ok = superseded == [0] and any(
            m.status == "confirmed" and value in _bare(m.text) for m in new
        )
    elif kind == "move":  # a plain statement that moves a kept slot: suggested, nothing changed
        value = _bare(case["new"])
        ok = (
            not deleted
            and not superseded
            and any(m.status == "proposed" and value in _bare(m.text) for m in new)
            and not [m for m in new if m.status == "confirmed"]
        )
    else:  # conflict
        value = _bare(case["new"])
        ok = not deleted and not superseded and any(
            n.status == "proposed" and n.reason == "conflict" and value in _bare(n.text)
            and case["seed"][0] in [r.text for r in getattr(n, "records", ())]
            for n in notices
        )  # fmt: skip
    return {
        "ok": ok,
        "asked": kind == "forget" and not ok and any(n.status == "ambiguous" for n in notices),
        "deleted": len(deleted),
        "wanted_deleted": len([i for i in deleted if i in case.get("gone", [])]),
        "fragments": [m.text for m in new if is_fragment(m.text)],
        "got": [(m.text, m.status) for m in new] + [(f"seed {i} deleted", "") for i in deleted]
        + [(f"seed {i} superseded", "") for i in superseded],
    }  # fmt: skip


def evaluate(path: Path, db_dir: Path) -> tuple[dict[str, Any], list[str]]:
    cases = load(path)
    memory = convmem.open(str(db_dir / "consent_changes.db"))
    per: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    try:
        for number, case in enumerate(cases, 1):
            user = memory.scope(tenant="changes", user=f"case-{number}")
            outcome = _play(user, case)
            stats = per.setdefault(case["lang"], {
                "forget": [0, 0], "lookalike": [0, 0], "replace": [0, 0], "conflict": [0, 0],
                "move": [0, 0],
                "deleted": 0, "wanted_deleted": 0, "fragments": 0, "asked": 0,
            })  # fmt: skip
            stats["asked"] += outcome["asked"]
            stats[case["kind"]][0] += outcome["ok"]
            stats[case["kind"]][1] += 1
            stats["deleted"] += outcome["deleted"]
            stats["wanted_deleted"] += outcome["wanted_deleted"]
            stats["fragments"] += len(outcome["fragments"])
            if not outcome["ok"] or outcome["fragments"]:
                errors.append(f"case {number} [{case['kind']}/{case['lang']}] {case['say']!r} "
                              f"-> {outcome['got']}")  # fmt: skip
    finally:
        memory.close()
    total = {key: [sum(s[key][0] for s in per.values()), sum(s[key][1] for s in per.values())]
             for key in ("forget", "lookalike", "replace", "move", "conflict")}  # fmt: skip
    result: dict[str, Any] = {"cases": len(cases), "languages": {}}
    sums = ("deleted", "wanted_deleted", "fragments", "asked")
    every: dict[str, Any] = {**total, **{k: sum(p[k] for p in per.values()) for k in sums}}
    for lang, s in [*sorted(per.items()), ("all", every)]:
        result["languages"][lang] = {
            "forget_recall": _share(*s["forget"]),
            "forget_precision": s["wanted_deleted"] / s["deleted"] if s["deleted"] else 1.0,
            "replacement_recall": _share(*s["replace"]),
            "conflicts_shown": _share(*s["conflict"]),
            "moves_suggested": _share(*s["move"]),
            "lookalikes_unchanged": _share(*s["lookalike"]),
            "fragments_saved": s["fragments"],
            "forgets_asked_instead": s["asked"],
            "counts": {k: s[k] for k in ("forget", "replace", "move", "conflict", "lookalike")},
        }
    return result, errors


def _share(right: int, total: int) -> float:
    return right / total if total else 1.0


def render(result: dict[str, Any]) -> list[str]:
    lines = [
        f"(c) forget / replace / move / conflict: {result['cases']} cases played on SQLite",
        "",
        f"{'lang':<6}{'forget rec':>11}{'forget prec':>12}{'replace rec':>12}"
        f"{'moves sugg':>11}{'conflicts':>11}{'look-alikes ok':>16}{'fragments':>11}{'asked':>7}",
    ]
    for lang, s in result["languages"].items():
        c = s["counts"]
        lines.append(
            f"{lang:<6}{s['forget_recall']:>11.3f}{s['forget_precision']:>12.3f}"
            f"{s['replacement_recall']:>12.3f}{s['moves_suggested']:>11.3f}"
            f"{s['conflicts_shown']:>11.3f}"
            f"{s['lookalikes_unchanged']:>16.3f}{s['fragments_saved']:>11}"
            f"{s['forgets_asked_instead']:>7}"
            f"   (n: {c['forget'][1]}/{c['replace'][1]}/{c['move'][1]}/{c['conflict'][1]}"
            f"/{c['lookalike'][1]})"
        )
    return lines

"""The whole suite: every case through one driver, then the result as a table, JSON and a plot.

The result is a plain dict (what ``--json`` writes): per kind ``cases``, ``passed``, ``failed``
and ``failures`` (case id, name and what went wrong: labels, record ids and serving paths, never
stored text), plus the summary-faithfulness tally of the compaction cases (on the notes the
summarizer produced, before its own checks).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from convmem.eval.behaviour.cases import KINDS, VERSION, Case
from convmem.eval.behaviour.drivers import Driver
from convmem.eval.behaviour.reading import NoteTally
from convmem.eval.behaviour.runner import CaseResult, run_case


def run_suite(
    driver: Driver,
    cases: Sequence[Case],
    *,
    summarizer: str = "extractive",
    progress: Callable[[CaseResult], None] | None = None,
    clean: bool = True,
    fatal: tuple[type[BaseException], ...] = (),
) -> dict[str, Any]:
    """Play every case in tenants of this run's own (``bh<random>…``). A case that crashes is
    that case's failure and the run goes on; ``fatal`` errors (the surface unreachable) end it.
    The summaries' faithfulness is measured on what the summarizer produced, before its own
    checks dropped any note, when the driver can record it (``recording_summaries``)."""
    run_prefix = f"bh{secrets.token_hex(3)}"
    results: list[CaseResult] = []
    tally = NoteTally()
    recording = getattr(driver, "recording_summaries", None)
    with recording() if recording is not None else nullcontext() as recorder:
        for number, case in enumerate(cases):
            if recorder is not None:
                recorder.take()  # what earlier cases' requests built is theirs
            result, notes = run_case(
                driver, case, f"{run_prefix}-{number}", clean=clean, fatal=fatal,
                produced=None if recorder is None else recorder.take,
            )  # fmt: skip
            results.append(result)
            tally.add(notes)
            if progress is not None:
                progress(result)
    kinds: dict[str, Any] = {}
    for kind in [*KINDS, *sorted({c.kind for c in cases} - set(KINDS))]:
        mine = [r for r in results if r.kind == kind]
        kinds[kind] = {
            "cases": len(mine),
            "passed": sum(r.passed for r in mine),
            "failed": sum(not r.passed for r in mine),
            "failures": [
                {"case": r.id, "name": r.name, "problems": r.problems} for r in mine if not r.passed
            ],
        }
    return {
        "suite_version": VERSION,
        "surface": driver.name,
        "cases": len(results),
        "passed": sum(r.passed for r in results),
        "failed": sum(not r.passed for r in results),
        "kinds": kinds,
        "faithfulness": faithfulness(tally, summarizer),
    }


def faithfulness(tally: NoteTally, summarizer: str) -> dict[str, Any]:
    def share(count: int, of: int) -> float | None:
        return round(count / of, 4) if of else None

    return {
        "summarizer": ", ".join(sorted(tally.summarizers - {""})) or summarizer,
        "summaries": tally.summaries,
        "fallback_summaries": tally.fallbacks,
        "notes": tally.notes,
        "notes_with_numbers_or_identifiers": tally.with_literals,
        "literals_verbatim_share": share(tally.literals_verbatim, tally.notes),
        "supported_by_sources_share": share(tally.supported, tally.notes),
        # "produced": the notes as the summarizer wrote them, before its checks dropped any;
        # "stored": the notes kept (a service in another process built the summaries)
        "measured_on": (
            "produced"
            if tally.measured_on_produced == tally.summaries > 0
            else "stored"
            if not tally.measured_on_produced
            else "produced and stored"
        ),
    }


def table(result: dict[str, Any]) -> list[str]:
    """One row per kind, then each failure: case id, name and what leaked or went missing."""
    lines = [f"{'kind':<12} {'cases':>5} {'passed':>6} {'failed':>6}"]
    for kind, row in result["kinds"].items():
        lines.append(f"{kind:<12} {row['cases']:>5} {row['passed']:>6} {row['failed']:>6}")
    lines.append(f"{'all':<12} {result['cases']:>5} {result['passed']:>6} {result['failed']:>6}")
    f = result["faithfulness"]
    lines.append(
        f"summary notes ({f['summarizer']}): {f['notes']} {f['measured_on']} in "
        f"{f['summaries']} summaries "
        f"({f['fallback_summaries']} fell back to extractive), numbers and identifiers verbatim "
        f"{f['literals_verbatim_share']}, supported by their sources "
        f"{f['supported_by_sources_share']}"
    )
    for kind, row in result["kinds"].items():
        for failure in row["failures"]:
            lines.append(f"FAILED {kind} {failure['case']} ({failure['name']})")
            lines.extend(f"    {problem}" for problem in failure["problems"])
    return lines


def plot(result: dict[str, Any], out: str | Path) -> None:
    """The pass rate per kind, as a bar chart."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = [k for k, row in result["kinds"].items() if row["cases"]]
    rates = [result["kinds"][k]["passed"] / result["kinds"][k]["cases"] for k in kinds]
    fig, axis = plt.subplots(figsize=(8, 3.6))
    bars = axis.bar(kinds, rates, color=["C2" if r == 1 else "C3" for r in rates])
    for bar, kind in zip(bars, kinds, strict=True):
        row = result["kinds"][kind]
        axis.annotate(f"{row['passed']}/{row['cases']}", (bar.get_x() + bar.get_width() / 2, 1.01),
                      ha="center", fontsize=8)  # fmt: skip
    axis.set_ylim(0, 1.12)
    axis.set_ylabel("pass rate")
    axis.set_title(f"convmem behaviour suite v{result['suite_version']} ({result['surface']})")
    axis.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)

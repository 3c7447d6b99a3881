"""The shipped Prometheus rules and Grafana dashboard load, and every metric they name is one
convmem exports (``promtool check rules`` too, where it is installed)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

import convmem
from convmem.ops.metrics import ProcessMetrics

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
RULES = DEPLOY / "prometheus" / "convmem-rules.yml"
DASHBOARD = DEPLOY / "grafana" / "convmem-dashboard.json"
METRIC = re.compile(r"\bconvmem_[a-z_]+\b")


def populated(memory: convmem.Memory) -> ProcessMetrics:
    """A service's or worker's registry with every series present (queue gauges included)."""
    metrics = ProcessMetrics()
    metrics.watch_queue(memory.store)
    metrics.job_ran("summary/x", "failed", "Boom")  # label-bearing series with no default child
    metrics.not_found_for("memory")
    metrics.retention_swept(0, {"transcripts": 1})
    metrics.http_requests.labels("GET", "/healthz", "200").inc()
    metrics.http_duration.labels("GET", "/healthz").observe(0.01)
    return metrics


def exported(memory: convmem.Memory) -> set[str]:
    """Every sample name a service's or worker's registry exposes."""
    families = populated(memory).registry.collect()
    return {sample.name for family in families for sample in family.samples}


def unknown(expr: str, names: set[str]) -> set[str]:
    return set(METRIC.findall(expr)) - names


def test_every_rule_loads_and_names_exported_metrics(memory: convmem.Memory) -> None:
    names = exported(memory)
    assert unknown("rate(convmem_no_such_metric_total[5m])", names)  # the check can fail
    loaded: dict[str, Any] = yaml.safe_load(RULES.read_text("utf-8"))
    rules = [rule for group in loaded["groups"] for rule in group["rules"]]
    alerts = {rule["alert"] for rule in rules}
    assert {
        "ConvmemJobsStalled", "ConvmemDeletionSweepStalled", "ConvmemNeverStoreBlocksSpiking",
        "ConvmemSummaryFallbackRateUp", "ConvmemExpiredMemorySelected",
        "ConvmemIrrelevantRecallRateUp",
    } <= alerts  # fmt: skip
    for rule in rules:
        assert METRIC.search(rule["expr"]), rule["alert"]
        assert not unknown(rule["expr"], names), (rule["alert"], unknown(rule["expr"], names))
        assert rule["labels"]["severity"] in ("warning", "critical")
        assert rule["annotations"]["summary"]


def test_promtool_accepts_the_rules_where_installed() -> None:
    promtool = shutil.which("promtool")
    if promtool is None:  # the parse above stands in; CI images without Prometheus skip this
        pytest.skip("promtool is not installed")
    checked = subprocess.run(
        [promtool, "check", "rules", str(RULES)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_dashboard_loads_and_names_exported_metrics(memory: convmem.Memory) -> None:
    names = exported(memory)
    dashboard = json.loads(DASHBOARD.read_text("utf-8"))
    panels = dashboard["panels"]
    assert len({panel["id"] for panel in panels}) == len(panels)
    shown: set[str] = set()
    for panel in panels:
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert not unknown(target["expr"], names), (panel["title"], target["expr"])
            shown |= set(METRIC.findall(target["expr"]))
    # each family a operator watches is on the dashboard
    for family in ("convmem_request_tokens", "convmem_request_section_tokens",
                   "convmem_memory_blocks_total", "convmem_jobs",
                   "convmem_jobs_oldest_pending_age_seconds",
                   "convmem_retention_last_sweep_timestamp_seconds",
                   "convmem_request_candidate_memories", "convmem_request_irrelevant_memories",
                   "convmem_recall_expired_selected_total", "convmem_request_summary_age_seconds",
                   "convmem_request_summaries_total", "convmem_request_degraded_parts_total",
                   "convmem_request_cached_tokens", "convmem_request_cached_share"):  # fmt: skip
        assert any(name.startswith(family) for name in shown), family


def test_the_manual_documents_every_metric_and_label(memory: convmem.Memory) -> None:
    """The manual's metrics table names each family the registry exposes, with its type and
    every label, and nothing the registry does not expose."""
    readme = (DEPLOY.parent / "docs" / "operations" / "metrics.md").read_text("utf-8")
    rows = re.findall(r"^\| `(convmem_[a-z_]+)` \| (\w+) \|([^|]*)\|", readme, re.MULTILINE)
    documented = {name: (kind, labels) for name, kind, labels in rows}
    assert len(documented) == len(rows)  # no metric documented twice
    families = {}
    for family in populated(memory).registry.collect():
        name = f"{family.name}_total" if family.type == "counter" else family.name
        labels = {key for sample in family.samples for key in sample.labels} - {"le"}
        families[name] = (family.type, labels)
    assert set(documented) == set(families)
    for name, (kind, labels) in families.items():
        assert documented[name][0] == kind, name
        for label in labels:
            assert re.search(rf"\b{label}\b", documented[name][1]), (name, label)
        if not labels:
            assert not documented[name][1].strip(), name

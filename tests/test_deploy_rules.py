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
from convmem.metrics import ProcessMetrics

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
RULES = DEPLOY / "prometheus" / "convmem-rules.yml"
DASHBOARD = DEPLOY / "grafana" / "convmem-dashboard.json"
METRIC = re.compile(r"\bconvmem_[a-z_]+\b")


def exported(memory: convmem.Memory) -> set[str]:
    """Every sample name a service's or worker's registry exposes (queue gauges included)."""
    metrics = ProcessMetrics()
    metrics.watch_queue(memory.store)
    metrics.job_ran("summary/x", "failed", "Boom")  # label-bearing series with no default child
    metrics.not_found_for("memory")
    metrics.http_requests.labels("GET", "/healthz", "200").inc()
    metrics.http_duration.labels("GET", "/healthz").observe(0.01)
    return {sample.name for family in metrics.registry.collect() for sample in family.samples}


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
        "ConvmemSummaryFallbackRateUp",
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
                   "convmem_retention_last_sweep_timestamp_seconds"):  # fmt: skip
        assert any(name.startswith(family) for name in shown), family

"""brupop_hosts_version and brupop_hosts_state as exposed: versions pruned to what nodes report
now (an agent claiming version after version leaves one series), states kept at 0."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from brupop.entrypoints.controller.metrics import PrometheusRolloutMetrics


def _series(metrics: PrometheusRolloutMetrics, name: str, label: str) -> dict[str, float]:
    text = metrics.exposition().decode()
    return {
        sample.labels[label]: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name
    }


def test_three_thousand_claimed_versions_leave_only_the_versions_nodes_report_now() -> None:
    metrics = PrometheusRolloutMetrics()
    for n in range(3000):
        metrics.set_hosts({"Idle": 2}, {"1.19.0": 1, f"9.9.{n}": 1})
    versions = _series(metrics, "brupop_hosts_version", "bottlerocket_version")
    assert versions == {"1.19.0": 1.0, "9.9.2999": 1.0}
    assert len(metrics.exposition()) < 20_000


def test_a_version_no_node_reports_any_more_loses_its_series() -> None:
    metrics = PrometheusRolloutMetrics()
    metrics.set_hosts({"Idle": 2}, {"1.19.0": 1, "1.20.0": 1})
    metrics.set_hosts({"Idle": 2}, {"1.19.0": 0, "1.20.0": 2})
    assert _series(metrics, "brupop_hosts_version", "bottlerocket_version") == {"1.20.0": 2.0}


def test_a_state_seen_before_reports_zero_rather_than_vanishing() -> None:
    metrics = PrometheusRolloutMetrics()
    metrics.set_hosts({"Idle": 1, "MonitoringUpdate": 1}, {"1.20.0": 2})
    metrics.set_hosts({"Idle": 2}, {"1.20.0": 2})
    assert _series(metrics, "brupop_hosts_state", "state") == {"Idle": 2.0, "MonitoringUpdate": 0.0}

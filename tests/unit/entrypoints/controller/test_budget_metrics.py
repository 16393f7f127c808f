"""brupop_budget_in_use{budget,group}: nodes outside Idle per budget group, as exposed."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from brupop.entrypoints.controller.metrics import PrometheusRolloutMetrics

ZONE = "topology.kubernetes.io/zone"


def _budget_samples(metrics: PrometheusRolloutMetrics) -> dict[tuple[str, str], float]:
    text = metrics.exposition().decode()
    return {
        (sample.labels["budget"], sample.labels["group"]): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "brupop_budget_in_use"
    }


def test_budget_in_use_has_a_series_per_budget_group() -> None:
    metrics = PrometheusRolloutMetrics()
    metrics.set_budgets_in_use({(ZONE, "us-east-1a"): 1, (ZONE, "us-east-1b"): 0})
    assert _budget_samples(metrics) == {(ZONE, "us-east-1a"): 1.0, (ZONE, "us-east-1b"): 0.0}


def test_a_group_that_is_gone_loses_its_series() -> None:
    metrics = PrometheusRolloutMetrics()
    metrics.set_budgets_in_use({(ZONE, "us-east-1a"): 1, (ZONE, "us-east-1b"): 2})
    metrics.set_budgets_in_use({(ZONE, "us-east-1a"): 0})
    assert _budget_samples(metrics) == {(ZONE, "us-east-1a"): 0.0}

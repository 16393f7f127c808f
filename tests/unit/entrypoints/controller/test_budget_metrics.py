"""brupop_budget_in_use{budget,group}: nodes outside Idle per budget group, as exposed, capped
like the policy's status; brupop_budget_groups_left_out counts the rest."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from brupop.domain.policy.update_policy_status import BUDGET_GROUPS_MAX
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


def test_ten_budgets_over_two_thousand_nodes_show_the_status_groups_and_count_the_rest() -> None:
    metrics = PrometheusRolloutMetrics()
    in_use = {(f"node-label-{b}", f"node-{n:04d}"): 1 for b in range(10) for n in range(2000)}
    metrics.set_budgets_in_use(in_use)
    shown = _budget_samples(metrics)
    assert len(shown) == BUDGET_GROUPS_MAX
    assert list(shown) == list(in_use)[:BUDGET_GROUPS_MAX], "the same groups as the status"
    left_out = metrics.registry.get_sample_value("brupop_budget_groups_left_out")
    assert left_out == 20_000 - BUDGET_GROUPS_MAX


def test_budget_groups_left_out_falls_back_to_zero_when_the_groups_fit_again() -> None:
    metrics = PrometheusRolloutMetrics()
    metrics.set_budgets_in_use({(ZONE, f"z{n}"): 0 for n in range(BUDGET_GROUPS_MAX + 7)})
    metrics.set_budgets_in_use({(ZONE, "z0"): 1})
    assert _budget_samples(metrics) == {(ZONE, "z0"): 1.0}
    assert metrics.registry.get_sample_value("brupop_budget_groups_left_out") == 0

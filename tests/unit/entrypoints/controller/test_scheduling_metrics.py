"""brupop_expected_update_seconds and brupop_max_concurrent_update as exposed: the update time
finishBy expects (900 before any history) and the global limit the controller applies."""

from __future__ import annotations

import math

from prometheus_client.parser import text_string_to_metric_families

from brupop.entrypoints.controller.metrics import PrometheusRolloutMetrics


def _sample(metrics: PrometheusRolloutMetrics, name: str) -> float:
    text = metrics.exposition().decode()
    [value] = [
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name
    ]
    return value


def test_the_expected_update_time_reads_fifteen_minutes_before_any_history() -> None:
    assert _sample(PrometheusRolloutMetrics(), "brupop_expected_update_seconds") == 900.0


def test_the_expected_update_time_is_what_the_controller_set_last() -> None:
    metrics = PrometheusRolloutMetrics()
    metrics.set_expected_update(1320)
    assert _sample(metrics, "brupop_expected_update_seconds") == 1320.0


def test_the_expected_update_time_says_what_it_is_in_its_help() -> None:
    text = PrometheusRolloutMetrics().exposition().decode()
    [help_line] = [
        line for line in text.splitlines() if line.startswith("# HELP brupop_expected_update")
    ]
    assert "90th percentile of the last 20 update durations" in help_line
    assert "900 before" in help_line


def test_the_limit_gauge_follows_the_limit_set_and_reads_inf_when_unlimited() -> None:
    metrics = PrometheusRolloutMetrics()
    metrics.set_concurrency_limit(2)
    assert _sample(metrics, "brupop_max_concurrent_update") == 2.0
    metrics.set_concurrency_limit(None)
    assert math.isinf(_sample(metrics, "brupop_max_concurrent_update"))

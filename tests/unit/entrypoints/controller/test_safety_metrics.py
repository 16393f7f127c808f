"""The safety metrics in the controller's registry: names, labels and values as exposed."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from brupop.domain.safety.health_gate import GateCheck
from brupop.entrypoints.controller.metrics import PrometheusRolloutMetrics


def _samples(
    metrics: PrometheusRolloutMetrics,
) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = metrics.exposition().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_fleet_paused_and_halted_gauges_follow_the_last_setting() -> None:
    metrics = PrometheusRolloutMetrics()
    metrics.set_fleet(paused=True, halted=False)
    first = _samples(metrics)
    metrics.set_fleet(paused=False, halted=True)
    second = _samples(metrics)

    assert (first["brupop_fleet_paused", ()], first["brupop_fleet_halted", ()]) == (1.0, 0.0)
    assert (second["brupop_fleet_paused", ()], second["brupop_fleet_halted", ()]) == (0.0, 1.0)


def test_health_gate_seconds_is_a_histogram_of_time_in_the_gate() -> None:
    metrics = PrometheusRolloutMetrics()
    metrics.observe_health_gate(42.0)
    metrics.observe_health_gate(700.0)

    samples = _samples(metrics)

    assert samples["brupop_health_gate_seconds_count", ()] == 2.0
    assert samples["brupop_health_gate_seconds_sum", ()] == 742.0
    assert samples["brupop_health_gate_seconds_bucket", (("le", "60.0"),)] == 1.0
    assert samples["brupop_health_gate_seconds_bucket", (("le", "900.0"),)] == 2.0


def test_health_gate_failures_are_counted_per_check() -> None:
    metrics = PrometheusRolloutMetrics()
    metrics.count_health_gate_failure("nodeReady")
    metrics.count_health_gate_failure("nodeReady")
    metrics.count_health_gate_failure("httpProbe")

    samples = _samples(metrics)

    assert samples["brupop_health_gate_failures_total", (("check", "nodeReady"),)] == 2.0
    assert samples["brupop_health_gate_failures_total", (("check", "httpProbe"),)] == 1.0


def test_every_health_gate_check_has_a_failure_series_from_the_start() -> None:
    metrics = PrometheusRolloutMetrics()

    text = metrics.exposition().decode()

    for check in GateCheck:
        assert f'brupop_health_gate_failures_total{{check="{check.value}"}} 0.0' in text

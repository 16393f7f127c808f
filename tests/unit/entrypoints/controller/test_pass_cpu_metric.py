"""The controller's pass CPU histogram as exposed: what the scale benchmark reads."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from brupop.entrypoints.controller.metrics import PrometheusRolloutMetrics


def test_pass_cpu_seconds_is_a_histogram_of_each_ticks_cpu_time() -> None:
    metrics = PrometheusRolloutMetrics()
    metrics.observe_pass_cpu(0.0015)
    metrics.observe_pass_cpu(0.004)
    text = metrics.exposition().decode()
    samples = {
        (sample.name, sample.labels.get("le")): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name.startswith("brupop_controller_pass_cpu_seconds")
    }
    assert samples["brupop_controller_pass_cpu_seconds_count", None] == 2
    assert abs(samples["brupop_controller_pass_cpu_seconds_sum", None] - 0.0055) < 1e-9
    assert samples["brupop_controller_pass_cpu_seconds_bucket", "0.002"] == 1
    assert samples["brupop_controller_pass_cpu_seconds_bucket", "0.005"] == 2

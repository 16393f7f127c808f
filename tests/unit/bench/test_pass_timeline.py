"""The rollout bench's pass timeline: the busiest window and the seconds spent in a burst,
read from samples fed in (no controller)."""

from __future__ import annotations

from typing import Any

from tests.unit.bench.test_real_cluster_readings import bench_module


def timeline_with(samples: list[list[float]], events: list[tuple[float, dict[str, float]]]) -> Any:
    module = bench_module("pass_timeline")
    timeline = module.PassTimeline(port=0, pid=0, watch_events=dict)
    timeline.samples = samples
    timeline.events = events
    return timeline


def test_the_busiest_window_is_where_the_passes_came_fastest() -> None:
    quiet = [[float(t), t / 2, t / 100] for t in range(0, 20, 2)]  # one pass every 2 s
    burst = [[float(t), 10 + (t - 20) * 17, 0.2 + (t - 20) * 0.03] for t in range(20, 42, 2)]
    events = [(0.0, {"nodes": 1.0}), (18.0, {"nodes": 5.0}), (42.0, {"nodes": 400.0})]
    summary = timeline_with(quiet + burst, events).summary(window=10.0)
    busiest = summary["busiest_window"]
    assert busiest["began_after_seconds"] == 20.0
    assert busiest["passes_per_second"] == 17.0
    assert busiest["controller_cpu_seconds"] == 0.3
    assert busiest["watch_events_by_resource"] == {"nodes": 395.0}
    assert summary["burst_seconds"] == 20.0  # the burst's ten 2-second steps


def test_a_quiet_run_spends_no_time_in_a_burst() -> None:
    samples = [[float(t), float(t // 2), 0.0] for t in range(0, 30, 2)]
    summary = timeline_with(samples, []).summary(window=10.0)
    assert summary["burst_seconds"] == 0.0
    assert summary["busiest_window"]["passes_per_second"] == 0.5
    assert summary["busiest_window"]["watch_events_by_resource"] == {}


def test_too_few_samples_give_just_the_samples() -> None:
    assert timeline_with([[0.0, 1.0, 0.0]], []).summary() == {"samples": [[0.0, 1.0, 0.0]]}

"""The controller stopped and started again mid-rollout: the limit holds, the rollout ends."""

from __future__ import annotations

import pytest

from tests.e2e.simulate_run import Simulate, explain


@pytest.mark.e2e
def test_a_controller_restart_mid_rollout_keeps_the_limit_and_finishes(simulate: Simulate) -> None:
    run = simulate(
        "--nodes", "6", "--max-concurrent", "2", "--restart-controller-after", "1",
        "--controller-down-seconds", "1.5", "--timeout", "90",
    )  # fmt: skip

    assert run.returncode == 0, explain(run)
    report = run.report
    assert report["ok"] is True
    assert report["controller_restarts"] == 1
    assert report["max_concurrent_observed"] <= 2
    assert all(node["final_version"] == "1.20.0" for node in report["nodes"])
    lines = run.stdout.splitlines()
    stopped = next(i for i, line in enumerate(lines) if "controller stopped" in line)
    started = next(i for i, line in enumerate(lines) if "controller started again" in line)
    updates_started = [i for i, line in enumerate(lines) if "-> staging" in line]
    updated = [i for i, line in enumerate(lines) if line.rstrip().endswith("(version 1.20.0)")]
    assert updates_started[0] < stopped < started, "the stop comes after the rollout began"
    assert started < updated[-1], "nodes still finished their update after the restart"

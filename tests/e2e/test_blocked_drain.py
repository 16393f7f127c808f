"""A PodDisruptionBudget that never allows eviction: that node backs off, the rest finish."""

from __future__ import annotations

import pytest

from tests.e2e.simulate_run import Simulate, explain

BLOCKED = "node-02"


@pytest.mark.e2e
def test_an_undrainable_node_is_uncordoned_and_backs_off_while_the_rest_update(
    simulate: Simulate,
) -> None:
    run = simulate(
        "--nodes", "4", "--max-concurrent", "2", "--block-drain", BLOCKED, "--drain-timeout", "2",
        "--timeout", "90",
    )  # fmt: skip

    assert run.returncode == 1, explain(run)
    report = run.report
    assert report["ok"] is False
    assert report["max_concurrent_observed"] <= 2
    assert report["tracebacks"] == 0
    blocked = run.node(BLOCKED)
    assert blocked["final_version"] == "1.19.0"
    assert blocked["final_state"] == "Idle"
    assert blocked["unschedulable"] is False, "the failed drain must give the node back"
    assert blocked["crash_count"] >= 1
    assert blocked["reason"].startswith("backing_off"), blocked
    assert "DrainFailedError" in blocked["last_failure"], blocked
    assert f"PodDisruptionBudget default/pinned-{BLOCKED}" in blocked["last_failure"]
    for node in report["nodes"]:
        assert all(code == 0 for code in node["agent_exit_codes"]), node
        if node["name"] != BLOCKED:
            assert node["final_version"] == "1.20.0", node
            assert node["unschedulable"] is False, node
    assert f"{BLOCKED} still on 1.19.0 (backing_off)" in run.last_line, run.last_line
    assert "node-01" not in run.last_line
    # The verdict names the REASON code; the node's own line above it says why, once.
    (line,) = [line for line in run.stdout.splitlines() if line.startswith(f"{BLOCKED}: ")]
    assert "DrainFailedError" in line and line.startswith(f"{BLOCKED}: backing_off: "), line

"""`brupop simulate --pause-at/--resume-at`: while the policy pauses the fleet no node starts,
the node in flight finishes its update, and the rollout completes after the resume.

Nothing here depends on how fast this machine is: the moments compared are those the run
recorded (each node's first departure from Idle as the observer saw it, and when the pause
and resume writes began and ended), and a start seen between the pause write's beginning and
its end counts as made before it (the write's own latency).

It also runs with every host but node-01 answering its first call 15 s late
(`HOST_SPEEDS`): the same holds when agents report late."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.simulate_run import HOST_SPEEDS, Simulate, explain, late_hosts

SPEC = """\
  haltAfterFailures: 5
"""


@pytest.mark.e2e
@HOST_SPEEDS
def test_no_node_starts_while_paused_and_the_rollout_completes_after_the_resume(
    simulate: Simulate, late: bool
) -> None:
    run = simulate(
        "--nodes", "4", "--max-concurrent", "1", "--pause-at", "0.5", "--resume-at", "6",
        "--timeout", "100", *late_hosts(4, late=late), policy=SPEC,
    )  # fmt: skip

    assert run.returncode == 0, explain(run)
    report = run.report
    pause, resume = report["pauses"]
    assert (pause["paused"], resume["paused"]) == (True, False)
    nodes: list[dict[str, Any]] = report["nodes"]
    before = [n for n in nodes if n["started_at"] <= pause["written_at"]]
    in_flight = [n for n in before if n["finished_at"] > pause["requested_at"]]
    waiting = [n for n in nodes if n not in before]
    assert in_flight, f"a node was updating when the pause came: {nodes}"
    assert waiting, f"nodes were left to start after the pause: {nodes}"
    for node in waiting:
        assert node["started_at"] > resume["requested_at"], f"{node['name']} started while paused"
    for node in nodes:
        assert node["final_version"] == "1.20.0", node
        assert node["finished_at"] is not None, node
    assert report["policy_phase"] == "Idle"
    assert report["max_concurrent_observed"] == 1
    assert "policy paused (scenario)" in run.stdout
    assert "policy resumed (scenario)" in run.stdout
    assert run.last_line.startswith("OK: 4/4 nodes updated"), explain(run)

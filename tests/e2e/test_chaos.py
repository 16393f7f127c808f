"""Agents killed at random moments (SIGKILL and SIGTERM): the fleet still converges."""

from __future__ import annotations

import pytest

from tests.e2e.simulate_run import Simulate, explain


@pytest.mark.e2e
def test_the_fleet_converges_while_agents_are_killed_at_random(simulate: Simulate) -> None:
    run = simulate(
        "--nodes", "6", "--max-concurrent", "2", "--chaos-kills", "24",
        "--chaos-seed", "20", "--timeout", "100",
        # Restarted agents redo their step: give the steps room, so that what is tested here
        # is convergence under kills, not the (separately tested) transition timeouts.
        "--timeout-staged", "60", "--timeout-rebooted", "60",
    )  # fmt: skip

    assert run.returncode == 0, explain(run)
    report = run.report
    assert report["ok"] is True
    assert report["chaos_kills_sent"] >= 20
    assert report["max_concurrent_observed"] <= 2
    assert report["tracebacks"] == 0
    exits = [exit_ for node in report["nodes"] for exit_ in node["agent_exits"]]
    causes = {exit_["cause"] for exit_ in exits}
    assert {"chaos-sigkill", "chaos-sigterm"} <= causes
    for exit_ in exits:
        if exit_["cause"] == "chaos-sigkill":
            assert exit_["code"] == -9, exit_
        elif exit_["sigterm_before_handler"]:
            assert exit_["code"] in (0, -15), exit_  # signalled while its interpreter started
        else:
            assert exit_["code"] == 0, exit_  # SIGTERM, reboot and shutdown end cleanly
    for node in report["nodes"]:
        assert node["final_version"] == "1.20.0", node
        assert node["final_state"] == "Idle", node
        assert node["unschedulable"] is False, node

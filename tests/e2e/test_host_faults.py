"""Misbehaving hosts: their nodes back off with the reason shown; the others update."""

from __future__ import annotations

import pytest

from tests.e2e.simulate_run import Simulate, explain

FAULTS = {"node-02": "refresh", "node-03": "prepare", "node-04": "lock", "node-05": "garbage"}


@pytest.mark.e2e
def test_faulty_hosts_back_off_with_their_reason_and_the_rest_update(simulate: Simulate) -> None:
    flags = [flag for node, fault in FAULTS.items() for flag in ("--fault", f"{node}={fault}")]
    run = simulate("--nodes", "6", "--max-concurrent", "3", *flags, "--timeout", "90")

    assert run.returncode == 1, explain(run)
    report = run.report
    assert report["tracebacks"] == 0
    for node in report["nodes"]:
        assert all(code == 0 for code in node["agent_exit_codes"]), node  # no agent crashed
        assert node["unschedulable"] is False, node
        if node["name"] not in FAULTS:
            assert node["final_version"] == "1.20.0", node
            continue
        assert node["final_version"] == "1.19.0", node
        assert node["final_state"] == "Idle", node
        assert node["reason"], node
        assert f"{node['name']}: {node['reason']}" in run.stdout  # the summary gives the reason
        # The failures name the node and its REASON code; its own line above gives the sentence.
        assert f"{node['name']} still on 1.19.0 (backing_off)" in report["failures"]
    # Each fault strikes during the update (the refresh fault at the refresh that starts
    # staging, after a first update check that succeeded): backoff after one crash.
    for name in FAULTS:
        node = run.node(name)
        assert node["reason"].startswith("backing_off"), node
        assert node["crash_count"] == 1, node
    for name in ("node-03", "node-04", "node-05"):
        assert run.node(name)["last_failure"].startswith("update.step_failed"), run.node(name)
    # The garbage fault is named for what happened: the host's odd answer, not a made-up order.
    assert "unexpected output" in run.node("node-05")["last_failure"], run.node("node-05")
    # The refresh fault's host also fails the agent's later update checks, which may log after
    # the failed step; the step itself failed at the refresh, before any prepare.
    events = run.agent_events("node-02")
    (failed,) = [event for event in events if event.get("event") == "update.step_failed"]
    assert failed["error"] == "HostCommandFailedError", failed
    assert failed["reason"].startswith("refresh"), failed
    steps = [event.get("step") for event in events if event.get("event") == "update.step"]
    assert steps == ["refresh"], steps
    assert "HostCommandFailedError: refresh" in run.node("node-02")["last_failure"]

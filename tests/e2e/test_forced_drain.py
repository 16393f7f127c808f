"""`brupop simulate --policy ... --block-drain NODE` with `drain.onTimeout: force`: the pod a
PodDisruptionBudget holds on NODE is deleted at the policy's drain timeout, so NODE updates
like the others instead of backing off, and the apiserver's log names the pod it forced."""

from __future__ import annotations

import json

import pytest

from tests.e2e.simulate_run import Simulate, explain

BLOCKED = "node-02"
SPEC = """\
  drain:
    timeoutSeconds: 2
    onTimeout: force
    forceNamespaces: [default]
"""


@pytest.mark.e2e
def test_a_drain_forced_by_the_policy_lets_the_blocked_node_update(simulate: Simulate) -> None:
    run = simulate(
        "--nodes", "3", "--max-concurrent", "1", "--block-drain", BLOCKED, "--drain-timeout", "60",
        "--timeout", "90", policy=SPEC,
    )  # fmt: skip

    assert run.returncode == 0, explain(run)
    assert run.report["ok"] is True and run.report["tracebacks"] == 0
    for node in run.report["nodes"]:
        assert node["final_version"] == "1.20.0", node
        assert node["crash_count"] == 0, node
    lines = [
        json.loads(line)
        for line in (run.log_dir / "cluster.log").read_text().splitlines()
        if line.startswith("{")
    ]
    forced = [line for line in lines if line.get("event") == "drain.pod_forced"]
    assert [(line["node"], line["pod"]) for line in forced] == [
        (BLOCKED, f"default/pinned-{BLOCKED}-0")
    ]

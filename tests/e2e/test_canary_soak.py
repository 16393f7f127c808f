"""`brupop simulate --policy` with one canary and a soak: the canary updates alone first, its
health gate passes, and the other nodes start only once it has been Idle on the new version
for the soak; then the rollout completes.

Only lower bounds on time are checked (a slow machine makes the waits longer, never shorter),
with a margin for the moment the controller saw the canary finish, which may come a little
before the observer saw it."""

from __future__ import annotations

import pytest

from tests.e2e.simulate_run import Simulate, explain

SOAK_SECONDS = 5
OBSERVER_MARGIN_SECONDS = 1.5

SPEC = f"""\
  canary:
    count: 1
    soakSeconds: {SOAK_SECONDS}
  healthGate:
    timeoutSeconds: 60
"""


@pytest.mark.e2e
def test_the_canary_updates_first_and_the_others_wait_out_its_soak(simulate: Simulate) -> None:
    run = simulate(
        "--nodes", "3", "--max-concurrent", "3", "--timeout", "100", policy=SPEC,
    )  # fmt: skip

    assert run.returncode == 0, explain(run)
    nodes = sorted(run.report["nodes"], key=lambda n: n["started_at"])
    canary, others = nodes[0], nodes[1:]
    for node in nodes:
        assert node["final_version"] == "1.20.0", node
        assert node["health_gate"] == "passed", node
    for node in others:
        waited = node["started_at"] - canary["finished_at"]
        assert waited >= SOAK_SECONDS - OBSERVER_MARGIN_SECONDS, (canary, node)
    assert run.report["policy_phase"] == "Idle"
    assert run.last_line.startswith("OK: 3/3 nodes updated"), explain(run)

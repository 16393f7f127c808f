"""`brupop simulate --policy` with two canaries and a soak: the canaries update first, their
health gates pass, and the other nodes start only once both have been Idle on the new version
for the soak; then the rollout completes. The same holds when hosts answer their first call
15 s late (`--late-host`): agents then report late, as over a real API server, and the run
still picks two canaries among the whole fleet.

Only lower bounds on time are checked (a slow machine makes the waits longer, never shorter),
with a margin for the moment the controller saw a canary finish, which may come a little
before the observer saw it."""

from __future__ import annotations

import pytest

from tests.e2e.simulate_run import HOST_SPEEDS, Simulate, explain, late_hosts

SOAK_SECONDS = 5
OBSERVER_MARGIN_SECONDS = 1.5
CANARIES = 2

SPEC = f"""\
  canary:
    count: {CANARIES}
    soakSeconds: {SOAK_SECONDS}
  healthGate:
    timeoutSeconds: 60
"""


@pytest.mark.e2e
@HOST_SPEEDS
def test_the_canaries_update_first_and_the_others_wait_out_their_soak(
    simulate: Simulate, late: bool
) -> None:
    run = simulate(
        "--nodes", "4", "--max-concurrent", "4", "--timeout", "100", *late_hosts(4, late=late),
        policy=SPEC,
    )  # fmt: skip

    assert run.returncode == 0, explain(run)
    nodes = sorted(run.report["nodes"], key=lambda n: n["started_at"])
    canaries, others = nodes[:CANARIES], nodes[CANARIES:]
    for node in nodes:
        assert node["final_version"] == "1.20.0", node
        assert node["health_gate"] == "passed", node
    soaked_from = max(canary["finished_at"] for canary in canaries)
    for node in others:
        waited = node["started_at"] - soaked_from
        assert waited >= SOAK_SECONDS - OBSERVER_MARGIN_SECONDS, (canaries, node)
    assert run.report["policy_phase"] == "Idle"
    assert run.last_line.startswith("OK: 4/4 nodes updated"), explain(run)

"""A pause is a round trip: `brupop simulate` with `--pause-at` and `--resume-at` and no policy
ends as the same run without them. The pause creates a `default` policy that changes nothing
but `paused`, and the resume deletes it, so a failed node backs off as without a policy
instead of halting the fleet."""

from __future__ import annotations

import pytest

from tests.e2e.simulate_run import Simulate, explain

FAULT = ("--nodes", "4", "--max-concurrent", "1", "--fault", "node-04=prepare", "--timeout", "60")
VERDICT = "FAILED (3/4 nodes updated): node-04 still on 1.19.0 (backing_off)"


@pytest.mark.e2e
@pytest.mark.parametrize(
    "pause", [(), ("--pause-at", "1", "--resume-at", "2")], ids=["no-pause", "paused-and-resumed"]
)
def test_a_pause_and_a_resume_change_no_verdict_of_the_fault_scenario(
    simulate: Simulate, pause: tuple[str, ...]
) -> None:
    run = simulate(*FAULT, *pause)

    assert run.last_line == VERDICT, explain(run)
    assert run.report["policy_phase"] is None, "the pause's policy is left behind"

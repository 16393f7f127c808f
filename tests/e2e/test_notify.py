"""`brupop simulate --notify URL` sends the run's notifications to a webhook: a receiver on
loopback gets the rollout's start, each node's update, the pause and the resume, and the finish,
each in the documented json schema and naming the simulated cluster."""

from __future__ import annotations

import pytest

from tests.e2e.simulate_run import Simulate, explain
from tests.support.webhook_receiver import running_receiver, validate_v1

SPEC = """\
  paused: false
"""


@pytest.mark.e2e
def test_simulate_notify_sends_the_runs_notifications_to_a_webhook(simulate: Simulate) -> None:
    with running_receiver() as receiver:
        run = simulate(
            "--nodes", "3", "--max-concurrent", "1", "--pause-at", "0.5", "--resume-at", "4",
            "--notify", receiver.url, "--timeout", "100", policy=SPEC,
        )  # fmt: skip
        assert run.returncode == 0, explain(run)
        kinds = receiver.kinds()
    assert kinds[0] == "rollout_started", kinds
    assert kinds.count("node_updated") == 3, kinds
    assert kinds.index("fleet_paused") < kinds.index("fleet_resumed"), kinds
    assert kinds[-1] == "rollout_finished", kinds
    for body in receiver.bodies:
        validate_v1(body)
        assert body["cluster"] == "brupop-simulate"
    assert receiver.bodies[-1]["counts"]["updated"] == 3


@pytest.mark.e2e
def test_simulate_refuses_a_notify_url_that_is_not_http(simulate: Simulate) -> None:
    run = simulate("--nodes", "1", "--notify", "ftp://example/hook")
    assert run.returncode == 2, explain(run)
    assert "--notify" in run.stderr
